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

// TestCrashPointsOfOneBatch crashes batch 1 at every named crash point
// (faultstore.CrashAt) of the Delta sink, in append and complete mode: the
// batch is first run on a recorder to learn its durable steps, whose names
// must be exactly data-file and commit; then for every occurrence of every
// point, before the step and after it (the step performed, its answer lost,
// the process dead), on a fresh table holding batch 0. After each crash the
// table is the state before or after batch 1 (after, if AddBatch reported
// success); then a restarted sink replays batches 0 and 1, as a driver that
// lost its checkpoint would: batch 0 is skipped, batch 1 is skipped exactly
// when its commit had landed, and the table ends with each batch's rows
// exactly once.
func TestCrashPointsOfOneBatch(t *testing.T) {
	for _, tc := range []struct {
		mode          sink.OutputMode
		before, after []int64
	}{
		{sink.Append, expectIDs(map[int64]int{0: 6}), expectIDs(map[int64]int{0: 6, 1: 6})},
		{sink.Complete, expectIDs(map[int64]int{0: 6}), expectIDs(map[int64]int{1: 6})},
	} {
		t.Run(string(tc.mode), func(t *testing.T) {
			ctx := context.Background()
			opts := sink.Options{QueryID: "q", PartitionColumns: []string{"origin"}, OutputMode: tc.mode}
			// newBase: a fresh table holding batch 0.
			newBase := func(t *testing.T) (storage.Store, *table.Table) {
				base, err := storage.Open(ctx, t.TempDir()) // a plain path: the subtest name holds "#"
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { base.Close() })
				tb, _ := table.OpenStore(base)
				if _, err := sink.NewDeltaTable(tb, opts).AddBatch(ctx, 0, batch(0, 6)); err != nil {
					t.Fatal(err)
				}
				return base, tb
			}
			base, _ := newBase(t)
			rec, _ := faultstore.New(base, faultstore.DefaultOptions())
			rtb, _ := table.OpenStore(rec)
			if _, err := sink.NewDeltaTable(rtb, opts).AddBatch(ctx, 1, batch(1, 6)); err != nil {
				t.Fatal(err)
			}
			points := rec.Points()
			if err := faultstore.CheckPoints(points, faultstore.PointDataFile, faultstore.PointCommit); err != nil {
				t.Fatal(err)
			}
			if len(points) != 4 { // three partitions, one commit
				t.Fatalf("points %v: want 3 data files and a commit", points)
			}
			for _, c := range faultstore.Crashes(points) {
				t.Run(c.String(), func(t *testing.T) {
					base, tb := newBase(t)
					fs, _ := faultstore.New(base, faultstore.DefaultOptions())
					if err := c.Arm(fs); err != nil {
						t.Fatal(err)
					}
					ftb, _ := table.OpenStore(fs)
					_, err := sink.NewDeltaTable(ftb, opts).AddBatch(ctx, 1, batch(1, 6))
					if !fs.Crashed() {
						t.Fatalf("the crash point was not reached (err %v)", err)
					}
					if err != nil && !errors.Is(err, faultstore.ErrInjected) {
						t.Fatalf("error without an injected cause: %v", err)
					}
					// Reopened without faults: before or after batch 1.
					got := readIDs(t, tb)
					landed := slices.Equal(got, tc.after)
					if !landed && !slices.Equal(got, tc.before) {
						t.Fatalf("table is neither before nor after batch 1: %v", got)
					}
					if err == nil && !landed {
						t.Fatalf("AddBatch reported success, but the table is before batch 1")
					}
					if c.Point.Name != faultstore.PointCommit || c.Mode != faultstore.FailAfter {
						if landed {
							t.Fatalf("the commit landed although the crash came before it")
						}
					} else if !landed || err != nil {
						// The commit landed; the sink recognises it by its txnId.
						t.Fatalf("lost commit answer: landed %v, err %v", landed, err)
					}
					restarted := sink.NewDeltaTable(tb, opts)
					if res, err := restarted.AddBatch(ctx, 0, batch(0, 6)); err != nil || !res.Skipped {
						t.Fatalf("replay of committed batch 0: %+v, %v; want skipped", res, err)
					}
					res, err := restarted.AddBatch(ctx, 1, batch(1, 6))
					if err != nil {
						t.Fatalf("replay: %v", err)
					}
					if landed != res.Skipped {
						t.Fatalf("replay skipped=%v but the commit had landed=%v", res.Skipped, landed)
					}
					if got := readIDs(t, tb); !slices.Equal(got, tc.after) {
						t.Fatalf("after replay %v, want %v", got, tc.after)
					}
				})
			}
		})
	}
}

// TestLostCommitResponseIsRecognised: the commit put lands but its answer
// is lost (a timeout after the server stored it). The sink must recognise
// its own commit by txnId, never write the batch a second time.
func TestLostCommitResponseIsRecognised(t *testing.T) {
	ctx := context.Background()
	base, err := storage.Open(ctx, t.TempDir()) // a plain path: the subtest name holds "#"
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
