package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/kafkatest"
	"github.com/lakesink/lakesink/stream/kafka"
)

// The group benchmark's baseline process: "franz-consume" reads args[2]
// records of topic args[1] from the brokers args[0] (comma-separated) with
// one franz-go client (no group, from the start) and exits.
func init() {
	benchproc.Register("franz-consume", func(args []string) error {
		total, err := strconv.Atoi(args[2])
		if err != nil {
			return err
		}
		cl, err := kgo.NewClient(kgo.SeedBrokers(strings.Split(args[0], ",")...), kgo.ConsumeTopics(args[1]), kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
		if err != nil {
			return err
		}
		defer cl.Close()
		for n := 0; n < total; {
			fs := cl.PollFetches(context.Background())
			if err := fs.Err0(); err != nil {
				return err
			}
			n += fs.NumRecords()
		}
		return nil
	})
}

// groupBatch is one committed batch of a bench worker, from its --json
// progress.
type groupBatch struct {
	at        time.Duration // since the workers were started
	worker    int
	records   int64
	rebalance bool // committed early for a rebalance
}

// groupBenchRun is one run of N workers over the bench topic.
type groupBenchRun struct {
	workers   int
	batches   []groupBatch // in arrival order
	abandoned int          // batches abandoned (another worker wrote a partition)
	wall      time.Duration
}

// firstAll is the time until every worker had committed a batch (process
// start, group join and the rebalances it takes, first batch).
func (r groupBenchRun) firstAll() time.Duration {
	first := map[int]time.Duration{}
	for _, bt := range r.batches {
		if _, ok := first[bt.worker]; !ok {
			first[bt.worker] = bt.at
		}
	}
	var all time.Duration
	for _, at := range first {
		all = max(all, at)
	}
	return all
}

// steady is the records/s of the batches committed after every worker had
// committed one, up to the last full batch (so neither the join nor the
// last, partial batches' trigger wait counts), and how many batches that
// window holds.
func (r groupBenchRun) steady(full int64) (float64, int) {
	from := r.firstAll()
	var to time.Duration
	for _, bt := range r.batches {
		if bt.records == full {
			to = max(to, bt.at)
		}
	}
	var recs int64
	n := 0
	for _, bt := range r.batches {
		if bt.at > from && bt.at <= to {
			recs += bt.records
			n++
		}
	}
	if to <= from {
		return 0, 0
	}
	return float64(recs) / (to - from).Seconds(), n
}

// runGroupBench starts workers `lakesink ingest --json --kafka-group`
// processes at once and collects their committed batches until the table
// holds all total records.
func runGroupBench(b *testing.B, addrs []string, topic string, parts int32, total, full int64, workers int) groupBenchRun {
	b.Helper()
	group := fmt.Sprintf("bench-%d-%d", workers, time.Now().UnixNano())
	out := filepath.Join(b.TempDir(), "out")
	args := []string{"ingest", "--json", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--kafka-group", group, "--starting-offsets", "earliest", "--table", out, "--trigger", "interval=1s",
		"--max-offsets-per-trigger", strconv.FormatInt(full, 10)}
	run := groupBenchRun{workers: workers}
	var (
		mu        sync.Mutex
		committed int64
		readers   sync.WaitGroup
	)
	allIn := make(chan struct{})
	start := time.Now()
	var ws []*worker
	for i := range workers {
		w := &worker{start: time.Now(), stderr: &bytes.Buffer{}, done: make(chan struct{})}
		w.cmd = exec.Command(lakesinkBin, args...)
		w.cmd.Stderr = w.stderr
		stdout, err := w.cmd.StdoutPipe()
		if err != nil {
			b.Fatal(err)
		}
		if err := w.cmd.Start(); err != nil {
			b.Fatal(err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			sc := bufio.NewScanner(stdout)
			sc.Buffer(make([]byte, 1<<20), 1<<20)
			for sc.Scan() {
				var pr struct {
					Type string `json:"message_type"`
					kafka.GroupProgress
				}
				if json.Unmarshal(sc.Bytes(), &pr) != nil || pr.Type != "progress" {
					continue
				}
				at := time.Since(start)
				mu.Lock()
				switch {
				case pr.Abandoned:
					run.abandoned++
				case pr.Version >= 0:
					run.batches = append(run.batches, groupBatch{at: at, worker: i, records: pr.NumInputRecords, rebalance: pr.Rebalance})
					if committed += pr.NumInputRecords; committed == total {
						run.wall = at
						close(allIn)
					}
				}
				mu.Unlock()
			}
		}()
		go func() {
			w.err = w.cmd.Wait()
			close(w.done)
		}()
		ws = append(ws, w)
	}
	select {
	case <-allIn:
	case <-time.After(10 * time.Minute): // a bound on a hang, not a measurement
		b.Fatalf("%d workers did not commit the %d records in 10 minutes", workers, total)
	}
	// Every worker has run long enough to handle SIGTERM (worker.stop's
	// wait is for a worker signalled at its start).
	for _, w := range ws {
		_ = w.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, w := range ws {
		select {
		case <-w.done:
			if w.err != nil {
				b.Errorf("worker stopped by SIGTERM: %v\n%s", w.err, w.stderr.String())
			}
		case <-time.After(2 * time.Minute):
			_ = w.cmd.Process.Kill()
			b.Errorf("worker did not stop after SIGTERM\n%s", w.stderr.String())
		}
	}
	readers.Wait()
	last := total/int64(parts) - 1
	for app, v := range groupTxns(b, out, group, topic, parts) {
		if v != last {
			b.Fatalf("%d workers: txn of %s = %d, want %d", workers, app, v, last)
		}
	}
	return run
}

// BenchmarkGroupIngestBroker measures, against the real broker, 1, 2 and 3
// `lakesink ingest --kafka-group` worker processes (--trigger interval=1s,
// batches of 30,000 records) started at once on a 6-partition topic of
// 600,000 records (about 100 bytes each) produced beforehand, and the raw
// franz-go consume of the same records in a process of this test binary
// (one client, no group, no table; its wall includes its start). The group
// coordinator is warmed up first. The figures are kept apart, as they
// have different causes:
//   - records/s over the whole run (start to the last record committed:
//     process start, group join and rebalances, the batches);
//   - the time until every worker has committed a batch (start, join and
//     the rebalances each join takes, first batch): the fixed cost of
//     adding workers;
//   - the steady-state records/s, from then to the last full batch (the 2
//     CPUs are shared by the workers and the broker's JVM, so N workers
//     cannot be faster than 1 here in CPU terms, only not much slower).
//
// Each figure is the median of LAKESINK_GROUP_BENCH_ROUNDS rounds (default
// 3) of 1, 2 and 3 workers, each ratio the median of the rounds' ratios;
// each run is logged (batches, those committed early for a rebalance,
// abandoned ones). It prints BENCHROW lines for `make bench`, and skips
// (with a message) without an installed broker.
func BenchmarkGroupIngestBroker(b *testing.B) {
	if _, err := kafkatest.Classpath(); err != nil && !kafkatest.Required() {
		b.Skipf("%v: no real broker, so no group-ingest figures (install it with scripts/install-kafka.sh)", err)
	}
	const parts, total, full = 6, 600_000, 30_000
	topic := topicFor(b)
	addrs := brokerCluster(b, topic, parts)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	pad := strings.Repeat("x", 80)
	for from := 0; from < total; from += 60_000 {
		var recs []*kgo.Record
		for i := from; i < from+60_000; i++ {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)),
				Value: []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, pad))})
		}
		if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
			b.Fatal(err)
		}
	}

	// Warm up: the first group on a broker creates __consumer_offsets,
	// which takes seconds and must not count for the first worker.
	warm, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.ConsumerGroup("bench-warmup"), kgo.ConsumeTopics(topic),
		kgo.ConsumeResetOffset(kgo.NewOffset().AtStart()))
	if err != nil {
		b.Fatal(err)
	}
	if fs := warm.PollRecords(context.Background(), 1); fs.NumRecords() != 1 {
		b.Fatalf("warm-up group read %d records: %v", fs.NumRecords(), fs.Errors())
	}
	if err := warm.CommitUncommittedOffsets(context.Background()); err != nil {
		b.Fatal(err)
	}
	warm.Close()

	// Baseline: a process of this test binary consuming every record with
	// franz-go (see init): its wall time includes its start, as a worker's.
	rawRate := total / benchproc.Run(b, benchproc.Side("franz-consume", strings.Join(addrs, ","), topic, strconv.Itoa(total))).Wall.Seconds()

	// Rounds of 1, 2 and 3 workers; each figure is the median over the
	// rounds, each ratio the median of the rounds' ratios.
	rounds := envInt("LAKESINK_GROUP_BENCH_ROUNDS", 3)
	whole, steady, ms := map[int][]float64{}, map[int][]float64{}, map[int][]float64{}
	var wholeRatio, steadyRatio, msRatio [4][]float64
	var runLog strings.Builder // logged after the rows: go test keeps 10 lines of a benchmark's log
	rate1 := map[int]float64{} // this round's steady-state records/s (0: no window)
	for round := range rounds {
		for _, workers := range []int{1, 2, 3} {
			r := runGroupBench(b, addrs, topic, parts, total, full, workers)
			rate, n := r.steady(full)
			early := 0
			for _, bt := range r.batches {
				if bt.rebalance {
					early++
				}
			}
			fmt.Fprintf(&runLog, "\nround %d, %d workers: all %d records in %v; every worker committed by %v; steady state %.0f records/s over %d batches; %d batches, %d committed early for a rebalance, %d abandoned",
				round, workers, total, r.wall.Round(time.Millisecond), r.firstAll().Round(time.Millisecond), rate, n, len(r.batches), early, r.abandoned)
			whole[workers] = append(whole[workers], total/r.wall.Seconds())
			ms[workers] = append(ms[workers], float64(r.firstAll().Microseconds())/1000)
			// A worker that joined after the others had read their full
			// batches leaves no steady-state window: the round has no
			// steady figure (it is logged).
			rate1[workers] = 0
			if n > 0 {
				steady[workers] = append(steady[workers], rate)
				rate1[workers] = rate
			}
		}
		wholeRatio[1] = append(wholeRatio[1], whole[1][round]/rawRate)
		for _, w := range []int{2, 3} {
			wholeRatio[w] = append(wholeRatio[w], whole[w][round]/whole[1][round])
			if rate1[w] > 0 && rate1[1] > 0 {
				steadyRatio[w] = append(steadyRatio[w], rate1[w]/rate1[1])
			}
			msRatio[w] = append(msRatio[w], ms[w][round]/ms[1][round])
		}
	}
	for _, w := range []int{1, 2, 3} {
		if len(steady[w]) == 0 || w > 1 && len(steadyRatio[w]) == 0 {
			b.Fatalf("%d workers: no round had a steady-state window (a batch after every worker's first commit, up to the last full batch); make the topic larger:%s", w, runLog.String())
		}
	}
	b.Logf("BENCHROW\tKafka group ingest (broker, 600k records, 6 partitions), 1 worker process vs a raw franz-go consume process (records/s, start to last commit)\t%.0f\t%.0f\t%.2f",
		benchproc.Median(whole[1]), rawRate, benchproc.Median(wholeRatio[1]))
	for _, w := range []int{2, 3} {
		b.Logf("BENCHROW\tKafka group ingest, %d workers vs 1 (records/s, start to last commit)\t%.0f\t%.0f\t%.2f",
			w, benchproc.Median(whole[w]), benchproc.Median(whole[1]), benchproc.Median(wholeRatio[w]))
	}
	for _, w := range []int{2, 3} {
		b.Logf("BENCHROW\tKafka group ingest, %d workers vs 1 (records/s in steady state: from every worker's first commit to the last full batch)\t%.0f\t%.0f\t%.2f",
			w, benchproc.Median(steady[w]), benchproc.Median(steady[1]), benchproc.Median(steadyRatio[w]))
	}
	for _, w := range []int{2, 3} {
		b.Logf("BENCHROW\tKafka group ingest, %d workers vs 1: time until every worker has committed a batch (ms: start, join and rebalances, first batch; lower is better)\t%.0f\t%.0f\t%.2f",
			w, benchproc.Median(ms[w]), benchproc.Median(ms[1]), benchproc.Median(msRatio[w]))
	}
	b.Logf("runs:%s", runLog.String())
}
