package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// A sink-like writer appends a batch every 100 ms (idempotent writes with an
// appId and increasing versions) while OPTIMIZE runs again and again: every
// append lands, compaction commits, every version reads, and the rows read
// back are the rows written.
func TestOptimizeWhileAppending(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, []string{"origin"}, nil)
	const batches = 20
	const perBatch = 30
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var writeErr error
	var written [][]any
	wg.Add(1)
	go func() {
		defer wg.Done()
		defer close(stop)
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for b := range batches {
			<-tick.C
			rows := flightsRows(int64(b*perBatch), perBatch, origins)
			res, err := tb.Write(ctx, &schema.Batch{Schema: flightsSchema(), Rows: rows}, table.WriteOptions{AppID: "query-1", Version: int64(b)})
			if err != nil {
				writeErr = err
				return
			}
			if res.Skipped {
				writeErr = errors.New("batch skipped")
				return
			}
			written = append(written, rows...)
		}
	}()
	var results []*Result
	var optErr error
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			_, res, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{Workers: 2})
			if err != nil {
				optErr = err
				return
			}
			if res.Version >= 0 {
				results = append(results, res)
			}
			time.Sleep(30 * time.Millisecond)
		}
	}()
	wg.Wait()
	if writeErr != nil {
		t.Fatalf("append: %v", writeErr)
	}
	if optErr != nil {
		t.Fatalf("optimize: %v", optErr)
	}
	if len(results) == 0 {
		t.Fatal("no compaction committed")
	}
	removed := 0
	for _, r := range results {
		removed += r.NumRemovedFiles
	}
	if removed == 0 {
		t.Fatal("compactions removed no files")
	}
	latest, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := latest.TxnVersion("query-1"); !ok || v != batches-1 {
		t.Fatalf("txn version %d, %v", v, ok)
	}
	optimizes := 0
	for v := int64(0); v <= latest.Version(); v++ {
		snap, err := tb.SnapshotAt(ctx, v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		rows, err := readSnapshot(ctx, st, snap)
		if err != nil {
			t.Fatalf("version %d unreadable: %v", v, err)
		}
		if ci := snap.CommitInfo(); ci.Operation() == "OPTIMIZE" {
			optimizes++
			prev, err := tb.SnapshotAt(ctx, v-1)
			if err != nil {
				t.Fatal(err)
			}
			prevRows, err := readSnapshot(ctx, st, prev)
			if err != nil {
				t.Fatal(err)
			}
			if !equalRowSets(rowSet(rows), rowSet(prevRows)) {
				t.Fatalf("OPTIMIZE version %d changed the rows", v)
			}
			m := ci.StringMap("operationMetrics")
			if m["numRemovedFiles"] == "0" || m["numRemovedFiles"] == "" {
				t.Fatalf("version %d metrics %v", v, m)
			}
		}
	}
	if optimizes != len(results) {
		t.Fatalf("%d OPTIMIZE commits in the log, %d reported", optimizes, len(results))
	}
	got, err := readSnapshot(ctx, st, latest)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(written) || !equalRowSets(rowSet(got), rowSet(written)) {
		t.Fatalf("read %d rows, wrote %d", len(got), len(written))
	}
	ids := map[int64]bool{}
	for _, r := range got {
		ids[r[1].(int64)] = true
	}
	if len(ids) != batches*perBatch {
		t.Fatalf("key set has %d ids, want %d", len(ids), batches*perBatch)
	}
	t.Logf("%d versions, %d compactions removing %d files", latest.Version()+1, len(results), removed)
}

// A concurrent commit removes an input of one bin before or while OPTIMIZE
// rewrites it: that bin is abandoned, the others commit, and the removed rows
// stay removed.
func TestOptimizeAbandonsBinWithRemovedInput(t *testing.T) {
	for _, tc := range []struct {
		name         string
		duringWrite  bool
		wantAttempts int
	}{
		{name: "removed before execute", duringWrite: false, wantAttempts: 1},
		{name: "removed while rewriting", duringWrite: true, wantAttempts: 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tb, st := newTable(t, []string{"origin"}, nil)
			for i := range 4 {
				appendRows(t, tb, flightsRows(int64(i*30), 30, origins))
			}
			snap, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			plan, err := NewPlan(snap, PlanOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Bins) != 3 {
				t.Fatalf("bins %d", len(plan.Bins))
			}
			victim := plan.Bins[0].Files[1]
			var concurrentErr error
			concurrent := func() {
				// Remove one input of the first bin, then append: two commits.
				s, err := tb.Snapshot(ctx)
				if err != nil {
					concurrentErr = err
					return
				}
				tx := tb.Log().Begin(s)
				ts := time.Now().UnixMilli()
				tx.Add(txlog.Action{Remove: &txlog.Remove{Path: victim.Path, DeletionTimestamp: &ts, DataChange: true, PartitionValues: victim.PartitionValues}})
				if _, err := tx.Commit(ctx, "DELETE", nil, nil); err != nil {
					concurrentErr = err
					return
				}
				_, concurrentErr = tb.Write(ctx, &schema.Batch{Schema: flightsSchema(), Rows: flightsRows(1000, 30, origins)}, table.WriteOptions{})
			}
			var once sync.Once
			eo := ExecOptions{Workers: 1}
			if tc.duringWrite {
				eo.Progress = func(e ProgressEvent) {
					if e.Phase == PhaseRewrite {
						once.Do(concurrent)
					}
				}
			} else {
				concurrent()
			}
			res, err := Execute(ctx, tb, plan, eo)
			if err != nil {
				t.Fatal(err)
			}
			if concurrentErr != nil {
				t.Fatal(concurrentErr)
			}
			if res.AbandonedBins != 1 || res.NumBins != 2 || res.CommitAttempts != tc.wantAttempts || res.Version < 0 {
				t.Fatalf("result %+v", res)
			}
			// Expected rows: everything but the victim's, plus the append.
			after, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			beforeOpt, err := tb.SnapshotAt(ctx, res.Version-1)
			if err != nil {
				t.Fatal(err)
			}
			want, err := readSnapshot(ctx, st, beforeOpt)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readSnapshot(ctx, st, after)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != 4*30-10+30 || !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatalf("rows changed: %d vs %d", len(got), len(want))
			}
			// The abandoned bin's output files were deleted: the store holds
			// the inputs (12 + 3 appended, until VACUUM) and 2 new files.
			n := 0
			for _, k := range listKeys(t, st) {
				if k[0] != '_' {
					n++
				}
			}
			if n != 12+3+2 {
				t.Fatalf("%d data files in the store, want %d", n, 12+3+2)
			}
		})
	}
}

func decodePlan(t *testing.T, p *Plan) *Plan {
	t.Helper()
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	var out Plan
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	return &out
}

// A plan that went through JSON (--dry-run output fed back) executes on the
// version it names.
func TestExecuteDecodedPlan(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, nil, nil)
	for i := range 3 {
		appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
	}
	snap, _ := tb.Snapshot(ctx)
	want, _ := readSnapshot(ctx, st, snap)
	plan, err := NewPlan(snap, PlanOptions{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Execute(ctx, tb, decodePlan(t, plan), ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumRemovedFiles != 3 || res.NumAddedFiles != 1 {
		t.Fatalf("%+v", res)
	}
	after, _ := tb.Snapshot(ctx)
	got, err := readSnapshot(ctx, st, after)
	if err != nil || !equalRowSets(rowSet(got), rowSet(want)) {
		t.Fatalf("rows changed: %v", err)
	}
	// The same plan again: its inputs are gone, so every bin is abandoned.
	res, err = Execute(ctx, tb, decodePlan(t, plan), ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Version != -1 || res.AbandonedBins != 1 {
		t.Fatalf("stale plan: %+v", res)
	}
}
