package filesink

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// discardWriterStore keeps sources in memory but discards what NewWriter and
// PutIfAbsent of a compaction file receive (counting bytes), so that the
// memory measured is the compaction's, not the test store's copy of its output.
type discardWriterStore struct {
	*memStore
	written atomic.Int64
}

type countingWriter struct {
	n *atomic.Int64
}

func (w countingWriter) Write(p []byte) (int, error) { w.n.Add(int64(len(p))); return len(p), nil }
func (w countingWriter) Close() error                { return nil }
func (w countingWriter) Abort() error                { return nil }

func (s *discardWriterStore) NewWriter(ctx context.Context, path string) (storage.Writer, error) {
	return countingWriter{&s.written}, nil
}

func (s *discardWriterStore) PutIfAbsent(ctx context.Context, path string, data []byte) error {
	if path == batchFileKey(19, true) {
		s.written.Add(int64(len(data)))
		return nil
	}
	return s.memStore.PutIfAbsent(ctx, path, data)
}

// buildBigLog writes 9.compact with n entries and empty batches 10..18.
func buildBigLog(b *testing.B, n int) *memStore {
	b.Helper()
	m := newMemStore(b, "file:///out", nil)
	w, _ := m.NewWriter(context.Background(), batchFileKey(9, true))
	enc := newLogEncoder(w)
	mod := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixMilli()
	for i := 0; i < n; i++ {
		e := SinkFileStatus{Path: fmt.Sprintf("file:///data/out/date=2026-01-01/part-%05d-6f1c2f4e-8a47-4c7b-9c51-%012d-c000.snappy.parquet", i%200, i),
			Size: 1234567, ModificationTime: mod + int64(i), BlockReplication: 1, BlockSize: 33554432, Action: ActionAdd}
		if err := enc.add(&e); err != nil {
			b.Fatal(err)
		}
	}
	if err := enc.flush(); err != nil {
		b.Fatal(err)
	}
	if err := w.Close(); err != nil {
		b.Fatal(err)
	}
	for id := int64(10); id < 19; id++ {
		m.putAt(batchFileKey(id, false), []byte("v1"), time.Unix(0, 0))
	}
	return m
}

// peakHeap samples HeapInuse while fn runs and returns the peak growth. The
// GC runs at GOGC=10 meanwhile, so that garbage (bounded by 10% of the live
// heap, which holds the test store's copy of the log) does not hide the live
// memory of the compaction.
func peakHeap(fn func()) uint64 {
	defer debug.SetGCPercent(debug.SetGCPercent(10))
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	base := ms.HeapInuse
	var peak atomic.Uint64
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(5 * time.Millisecond)
		defer t.Stop()
		for {
			var s runtime.MemStats
			runtime.ReadMemStats(&s)
			if s.HeapInuse > base && s.HeapInuse-base > peak.Load() {
				peak.Store(s.HeapInuse - base)
			}
			select {
			case <-stop:
				return
			case <-t.C:
			}
		}
	}()
	fn()
	close(stop)
	wg.Wait()
	return peak.Load()
}

// BenchmarkCompaction1M compacts a log of 1,000,000 entries (a 9.compact
// file plus nine batches) into 19.compact, streamed and, as the baseline,
// built in memory, and logs time and peak heap growth of each.
func BenchmarkCompaction1M(b *testing.B) {
	const n = 1_000_000
	if testing.Short() {
		b.Skip("1,000,000-entry compaction skipped in -short mode")
	}
	m := buildBigLog(b, n)
	run := func(b *testing.B, maxInMem int64) (time.Duration, uint64, int64) {
		s := &discardWriterStore{memStore: m}
		o := DefaultOptions()
		o.MaxInMemoryCompactBytes = maxInMem
		o.DeleteExpiredLog = false
		l, err := NewLog(s, o)
		if err != nil {
			b.Fatal(err)
		}
		ls, err := l.list(context.Background())
		if err != nil {
			b.Fatal(err)
		}
		// Timed run at the default GOGC, then a second run for peak memory.
		start := time.Now()
		res, err := l.compact(context.Background(), ls, 19, 10, nil, false)
		elapsed := time.Since(start)
		if err != nil {
			b.Fatal(err)
		}
		written := s.written.Swap(0)
		peak := peakHeap(func() {
			_, err = l.compact(context.Background(), ls, 19, 10, nil, false)
		})
		if err != nil {
			b.Fatal(err)
		}
		s.written.Store(written)
		if res.EntriesWritten != n {
			b.Fatalf("compaction wrote %d entries, want %d", res.EntriesWritten, n)
		}
		b.SetBytes(s.written.Load())
		return elapsed, peak, s.written.Load()
	}
	var streamT, memT time.Duration
	var streamPeak, memPeak uint64
	b.Run("streamed", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			streamT, streamPeak, _ = run(b, 0)
		}
		b.ReportMetric(float64(streamPeak)/(1<<20), "peak-heap-MiB")
	})
	b.Run("in-memory-baseline", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; i < b.N; i++ {
			memT, memPeak, _ = run(b, 1<<40)
		}
		b.ReportMetric(float64(memPeak)/(1<<20), "peak-heap-MiB")
	})
	if streamT > 0 && memT > 0 {
		b.Logf("BENCHROW\tfilesink compaction 1M entries, time (s)\t%.2f\t%.2f\t%.2f",
			streamT.Seconds(), memT.Seconds(), streamT.Seconds()/memT.Seconds())
		b.Logf("BENCHROW\tfilesink compaction 1M entries, peak heap (MiB)\t%.1f\t%.1f\t%.3f",
			float64(streamPeak)/(1<<20), float64(memPeak)/(1<<20), float64(streamPeak)/float64(max(memPeak, 1)))
	}
}

var _ io.Writer = countingWriter{}
