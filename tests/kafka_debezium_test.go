package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/reader"
)

// TestKafkaDebeziumExactlyOnce streams Debezium change events from a
// 3-partition topic (keyed by id, so each key's events are in order in one
// partition, as Debezium's connector writes them) into a table with
// `ingest --format kafka --value-format json --cdc-format debezium
// --output-mode update`: creates, updates (some moving a key to another
// partition of the table), deletes each followed by a Kafka tombstone (a
// null value: Debezium's tombstones.on.delete), half of the events in Kafka
// Connect JsonConverter's {schema, payload} envelope (schemas.enable=true),
// half bare. The first run stops half-way; its last batch's commits/N is
// removed, as if the process died after the table commit; the second run
// reruns that batch (skipped by txn) and reads the rest; a third finds
// nothing. The table equals the model, with one commit per batch.
func TestKafkaDebeziumExactlyOnce(t *testing.T) { kafkaDebeziumTest(t, kfakeCluster) }

// TestKafkaDebeziumExactlyOnceBroker is the same against the real broker
// (kafkatest; skipped without scripts/install-kafka.sh).
func TestKafkaDebeziumExactlyOnceBroker(t *testing.T) { kafkaDebeziumTest(t, brokerCluster) }

func kafkaDebeziumTest(t *testing.T, cluster kafkaCluster) {
	const parts, keys, events = 3, 60, 400
	topic := topicFor(t)
	addrs := cluster(t, topic, parts)
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))

	type row struct {
		ID     int64  `json:"id"`
		Region string `json:"region"`
		V      int64  `json:"v"`
	}
	const rowSchema = `{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"region"},{"type":"int64","optional":true,"field":"v"}],"optional":true,"name":"shop.public.items.Value"}`
	connectSchema := json.RawMessage(`{"type":"struct","fields":[` +
		`{"field":"before",` + rowSchema[1:] + `,` + `{"field":"after",` + rowSchema[1:] + `,` +
		`{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],` +
		`"optional":false,"name":"shop.public.items.Envelope","version":2}`)
	if !json.Valid(connectSchema) {
		t.Fatalf("test bug: invalid Connect schema %s", connectSchema)
	}
	model := map[int64]row{}
	regions := []string{"eu", "us", "ap"}
	var recs []*kgo.Record
	deletes, tombstones, wrapped := 0, 0, 0
	for ts := int64(1); ts <= events; ts++ {
		id := rng.Int63n(keys)
		ev := map[string]any{"ts_ms": ts, "source": map[string]any{"db": "shop", "lsn": ts}}
		old, exists := model[id]
		del := exists && rng.Intn(4) == 0
		switch {
		case del:
			ev["op"], ev["before"], ev["after"] = "d", old, nil
			delete(model, id)
			deletes++
		default:
			nr := row{ID: id, Region: regions[rng.Intn(len(regions))], V: ts}
			if exists {
				ev["op"], ev["before"], ev["after"] = "u", old, nr
			} else {
				ev["op"], ev["before"], ev["after"] = "c", nil, nr
			}
			model[id] = nr
		}
		var value any = ev
		if rng.Intn(2) == 0 {
			value = map[string]any{"schema": connectSchema, "payload": ev}
			wrapped++
		}
		b, err := json.Marshal(value)
		if err != nil {
			t.Fatal(err)
		}
		key := []byte(strconv.FormatInt(id, 10))
		p := int32(id % parts)
		recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: key, Value: b})
		if del {
			recs = append(recs, &kgo.Record{Topic: topic, Partition: p, Key: key}) // tombstone
			tombstones++
		}
	}
	if deletes == 0 || wrapped == 0 || wrapped == events {
		t.Fatalf("seed %d made %d deletes, %d of %d events wrapped: too weak", seed, deletes, wrapped, events)
	}
	produce := func(rs []*kgo.Record) {
		t.Helper()
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			t.Fatal(err)
		}
		defer cl.Close()
		if err := cl.ProduceSync(context.Background(), rs...).FirstErr(); err != nil {
			t.Fatal(err)
		}
	}

	dir := t.TempDir()
	schemaFile := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaFile, []byte(`{"type":"struct","fields":[`+
		`{"name":"id","type":"long","nullable":false,"metadata":{}},`+
		`{"name":"region","type":"string","nullable":true,"metadata":{}},`+
		`{"name":"v","type":"long","nullable":true,"metadata":{}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out, chk := filepath.Join(dir, "table"), filepath.Join(dir, "checkpoint")
	args := []string{"ingest", "--json", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--starting-offsets", "earliest", "--value-format", "json", "--schema", schemaFile,
		"--checkpoint", chk, "--table", out, "--partition-by", "region",
		"--output-mode", "update", "--merge-key", "id", "--cdc-format", "debezium",
		"--trigger", "available-now", "--max-offsets-per-trigger", "60"}

	half := len(recs) / 2
	produce(recs[:half])
	var first recoveryCounts
	first.add(ingestToEnd(t, args))
	if first.batches == 0 {
		t.Fatal("the first run committed no batch")
	}
	// The process "died" after its last table commit, before commits/N.
	last := int64(first.batches - 1)
	if err := os.Remove(filepath.Join(chk, "commits", strconv.FormatInt(last, 10))); err != nil {
		t.Fatal(err)
	}
	produce(recs[half:])
	var second recoveryCounts
	second.add(ingestToEnd(t, args))
	if second.rerunSkipped != 1 || second.rerunCommitted != 0 {
		t.Fatalf("second run: %+v, want batch %d rerun and skipped by its txn", second, last)
	}
	var third recoveryCounts
	third.add(ingestToEnd(t, args))
	if third.batches != 0 {
		t.Fatalf("third run processed %d batches of an exhausted topic", third.batches)
	}

	var want []string
	for _, r := range model {
		want = append(want, fmt.Sprintf("%d|%s|%d", r.ID, r.Region, r.V))
	}
	slices.Sort(want)
	ctx := context.Background()
	snap, err := reader.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var got []string
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id", "region", "v"}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v|%v|%v", rec.Values[0], rec.Values[1], rec.Values[2]))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("table (%d rows) differs from the model (%d rows); first table rows %v, model %v", len(got), len(want), head(got), head(want))
	}
	// One commit per batch (plus the create), the rerun adding none.
	batches := first.batches + second.batches - second.rerunSkipped
	if v := snap.Version(); v > int64(batches) {
		t.Fatalf("table version %d after %d batches: a batch committed twice", v, batches)
	}
	t.Logf("%d events (%d deletes, %d tombstones, %d in the Connect envelope) in %d batches; table version %d, %d rows",
		events, deletes, tombstones, wrapped, batches, snap.Version(), len(got))
}
