package source

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/schema"
)

// TestDebeziumChanges decodes Debezium JSON change events (create, update,
// delete, snapshot read, truncate; source and transaction blocks) into a
// change batch: after's row (before's for a delete), the op, the ts_ms.
func TestDebeziumChanges(t *testing.T) {
	ctx := context.Background()
	row := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "name", Type: schema.TypeString, Nullable: true},
	}}
	f := newFixture(t)
	f.put(t, "events.json", `{"before":null,"after":{"id":1,"name":"a"},"op":"c","ts_ms":10,"source":{"db":"x","lsn":7},"transaction":null}
{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u","ts_ms":11,"source":{"db":"x"}}
{"before":{"id":2,"name":"z"},"after":null,"op":"d","ts_ms":12}
{"before":null,"after":{"id":3,"name":null},"op":"r","ts_ms":9}
{"op":"t","ts_ms":13}
`)
	s := f.open(t, Options{Format: FormatJSON, Schema: DebeziumSchema(row)})
	end, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := DebeziumChanges(b, row, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ch.Rows), "[[1 a c 10] [1 b u 11] [2 z d 12] [3 <nil> r 9]]"; got != want {
		t.Fatalf("changes %s, want %s", got, want)
	}
	if n := len(ch.Schema.Fields); n != 4 || ch.Schema.Fields[2].Name != DebeziumOpColumn {
		t.Fatalf("schema %v", ch.Schema)
	}
	bad := &schema.Batch{Schema: b.Schema, Rows: [][]any{{nil, nil, "c", int64(1), nil, nil, nil, nil, nil, nil}}}
	if _, err := DebeziumChanges(bad, row, false); !errors.Is(err, ErrDebezium) {
		t.Fatalf("create without after: %v, want ErrDebezium", err)
	}
}

// TestDebeziumConnectEnvelope: events in Kafka Connect JsonConverter's
// {schema, payload} envelope (schemas.enable=true) read as the bare
// events, also mixed with bare events in one batch.
func TestDebeziumConnectEnvelope(t *testing.T) {
	ctx := context.Background()
	row := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "name", Type: schema.TypeString, Nullable: true},
	}}
	const connectSchema = `{"type":"struct","fields":[{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":true,"name":"db.inventory.customers.Value","field":"before"},{"type":"struct","fields":[{"type":"int64","optional":false,"field":"id"},{"type":"string","optional":true,"field":"name"}],"optional":true,"name":"db.inventory.customers.Value","field":"after"},{"type":"string","optional":false,"field":"op"},{"type":"int64","optional":true,"field":"ts_ms"}],"optional":false,"name":"db.inventory.customers.Envelope","version":2}`
	f := newFixture(t)
	f.put(t, "events.json", `{"schema":`+connectSchema+`,"payload":{"before":null,"after":{"id":1,"name":"a"},"op":"c","ts_ms":10,"source":{"db":"x"}}}
{"schema":`+connectSchema+`,"payload":{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"b"},"op":"u","ts_ms":11}}
{"before":{"id":2,"name":"z"},"after":null,"op":"d","ts_ms":12}
{"schema":`+connectSchema+`,"payload":{"before":{"id":1,"name":"b"},"after":null,"op":"d","ts_ms":13,"transaction":null}}
`)
	s := f.open(t, Options{Format: FormatJSON, Schema: DebeziumSchema(row)})
	end, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	ch, err := DebeziumChanges(b, row, true)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := fmt.Sprint(ch.Rows), "[[1 a c 10] [1 b u 11] [2 z d 12] [1 b d 13]]"; got != want {
		t.Fatalf("changes %s, want %s", got, want)
	}
}

// TestDebeziumOpColumnForAvoidsRowColumns: the op column never shares a
// name (case-insensitively) with a row column.
func TestDebeziumOpColumnForAvoidsRowColumns(t *testing.T) {
	row := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong}, {Name: "__OP", Type: schema.TypeString}, {Name: "__op_1", Type: schema.TypeString}}}
	if got := DebeziumOpColumnFor(row); got != "__op_2" {
		t.Fatalf("op column %q, want __op_2", got)
	}
	if got := DebeziumDeleteWhen(row); got != "`__op_2` = 'd'" {
		t.Fatalf("delete predicate %q", got)
	}
	plain := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong}}}
	if got := DebeziumOpColumnFor(plain); got != DebeziumOpColumn {
		t.Fatalf("op column %q, want %q", got, DebeziumOpColumn)
	}
}
