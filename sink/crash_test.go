package sink_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/internal/storage"
	"github.com/lakesink/lakesink/internal/storage/faultstore"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
)

// TestCrashPointsOfOneBatch crashes batch 1 at every durable step (the
// fault store fails every write after the k-th, for k = 0, 1, ... until the
// batch completes), each time on a fresh table holding batch 0. After each
// crash the table is the state before or after batch 1; then a restarted
// sink replays batches 0 and 1, as a driver that lost its checkpoint would:
// batch 0 is skipped, batch 1 is skipped exactly when its commit had landed,
// and the table ends with each batch's rows exactly once.
func TestCrashPointsOfOneBatch(t *testing.T) {
	ctx := context.Background()
	opts := sink.Options{QueryID: "q", PartitionColumns: []string{"origin"}}
	for k := 0; ; k++ {
		base, err := storage.Open(ctx, "file://"+t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := table.OpenStore(base)
		if _, err := sink.NewDeltaTable(tb, opts).AddBatch(ctx, 0, batch(0, 6)); err != nil {
			t.Fatal(err)
		}
		fs, _ := faultstore.New(base, faultstore.DefaultOptions())
		fs.CrashAfterWrites(k)
		ftb, _ := table.OpenStore(fs)
		_, err = sink.NewDeltaTable(ftb, opts).AddBatch(ctx, 1, batch(1, 6))
		completed := err == nil
		if err != nil && !errors.Is(err, faultstore.ErrInjected) {
			t.Fatalf("k=%d: %v", k, err)
		}
		// Before the replay the table is the state before or after batch 1.
		got := readIDs(t, tb)
		before, after := expectIDs(map[int64]int{0: 6}), expectIDs(map[int64]int{0: 6, 1: 6})
		if !slices.Equal(got, before) && !slices.Equal(got, after) {
			t.Fatalf("k=%d: table is neither before nor after batch 1: %v", k, got)
		}
		restarted := sink.NewDeltaTable(tb, opts)
		if res, err := restarted.AddBatch(ctx, 0, batch(0, 6)); err != nil || !res.Skipped {
			t.Fatalf("k=%d: replay of committed batch 0: %+v, %v; want skipped", k, res, err)
		}
		res, err := restarted.AddBatch(ctx, 1, batch(1, 6))
		if err != nil {
			t.Fatalf("k=%d replay: %v", k, err)
		}
		if slices.Equal(got, after) != res.Skipped {
			t.Fatalf("k=%d: replay skipped=%v but the commit had landed=%v", k, res.Skipped, slices.Equal(got, after))
		}
		if got := readIDs(t, tb); !slices.Equal(got, after) {
			t.Fatalf("k=%d: after replay %v, want %v", k, got, after)
		}
		base.Close()
		if completed {
			if k < 3 {
				t.Fatalf("batch completed after only %d writes: data files and a commit were expected", k)
			}
			return
		}
	}
}

// TestLostCommitResponseIsRecognised: the commit put lands but its answer
// is lost (a timeout after the server stored it). The sink must recognise
// its own commit by txnId, never write the batch a second time.
func TestLostCommitResponseIsRecognised(t *testing.T) {
	ctx := context.Background()
	base, err := storage.Open(ctx, "file://"+t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer base.Close()
	fs, _ := faultstore.New(base, faultstore.DefaultOptions())
	if err := fs.Add(faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Path: "_delta_log/*.json", Nth: 1, Mode: faultstore.FailAfter}); err != nil {
		t.Fatal(err)
	}
	tb, _ := table.OpenStore(fs)
	s := sink.NewDeltaTable(tb, sink.Options{QueryID: "q"})
	res, err := s.AddBatch(ctx, 0, batch(0, 5))
	if err != nil {
		t.Fatalf("lost response: %v (the commit landed: it must be recognised by its txnId)", err)
	}
	if res.Skipped || res.Version != 0 {
		t.Fatalf("result %+v, want version 0 committed", res)
	}
	versions, _ := tb.Log().Versions(ctx)
	if len(versions) != 1 {
		t.Fatalf("versions %v: the batch was committed twice", versions)
	}
	if got := readIDs(t, tb); !slices.Equal(got, expectIDs(map[int64]int{0: 5})) {
		t.Fatalf("ids %v", got)
	}
}
