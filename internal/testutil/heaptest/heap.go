package heaptest

import (
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"
)

// Peak runs fn and returns the peak of runtime.MemStats.HeapInuse while it
// ran, sampled every 10 ms and once after it returned, in bytes above the
// heap in use when it started. It collects twice first: objects in
// sync.Pools (parquet-go's buffers) survive one collection in the victim
// cache, and a previous test's could otherwise count as this one's.
//
// While fn runs the collector's target is 10% above the live heap
// (debug.SetGCPercent(10), restored after): the peak is then what fn keeps
// live plus little garbage. With the default 100% the garbage allowed
// before a collection is as large as the whole live heap, including what
// earlier tests of the package left live, so the same fn measured 66 to
// 107 MiB in TestBombManyPartitions depending on the tests before it.
func Peak(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapInuse > peak.Load() {
				peak.Store(ms.HeapInuse)
			}
			select {
			case <-stop:
				return
			case <-time.After(10 * time.Millisecond):
			}
		}
	})
	fn()
	close(stop)
	wg.Wait()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if p := max(peak.Load(), after.HeapInuse); p > before.HeapInuse {
		return p - before.HeapInuse
	}
	return 0
}
