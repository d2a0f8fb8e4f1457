package tests

import (
	"context"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"

	"github.com/twmb/franz-go/pkg/kfake"

	"github.com/lakesink/lakesink/reader"
)

// TestKafkaJSONValues streams the flight records from a 3-partition topic
// with --value-format json against the flights schema, and checks that the
// table holds exactly the rows of the source files.
func TestKafkaJSONValues(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "flights"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	produceFlights(t, addrs, "flights", 3)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	args := []string{"ingest", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", "flights",
		"--starting-offsets", "earliest", "--value-format", "json",
		"--schema", "../testdata/flights-schema.json", "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", filepath.Join(dir, "checkpoint"), "--table", out,
		"--trigger", "available-now", "--max-offsets-per-trigger", "5000"}
	if outp, err := exec.Command(lakesinkBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, outp)
	}
	compareKeys(t, tableKeys(t, out), sourceKeys(t, flightFiles(t)))
}

// TestKafkaRawWithHeaders writes Spark's raw Kafka columns with the headers
// column into a table partitioned by Kafka partition, and reads them back.
func TestKafkaRawWithHeaders(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(3, "flights"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	addrs := c.ListenAddrs()
	lines := produceFlights(t, addrs, "flights", 3)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	args := []string{"ingest", "--kafka-bootstrap", addrs[0], "--kafka-topic", "flights",
		"--starting-offsets", "earliest", "--kafka-include-headers", "--partition-by", "partition",
		"--checkpoint", filepath.Join(dir, "checkpoint"), "--table", out, "--trigger", "once"}
	if outp, err := exec.Command(lakesinkBin, args...).CombinedOutput(); err != nil {
		t.Fatalf("ingest: %v\n%s", err, outp)
	}
	checkKafkaTable(t, out, "flights", lines, 3)
	snap, err := reader.Open(context.Background(), out)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var names []string
	for _, f := range snap.Schema().Fields {
		names = append(names, f.Name)
	}
	want := []string{"key", "value", "topic", "partition", "offset", "timestamp", "timestampType", "headers"}
	if !slices.Equal(names, want) {
		t.Fatalf("table columns %v, want Spark's Kafka columns %v", names, want)
	}
}
