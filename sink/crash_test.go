package sink_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/table"
)

// TestCrashPointsOfOneBatch crashes one batch at every named crash point
// (faultstore.CrashAt) of the Delta sink, in append and complete mode, and
// at a checkpoint version: the batch is first run on a recorder to learn
// its durable steps, whose names must be exactly the expected ones; then
// for every occurrence of every point (the checkpoint's, written after
// AddBatch returned, waited for by Table.Close), before the step and after it (the
// step performed, its answer lost, the process dead), on a fresh table
// holding the earlier batches. After each crash the table is the state
// before or after the batch — after exactly when the crash came after the
// commit, and whenever AddBatch reported success; then a restarted sink
// replays the previous batch and this one, as a driver that lost its
// checkpoint would: the previous batch is skipped, this one is skipped
// exactly when its commit had landed, and the table ends with each batch's
// rows exactly once.
func TestCrashPointsOfOneBatch(t *testing.T) {
	basePoints := []string{faultstore.PointDataFile, faultstore.PointCommit, faultstore.PointChecksum}
	for _, tc := range []struct {
		name   string
		mode   sink.OutputMode
		batch  int64 // the batch that crashes; the table holds 0..batch-1 (version = batch id)
		points []string
	}{
		{"first batch creates the table", sink.Append, 0, basePoints},
		{"append", sink.Append, 1, basePoints},
		{"complete", sink.Complete, 1, basePoints},
		{"append at a checkpoint version", sink.Append, 10,
			append(slices.Clone(basePoints), faultstore.PointCheckpoint, faultstore.PointLastCheckpoint)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			opts := sink.Options{QueryID: "q", PartitionColumns: []string{"origin"}, OutputMode: tc.mode}
			upTo := func(last int64) []int64 {
				m := map[int64]int{}
				for b := int64(0); b <= last; b++ {
					if tc.mode == sink.Append || b == last {
						m[b] = 6
					}
				}
				return expectIDs(m)
			}
			before, after := upTo(tc.batch-1), upTo(tc.batch)
			// template: a table holding the batches before tc.batch, built
			// once; newBase copies it into a fresh directory.
			template := t.TempDir()
			{
				st, err := storage.Open(ctx, template)
				if err != nil {
					t.Fatal(err)
				}
				tb, _ := table.OpenStore(st)
				s := sink.NewDeltaTable(tb, opts)
				for b := range tc.batch {
					if _, err := s.AddBatch(ctx, b, batch(b, 6)); err != nil {
						t.Fatal(err)
					}
				}
				st.Close()
			}
			newBase := func(t *testing.T) (storage.Store, *table.Table) {
				dir := filepath.Join(t.TempDir(), "table")
				if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
					t.Fatal(err)
				}
				base, err := storage.Open(ctx, dir) // a plain path: the subtest name holds "#"
				if err != nil {
					t.Fatal(err)
				}
				t.Cleanup(func() { base.Close() })
				tb, _ := table.OpenStore(base)
				return base, tb
			}
			base, _ := newBase(t)
			rec, _ := faultstore.New(base, faultstore.DefaultOptions())
			rtb, _ := table.OpenStore(rec)
			if res, err := sink.NewDeltaTable(rtb, opts).AddBatch(ctx, tc.batch, batch(tc.batch, 6)); err != nil || res.Version != tc.batch {
				t.Fatalf("%+v, %v; want version %d", res, err, tc.batch)
			}
			// The checkpoint is written after AddBatch returned; Close
			// waits for it.
			if err := rtb.Close(); err != nil {
				t.Fatal(err)
			}
			points := rec.Points()
			if err := faultstore.CheckPoints(points, tc.points...); err != nil {
				t.Fatal(err)
			}
			if n := len(faultstore.Crashes(points)); n != 2*(len(tc.points)+2) { // three partitions: three data files
				t.Fatalf("points %v", points)
			}
			commitAt := slices.IndexFunc(points, func(p faultstore.Point) bool { return p.Name == faultstore.PointCommit })
			for i, c := range faultstore.Crashes(points) {
				t.Run(c.String(), func(t *testing.T) {
					base, tb := newBase(t)
					fs, _ := faultstore.New(base, faultstore.DefaultOptions())
					if err := c.Arm(fs); err != nil {
						t.Fatal(err)
					}
					ftb, _ := table.OpenStore(fs)
					_, err := sink.NewDeltaTable(ftb, opts).AddBatch(ctx, tc.batch, batch(tc.batch, 6))
					_ = ftb.Close() // a crash in the background checkpoint: it is done
					if !fs.Crashed() {
						t.Fatalf("the crash point was not reached (err %v)", err)
					}
					if err != nil && !errors.Is(err, faultstore.ErrInjected) {
						t.Fatalf("error without an injected cause: %v", err)
					}
					// Reopened without faults: before or after the batch.
					got := []int64{} // no table: no rows
					if ok, err := tb.Exists(ctx); err != nil {
						t.Fatal(err)
					} else if ok {
						got = readIDs(t, tb)
					} else if tc.batch > 0 {
						t.Fatalf("the table is gone")
					}
					landed := slices.Equal(got, after)
					if !landed && !slices.Equal(got, before) {
						t.Fatalf("table is neither before nor after batch %d: %v", tc.batch, got)
					}
					if err == nil && !landed {
						t.Fatalf("AddBatch reported success, but the table is before the batch")
					}
					if wantLanded := i/2 > commitAt || (i/2 == commitAt && c.Mode == faultstore.FailAfter); landed != wantLanded {
						t.Fatalf("commit landed=%v, want %v", landed, wantLanded)
					}
					if c.Point.Name == faultstore.PointCommit && c.Mode == faultstore.FailAfter && err != nil {
						// The commit landed; the sink recognises it by its txnId.
						t.Fatalf("lost commit answer: %v", err)
					}
					restarted := sink.NewDeltaTable(tb, opts)
					if prev := tc.batch - 1; prev >= 0 {
						if res, err := restarted.AddBatch(ctx, prev, batch(prev, 6)); err != nil || !res.Skipped {
							t.Fatalf("replay of committed batch %d: %+v, %v; want skipped", prev, res, err)
						}
					}
					res, err := restarted.AddBatch(ctx, tc.batch, batch(tc.batch, 6))
					if err != nil {
						t.Fatalf("replay: %v", err)
					}
					if landed != res.Skipped {
						t.Fatalf("replay skipped=%v but the commit had landed=%v", res.Skipped, landed)
					}
					if got := readIDs(t, tb); !slices.Equal(got, after) {
						t.Fatalf("after replay %v, want %v", got, after)
					}
					if snap, err := table.OpenStore(base); err != nil {
						t.Fatal(err)
					} else if s, err := snap.Snapshot(ctx); err != nil || s.Version() != tc.batch {
						t.Fatalf("after replay: version %d, %v; want %d (one commit per batch)", s.Version(), err, tc.batch)
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
