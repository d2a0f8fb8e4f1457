package metrics_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/lakesink/lakesink/metrics"
)

// TestIngestCountsOnlyCommittedBatches: records, bytes and files count for
// committed batches; skipped, abandoned and failed batches are counted by
// result only.
func TestIngestCountsOnlyCommittedBatches(t *testing.T) {
	reg := prometheus.NewRegistry()
	m, err := metrics.NewIngest(reg, "file:///t")
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveBatch(metrics.Batch{Result: "committed", Records: 10, Bytes: 100, Files: 2, FileBytes: 900, Duration: time.Second})
	m.ObserveBatch(metrics.Batch{Result: "abandoned", Records: 7, Conflict: true})
	m.ObserveBatch(metrics.Batch{Result: "failed", Records: 7, Retry: true})
	m.ObserveBatch(metrics.Batch{Result: "skipped"})
	m.SetKafkaLag("t", 3, 42)
	want := `
# HELP lakesink_ingest_records_total Records read from the source into committed batches.
# TYPE lakesink_ingest_records_total counter
lakesink_ingest_records_total{table="file:///t"} 10
# HELP lakesink_ingest_batches_total Batches by result: committed, skipped (already in the table), abandoned (rebalance), failed.
# TYPE lakesink_ingest_batches_total counter
lakesink_ingest_batches_total{result="abandoned",table="file:///t"} 1
lakesink_ingest_batches_total{result="committed",table="file:///t"} 1
lakesink_ingest_batches_total{result="failed",table="file:///t"} 1
lakesink_ingest_batches_total{result="skipped",table="file:///t"} 1
# HELP lakesink_ingest_commit_conflicts_total Commits lost to a concurrent writer.
# TYPE lakesink_ingest_commit_conflicts_total counter
lakesink_ingest_commit_conflicts_total{table="file:///t"} 1
# HELP lakesink_ingest_files_written_total Data files committed.
# TYPE lakesink_ingest_files_written_total counter
lakesink_ingest_files_written_total{table="file:///t"} 2
# HELP lakesink_ingest_kafka_lag_records Kafka end offset minus the next offset to write (txn version + 1), per partition owned.
# TYPE lakesink_ingest_kafka_lag_records gauge
lakesink_ingest_kafka_lag_records{partition="3",table="file:///t",topic="t"} 42
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "lakesink_ingest_records_total", "lakesink_ingest_batches_total",
		"lakesink_ingest_commit_conflicts_total", "lakesink_ingest_files_written_total", "lakesink_ingest_kafka_lag_records"); err != nil {
		t.Fatal(err)
	}
	if _, err := metrics.NewIngest(reg, "file:///t"); err == nil {
		t.Fatal("registering the same table's metrics twice on one registry succeeded")
	}
}

// TestServeHealthz: 503 before the first snapshot and after MaxFailures
// failures in a row, 200 otherwise; /metrics serves the registry.
func TestServeHealthz(t *testing.T) {
	reg := prometheus.NewRegistry()
	if _, err := metrics.NewMaintain(reg); err != nil {
		t.Fatal(err)
	}
	h := metrics.NewHealth(2)
	srv, err := metrics.Serve("127.0.0.1:0", reg, h)
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	status := func(path string) (int, string) {
		resp, err := http.Get("http://" + srv.Addr + path)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}
	for i, st := range []struct {
		do   func()
		want int
	}{
		{func() {}, 503},
		{h.MarkReady, 200},
		{func() { h.Observe(false) }, 200},
		{func() { h.Observe(false) }, 503},
		{func() { h.Observe(true) }, 200},
	} {
		st.do()
		if code, body := status("/healthz"); code != st.want {
			t.Fatalf("step %d: /healthz %d %q, want %d", i, code, body, st.want)
		}
	}
	if code, _ := status("/metrics"); code != 200 {
		t.Fatalf("/metrics: %d", code)
	}
}
