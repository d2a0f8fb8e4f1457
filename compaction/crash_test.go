package compaction

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/internal/storage/faultstore"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// TestOptimizeCrash fails a compaction at every storage call, in three ways:
// crash mode (every write after the k-th fails, as if the process died), the
// n-th call of any kind failing before it runs, and the n-th write landing
// but its answer being lost. After each failure the table, reopened on the
// real store, is the state before or after the compaction, its rows
// unchanged, and a fresh compaction still completes.
func TestOptimizeCrash(t *testing.T) {
	ctx := context.Background()
	for _, mode := range []struct {
		name string
		arm  func(fs *faultstore.Store, n int) error
	}{
		{name: "crash after k writes", arm: func(fs *faultstore.Store, n int) error { fs.CrashAfterWrites(n); return nil }},
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
