package tests

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/internal/testutil/benchproc"
	"github.com/lakesink/lakesink/internal/testutil/kafkatest"
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

// BenchmarkGroupIngestBroker measures, against the real broker, the
// records/s into a Delta table of 1, 2 and 3 `lakesink ingest
// --kafka-group` worker processes reading a 6-partition topic of 60,000
// records (about 100 bytes each) produced beforehand, and the raw franz-go
// consume of the same records in a process of this test binary (one
// client, no group, no table; its wall includes its start). A worker's time
// includes its start and group join (the broker's group coordinator is
// warmed up first). It prints BENCHROW lines for `make bench`, and
// skips (with a message) without an installed broker.
func BenchmarkGroupIngestBroker(b *testing.B) {
	if _, err := kafkatest.Classpath(); err != nil && !kafkatest.Required() {
		b.Skipf("%v: no real broker, so no group-ingest figures (install it with scripts/install-kafka.sh)", err)
	}
	const parts, total = 6, 60000
	topic := topicFor(b)
	addrs := brokerCluster(b, topic, parts)
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerLinger(5*time.Millisecond))
	if err != nil {
		b.Fatal(err)
	}
	defer cl.Close()
	pad := strings.Repeat("x", 80)
	var recs []*kgo.Record
	for i := range total {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)),
			Value: []byte(fmt.Sprintf(`{"i":%d,"pad":"%s"}`, i, pad))})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		b.Fatal(err)
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

	rate := map[int]float64{}
	for _, workers := range []int{1, 2, 3} {
		group := fmt.Sprintf("bench-%d-%d", workers, time.Now().UnixNano())
		out := filepath.Join(b.TempDir(), "out")
		args := []string{"ingest", "--quiet", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
			"--kafka-group", group, "--starting-offsets", "earliest", "--table", out, "--trigger", "interval=1s",
			"--max-offsets-per-trigger", "30000"}
		start := time.Now()
		var ws []*worker
		for range workers {
			ws = append(ws, startWorker(b, args))
		}
		last := int64(total/parts) - 1
		// A bound on a hang, not a measurement: give up after 10 minutes.
		giveUp := time.After(10 * time.Minute)
		for {
			done := 0
			for _, v := range groupTxns(b, out, group, topic, parts) {
				if v == last {
					done++
				}
			}
			if done == parts {
				break
			}
			select {
			case <-giveUp:
				b.Fatalf("%d workers did not finish in 10 minutes", workers)
			case <-time.After(100 * time.Millisecond):
			}
		}
		rate[workers] = total / time.Since(start).Seconds()
		for _, w := range ws {
			_ = w.stop(syscall.SIGTERM)
		}
	}
	b.Logf("BENCHROW\tKafka group ingest (broker, 60k records, 6 partitions), 1 worker process vs a raw franz-go consume process (records/s)\t%.0f\t%.0f\t%.2f", rate[1], rawRate, rate[1]/rawRate)
	b.Logf("BENCHROW\tKafka group ingest, 2 workers vs 1 (records/s)\t%.0f\t%.0f\t%.2f", rate[2], rate[1], rate[2]/rate[1])
	b.Logf("BENCHROW\tKafka group ingest, 3 workers vs 1 (records/s)\t%.0f\t%.0f\t%.2f", rate[3], rate[1], rate[3]/rate[1])
}
