package tests

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/table"
)

// flightLines returns the first n lines of the flight files.
func flightLines(t *testing.T, n int) []string {
	t.Helper()
	var lines []string
	for _, f := range flightFiles(t) {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(fh)
		for sc.Scan() && len(lines) < n {
			lines = append(lines, sc.Text())
		}
		fh.Close()
		if len(lines) == n {
			break
		}
	}
	return lines
}

// produceRange produces lines[from:to] as produceFlights does (record i to
// partition i%parts, key i), so that record i lands at offset i/parts.
func produceRange(t *testing.T, addrs []string, topic string, parts int, lines []string, from, to int) {
	t.Helper()
	cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	var recs []*kgo.Record
	for i := from; i < to; i++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % parts), Key: []byte(strconv.Itoa(i)), Value: []byte(lines[i])})
	}
	if err := cl.ProduceSync(context.Background(), recs...).FirstErr(); err != nil {
		t.Fatal(err)
	}
}

// streamingQueryIDs returns the distinct queryId of the table's STREAMING
// UPDATE commits and checks that each records a sourceEndOffset.
func streamingQueryIDs(t *testing.T, dir, topic string) map[string]int {
	t.Helper()
	ctx := context.Background()
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	hist, err := tb.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	ids := map[string]int{}
	for _, c := range hist {
		if c.CommitInfo.Operation() != "STREAMING UPDATE" {
			continue
		}
		params := c.CommitInfo.StringMap("operationParameters")
		if !strings.HasPrefix(params["sourceEndOffset"], `{"`+topic+`":{`) {
			t.Fatalf("version %d: sourceEndOffset = %q, want the Kafka offset JSON of the batch", c.Version, params["sourceEndOffset"])
		}
		ids[params["queryId"]]++
	}
	return ids
}

// TestRecoverKafkaCheckpointFromTable ingests part of a topic, loses the
// checkpoint, shows that a fresh checkpoint is refused (duplicate-source
// guard), rebuilds it with --recover-checkpoint-from-table, and finishes the
// topic: every record is in the table exactly once, all under one query id.
func TestRecoverKafkaCheckpointFromTable(t *testing.T) {
	recoverKafkaTest(t, kfakeCluster)
}

// TestRecoverKafkaCheckpointFromTableBroker is the same against the real
// broker (kafkatest; skipped without scripts/install-kafka.sh).
func TestRecoverKafkaCheckpointFromTableBroker(t *testing.T) {
	recoverKafkaTest(t, brokerCluster)
}

func recoverKafkaTest(t *testing.T, cluster kafkaCluster) {
	const parts, total, firstHalf = 3, 3000, 1700
	topic := topicFor(t)
	addrs := cluster(t, topic, parts)
	lines := flightLines(t, total)
	if len(lines) != total {
		t.Fatalf("want %d flight lines, have %d", total, len(lines))
	}
	produceRange(t, addrs, topic, parts, lines, 0, firstHalf)

	dir := t.TempDir()
	out, chk := filepath.Join(dir, "out"), filepath.Join(dir, "checkpoint")
	args := []string{"ingest", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--starting-offsets", "earliest", "--checkpoint", chk, "--table", out,
		"--trigger", "available-now", "--max-offsets-per-trigger", "500"}
	recoverArgs := append(append([]string{}, args...), "--recover-checkpoint-from-table")

	if _, stderr, code := run(t, args...); code != 0 {
		t.Fatalf("first ingest: exit %d\n%s", code, stderr)
	}
	ids := streamingQueryIDs(t, out, topic)
	if len(ids) != 1 {
		t.Fatalf("query ids after the first ingest: %v, want one", ids)
	}

	steps := []struct {
		name     string
		args     []string
		produce  [2]int // records to produce before the step
		wantCode int
		wantErr  string
		wipe     bool // delete the checkpoint before the step
	}{
		{name: "fresh checkpoint is refused by the duplicate-source guard", args: args, wipe: true,
			wantCode: 1, wantErr: "source already ingested into this table by another query"},
		{name: "recover from the table after the refused run", args: recoverArgs},
		{name: "a second recovery is refused: the checkpoint has offsets", args: recoverArgs,
			wantCode: 1, wantErr: "already has offsets"},
		{name: "nothing new: no batch", args: args},
		{name: "lose the checkpoint again, produce more, recover", args: recoverArgs, wipe: true, produce: [2]int{firstHalf, total - 500}},
		{name: "normal restart reads the rest", args: args, produce: [2]int{total - 500, total}},
	}
	for _, st := range steps {
		if st.wipe {
			if err := os.RemoveAll(chk); err != nil {
				t.Fatal(err)
			}
		}
		if st.produce[1] > st.produce[0] {
			produceRange(t, addrs, topic, parts, lines, st.produce[0], st.produce[1])
		}
		_, stderr, code := run(t, st.args...)
		if code != st.wantCode || !strings.Contains(stderr, st.wantErr) {
			t.Fatalf("%s: exit %d, want %d with %q\n%s", st.name, code, st.wantCode, st.wantErr, stderr)
		}
	}
	checkKafkaTable(t, out, topic, lines, parts)
	if got := streamingQueryIDs(t, out, topic); len(got) != 1 {
		t.Fatalf("query ids after recovery: %v, want the original one only", got)
	}
	for id := range ids {
		if streamingQueryIDs(t, out, topic)[id] == 0 {
			t.Fatalf("the original query id %s is gone", id)
		}
	}
}

// TestRecoverRefusesFileSource: the file source's offset is a batch of its log
// of taken files, which the table does not hold.
func TestRecoverRefusesFileSource(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(src, "a.json"), []byte(`{"id":1}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stderr, code := run(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "out"),
		"--recover-checkpoint-from-table")
	if code == 0 || !strings.Contains(stderr, "the file source's log of taken files is not in the table") {
		t.Fatalf("exit %d, want a refusal naming the file source's log\n%s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(dir, "out")); !os.IsNotExist(err) {
		t.Fatalf("the refused run wrote the table: %v", err)
	}
}
