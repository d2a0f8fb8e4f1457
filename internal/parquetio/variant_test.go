package parquetio

import (
	"bytes"
	"context"
	"encoding/json"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/variant"

	"github.com/lakesink/lakesink/schema"
)

type variantParquet struct {
	Metadata []byte `parquet:"metadata"`
	Value    []byte `parquet:"value"`
}

type variantRow struct {
	ID int64           `parquet:"id"`
	V  *variantParquet `parquet:"v,optional"`
}

// encodeVariant is the variant binary encoding of a Go value (parquet-go's
// encoder, independent of our decoder).
func encodeVariant(t *testing.T, v any) *variantParquet {
	t.Helper()
	meta, val, err := variant.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return &variantParquet{Metadata: meta, Value: val}
}

func fileOf(t *testing.T, write func(*bytes.Buffer) error) *File {
	t.Helper()
	var buf bytes.Buffer
	if err := write(&buf); err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	if err := st.Put(context.Background(), "f.parquet", buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(context.Background(), st, "f.parquet", -1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestReadVariant: a variant column (a group of metadata and value binaries,
// PROTOCOL.md "Variant data in Parquet") reads as schema.Variant whose JSON
// text is the value's; a null column value is nil.
func TestReadVariant(t *testing.T) {
	rows := []variantRow{
		{1, encodeVariant(t, map[string]any{"b": []any{true, nil, "x"}, "a": int64(1), "c": map[string]any{"d": 1.5}})},
		{2, encodeVariant(t, "just a string")},
		{3, encodeVariant(t, nil)},
		{4, nil},
		{5, encodeVariant(t, []any{int64(1), -2.25, time.Date(2024, 1, 31, 10, 0, 0, 0, time.UTC)})},
	}
	f := fileOf(t, func(b *bytes.Buffer) error { return parquet.Write(b, rows) })
	want := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong}, {Name: "v", Type: schema.TypeVariant, Nullable: true}}}
	got, err := f.ReadAll(context.Background(), want, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantJSON := []string{
		`{"a":1,"b":[true,null,"x"],"c":{"d":1.5}}`,
		`"just a string"`,
		`null`,
		``,
		`[1,-2.25,"2024-01-31 10:00:00+00:00"]`,
	}
	if len(got) != len(wantJSON) {
		t.Fatalf("%d rows, want %d", len(got), len(wantJSON))
	}
	for i, r := range got {
		if wantJSON[i] == "" {
			if r[1] != nil {
				t.Errorf("row %d: %#v, want nil (null column value)", i, r[1])
			}
			continue
		}
		v, ok := r[1].(schema.Variant)
		if !ok {
			t.Fatalf("row %d: %T, want schema.Variant", i, r[1])
		}
		j, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		if string(j) != wantJSON[i] {
			t.Errorf("row %d: JSON %s, want %s", i, j, wantJSON[i])
		}
	}
	if m, ok := got[0][1].(schema.Variant).Value.(map[string]any); !ok || m["a"] != int64(1) {
		t.Errorf("row 0 Go value %#v, want a map with a=int64(1)", got[0][1].(schema.Variant).Value)
	}
}

// TestReadShreddedVariantRefused: a variant group with typed_value (a
// shredded variant) is refused as unsupported, not read without its
// shredded part.
func TestReadShreddedVariantRefused(t *testing.T) {
	type shredded struct {
		Metadata   []byte `parquet:"metadata"`
		Value      []byte `parquet:"value,optional"`
		TypedValue *int64 `parquet:"typed_value,optional"`
	}
	type row struct {
		V shredded `parquet:"v"`
	}
	rows := []row{{shredded{Metadata: []byte{1, 0, 0}}}}
	f := fileOf(t, func(b *bytes.Buffer) error { return parquet.Write(b, rows) })
	want := &schema.StructType{Fields: []schema.StructField{{Name: "v", Type: schema.TypeVariant, Nullable: true}}}
	_, err := f.ReadAll(context.Background(), want, ReadOptions{})
	if err == nil || !strings.Contains(err.Error(), "shredded variant") {
		t.Fatalf("err = %v, want a shredded-variant refusal", err)
	}
}

// TestReadWidenedTypes: values of a file written before a type change are
// read in the current type (PROTOCOL.md "Type Widening"): int -> long,
// int -> double, float -> double, date -> timestamp_ntz (midnight),
// decimal(10,2) -> decimal(20,2).
func TestReadWidenedTypes(t *testing.T) {
	type old struct {
		I   int32          `parquet:"i"`
		J   int32          `parquet:"j"`
		F   float32        `parquet:"f"`
		D   schema.Date    `parquet:"d"`
		Dec schema.Decimal `parquet:"dec,decimal(10:2)"`
	}
	b, err := schema.FromStructs([]old{{I: -7, J: 3, F: 1.1, D: 19753, Dec: schema.Decimal{Unscaled: big.NewInt(1234), Scale: 2}}})
	if err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, b, DefaultWriteOptions())
	if err != nil || len(files) != 1 {
		t.Fatalf("write: %v (%d files)", err, len(files))
	}
	f, err := OpenFile(context.Background(), st, files[0].Path, -1)
	if err != nil {
		t.Fatal(err)
	}
	want := &schema.StructType{Fields: []schema.StructField{
		{Name: "i", Type: schema.TypeLong}, {Name: "j", Type: schema.TypeDouble}, {Name: "f", Type: schema.TypeDouble},
		{Name: "d", Type: schema.TypeTimestampNTZ}, {Name: "dec", Type: schema.DecimalType{Precision: 20, Scale: 2}}}}
	rows, err := f.ReadAll(context.Background(), want, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	r := rows[0]
	if r[0] != int64(-7) || r[1] != float64(3) || r[2] != float64(float32(1.1)) {
		t.Errorf("numbers %#v %#v %#v, want int64(-7), float64(3), float64(float32(1.1))", r[0], r[1], r[2])
	}
	if ts, ok := r[3].(time.Time); !ok || !ts.Equal(time.Date(2024, 1, 31, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("date as timestamp_ntz: %#v, want 2024-01-31T00:00:00", r[3])
	}
	if d, ok := r[4].(schema.Decimal); !ok || d.String() != "12.34" {
		t.Errorf("decimal: %#v, want 12.34", r[4])
	}
}
