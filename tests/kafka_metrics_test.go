package tests

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/table"
)

// TestGroupMetricsScrape runs a group worker with --metrics-addr, produces
// 3,000 records while it runs, scrapes /metrics during the ingest and
// checks the counters against what the table committed: records = rows,
// batches{committed} = commits, files written = files added.
func TestGroupMetricsScrape(t *testing.T) {
	const parts, total = 3, 3000
	topic := topicFor(t)
	addrs := kfakeCluster(t, topic, parts)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	maddr := l.Addr().String()
	l.Close()
	out := filepath.Join(t.TempDir(), "out")
	group := "g-" + topic
	w := startWorker(t, []string{"ingest", "--json", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--kafka-group", group, "--starting-offsets", "earliest", "--table", out, "--trigger", "interval=200ms",
		"--max-offsets-per-trigger", "400", "--metrics-addr", maddr})
	defer w.stop(syscall.SIGKILL)

	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	for from := 0; from < total; from += 500 {
		var recs []*kgo.Record
		for i := from; i < from+500; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	last := int64(total/parts) - 1
	deadline := time.Now().Add(2 * time.Minute)
	for {
		done := 0
		for _, v := range groupTxns(t, out, group, topic, parts) {
			if v == last {
				done++
			}
		}
		if done == parts {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the worker did not write every record within 2 minutes\n%s", w.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}

	// The table: commits, rows and files.
	ctx := context.Background()
	tb, err := table.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	hist, err := tb.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, a := range snap.Files() {
		var n int64
		if _, err := fmtSscanNumRecords(a.Stats, &n); err != nil {
			t.Fatalf("stats of %s: %v", a.Path, err)
		}
		rows += n
	}
	commits := len(hist)

	fams := scrape(t, "http://"+maddr+"/metrics")
	get := func(name string, labels map[string]string) float64 {
		t.Helper()
		f, ok := fams[name]
		if !ok {
			t.Fatalf("/metrics has no %s", name)
		}
	metric:
		for _, m := range f.GetMetric() {
			for k, v := range labels {
				found := false
				for _, lp := range m.GetLabel() {
					if lp.GetName() == k && lp.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue metric
				}
			}
			switch {
			case m.Counter != nil:
				return m.GetCounter().GetValue()
			case m.Gauge != nil:
				return m.GetGauge().GetValue()
			case m.Histogram != nil:
				return float64(m.GetHistogram().GetSampleCount())
			}
		}
		t.Fatalf("%s has no series with %v", name, labels)
		return 0
	}
	tl := map[string]string{"table": tb.URL()}
	if got := get("lakesink_ingest_records_total", tl); got != float64(rows) || rows != total {
		t.Fatalf("lakesink_ingest_records_total = %v, table rows = %d, produced %d", got, rows, total)
	}
	if got := get("lakesink_ingest_batches_total", map[string]string{"table": tb.URL(), "result": "committed"}); got != float64(commits) {
		t.Fatalf("batches committed = %v, table commits = %d", got, commits)
	}
	if got := get("lakesink_ingest_files_written_total", tl); got != float64(snap.NumFiles()) {
		t.Fatalf("files written = %v, files in the table = %d", got, snap.NumFiles())
	}
	if got := get("lakesink_ingest_commit_duration_seconds", tl); got != float64(commits) {
		t.Fatalf("commit latency observations = %v, commits = %d", got, commits)
	}
	for p := range parts {
		if got := get("lakesink_ingest_kafka_lag_records", map[string]string{"topic": topic, "partition": strconv.Itoa(p)}); got != 0 {
			t.Fatalf("lag of partition %d = %v after every record was written", p, got)
		}
	}
	resp, err := http.Get("http://" + maddr + "/healthz")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || strings.TrimSpace(string(body)) != "ok" {
		t.Fatalf("/healthz: %d %q", resp.StatusCode, body)
	}
	if err := w.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("worker: %v\n%s", err, w.stderr.String())
	}
}

func scrape(t *testing.T, url string) map[string]*dto.MetricFamily {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p expfmt.TextParser
	fams, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse %s: %v", url, err)
	}
	return fams
}

func fmtSscanNumRecords(stats string, n *int64) (int, error) {
	return fmt.Sscanf(stats, `{"numRecords":%d`, n)
}

// TestKafkaIngestMetricsScrape: the checkpointed (single-process) ingest
// exports the same counters from its micro-batches: scraped while it runs,
// records = the table's rows and batches{committed} = its commits.
func TestKafkaIngestMetricsScrape(t *testing.T) {
	const parts, total = 3, 1500
	topic := topicFor(t)
	addrs := kfakeCluster(t, topic, parts)
	lines := make([]string, total)
	for i := range lines {
		lines[i] = "v" + strconv.Itoa(i)
	}
	produceRange(t, addrs, topic, parts, lines, 0, total)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	maddr := l.Addr().String()
	l.Close()
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	w := startWorker(t, []string{"ingest", "--json", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--starting-offsets", "earliest", "--checkpoint", filepath.Join(dir, "chk"), "--table", out, "--trigger", "interval=200ms",
		"--max-offsets-per-trigger", "400", "--metrics-addr", maddr})
	defer w.stop(syscall.SIGKILL)
	counter := func(fams map[string]*dto.MetricFamily, name, result string) float64 {
		f := fams[name]
		if f == nil {
			return -1
		}
		for _, m := range f.GetMetric() {
			ok := result == ""
			for _, lp := range m.GetLabel() {
				if lp.GetName() == "result" && lp.GetValue() == result {
					ok = true
				}
			}
			if ok {
				return m.GetCounter().GetValue()
			}
		}
		return -1
	}
	deadline := time.Now().Add(2 * time.Minute)
	var fams map[string]*dto.MetricFamily
	for {
		if resp, err := http.Get("http://" + maddr + "/metrics"); err == nil {
			resp.Body.Close()
			fams = scrape(t, "http://"+maddr+"/metrics")
			if counter(fams, "lakesink_ingest_records_total", "") == total {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatalf("records_total did not reach %d in 2 minutes\n%s", total, w.stderr.String())
		}
		time.Sleep(200 * time.Millisecond)
	}
	ctx := context.Background()
	tb, err := table.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	hist, err := tb.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var rows int64
	for _, a := range snap.Files() {
		var n int64
		if _, err := fmtSscanNumRecords(a.Stats, &n); err != nil {
			t.Fatal(err)
		}
		rows += n
	}
	if rows != total {
		t.Fatalf("table rows %d, records_total %d", rows, total)
	}
	if got := counter(fams, "lakesink_ingest_batches_total", "committed"); got != float64(len(hist)) {
		t.Fatalf("batches committed = %v, table commits = %d", got, len(hist))
	}
	if got := counter(fams, "lakesink_ingest_files_written_total", ""); got != float64(snap.NumFiles()) {
		t.Fatalf("files written = %v, files in the table = %d", got, snap.NumFiles())
	}
	if err := w.stop(syscall.SIGTERM); err != nil {
		t.Fatalf("ingest: %v\n%s", err, w.stderr.String())
	}
}
