package table_test

import (
	"context"
	"io"
	"runtime/metrics"
	"strings"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// callCounter counts one writer's successful reads per path (a read that
// found nothing, the end of the log, may be retried once the file is there)
// and its writes per path.
type callCounter struct {
	storage.Store
	mu     sync.Mutex
	reads  map[string]int
	writes map[string]int
}

func (c *callCounter) count(m map[string]int, p string) {
	c.mu.Lock()
	m[p]++
	c.mu.Unlock()
}

func (c *callCounter) Read(ctx context.Context, p string) ([]byte, error) {
	data, err := c.Store.Read(ctx, p)
	if err == nil {
		c.count(c.reads, p)
	}
	return data, err
}

func (c *callCounter) NewRangeReader(ctx context.Context, p string, off, n int64) (io.ReadCloser, error) {
	r, err := c.Store.NewRangeReader(ctx, p, off, n)
	if err == nil {
		c.count(c.reads, p)
	}
	return r, err
}

func (c *callCounter) Put(ctx context.Context, p string, data []byte) error {
	c.count(c.writes, p)
	return c.Store.Put(ctx, p, data)
}

func (c *callCounter) NewWriter(ctx context.Context, p string) (storage.Writer, error) {
	c.count(c.writes, p)
	return c.Store.NewWriter(ctx, p)
}

// TestConcurrentBlindAppendsWork: 4 writers (each its own Table, as
// separate processes) appending concurrently to one local table never
// read a commit file twice (each keeps the snapshot of its last commit and
// reads only what follows; a lost race reads the winners once and the
// post-commit snapshot keeps them), and every version gets one .crc and,
// every 10 versions, one checkpoint, written by the writer of that version.
func TestConcurrentBlindAppendsWork(t *testing.T) {
	// 25 versions: no writer can fall the 32 commits behind after which
	// Update loads the log from its checkpoint instead.
	const writers, each = 4, 6
	ctx := context.Background()
	dir := t.TempDir()
	op, err := storage.NewOpener(storage.Options{LocalSkipFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	counters := make([]*callCounter, writers)
	tables := make([]*table.Table, writers)
	for w := range writers {
		st, err := op.Open(ctx, dir)
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		counters[w] = &callCounter{Store: st, reads: map[string]int{}, writes: map[string]int{}}
		if tables[w], err = table.OpenStore(counters[w], table.WithCheckpointOnCommit()); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tables[0].Write(ctx, benchAppendBatch(0), table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make([]error, writers)
	for w, tb := range tables {
		wg.Go(func() {
			for i := range each {
				if _, err := tb.Write(ctx, benchAppendBatch(i), table.WriteOptions{}); err != nil {
					errs[w] = err
					return
				}
			}
		})
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	// The reads of the writes, before the snapshot below (a full load
	// from the checkpoint, which reads the commits after it again).
	writes := map[string]int{}
	for w, c := range counters {
		for p, n := range c.reads {
			if strings.HasSuffix(p, ".json") && n > 1 {
				t.Errorf("writer %d read %s %d times", w, p, n)
			}
		}
		for p, n := range c.writes {
			writes[p] += n
		}
	}
	last := int64(writers * each)
	snap, err := tables[0].Snapshot(ctx)
	if err != nil || snap.Version() != last {
		t.Fatalf("snapshot: %v, %v; want version %d", snap, err, last)
	}
	for v := int64(1); v <= last; v++ {
		if n := writes[txlog.ChecksumPath(v)]; n != 1 {
			t.Errorf("%s written %d times, want 1", txlog.ChecksumPath(v), n)
		}
		want := 0
		if v%10 == 0 {
			want = 1
		}
		if n := writes[txlog.CheckpointPath(v)]; n != want {
			t.Errorf("%s written %d times, want %d", txlog.CheckpointPath(v), n, want)
		}
	}
}

// goroutinesCreated is the number of goroutines the process has created
// (runtime/metrics).
func goroutinesCreated(t *testing.T) uint64 {
	t.Helper()
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		t.Fatalf("runtime/metrics has no %s", s[0].Name)
	}
	return s[0].Value.Uint64()
}

// TestBlindAppendStartsFewGoroutines: a 1-row append on local disk, with
// fsync, starts at most one goroutine (the data file's creation, which
// overlaps its encoding), not one per step: each goroutine first waits for
// a P, and with 4 writers on 2 CPUs (issue 22's commit-rate benchmark) the
// two SyncObjects started for the data file and its directory waited 0.5-1.7
// ms for one, longer than their fsyncs took (5 goroutines per append
// before: those two, row validation, the partition writer and the
// creation).
func TestBlindAppendStartsFewGoroutines(t *testing.T) {
	const writes = 10
	ctx := context.Background()
	lo := txlog.DefaultOptions()
	lo.DisableAutoCheckpoint = true // its goroutine is not the append's
	tb, err := table.Open(ctx, t.TempDir(), table.WithLogOptions(lo))
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Write(ctx, benchAppendBatch(-1), table.WriteOptions{}); err != nil { // creates the table
		t.Fatal(err)
	}
	before := goroutinesCreated(t)
	for i := range writes {
		if _, err := tb.Write(ctx, benchAppendBatch(i), table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	// A little slack for the runtime's own (a GC's workers).
	if n := goroutinesCreated(t) - before; n > writes+4 {
		t.Errorf("%d appends of 1 row started %d goroutines, want at most %d (one per append)", writes, n, writes)
	}
}
