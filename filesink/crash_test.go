package filesink

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// crashOptions: compaction every 3 batches, streamed (claim) compaction,
// log deletion with no delay, so that one batch exercises every kind of
// storage call of the sink.
func crashOptions(streamed bool) Options {
	o := DefaultOptions()
	o.CompactInterval = 3
	o.MinBatchesToRetain = 2
	o.CleanupDelay = 0
	o.QueryID = "query-1" // a restarted query takes over its own claim
	o.PartitionColumns = []string{"country"}
	if streamed {
		o.MaxInMemoryCompactBytes = 0
	}
	return o
}

func batchRows(b int64) (int64, int64) { return b * 10, b*10 + 10 }

func crashCountry(i int64) any { return []any{"FR", "DE", nil}[i%3] }

// buildBase writes batches 0..upTo-1 into a fresh in-memory store.
func buildBase(t *testing.T, name string, o Options, upTo int64) storage.Store {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://"+name)
	if err != nil {
		t.Fatal(err)
	}
	s, err := New(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	for b := int64(0); b < upTo; b++ {
		from, to := batchRows(b)
		if _, err := s.AddBatch(ctx, b, rows(from, to, crashCountry)); err != nil {
			t.Fatal(err)
		}
	}
	return st
}

// checkExactlyOnce reads every row through the log and checks that rows of
// batches 0..last appear exactly once, and that every data file the log
// does not name is listed by Orphans.
func checkExactlyOnce(t *testing.T, st storage.Store, o Options, last int64, label string) {
	t.Helper()
	ctx := context.Background()
	ls, err := ListFiles(ctx, st, o)
	if err != nil {
		t.Fatalf("%s: %v", label, err)
	}
	if ls.LatestBatchID != last {
		t.Fatalf("%s: latest batch %d, want %d", label, ls.LatestBatchID, last)
	}
	got := readAllIDs(t, st, ls)
	_, end := batchRows(last)
	want := make([]int64, 0, end)
	for i := int64(0); i < end; i++ {
		want = append(want, i)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("%s: rows through the log = %v, want 0..%d exactly once", label, got, end-1)
	}
	named := map[string]bool{}
	for _, f := range ls.Files {
		named[f.Key] = true
	}
	inAnHour := o
	inAnHour.Now = func() time.Time { return time.Now().Add(time.Hour) }
	orphans, err := Orphans(ctx, st, 0, inAnHour)
	if err != nil {
		t.Fatalf("%s: orphans: %v", label, err)
	}
	isOrphan := map[string]bool{}
	for _, fi := range orphans {
		if named[fi.Path] {
			t.Fatalf("%s: orphan %s is named by the log", label, fi.Path)
		}
		isOrphan[fi.Path] = true
	}
	data, err := listDataFiles(ctx, st)
	if err != nil {
		t.Fatal(err)
	}
	for _, fi := range data {
		if !named[fi.Path] && !isOrphan[fi.Path] {
			t.Fatalf("%s: %s is neither logged nor listed as an orphan", label, fi.Path)
		}
	}
	if _, err := DeleteOrphans(ctx, st, orphans, o); err != nil {
		t.Fatalf("%s: delete orphans: %v", label, err)
	}
	ls2, err := ListFiles(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	if got := readAllIDs(t, st, ls2); !slices.Equal(got, want) {
		t.Fatalf("%s: rows changed after deleting orphans", label)
	}
}

// TestCrashAtEveryStorageCall fails the sink at every storage call of one
// batch, reads included — a failure before the n-th call, and a lost answer
// after the n-th call (crashes at every durable step are
// TestCrashAtEveryNamedPoint's) — then restarts the
// query on the real store and replays the batch: every row is read exactly
// once through the log, and the files of the crashed attempt are orphans.
func TestCrashAtEveryStorageCall(t *testing.T) {
	ctx := context.Background()
	type fault struct {
		name  string
		apply func(fs *faultstore.Store, n int)
	}
	faults := []fault{
		{"fail-before-call", func(fs *faultstore.Store, n int) {
			_ = fs.Add(faultstore.Rule{Ops: faultstore.OpAll, Nth: n + 1, Mode: faultstore.FailBefore})
		}},
		{"lost-answer-after-call", func(fs *faultstore.Store, n int) {
			_ = fs.Add(faultstore.Rule{Ops: faultstore.OpAll, Nth: n + 1, Mode: faultstore.FailAfter})
		}},
	}
	cases := []struct {
		name     string
		batch    int64 // the batch that crashes
		streamed bool
	}{
		{"plain batch", 4, false},
		{"compaction batch in memory", 5, false},
		{"compaction batch streamed", 5, true},
	}
	if testing.Short() {
		cases = cases[:2]
	}
	run := 0
	for _, tc := range cases {
		for _, f := range faults {
			t.Run(tc.name+"/"+f.name, func(t *testing.T) {
				o := crashOptions(tc.streamed)
				for n := 0; ; n++ {
					if n > 500 {
						t.Fatal("the batch never completed")
					}
					run++
					base := buildBase(t, fmt.Sprintf("crash-%d", run), o, tc.batch)
					fs, err := faultstore.New(base, faultstore.DefaultOptions())
					if err != nil {
						t.Fatal(err)
					}
					f.apply(fs, n)
					from, to := batchRows(tc.batch)
					var addErr error
					s, err := New(ctx, fs, o)
					if err == nil {
						_, addErr = s.AddBatch(ctx, tc.batch, rows(from, to, crashCountry))
					} else {
						addErr = err
					}
					label := fmt.Sprintf("n=%d", n)
					if addErr != nil && !errors.Is(addErr, faultstore.ErrInjected) {
						t.Fatalf("%s: unexpected error: %v", label, addErr)
					}
					completed := addErr == nil
					// Restart the query on the real store and replay the batch.
					s2, err := New(ctx, base, o)
					if err != nil {
						t.Fatalf("%s: reopen after crash: %v", label, err)
					}
					res, err := s2.AddBatch(ctx, tc.batch, rows(from, to, crashCountry))
					if err != nil {
						t.Fatalf("%s: replay after crash (%v): %v", label, addErr, err)
					}
					if completed && !res.Skipped {
						t.Fatalf("%s: batch completed, but the replay was not skipped", label)
					}
					checkExactlyOnce(t, base, o, tc.batch, label)
					// And the query goes on.
					from, to = batchRows(tc.batch + 1)
					if _, err := s2.AddBatch(ctx, tc.batch+1, rows(from, to, crashCountry)); err != nil {
						t.Fatalf("%s: next batch: %v", label, err)
					}
					if completed && fs.Counts().Injected == 0 {
						if n < 3 {
							t.Fatalf("batch completed after only %d storage calls", n)
						}
						t.Logf("covered %d fault points", n)
						return // no fault fired: every call point was covered
					}
				}
			})
		}
	}
}

// TestCrashAtEveryNamedPoint crashes one batch of the sink at every named
// crash point (faultstore.CrashAt): the batch is first run on a recorder,
// whose point names must be exactly the expected ones; then for every
// occurrence of every point, before the step and after it (performed, its
// answer lost, the process dead), on a fresh directory holding the earlier
// batches. After the crash the log is at the batch before or at this batch
// (at it, if AddBatch reported success); a restarted query replays the
// batch — skipped exactly when its log file had landed — every row is read
// exactly once through the log, the crashed attempt's files are orphans,
// and the query goes on.
func TestCrashAtEveryNamedPoint(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name     string
		batch    int64 // the batch that crashes
		streamed bool
		points   []string
	}{
		// batch 4 also deletes the expired log files of batches 0 and 1
		{"plain batch", 4, false, []string{faultstore.PointDataFile, faultstore.PointSparkBatch, faultstore.PointSparkDelete}},
		{"compaction batch in memory", 5, false, []string{faultstore.PointDataFile, faultstore.PointSparkCompact}},
		{"compaction batch streamed", 5, true, []string{faultstore.PointDataFile, faultstore.PointSparkClaim, faultstore.PointSparkCompact}},
	}
	run := 0
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			o := crashOptions(tc.streamed)
			from, to := batchRows(tc.batch)
			run++
			rec, err := faultstore.New(buildBase(t, fmt.Sprintf("named-%d", run), o, tc.batch), faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			s, err := New(ctx, rec, o)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := s.AddBatch(ctx, tc.batch, rows(from, to, crashCountry)); err != nil {
				t.Fatal(err)
			}
			points := rec.Points()
			if err := faultstore.CheckPoints(points, tc.points...); err != nil {
				t.Fatal(err)
			}
			for _, c := range faultstore.Crashes(points) {
				t.Run(c.String(), func(t *testing.T) {
					run++
					base := buildBase(t, fmt.Sprintf("named-%d", run), o, tc.batch)
					fs, err := faultstore.New(base, faultstore.DefaultOptions())
					if err != nil {
						t.Fatal(err)
					}
					if err := c.Arm(fs); err != nil {
						t.Fatal(err)
					}
					var addErr error
					s, err := New(ctx, fs, o)
					if err == nil {
						_, addErr = s.AddBatch(ctx, tc.batch, rows(from, to, crashCountry))
					} else {
						addErr = err
					}
					if !fs.Crashed() {
						t.Fatalf("the crash point was not reached (err %v)", addErr)
					}
					if addErr != nil && !errors.Is(addErr, faultstore.ErrInjected) {
						t.Fatalf("error without an injected cause: %v", addErr)
					}
					// Reopened without faults: before or after the batch.
					ls, err := ListFiles(ctx, base, o)
					if err != nil {
						t.Fatalf("log unreadable after the crash: %v", err)
					}
					landed := ls.LatestBatchID == tc.batch
					if !landed && ls.LatestBatchID != tc.batch-1 {
						t.Fatalf("log at batch %d after a crash in batch %d", ls.LatestBatchID, tc.batch)
					}
					if addErr == nil && !landed {
						t.Fatalf("AddBatch reported success, but the log is at batch %d", ls.LatestBatchID)
					}
					// Restart the query on the real store and replay the batch.
					s2, err := New(ctx, base, o)
					if err != nil {
						t.Fatalf("reopen after crash: %v", err)
					}
					res, err := s2.AddBatch(ctx, tc.batch, rows(from, to, crashCountry))
					if err != nil {
						t.Fatalf("replay after crash (%v): %v", addErr, err)
					}
					if res.Skipped != landed {
						t.Fatalf("replay skipped=%v, but the batch's log file had landed=%v", res.Skipped, landed)
					}
					checkExactlyOnce(t, base, o, tc.batch, c.String())
					next0, next1 := batchRows(tc.batch + 1)
					if _, err := s2.AddBatch(ctx, tc.batch+1, rows(next0, next1, crashCountry)); err != nil {
						t.Fatalf("next batch: %v", err)
					}
					checkExactlyOnce(t, base, o, tc.batch+1, c.String()+" next batch")
				})
			}
		})
	}
}

// TestCompactLogCrash crashes CompactLog at every named crash point
// (spark-metadata-compact: the rewrite of the latest compaction file;
// spark-metadata-delete: each expired log file), before and after the
// step: the log then reads either the state before (old compaction file) or
// after (retention applied), never an error or a partial state, and a
// rerun of CompactLog reaches the state after.
func TestCompactLogCrash(t *testing.T) {
	ctx := context.Background()
	for _, streamed := range []bool{false, true} {
		t.Run(fmt.Sprintf("streamed=%v", streamed), func(t *testing.T) {
			var o Options
			// setup: a log of 8 batches, one an hour, compacted every 2.
			setup := func() (*memStore, []string) {
				clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
				base := newMemStore(t, "file:///out", clock.Now)
				o = testOptions(clock)
				o.CompactInterval, o.MinBatchesToRetain, o.CleanupDelay = 2, 1, 0
				o.DeleteExpiredLog = false
				if streamed {
					o.MaxInMemoryCompactBytes = 0
				}
				l, _ := NewLog(base, o)
				for b := int64(0); b < 8; b++ {
					if err := l.Add(ctx, b, []SinkFileStatus{entry(fmt.Sprintf("file:///out/p%d", b), clock.Now())}); err != nil {
						t.Fatal(err)
					}
					clock.Advance(time.Hour)
				}
				before, _ := l.AllFiles(ctx)
				return base, paths(before)
			}
			compact := func(st storage.Store) error {
				co := o
				co.Retention = RetentionOf(3 * time.Hour)
				co.DeleteExpiredLog = true
				_, _, err := CompactLog(ctx, st, co)
				return err
			}
			// After: 7.compact keeps the entries at most 3h old at 8h
			// (p5 at 5h, p6, p7); there are no batches after it.
			wantAfter := []string{"file:///out/p5", "file:///out/p6", "file:///out/p7"}
			state := func(st storage.Store) []string {
				l, _ := NewLog(st, o)
				after, err := l.AllFiles(ctx) // no retention on this reader
				if err != nil {
					t.Fatalf("log unreadable: %v", err)
				}
				return paths(after)
			}
			base, _ := setup()
			rec, err := faultstore.New(base, faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := compact(rec); err != nil {
				t.Fatal(err)
			}
			if got := state(base); !slices.Equal(got, wantAfter) {
				t.Fatalf("completed CompactLog left %v", got)
			}
			points := rec.Points()
			if err := faultstore.CheckPoints(points, faultstore.PointSparkCompact, faultstore.PointSparkDelete); err != nil {
				t.Fatal(err)
			}
			for _, c := range faultstore.Crashes(points) {
				t.Run(c.String(), func(t *testing.T) {
					base, before := setup()
					fs, err := faultstore.New(base, faultstore.DefaultOptions())
					if err != nil {
						t.Fatal(err)
					}
					if err := c.Arm(fs); err != nil {
						t.Fatal(err)
					}
					err = compact(fs)
					if !fs.Crashed() {
						t.Fatalf("the crash point was not reached (err %v)", err)
					}
					if err != nil && !errors.Is(err, faultstore.ErrInjected) {
						t.Fatalf("error without an injected cause: %v", err)
					}
					got := state(base)
					if !slices.Equal(got, before) && !slices.Equal(got, wantAfter) {
						t.Fatalf("state %v is neither before %v nor after %v", got, before, wantAfter)
					}
					if err == nil && !slices.Equal(got, wantAfter) {
						t.Fatalf("CompactLog reported success at state %v", got)
					}
					if err := compact(base); err != nil {
						t.Fatalf("rerun: %v", err)
					}
					if got := state(base); !slices.Equal(got, wantAfter) {
						t.Fatalf("rerun left %v, want %v", got, wantAfter)
					}
				})
			}
		})
	}
}
