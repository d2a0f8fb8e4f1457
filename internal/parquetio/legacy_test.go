package parquetio

import (
	"bytes"
	"context"
	"math/big"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
)

// listGroup is a group annotated LIST whose repeated child is given as is,
// to build the legacy 2-level list layouts older Spark/Hive writers produce.
type listGroup struct{ *groupNode }

func (listGroup) Type() parquet.Type { return parquet.List(parquet.Leaf(parquet.Int32Type)).Type() }

func group(fields ...parquet.Field) *groupNode { return &groupNode{fields: fields} }
func field(name string, n parquet.Node) parquet.Field {
	return &namedField{Node: n, name: name}
}

// TestReadLegacyEncodings reads what older writers produce: INT96 and
// TIMESTAMP_MILLIS timestamps, decimals in BINARY, 2-level lists (a repeated
// primitive, a repeated group named "array") and a bare repeated field.
func TestReadLegacyEncodings(t *testing.T) {
	root := group(
		field("i96", parquet.Optional(parquet.Leaf(parquet.Int96Type))),
		field("ms", parquet.Optional(parquet.TimestampAdjusted(parquet.Millisecond, true))),
		field("dbin", parquet.Optional(parquet.Decimal(2, 10, parquet.ByteArrayType))),
		field("l2", parquet.Optional(listGroup{group(field("array", parquet.Repeated(parquet.Leaf(parquet.Int32Type))))})),
		field("l2s", parquet.Optional(listGroup{group(field("array", parquet.Repeated(group(
			field("a", parquet.Required(parquet.String())),
			field("b", parquet.Optional(parquet.Leaf(parquet.Int32Type))),
		))))})),
		field("rep", parquet.Repeated(parquet.Leaf(parquet.Int32Type))),
		field("ntzms", parquet.Optional(parquet.TimestampAdjusted(parquet.Millisecond, false))),
	)
	sch := parquet.NewSchema("spark_schema", root)
	nanos := uint64(3600 * 1e9)
	i96 := deprecated.Int96{uint32(nanos), uint32(nanos >> 32), 2440589}
	null := func(rep, def, col int) parquet.Value { return parquet.Value{}.Level(rep, def, col) }
	rows := []parquet.Row{
		{
			parquet.Int96Value(i96).Level(0, 1, 0),
			parquet.Int64Value(1500).Level(0, 1, 1),
			parquet.ByteArrayValue(twosComplement(big.NewInt(-12345), 2)).Level(0, 1, 2),
			parquet.Int32Value(1).Level(0, 2, 3), parquet.Int32Value(2).Level(1, 2, 3),
			parquet.ByteArrayValue([]byte("x")).Level(0, 2, 4), parquet.ByteArrayValue([]byte("y")).Level(1, 2, 4),
			null(0, 2, 5), parquet.Int32Value(7).Level(1, 3, 5),
			parquet.Int32Value(5).Level(0, 1, 6), parquet.Int32Value(6).Level(1, 1, 6),
			parquet.Int64Value(-1).Level(0, 1, 7),
		},
		{
			null(0, 0, 0), null(0, 0, 1), null(0, 0, 2), null(0, 0, 3),
			null(0, 1, 4), null(0, 1, 5), // l2s: an empty list
			null(0, 0, 6), // rep: empty
			null(0, 0, 7),
		},
	}
	var buf bytes.Buffer
	w := parquet.NewWriter(&buf, sch)
	if _, err := w.WriteRows(rows); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	_ = st.Put(context.Background(), "legacy.parquet", buf.Bytes())
	f, err := OpenFile(context.Background(), st, "legacy.parquet", int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	wantSchema := &schema.StructType{Fields: []schema.StructField{
		{Name: "i96", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ms", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "dbin", Type: schema.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "l2", Type: &schema.ArrayType{ElementType: schema.TypeInteger}, Nullable: true},
		{Name: "l2s", Type: &schema.ArrayType{ElementType: &schema.StructType{Fields: []schema.StructField{
			{Name: "a", Type: schema.TypeString}, {Name: "b", Type: schema.TypeInteger, Nullable: true}}}}, Nullable: true},
		{Name: "rep", Type: &schema.ArrayType{ElementType: schema.TypeInteger}},
		{Name: "ntzms", Type: schema.TypeTimestampNTZ, Nullable: true},
	}}
	if !schema.TypesEqual(f.Schema(), wantSchema) {
		t.Fatalf("schema\n got %s\nwant %s", f.Schema(), wantSchema)
	}
	got, err := f.ReadAll(context.Background(), wantSchema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{
			time.Date(1970, 1, 2, 1, 0, 0, 0, time.UTC),
			time.UnixMilli(1500).UTC(), schema.Decimal{Unscaled: big.NewInt(-12345), Scale: 2}, []any{int32(1), int32(2)},
			[]any{[]any{"x", nil}, []any{"y", int32(7)}},
			[]any{int32(5), int32(6)},
			time.UnixMilli(-1).UTC(),
		},
		{nil, nil, nil, nil, []any{}, []any{}, nil},
	}
	for i := range want {
		if !valuesEqual(got[i], want[i]) {
			t.Errorf("row %d\n got %#v\nwant %#v", i, got[i], want[i])
		}
	}
	// Reading a long as a wider request and a decimal at another scale.
	widen := &schema.StructType{Fields: []schema.StructField{
		{Name: "dbin", Type: schema.DecimalType{Precision: 12, Scale: 4}, Nullable: true},
		{Name: "rep", Type: &schema.ArrayType{ElementType: schema.TypeLong}},
	}}
	got2, err := f.ReadAll(context.Background(), widen, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !valuesEqual(got2[0][0], schema.Decimal{Unscaled: big.NewInt(-1234500), Scale: 4}) || !valuesEqual(got2[0][1], []any{int64(5), int64(6)}) {
		t.Errorf("widened row = %#v", got2[0])
	}
}

func TestOpenFileCorrupt(t *testing.T) {
	good, err := readFixtureBytes("testdata/dat/nested_types.parquet")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		data []byte
	}{
		{"empty", nil},
		{"no magic", append(append([]byte{}, good[:len(good)-4]...), 'X', 'X', 'X', 'X')},
		{"huge footer length", func() []byte {
			b := append([]byte{}, good...)
			b[len(b)-8], b[len(b)-7], b[len(b)-6], b[len(b)-5] = 0xff, 0xff, 0xff, 0x7f
			return b
		}()},
		{"garbage footer", func() []byte {
			b := append([]byte{}, good...)
			for i := len(b) - 300; i < len(b)-8; i++ {
				b[i] ^= 0x5a
			}
			return b
		}()},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newMemStore()
			_ = st.Put(context.Background(), "x.parquet", c.data)
			f, err := OpenFile(context.Background(), st, "x.parquet", -1)
			if err == nil {
				_, err = f.ReadAll(context.Background(), nil, ReadOptions{})
			}
			if err == nil {
				t.Fatal("no error")
			}
			if !errorsIsAny(err, ErrCorruptFile, ErrUnsupported) {
				t.Fatalf("err = %v, want ErrCorruptFile", err)
			}
			if !bytes.Contains([]byte(err.Error()), []byte("x.parquet")) {
				t.Errorf("error %q does not name the path", err)
			}
		})
	}
}
