package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"testing"

	"github.com/lakesink/lakesink/txlog"
)

func TestOptimizeRewritesSmallFiles(t *testing.T) {
	for _, tc := range []struct {
		name     string
		partCols []string
		wantBins int
	}{
		{name: "unpartitioned", wantBins: 1},
		{name: "partitioned by origin", partCols: []string{"origin"}, wantBins: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			tb, st := newTable(t, tc.partCols, nil)
			var want [][]any
			for i := range 6 {
				rows := flightsRows(int64(i*100), 100, origins)
				appendRows(t, tb, rows)
				want = append(want, rows...)
			}
			before, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			var events []ProgressEvent
			plan, res, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{Workers: 2, Progress: func(e ProgressEvent) { events = append(events, e) }})
			if err != nil {
				t.Fatal(err)
			}
			if len(plan.Bins) != tc.wantBins {
				t.Fatalf("bins = %d, want %d", len(plan.Bins), tc.wantBins)
			}
			if res.NumRemovedFiles != before.NumFiles() || res.NumAddedFiles != tc.wantBins || res.Version != before.Version()+1 {
				t.Fatalf("result %+v, before %d files at v%d", res, before.NumFiles(), before.Version())
			}
			if res.NumRows != int64(len(want)) {
				t.Fatalf("rows rewritten %d, want %d", res.NumRows, len(want))
			}
			after, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if after.NumFiles() != tc.wantBins {
				t.Fatalf("files after = %d", after.NumFiles())
			}
			got, err := readSnapshot(ctx, st, after)
			if err != nil {
				t.Fatal(err)
			}
			if !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatalf("rows differ: got %d want %d", len(got), len(want))
			}
			// The commit: one commit, OPTIMIZE, dataChange=false everywhere.
			acts, err := tb.Log().ReadCommit(ctx, res.Version)
			if err != nil {
				t.Fatal(err)
			}
			var adds, removes int
			for _, a := range acts {
				switch {
				case a.CommitInfo != nil:
					if a.CommitInfo.Operation() != "OPTIMIZE" {
						t.Errorf("operation %q", a.CommitInfo.Operation())
					}
					m := a.CommitInfo.StringMap("operationMetrics")
					if m["numRemovedFiles"] != "18" && m["numRemovedFiles"] != "6" {
						t.Errorf("metrics %v", m)
					}
				case a.Add != nil:
					adds++
					if a.Add.DataChange || a.Add.Stats == "" {
						t.Errorf("add %+v", a.Add)
					}
				case a.Remove != nil:
					removes++
					if a.Remove.DataChange || a.Remove.DeletionTimestamp == nil || a.Remove.Size == nil {
						t.Errorf("remove %+v", a.Remove)
					}
				}
			}
			if adds != res.NumAddedFiles || removes != res.NumRemovedFiles {
				t.Errorf("commit has %d adds %d removes; result %+v", adds, removes, res)
			}
			if last := events[len(events)-1]; last.Phase != PhaseDone || last.BinsDone != tc.wantBins || last.BytesRewritten != plan.Bytes {
				t.Errorf("last progress %+v", last)
			}
			// A second run has nothing to do.
			plan2, res2, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{})
			if err != nil || len(plan2.Bins) != 0 || res2.Version != -1 {
				t.Fatalf("second run: %v %+v %+v", err, plan2, res2)
			}
			if _, err := json.Marshal(plan); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestPlanWhereAndLimits(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTable(t, []string{"origin"}, map[string]string{"delta.targetFileSize": "1000000"})
	for i := range 4 {
		appendRows(t, tb, flightsRows(int64(i*30), 30, origins))
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		opts    PlanOptions
		bins    int
		files   int
		skipped int
		err     error
	}{
		{name: "all", opts: PlanOptions{}, bins: 3, files: 12},
		{name: "where origin", opts: PlanOptions{Where: "origin = 'SFO'"}, bins: 1, files: 4},
		{name: "where in", opts: PlanOptions{Where: "origin IN ('SFO', 'LAX')"}, bins: 2, files: 8},
		{name: "max bins", opts: PlanOptions{MaxBins: 2}, bins: 2, files: 8, skipped: 1},
		{name: "max bytes", opts: PlanOptions{MaxBytes: 1}, bins: 1, files: 4, skipped: 2},
		{name: "tiny target leaves only single-file bins", opts: PlanOptions{TargetFileSizeBytes: 1, MinFileSizeBytes: 1 << 30}, bins: 0, files: 0},
		{name: "non-partition column", opts: PlanOptions{Where: "delay > 3"}, err: ErrPredicate},
		{name: "syntax", opts: PlanOptions{Where: "origin = "}, err: ErrPredicate},
		{name: "negative", opts: PlanOptions{MaxBins: -1}, err: ErrInvalidOptions},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, err := NewPlan(snap, tc.opts)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if len(p.Bins) != tc.bins || p.NumFiles != tc.files || p.SkippedBins != tc.skipped {
				t.Fatalf("bins %d files %d skipped %d", len(p.Bins), p.NumFiles, p.SkippedBins)
			}
			if p.TargetFileSizeBytes == 0 || (tc.opts.TargetFileSizeBytes == 0 && p.TargetFileSizeBytes != 1000000) {
				t.Fatalf("target %d", p.TargetFileSizeBytes)
			}
			for _, b := range p.Bins {
				if b.Rows != 30*int64(len(b.Files))/3 && b.Rows <= 0 {
					t.Errorf("bin rows %d", b.Rows)
				}
				for _, f := range b.Files {
					if f.PartitionValues["origin"] == nil || *f.PartitionValues["origin"] != *b.PartitionValues["origin"] {
						t.Errorf("file %s not in bin partition %s", f.Path, b.Partition)
					}
				}
			}
			// Deterministic.
			p2, _ := NewPlan(snap, tc.opts)
			a, _ := json.Marshal(p)
			b, _ := json.Marshal(p2)
			if string(a) != string(b) {
				t.Fatal("plan not deterministic")
			}
		})
	}
	_ = txlog.LogDir
}
