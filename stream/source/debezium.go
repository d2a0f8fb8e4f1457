package source

import (
	"errors"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/lakesink/lakesink/schema"
)

// Debezium's JSON change events (Debezium connector documentation, "Change
// event values"), either the payload alone (Kafka Connect's JsonConverter
// with value.converter.schemas.enable=false):
//
//	{"before": {...} | null, "after": {...} | null, "op": "c"|"u"|"d"|"r"|"t"|"m",
//	 "ts_ms": 1700000000000, "source": {...}, "transaction": {...} | null}
//
// or, with schemas.enable=true (JsonConverter's default), that payload
// inside the converter's envelope, whose schema block is not read (the
// table's or --schema's columns are the row's):
//
//	{"schema": {...}, "payload": {"before": ..., "after": ..., "op": ..., ...}}
//
// The row's columns come from after (before for a delete); op "r" is a
// snapshot read, upserted like "c" and "u"; "t" (truncate) and "m"
// (message) events change no row and are dropped.

// DebeziumOpColumn is the name of the column DebeziumChanges adds with the
// event's op, unless the row has a column of that name (Debezium's
// ExtractNewRecordState transform adds a "__op" field with add.fields=op):
// then DebeziumOpColumnFor picks another.
const DebeziumOpColumn = "__op"

// DebeziumOpColumnFor is the op column DebeziumChanges adds to change rows
// of schema row: DebeziumOpColumn, or DebeziumOpColumn followed by "_1",
// "_2", ... until no column of row has that name (compared
// case-insensitively, as column names are resolved), so that a row's own
// column is never read as the event's op.
func DebeziumOpColumnFor(row *schema.StructType) string {
	taken := func(name string) bool {
		for _, f := range row.Fields {
			if strings.EqualFold(f.Name, name) {
				return true
			}
		}
		return false
	}
	name := DebeziumOpColumn
	for i := 1; taken(name); i++ {
		name = DebeziumOpColumn + "_" + strconv.Itoa(i)
	}
	return name
}

// DebeziumDeleteWhen is the delete predicate of DebeziumChanges' batches
// of schema row: DebeziumOpColumnFor(row) = 'd'.
func DebeziumDeleteWhen(row *schema.StructType) string {
	return "`" + DebeziumOpColumnFor(row) + "` = 'd'"
}

// DebeziumTsColumn is the column DebeziumChanges adds, when asked, with the
// event's ts_ms (milliseconds since the epoch), to order changes of a key.
const DebeziumTsColumn = "ts_ms"

// ErrDebezium: a change event that does not fit Debezium's envelope (no
// op, an insert or update without after, a delete without before).
var ErrDebezium = errors.New("not a Debezium change event")

// DebeziumSchema is the decoding schema of a Debezium JSON change event
// whose before and after rows have the given schema (made nullable). The
// envelope's source and transaction blocks decode as JSON text, so they
// never fail a record; any other unknown field is an unknown field as for
// plain JSON.
//
// The event may also be wrapped in JsonConverter's {schema, payload}
// envelope (schemas.enable=true): the schema block decodes as JSON text,
// the payload as the event.
func DebeziumSchema(row *schema.StructType) *schema.StructType {
	nullable := &schema.StructType{}
	for _, f := range row.Fields {
		f.Nullable = true
		nullable.Fields = append(nullable.Fields, f)
	}
	event := []schema.StructField{
		{Name: "before", Type: nullable, Nullable: true},
		{Name: "after", Type: nullable, Nullable: true},
		{Name: "op", Type: schema.TypeString, Nullable: true},
		{Name: "ts_ms", Type: schema.TypeLong, Nullable: true},
		{Name: "ts_us", Type: schema.TypeLong, Nullable: true},
		{Name: "ts_ns", Type: schema.TypeLong, Nullable: true},
		{Name: "source", Type: schema.TypeString, Nullable: true},
		{Name: "transaction", Type: schema.TypeString, Nullable: true},
	}
	return &schema.StructType{Fields: append(slices.Clone(event),
		schema.StructField{Name: debeziumConnectSchema, Type: schema.TypeString, Nullable: true},
		schema.StructField{Name: debeziumConnectPayload, Type: &schema.StructType{Fields: event}, Nullable: true},
	)}
}

// DebeziumDecoding is how Debezium change events of a table whose schema
// is sch are read: row, the schema of the events' before and after rows;
// envelope, DebeziumSchema(row), the schema to decode the events with; and
// changes, DebeziumChanges over row, which turns a decoded batch into change
// rows. When sequenceBy is DebeziumTsColumn (case-insensitively) the
// event's ts_ms becomes that table column, so row is sch without it (it is
// not expected inside after). It is the one rule for `lakesink merge
// --cdc-format` and ingest's Options.CDCFormat.
func DebeziumDecoding(sch *schema.StructType, sequenceBy string) (row, envelope *schema.StructType, changes func(*schema.Batch) (*schema.Batch, error)) {
	row = sch
	withTs := strings.EqualFold(sequenceBy, DebeziumTsColumn)
	if i := row.FieldIndex(DebeziumTsColumn); withTs && i >= 0 {
		row = &schema.StructType{Fields: slices.Delete(slices.Clone(row.Fields), i, i+1)}
	}
	return row, DebeziumSchema(row), func(b *schema.Batch) (*schema.Batch, error) { return DebeziumChanges(b, row, withTs) }
}

// The fields of Kafka Connect JsonConverter's envelope (schemas.enable=true).
const (
	debeziumConnectSchema  = "schema"
	debeziumConnectPayload = "payload"
)

// DebeziumChanges turns a batch decoded with DebeziumSchema(row) into a
// change batch: row's columns, then DebeziumOpColumnFor(row), then (withTs)
// DebeziumTsColumn; in event order. An event inside JsonConverter's
// {schema, payload} envelope is read from its payload. Truncate and
// message events are dropped. Errors wrap ErrDebezium and name the batch
// row.
func DebeziumChanges(b *schema.Batch, row *schema.StructType, withTs bool) (*schema.Batch, error) {
	out := &schema.Batch{Schema: &schema.StructType{Fields: append(append([]schema.StructField(nil), row.Fields...),
		schema.StructField{Name: DebeziumOpColumnFor(row), Type: schema.TypeString, Nullable: false})}}
	if withTs {
		out.Schema.Fields = append(out.Schema.Fields, schema.StructField{Name: DebeziumTsColumn, Type: schema.TypeLong, Nullable: true})
	}
	if b == nil {
		return out, nil
	}
	type envelope struct{ bi, ai, oi, ti int }
	fields := func(s *schema.StructType) envelope {
		return envelope{s.FieldIndex("before"), s.FieldIndex("after"), s.FieldIndex("op"), s.FieldIndex("ts_ms")}
	}
	top := fields(b.Schema)
	if top.bi < 0 || top.ai < 0 || top.oi < 0 {
		if len(b.Rows) == 0 {
			return out, nil
		}
		return nil, fmt.Errorf("%w: the batch has no before, after and op columns", ErrDebezium)
	}
	pi := b.Schema.FieldIndex(debeziumConnectPayload)
	var inner envelope
	if pi >= 0 {
		ps, ok := b.Schema.Fields[pi].Type.(*schema.StructType)
		if !ok {
			return nil, fmt.Errorf("%w: the batch's %s column is not a struct", ErrDebezium, debeziumConnectPayload)
		}
		if inner = fields(ps); inner.bi < 0 || inner.ai < 0 || inner.oi < 0 {
			return nil, fmt.Errorf("%w: the batch's %s column has no before, after and op fields", ErrDebezium, debeziumConnectPayload)
		}
	}
	for r, src := range b.Rows {
		ix := top
		if pi >= 0 && src[pi] != nil {
			p, ok := src[pi].([]any)
			if !ok || src[top.oi] != nil {
				return nil, fmt.Errorf("%w: event %d has both a payload and a top-level op", ErrDebezium, r)
			}
			src, ix = p, inner
		}
		bi, ai, oi, ti := ix.bi, ix.ai, ix.oi, ix.ti
		op, _ := src[oi].(string)
		var image any
		switch op {
		case "c", "u", "r":
			image = src[ai]
		case "d":
			image = src[bi]
		case "t", "m":
			continue
		default:
			return nil, fmt.Errorf("%w: event %d has op %q (want c, u, d, r, t or m)", ErrDebezium, r, op)
		}
		vals, ok := image.([]any)
		if !ok || len(vals) != len(row.Fields) {
			which := "after"
			if op == "d" {
				which = "before"
			}
			return nil, fmt.Errorf("%w: event %d (op %q) has no %s row", ErrDebezium, r, op, which)
		}
		nr := append(append(make([]any, 0, len(out.Schema.Fields)), vals...), op)
		if withTs {
			var ts any
			if ti >= 0 {
				ts = src[ti]
			}
			nr = append(nr, ts)
		}
		out.Rows = append(out.Rows, nr)
	}
	return out, nil
}
