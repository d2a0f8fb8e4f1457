package tests

import (
	"bufio"
	"context"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/reader"
)

// produceFlights writes every line of the flight files to topic as one record
// (key: the line's number, value: the line), round-robin over the
// partitions, and returns the lines by number.
func produceFlights(t *testing.T, addrs []string, topic string, parts int) []string {
	t.Helper()
	var lines []string
	for _, f := range flightFiles(t) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() {
			lines = append(lines, sc.Text())
		}
		fh.Close()
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	recs := make([]*kgo.Record, len(lines))
	for i, l := range lines {
		recs[i] = &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)), Value: []byte(l)}
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	return lines
}

// kafkaTableRecords reads the Delta table written from Kafka and fails the
// test unless it holds each produced record exactly once, identified by
// (topic, partition, offset), with its key and value.
func checkKafkaTable(t *testing.T, dir, topic string, lines []string, parts int) {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	type id struct {
		partition int32
		offset    int64
	}
	seen := map[id]int{}
	keys := map[int]bool{}
	n := 0
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"topic", "partition", "offset", "key", "value"}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		tp, _ := rec.Values[0].(string)
		p, _ := rec.Values[1].(int32)
		off, _ := rec.Values[2].(int64)
		key, _ := rec.Values[3].([]byte)
		val, _ := rec.Values[4].([]byte)
		if tp != topic {
			t.Fatalf("row from topic %q", tp)
		}
		k := id{p, off}
		seen[k]++
		if seen[k] > 1 {
			t.Fatalf("%s-%d offset %d is in the table %d times", tp, p, off, seen[k])
		}
		i, err := strconv.Atoi(string(key))
		if err != nil || i < 0 || i >= len(lines) {
			t.Fatalf("%s-%d offset %d: key %q", tp, p, off, key)
		}
		// Record i went to partition i%parts at offset i/parts.
		if int(p) != i%parts || off != int64(i/parts) || string(val) != lines[i] {
			t.Fatalf("%s-%d offset %d holds key %d (want partition %d offset %d) value %q", tp, p, off, i, i%parts, i/parts, val)
		}
		keys[i] = true
	}
	if n != len(lines) || len(keys) != len(lines) {
		t.Fatalf("table holds %d rows (%d distinct records), want %d", n, len(keys), len(lines))
	}
}

// TestKafkaKillDashNineIsExactlyOnce produces the 20,000 flight records to a
// 3-partition topic of an in-process Kafka (kfake, loopback only), streams
// them into a Delta table with `lakesink ingest --format kafka`, kills the
// ingest with SIGKILL at random moments, restarts it, and checks that every
// record is in the table exactly once by (topic, partition, offset). The
// kills go on until both recovery paths were seen; a run that drains the
// topic before its kill gets 3,000 records more.
// LAKESINK_KAFKA_KILL_TRIALS sets the number of kills (default 4; `make
// soak` runs 50).
func TestKafkaKillDashNineIsExactlyOnce(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	kafkaKillTest(t, kfakeCluster)
}

// TestKafkaKillDashNineBroker is the same against the real broker
// (kafkatest; skipped without scripts/install-kafka.sh).
func TestKafkaKillDashNineBroker(t *testing.T) {
	kafkaKillTest(t, brokerCluster)
}

func kafkaKillTest(t *testing.T, cluster kafkaCluster) {
	const parts = 3
	topic := topicFor(t)
	addrs := cluster(t, topic, parts)
	lines := produceFlights(t, addrs, topic, parts)

	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	args := []string{"ingest", "--json", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--starting-offsets", "earliest", "--checkpoint", filepath.Join(dir, "checkpoint"), "--table", out,
		"--partition-by", "partition", "--trigger", "available-now", "--max-offsets-per-trigger", "200"}

	minTrials := envInt("LAKESINK_KAFKA_KILL_TRIALS", 4)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	// A run that drains the topic before its kill gets 3,000 records more
	// (15 batches): the first 3,000 lines again, keys and offsets going on.
	more := func() {
		from := len(lines)
		lines = append(lines, lines[:3000]...)
		produceRange(t, addrs, topic, parts, lines, from, len(lines))
	}
	kills, counts := killLoop(t, args, 150*time.Millisecond, rng, minTrials, bothRecoveries, more)
	outp := ingestToEnd(t, args)
	counts.add(outp)
	t.Logf("%d kills, %d records, %d batches reported, %d reruns committed, %d reruns skipped (commit had landed)",
		kills, len(lines), counts.batches, counts.rerunCommitted, counts.rerunSkipped)
	checkKafkaTable(t, out, topic, lines, parts)
	if kills < minTrials {
		t.Fatalf("only %d kills, want %d", kills, minTrials)
	}
	if !bothRecoveries(counts) {
		t.Fatalf("recovery paths not both exercised: %d reruns committed, %d reruns skipped", counts.rerunCommitted, counts.rerunSkipped)
	}

	// A second run finds nothing new and leaves the table as it is.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if outp, err := exec.CommandContext(ctx, lakesinkBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("ingest with nothing new: %v\n%s", err, outp)
	}
	checkKafkaTable(t, out, topic, lines, parts)
}
