package compaction

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// TestOptimizeCrash fails a compaction at every storage call, in two ways:
// the n-th call of any kind failing before it runs, and the n-th write
// landing but its answer being lost (crashes at every durable step are
// TestOptimizeCrashPoints'). After each failure the table, reopened on the
// real store, is the state before or after the compaction, its rows
// unchanged, and a fresh compaction still completes.
func TestOptimizeCrash(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		arm  func(fs *faultstore.Store, n int) error
	}{
		{name: "n-th call fails before", arm: func(fs *faultstore.Store, n int) error {
			return fs.Add(faultstore.Rule{Ops: faultstore.OpAll, Nth: n + 1, Mode: faultstore.FailBefore})
		}},
		{name: "n-th write loses its answer", arm: func(fs *faultstore.Store, n int) error {
			return fs.Add(faultstore.Rule{Ops: faultstore.OpWrites, Nth: n + 1, Mode: faultstore.FailAfter})
		}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			for n := 0; ; n++ {
				if n > 500 {
					t.Fatal("compaction never completed")
				}
				tb, base := newTable(t, []string{"origin"}, nil)
				var want [][]any
				for i := range 3 {
					rows := flightsRows(int64(i*20), 20, origins)
					appendRows(t, tb, rows)
					want = append(want, rows...)
				}
				before, err := tb.Snapshot(ctx)
				if err != nil {
					t.Fatal(err)
				}
				fs, err := faultstore.New(base, faultstore.DefaultOptions())
				if err != nil {
					t.Fatal(err)
				}
				ftb, err := table.OpenStore(fs, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
				if err != nil {
					t.Fatal(err)
				}
				if err := mode.arm(fs, n); err != nil {
					t.Fatal(err)
				}
				_, res, opErr := Optimize(ctx, ftb, PlanOptions{}, ExecOptions{Workers: 1})
				injected := fs.Counts().Injected > 0
				if opErr != nil && !errors.Is(opErr, faultstore.ErrInjected) {
					t.Fatalf("n=%d: error without an injected fault cause: %v", n, opErr)
				}
				// Reopen on the real store.
				after, err := tb.Snapshot(ctx)
				if err != nil {
					t.Fatalf("n=%d: table unreadable after the failure: %v", n, err)
				}
				got, err := readSnapshot(ctx, base, after)
				if err != nil {
					t.Fatalf("n=%d: rows unreadable after the failure: %v", n, err)
				}
				if !equalRowSets(rowSet(got), rowSet(want)) {
					t.Fatalf("n=%d: rows changed (%d vs %d)", n, len(got), len(want))
				}
				switch after.Version() {
				case before.Version():
					if opErr == nil {
						t.Fatalf("n=%d: success without a commit", n)
					}
					if !slices.Equal(filePaths(after), filePaths(before)) {
						t.Fatalf("n=%d: same version, different files", n)
					}
				case before.Version() + 1:
					if ci := after.CommitInfo(); ci.Operation() != "OPTIMIZE" || after.NumFiles() != 3 {
						t.Fatalf("n=%d: version %d is %s with %d files", n, after.Version(), ci.Operation(), after.NumFiles())
					}
				default:
					t.Fatalf("n=%d: version %d after a compaction of version %d", n, after.Version(), before.Version())
				}
				if opErr == nil && !injected {
					if res.Version != before.Version()+1 {
						t.Fatalf("n=%d: result %+v", n, res)
					}
					t.Logf("completed at n=%d", n)
					return
				}
				// The table is still maintainable: a clean compaction completes.
				_, res2, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{})
				if err != nil {
					t.Fatalf("n=%d: compaction after the failure: %v", n, err)
				}
				final, _ := tb.Snapshot(ctx)
				if final.NumFiles() != 3 {
					t.Fatalf("n=%d: %d files after recovery (%+v)", n, final.NumFiles(), res2)
				}
				got, err = readSnapshot(ctx, base, final)
				if err != nil || !equalRowSets(rowSet(got), rowSet(want)) {
					t.Fatalf("n=%d: rows changed after recovery: %v", n, err)
				}
			}
		})
	}
}

func filePaths(s *txlog.Snapshot) []string {
	var out []string
	for _, a := range s.Files() {
		out = append(out, a.Path)
	}
	return out
}

// crashCase runs a maintenance operation under every named crash point:
// setup builds the table once (on its own in-memory store) and returns its
// store, which every run copies; op runs the operation on a table opened over the given store;
// check verifies the state crash c (or the rerun after it, final=true)
// left, reading base without faults. The operation is first run on a recorder, whose
// point names must be exactly points; then for every occurrence of every
// point, before the step and after it (performed, its answer lost, the
// process dead), the operation crashes there, the state is checked, the
// operation is rerun without faults, and the final state is checked.
type crashCase struct {
	points []string
	setup  func(t *testing.T) storage.Store
	op     func(ctx context.Context, tb *table.Table) error
	check  func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool)
	// fresh: call setup for every run instead of copying its store (for
	// contents that name their own store's URL, as _spark_metadata does).
	fresh bool
}

func (cc crashCase) run(t *testing.T) {
	ctx := context.Background()
	open := func(st storage.Store) *table.Table {
		tb, err := table.OpenStore(st, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
		if err != nil {
			t.Fatal(err)
		}
		return tb
	}
	template := cc.setup(t)
	recBase := template
	if !cc.fresh {
		recBase = copyStore(t, template)
	}
	rec, err := faultstore.New(recBase, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := cc.op(ctx, open(rec)); err != nil {
		t.Fatal(err)
	}
	points := rec.Points()
	if err := faultstore.CheckPoints(points, cc.points...); err != nil {
		t.Fatal(err)
	}
	for _, c := range crashesToRun(points) {
		t.Run(c.String(), func(t *testing.T) {
			base := template
			if cc.fresh {
				base = cc.setup(t)
			} else {
				base = copyStore(t, template)
			}
			fs, err := faultstore.New(base, faultstore.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Arm(fs); err != nil {
				t.Fatal(err)
			}
			opErr := cc.op(ctx, open(fs))
			if !fs.Crashed() {
				t.Fatalf("the crash point was not reached (err %v)", opErr)
			}
			if opErr != nil && !errors.Is(opErr, faultstore.ErrInjected) {
				t.Fatalf("error without an injected cause: %v", opErr)
			}
			cc.check(t, base, c, opErr, false)
			if err := cc.op(ctx, open(base)); err != nil {
				t.Fatalf("rerun after the crash: %v", err)
			}
			cc.check(t, base, c, nil, true)
		})
	}
}

// crashPointsEnv set to "all" (`make soak`) crashes at every occurrence of
// every point.
const crashPointsEnv = "LAKESINK_CRASH_POINTS"

// crashesToRun is faultstore.Crashes(points), except that a point occurring
// more than three times in the run (VACUUM's data-delete, one per file)
// keeps its first two and its last occurrence in `make test`: the ones in
// between take the same path with one more file deleted.
// LAKESINK_CRASH_POINTS=all runs them all.
func crashesToRun(points []faultstore.Point) []faultstore.Crash {
	all := faultstore.Crashes(points)
	if os.Getenv(crashPointsEnv) == "all" {
		return all
	}
	last := map[string]int{}
	for _, p := range points {
		last[p.Name] = max(last[p.Name], p.N)
	}
	var out []faultstore.Crash
	for _, c := range all {
		if n, l := c.Point.N, last[c.Point.Name]; l+1 > 3 && n >= 2 && n != l {
			continue
		}
		out = append(out, c)
	}
	return out
}

// copyStore copies every object of src into a fresh in-memory store.
func copyStore(t *testing.T, src storage.Store) storage.Store {
	t.Helper()
	ctx := context.Background()
	dst, err := storage.Open(ctx, fmt.Sprintf("mem://compaction-%d/t", memSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dst.Close() })
	for fi, err := range src.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		data, err := src.Read(ctx, fi.Path)
		if err != nil {
			t.Fatal(err)
		}
		if err := dst.Put(ctx, fi.Path, data); err != nil {
			t.Fatal(err)
		}
	}
	return dst
}

// maintTable: a table partitioned by origin with three appends of 20 rows
// (9 small files); it returns the store and the rows.
func maintTable(t *testing.T) (*table.Table, storage.Store, [][]any) {
	tb, base := newTable(t, []string{"origin"}, nil)
	var want [][]any
	for i := range 3 {
		rows := flightsRows(int64(i*20), 20, origins)
		appendRows(t, tb, rows)
		want = append(want, rows...)
	}
	return tb, base, want
}

// reopen opens a fresh table over st (no cached log state).
func reopen(t *testing.T, st storage.Store) *table.Table {
	t.Helper()
	tb, err := table.OpenStore(st, table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true}))
	if err != nil {
		t.Fatal(err)
	}
	return tb
}

// TestOptimizeCrashPoints: OPTIMIZE (Execute), with one worker and with
// three bins rewritten at once, crashed at each of its durable steps
// (data-file, commit). The table is before (version 3, 9
// files) or after (version 4 = OPTIMIZE, 3 files), its rows unchanged; a
// rerun completes and the compaction is committed exactly once.
func TestOptimizeCrashPoints(t *testing.T) {
	for _, workers := range []int{1, 3} {
		t.Run(fmt.Sprintf("workers=%d", workers), func(t *testing.T) { optimizeCrashPoints(t, workers) })
	}
}

func optimizeCrashPoints(t *testing.T, workers int) {
	var want [][]any
	crashCase{
		points: []string{faultstore.PointDataFile, faultstore.PointCommit, faultstore.PointChecksum},
		setup: func(t *testing.T) storage.Store {
			_, base, rows := maintTable(t)
			want = rows
			return base
		},
		op: func(ctx context.Context, tb *table.Table) error {
			_, _, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{Workers: workers})
			return err
		},
		check: func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool) {
			ctx := context.Background()
			snap, err := reopen(t, base).Snapshot(ctx)
			if err != nil {
				t.Fatalf("table unreadable: %v", err)
			}
			got, err := readSnapshot(ctx, base, snap)
			if err != nil {
				t.Fatalf("rows unreadable: %v", err)
			}
			if !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatalf("rows changed (%d vs %d)", len(got), len(want))
			}
			switch v := snap.Version(); {
			case v == 3 && !final && opErr != nil:
				if snap.NumFiles() != 9 {
					t.Fatalf("version 3 with %d files", snap.NumFiles())
				}
			case v == 4:
				if ci := snap.CommitInfo(); ci.Operation() != "OPTIMIZE" || snap.NumFiles() != 3 {
					t.Fatalf("version 4 is %s with %d files", ci.Operation(), snap.NumFiles())
				}
			default:
				t.Fatalf("version %d (final %v, err %v): want 3 before, 4 after, one OPTIMIZE commit", v, final, opErr)
			}
		},
	}.run(t)
}

// TestVacuumCrashPoints: VACUUM crashed at its VACUUM START and VACUUM END
// commits (and their .crc) and at each file it deletes (data-delete), before and after the
// step. After the crash and after the rerun no live file is gone and the
// rows are unchanged; only victims (the 9 files OPTIMIZE removed, and an
// orphan older than the untracked-file floor) are gone, and the rerun
// deletes every victim.
func TestVacuumCrashPoints(t *testing.T) {
	var want [][]any
	var victims []string
	now := time.Now().Add(2 * DefaultUntrackedMinAge)
	crashCase{
		points: []string{faultstore.PointCommit, faultstore.PointChecksum, faultstore.PointDataDelete},
		setup: func(t *testing.T) storage.Store {
			ctx := context.Background()
			tb, base, rows := maintTable(t)
			want = rows
			before, _ := tb.Snapshot(ctx)
			victims = filePaths(before)
			if _, _, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{}); err != nil {
				t.Fatal(err)
			}
			if err := base.Put(ctx, "origin=JFK/part-orphan.snappy.parquet", []byte("orphan")); err != nil {
				t.Fatal(err)
			}
			victims = append(victims, "origin=JFK/part-orphan.snappy.parquet")
			return base
		},
		op: func(ctx context.Context, tb *table.Table) error {
			_, err := Vacuum(ctx, tb, VacuumOptions{RetainZero: true, Force: true, Workers: 4, Now: func() time.Time { return now }})
			return err
		},
		check: func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool) {
			ctx := context.Background()
			snap, err := reopen(t, base).Snapshot(ctx)
			if err != nil {
				t.Fatalf("table unreadable: %v", err)
			}
			got, err := readSnapshot(ctx, base, snap)
			if err != nil {
				t.Fatalf("a live file is unreadable: %v", err)
			}
			if !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatalf("rows changed (%d vs %d)", len(got), len(want))
			}
			live := map[string]bool{}
			for _, p := range filePaths(snap) {
				live[p] = true
			}
			var present []string
			for fi, err := range base.List(ctx, "", "") {
				if err != nil {
					t.Fatal(err)
				}
				if !strings.HasPrefix(fi.Path, "_delta_log/") && !live[fi.Path] {
					present = append(present, fi.Path)
				}
			}
			for _, p := range present {
				if !slices.Contains(victims, p) {
					t.Fatalf("%s is neither live nor a victim", p)
				}
			}
			if (final || opErr == nil) && len(present) > 0 {
				t.Fatalf("a completed VACUUM left victims %v", present)
			}
			if len(live) != 3 {
				t.Fatalf("%d live files, want 3", len(live))
			}
		},
	}.run(t)
}

// logRef is the state of every version of a table's log, for comparison
// after a crash.
func logRef(t *testing.T, base storage.Store) map[int64]string {
	t.Helper()
	ctx := context.Background()
	tb := reopen(t, base)
	latest, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ref := map[int64]string{}
	for v := int64(0); v <= latest.Version(); v++ {
		snap, err := tb.SnapshotAt(ctx, v)
		if err != nil {
			continue // not reconstructible (cleaned up)
		}
		ref[v] = snapshotKey(snap)
	}
	return ref
}

func snapshotKey(s *txlog.Snapshot) string {
	p := filePaths(s)
	slices.Sort(p)
	return fmt.Sprintf("v%d %s %v %v", s.Version(), s.Metadata().ID, p, s.Txns())
}

// checkLog: every version in ref that must be retained (>= minRetained)
// replays to the same state, and any other version either replays to the
// same state or fails; never a different state.
func checkLog(t *testing.T, base storage.Store, ref map[int64]string, minRetained int64) {
	t.Helper()
	ctx := context.Background()
	tb := reopen(t, base)
	latest, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatalf("latest snapshot: %v", err)
	}
	if want := ref[int64(len(ref))-1]; snapshotKey(latest) != want {
		t.Fatalf("latest snapshot %s, want %s", snapshotKey(latest), want)
	}
	for v, want := range ref {
		snap, err := tb.SnapshotAt(ctx, v)
		switch {
		case err != nil && v >= minRetained:
			t.Fatalf("retained version %d unreadable: %v", v, err)
		case err == nil && snapshotKey(snap) != want:
			t.Fatalf("version %d replays to %s, want %s", v, snapshotKey(snap), want)
		}
	}
}

// TestCheckpointCrashPoints: compaction.Checkpoint crashed at its durable
// steps (checkpoint, last-checkpoint) on a table that already has an
// older checkpoint (version 2): every version replays to the same state
// after the crash (a checkpoint without its _last_checkpoint hint, or no
// new checkpoint at all), and the rerun's _last_checkpoint names the
// latest version.
func TestCheckpointCrashPoints(t *testing.T) {
	var ref map[int64]string
	crashCase{
		points: []string{faultstore.PointCheckpoint, faultstore.PointLastCheckpoint},
		setup: func(t *testing.T) storage.Store {
			ctx := context.Background()
			tb, base := newTable(t, []string{"origin"}, nil)
			for i := range 5 {
				appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
				if i == 1 {
					if _, err := Checkpoint(ctx, tb); err != nil {
						t.Fatal(err)
					}
				}
			}
			ref = logRef(t, base)
			if len(ref) != 6 {
				t.Fatalf("reference log %d versions", len(ref))
			}
			return base
		},
		op: func(ctx context.Context, tb *table.Table) error {
			_, err := Checkpoint(ctx, tb)
			return err
		},
		check: func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool) {
			checkLog(t, base, ref, 0)
			if final {
				snap, err := reopen(t, base).Snapshot(context.Background())
				if err != nil || snap.CheckpointVersion() != 5 {
					t.Fatalf("after the rerun: checkpoint version %d, %v; want 5", snap.CheckpointVersion(), err)
				}
				data, err := base.Read(context.Background(), txlog.LastCheckpointPath)
				if err != nil || !strings.Contains(string(data), `"version":5`) {
					t.Fatalf("_last_checkpoint %s, %v", data, err)
				}
			}
		},
	}.run(t)
}

// TestCleanupLogCrashPoints: CleanupLog crashed at each log file it deletes
// (log-cleanup-delete), before and after. The retained versions (from the
// newest checkpoint, version 6) replay to the same state after the crash
// and after the rerun; an older version replays to its own state or fails,
// never to another state; the rerun deletes everything before version 6.
func TestCleanupLogCrashPoints(t *testing.T) {
	var ref map[int64]string
	now := time.Now().Add(60 * 24 * time.Hour) // every commit has expired
	crashCase{
		points: []string{faultstore.PointLogCleanupDelete},
		setup: func(t *testing.T) storage.Store {
			ctx := context.Background()
			tb, base := newTable(t, []string{"origin"}, nil)
			for i := range 7 {
				appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
				if i == 2 || i == 5 {
					if _, err := Checkpoint(ctx, tb); err != nil {
						t.Fatal(err)
					}
				}
			}
			ref = logRef(t, base)
			if len(ref) != 8 {
				t.Fatalf("reference log %d versions", len(ref))
			}
			return base
		},
		op: func(ctx context.Context, tb *table.Table) error {
			_, err := CleanupLog(ctx, tb, CleanupLogOptions{Now: func() time.Time { return now }})
			return err
		},
		check: func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool) {
			checkLog(t, base, ref, 6)
			if final {
				var left []string
				for fi, err := range base.List(context.Background(), txlog.LogDir+"/", "") {
					if err != nil {
						t.Fatal(err)
					}
					left = append(left, strings.TrimPrefix(fi.Path, txlog.LogDir+"/"))
				}
				want := []string{"00000000000000000006.checkpoint.parquet", "00000000000000000006.crc", "00000000000000000006.json",
					"00000000000000000007.crc", "00000000000000000007.json", "_last_checkpoint"}
				if !slices.Equal(left, want) {
					t.Fatalf("log after the rerun %v, want %v", left, want)
				}
			}
		},
	}.run(t)
}

// TestServicePassCrashPoints crashes one pass of the maintenance service
// at every durable step of it — OPTIMIZE (data-file, commit), the
// checkpoint that is then due (checkpoint, last-checkpoint), VACUUM
// (data-delete) and the expired-log cleanup (log-cleanup-delete) — before
// and after each. After the crash the rows are unchanged, the table is at
// the version before or at the one OPTIMIZE commit, every version from the
// newest checkpoint on replays, an older version replays to its own state
// or fails; a pass of a new service (a restarted process) then leaves the
// table compacted, checkpointed, vacuumed and cleaned.
func TestServicePassCrashPoints(t *testing.T) {
	var want [][]any
	var ref map[int64]string
	now := time.Now().Add(60 * 24 * time.Hour) // tombstones and commits have expired
	crashCase{
		points: []string{faultstore.PointDataFile, faultstore.PointCommit, faultstore.PointChecksum, faultstore.PointCheckpoint,
			faultstore.PointLastCheckpoint, faultstore.PointDataDelete, faultstore.PointLogCleanupDelete},
		setup: func(t *testing.T) storage.Store {
			tb, base := newTable(t, []string{"origin"}, map[string]string{txlog.PropCheckpointInterval: "2"})
			want = nil
			for i := range 3 {
				rows := flightsRows(int64(i*20), 20, origins)
				appendRows(t, tb, rows)
				want = append(want, rows...)
				if i == 1 {
					if _, err := Checkpoint(context.Background(), tb); err != nil {
						t.Fatal(err)
					}
				}
			}
			ref = logRef(t, base)
			return base
		},
		op: func(ctx context.Context, tb *table.Table) error {
			svc, err := NewService([]*table.Table{tb}, ServiceOptions{
				SmallFileThreshold: 2, Exec: ExecOptions{Workers: 1}, Now: func() time.Time { return now }})
			if err != nil {
				return err
			}
			_, err = svc.RunOnce(ctx)
			return err
		},
		check: func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool) {
			ctx := context.Background()
			tb := reopen(t, base)
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatalf("table unreadable: %v", err)
			}
			got, err := readSnapshot(ctx, base, snap)
			if err != nil {
				t.Fatalf("rows unreadable: %v", err)
			}
			if !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatalf("rows changed (%d vs %d)", len(got), len(want))
			}
			// Version 4 is the OPTIMIZE; VACUUM then adds its START and END
			// commits (a START whose VACUUM crashed, or whose END commit
			// failed, stays without an END, as in Delta; the rerun adds its
			// own pair when it still has files to delete). A rerun pass may
			// checkpoint a later version and clean up the log before it.
			switch {
			case snap.Version() == 3:
				if final || opErr == nil {
					t.Fatalf("a completed pass left version 3")
				}
			case snap.Version() >= 4:
				if snap.NumFiles() != 3 {
					t.Fatalf("version %d has %d files, want the 3 OPTIMIZE wrote", snap.Version(), snap.NumFiles())
				}
				optimizes := 0
				for _, op := range opsSince(t, tb, 3) {
					switch op {
					case "OPTIMIZE":
						optimizes++
					case OpVacuumStart, OpVacuumEnd:
					default:
						t.Fatalf("commit %s after version 3", op)
					}
				}
				if optimizes > 1 {
					t.Fatalf("%d OPTIMIZE commits", optimizes)
				}
			default:
				t.Fatalf("version %d: want 3, or 4 after one OPTIMIZE commit", snap.Version())
			}
			minRetained := max(snap.CheckpointVersion(), 0)
			for v := minRetained; v <= snap.Version(); v++ {
				if _, err := tb.SnapshotAt(ctx, v); err != nil {
					t.Fatalf("retained version %d unreadable: %v", v, err)
				}
			}
			for v, w := range ref {
				if s, err := tb.SnapshotAt(ctx, v); err == nil && snapshotKey(s) != w {
					t.Fatalf("version %d replays to %s, want %s", v, snapshotKey(s), w)
				}
			}
			if !final && opErr != nil {
				return
			}
			// Completed: compacted, checkpointed, vacuumed, cleaned.
			live := map[string]bool{}
			for _, p := range filePaths(snap) {
				live[p] = true
			}
			var log, dead []string
			for fi, err := range base.List(ctx, "", "") {
				if err != nil {
					t.Fatal(err)
				}
				switch {
				case strings.HasPrefix(fi.Path, txlog.LogDir+"/"):
					log = append(log, strings.TrimPrefix(fi.Path, txlog.LogDir+"/"))
				case !live[fi.Path]:
					dead = append(dead, fi.Path)
				}
			}
			if len(dead) > 0 {
				t.Fatalf("files neither live nor vacuumed: %v", dead)
			}
			cp := snap.CheckpointVersion()
			// A version's .crc is there unless the crash came before it
			// (nothing rewrites one); every one older than the checkpoint
			// was cleaned up with its commit.
			log = slices.DeleteFunc(log, func(name string) bool {
				return strings.HasSuffix(name, ".crc") && name >= fmt.Sprintf("%020d", cp)
			})
			wantLog := []string{fmt.Sprintf("%020d.checkpoint.parquet", cp)}
			for v := cp; v <= snap.Version(); v++ {
				wantLog = append(wantLog, fmt.Sprintf("%020d.json", v))
			}
			wantLog = append(wantLog, "_last_checkpoint")
			if !slices.Equal(log, wantLog) {
				t.Fatalf("log %v, want %v", log, wantLog)
			}
			// _last_checkpoint names the newest checkpoint (4, or a later one
			// a rerun pass wrote), also after a crash between
			// the checkpoint and its hint (checkpoint#0/after,
			// last-checkpoint#0/before): the rerun pass sees the hint older
			// than the newest checkpoint and checkpoints again. (It used to
			// keep naming version 2, whose checkpoint the cleanup deleted.)
			hint, err := base.Read(ctx, txlog.LastCheckpointPath)
			if err != nil {
				t.Fatal(err)
			}
			if !strings.Contains(string(hint), fmt.Sprintf(`"version":%d`, cp)) || cp < 4 {
				t.Fatalf("_last_checkpoint %s, want version %d (4 or later)", hint, cp)
			}
		},
	}.run(t)
}

// TestConvertCrashPoints: Convert of a file-sink directory crashed at its
// one durable step (commit), before and after, when it creates the table
// (batches 0-2) and when it adds batches 3-5 (with compaction batch 4) to
// a converted table. After the crash the table is at the state before
// (no table, or the batches converted before) or after; the rerun
// converts exactly the logged rows, once, and records the latest batch in
// the ConvertAppID txn.
func TestConvertCrashPoints(t *testing.T) {
	for _, incremental := range []bool{false, true} {
		t.Run(fmt.Sprintf("incremental=%v", incremental), func(t *testing.T) {
			var written []int64
			var tableBefore []int64 // ids in the table before the operation (nil: no table)
			crashCase{
				points: []string{faultstore.PointCommit, faultstore.PointChecksum},
				fresh:  true,
				setup: func(t *testing.T) storage.Store {
					ctx := context.Background()
					st, err := storage.Open(ctx, fmt.Sprintf("mem://compaction-%d/fs", memSeq.Add(1)))
					if err != nil {
						t.Fatal(err)
					}
					t.Cleanup(func() { st.Close() })
					fo := filesink.DefaultOptions()
					fo.PartitionColumns = []string{"origin"}
					fo.CompactInterval = 5
					s, err := filesink.New(ctx, st, fo)
					if err != nil {
						t.Fatal(err)
					}
					written, tableBefore = nil, nil
					for b := range int64(6) {
						if b == 3 {
							if !incremental {
								break
							}
							if _, err := Convert(ctx, reopen(t, st), ConvertOptions{}); err != nil {
								t.Fatal(err)
							}
							tableBefore = slices.Clone(written)
						}
						rows := flightsRows(b*20, 20, origins)
						if _, err := s.AddBatch(ctx, b, &schema.Batch{Schema: flightsSchema(), Rows: rows}); err != nil {
							t.Fatal(err)
						}
						for _, r := range rows {
							written = append(written, r[1].(int64))
						}
					}
					return st
				},
				op: func(ctx context.Context, tb *table.Table) error {
					_, err := Convert(ctx, tb, ConvertOptions{})
					return err
				},
				check: func(t *testing.T, base storage.Store, c faultstore.Crash, opErr error, final bool) {
					ctx := context.Background()
					snap, err := reopen(t, base).Snapshot(ctx)
					if errors.Is(err, txlog.ErrTableNotFound) {
						if final || opErr == nil || tableBefore != nil {
							t.Fatalf("no table (final %v, err %v)", final, opErr)
						}
						return
					}
					if err != nil {
						t.Fatalf("table unreadable: %v", err)
					}
					got := tableIDs(t, base, snap)
					switch {
					case slices.Equal(got, sorted(written)):
						last := int64(len(written)/20 - 1) // the latest batch
						if v, ok := snap.TxnVersion(ConvertAppID); !ok || v != last {
							t.Fatalf("converted all, but txn %s = %d, %v; want %d", ConvertAppID, v, ok, last)
						}
					case !final && opErr != nil && tableBefore != nil && slices.Equal(got, sorted(tableBefore)):
					default:
						t.Fatalf("table holds %d rows: neither before (%d) nor after (%d)", len(got), len(tableBefore), len(written))
					}
				},
			}.run(t)
		})
	}
}

func sorted(ids []int64) []int64 {
	out := slices.Clone(ids)
	slices.Sort(out)
	return out
}

// tableIDs reads the id column of every live file of snap, sorted.
func tableIDs(t *testing.T, st storage.Store, snap *txlog.Snapshot) []int64 {
	t.Helper()
	rows, err := readSnapshot(context.Background(), st, snap)
	if err != nil {
		t.Fatalf("rows unreadable: %v", err)
	}
	sch, err := snap.Schema()
	if err != nil {
		t.Fatal(err)
	}
	idx := sch.FieldIndex("id")
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r[idx].(int64))
	}
	slices.Sort(ids)
	return ids
}
