package compaction

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lakesink/lakesink/metrics"
	"github.com/lakesink/lakesink/table"
)

// TestServiceMetricsMatchReports: ServiceOptions.Metrics counts what the
// pass reports: 36 files compacted with their bytes, one checkpoint, one
// pass; OnPass sees the same report.
func TestServiceMetricsMatchReports(t *testing.T) {
	ctx := context.Background()
	tb, _ := newTable(t, []string{"origin"}, nil)
	for i := range 12 {
		appendRows(t, tb, flightsRows(int64(i*9), 9, origins))
	}
	reg := prometheus.NewRegistry()
	m, err := metrics.NewMaintain(reg)
	if err != nil {
		t.Fatal(err)
	}
	var seen []TableReport
	svc, err := NewService([]*table.Table{tb}, ServiceOptions{SmallFileThreshold: 11, Metrics: m,
		OnPass: func(r TableReport, err error) { seen = append(seen, r) }})
	if err != nil {
		t.Fatal(err)
	}
	reps, err := svc.RunOnce(ctx)
	if err != nil {
		t.Fatal(err)
	}
	rep := reps[0]
	if rep.Optimize == nil || rep.Checkpoint == nil || len(seen) != 1 || seen[0].Optimize == nil {
		t.Fatalf("pass %+v, OnPass saw %d reports", rep, len(seen))
	}
	l := `{table="` + tb.URL() + `"}`
	want := "# HELP lakesink_maintain_files_compacted_total Data files removed by OPTIMIZE (rewritten into larger files).\n" +
		"# TYPE lakesink_maintain_files_compacted_total counter\n" +
		"lakesink_maintain_files_compacted_total" + l + " 36\n" +
		"# HELP lakesink_maintain_checkpoints_written_total Checkpoints written.\n" +
		"# TYPE lakesink_maintain_checkpoints_written_total counter\n" +
		"lakesink_maintain_checkpoints_written_total" + l + " 1\n" +
		"# HELP lakesink_maintain_passes_total Maintenance passes over a table.\n" +
		"# TYPE lakesink_maintain_passes_total counter\n" +
		"lakesink_maintain_passes_total" + l + " 1\n"
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lakesink_maintain_files_compacted_total",
		"lakesink_maintain_checkpoints_written_total", "lakesink_maintain_passes_total"); err != nil {
		t.Fatal(err)
	}
	if got := testutil.ToFloat64(mustCounter(t, reg, "lakesink_maintain_bytes_rewritten_total")); got != float64(rep.Optimize.NumRemovedBytes) || got == 0 {
		t.Fatalf("bytes rewritten = %v, report says %d", got, rep.Optimize.NumRemovedBytes)
	}
}

func mustCounter(t *testing.T, reg *prometheus.Registry, name string) prometheus.Collector {
	t.Helper()
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fams {
		if f.GetName() == name && len(f.GetMetric()) == 1 {
			c := prometheus.NewCounter(prometheus.CounterOpts{Name: name})
			c.Add(f.GetMetric()[0].GetCounter().GetValue())
			return c
		}
	}
	t.Fatalf("no single series of %s", name)
	return nil
}
