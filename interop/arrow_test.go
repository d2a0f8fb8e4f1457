package interop

// Helpers that read Parquet files with arrow-go (parquet/file + pqarrow) and
// turn Arrow values back into lakesink's Go value representation
// (internal/parquetio/types.go), so that they can be compared with what was
// written.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/arrow/array"
	"github.com/apache/arrow-go/v18/arrow/memory"
	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"
	"github.com/apache/arrow-go/v18/parquet/pqarrow"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakesink/lakesink/schema"
)

// arrowFile is one Parquet file as arrow-go reads it.
type arrowFile struct {
	path    string
	numRows int64 // from the Parquet footer
	pq      *pqschema.Schema
	root    *pqschema.GroupNode
	schema  *arrow.Schema
	// kv is the footer's key-value metadata.
	kv map[string]string
	// cols[name] holds the column's values converted to lakesink Go values.
	cols map[string][]any
}

// readArrow reads the whole file at path with pqarrow.
func readArrow(t *testing.T, path string) *arrowFile {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := file.NewParquetReader(bytes.NewReader(data))
	if err != nil {
		t.Fatalf("arrow-go cannot open %s: %v", path, err)
	}
	defer rdr.Close()
	// Not a CheckedAllocator: arrow-go v18.8.0's DELTA_BINARY_PACKED
	// decoder (deltaBitPackDecoder.initBlock, used for the lengths of
	// DELTA_LENGTH_BYTE_ARRAY pages) does not return 64 bytes per page to
	// the allocator; harmless with the Go allocator.
	fr, err := pqarrow.NewFileReader(rdr, pqarrow.ArrowReadProperties{BatchSize: 1024}, memory.DefaultAllocator)
	if err != nil {
		t.Fatalf("pqarrow cannot open %s: %v", path, err)
	}
	tbl, err := fr.ReadTable(context.Background())
	if err != nil {
		t.Fatalf("pqarrow cannot read %s: %v", path, err)
	}
	defer tbl.Release()
	af := &arrowFile{
		path:    path,
		numRows: rdr.NumRows(),
		pq:      rdr.MetaData().Schema,
		root:    rdr.MetaData().Schema.Root(),
		schema:  tbl.Schema(),
		cols:    map[string][]any{},
		kv:      map[string]string{},
	}
	if kvm := rdr.MetaData().KeyValueMetadata(); kvm != nil {
		for i, k := range kvm.Keys() {
			af.kv[k] = kvm.Values()[i]
		}
	}
	if tbl.NumRows() != af.numRows {
		t.Errorf("%s: arrow table has %d rows, footer says %d", path, tbl.NumRows(), af.numRows)
	}
	for i := 0; i < int(tbl.NumCols()); i++ {
		col := tbl.Column(i)
		var vals []any
		for _, chunk := range col.Data().Chunks() {
			for r := 0; r < chunk.Len(); r++ {
				v, err := goValue(chunk, r)
				if err != nil {
					t.Fatalf("%s: column %s row %d: %v", path, col.Name(), len(vals), err)
				}
				vals = append(vals, v)
			}
		}
		af.cols[col.Name()] = vals
	}
	return af
}

// goValue converts element i of arr to lakesink's Go value representation.
func goValue(arr arrow.Array, i int) (any, error) {
	if arr.IsNull(i) {
		return nil, nil
	}
	switch a := arr.(type) {
	case *array.String:
		return strings.Clone(a.Value(i)), nil
	case *array.Int64:
		return a.Value(i), nil
	case *array.Int32:
		return a.Value(i), nil
	case *array.Int16:
		return a.Value(i), nil
	case *array.Int8:
		return a.Value(i), nil
	case *array.Float32:
		return a.Value(i), nil
	case *array.Float64:
		return a.Value(i), nil
	case *array.Boolean:
		return a.Value(i), nil
	case *array.Binary:
		return bytes.Clone(a.Value(i)), nil
	case *array.Date32:
		return schema.Date(a.Value(i)), nil
	case *array.Timestamp:
		switch unit := a.DataType().(*arrow.TimestampType).Unit; unit {
		case arrow.Microsecond:
			return time.UnixMicro(int64(a.Value(i))).UTC(), nil
		case arrow.Nanosecond: // INT96, as Spark writes by default
			return time.Unix(0, int64(a.Value(i))).UTC(), nil
		default:
			return nil, fmt.Errorf("timestamp unit %s", unit)
		}
	case *array.Decimal128:
		typ := a.DataType().(*arrow.Decimal128Type)
		return schema.Decimal{Unscaled: a.Value(i).BigInt(), Scale: int(typ.Scale)}, nil
	case *array.Struct:
		out := make([]any, a.NumField())
		for j := range out {
			v, err := goValue(a.Field(j), i)
			if err != nil {
				return nil, err
			}
			out[j] = v
		}
		return out, nil
	case *array.Map: // before *array.List: a Map is a List
		start, end := a.ValueOffsets(i)
		out := make([]schema.MapEntry, 0, end-start)
		for k := start; k < end; k++ {
			key, err := goValue(a.Keys(), int(k))
			if err != nil {
				return nil, err
			}
			val, err := goValue(a.Items(), int(k))
			if err != nil {
				return nil, err
			}
			out = append(out, schema.MapEntry{Key: key, Value: val})
		}
		return out, nil
	case *array.List:
		start, end := a.ValueOffsets(i)
		out := make([]any, 0, end-start)
		for k := start; k < end; k++ {
			v, err := goValue(a.ListValues(), int(k))
			if err != nil {
				return nil, err
			}
			out = append(out, v)
		}
		return out, nil
	}
	return nil, fmt.Errorf("unexpected Arrow array %T (%s)", arr, arr.DataType())
}

// sameValue reports whether got (read by arrow-go) equals want (written),
// with NaN equal to NaN, time instants compared to the microsecond and
// decimals compared by unscaled value and scale.
func sameValue(want, got any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	switch w := want.(type) {
	case float32:
		g, ok := got.(float32)
		return ok && (w == g && math.Signbit(float64(w)) == math.Signbit(float64(g)) || w != w && g != g)
	case float64:
		g, ok := got.(float64)
		return ok && (w == g && math.Signbit(w) == math.Signbit(g) || math.IsNaN(w) && math.IsNaN(g))
	case []byte:
		g, ok := got.([]byte)
		return ok && bytes.Equal(w, g)
	case time.Time:
		g, ok := got.(time.Time)
		return ok && w.UnixMicro() == g.UnixMicro()
	case schema.Decimal:
		g, ok := got.(schema.Decimal)
		return ok && w.Scale == g.Scale && w.Unscaled.Cmp(g.Unscaled) == 0
	case []any:
		g, ok := got.([]any)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(w[i], g[i]) {
				return false
			}
		}
		return true
	case []schema.MapEntry:
		g, ok := got.([]schema.MapEntry)
		if !ok || len(g) != len(w) {
			return false
		}
		for i := range w {
			if !sameValue(w[i].Key, g[i].Key) || !sameValue(w[i].Value, g[i].Value) {
				return false
			}
		}
		return true
	}
	return want == got
}

// show prints a value for failure messages.
func show(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case time.Time:
		return x.UTC().Format(time.RFC3339Nano)
	case schema.Decimal:
		return x.String()
	case string:
		return fmt.Sprintf("%q", x)
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = show(x[i])
		}
		return "[" + strings.Join(parts, " ") + "]"
	case []schema.MapEntry:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = show(x[i].Key) + ":" + show(x[i].Value)
		}
		return "{" + strings.Join(parts, " ") + "}"
	}
	return fmt.Sprintf("%v (%T)", v, v)
}

// checkArrowType compares the Arrow type arrow-go derives from the Parquet
// schema with the type Spark/Delta's reader derives for the Delta type.
func checkArrowType(t *testing.T, path string, dt schema.DataType, got arrow.DataType) {
	t.Helper()
	bad := func(want string) {
		t.Errorf("column %s (%s): arrow type %s, want %s", path, dt.TypeName(), got, want)
	}
	switch d := dt.(type) {
	case schema.PrimitiveType:
		want := map[schema.PrimitiveType]arrow.DataType{
			schema.TypeString:       arrow.BinaryTypes.String,
			schema.TypeLong:         arrow.PrimitiveTypes.Int64,
			schema.TypeInteger:      arrow.PrimitiveTypes.Int32,
			schema.TypeShort:        arrow.PrimitiveTypes.Int16,
			schema.TypeByte:         arrow.PrimitiveTypes.Int8,
			schema.TypeFloat:        arrow.PrimitiveTypes.Float32,
			schema.TypeDouble:       arrow.PrimitiveTypes.Float64,
			schema.TypeBoolean:      arrow.FixedWidthTypes.Boolean,
			schema.TypeBinary:       arrow.BinaryTypes.Binary,
			schema.TypeDate:         arrow.FixedWidthTypes.Date32,
			schema.TypeTimestamp:    &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"},
			schema.TypeTimestampNTZ: &arrow.TimestampType{Unit: arrow.Microsecond},
		}[d]
		if want == nil {
			t.Fatalf("column %s: no expectation for %s", path, d)
		}
		if !arrow.TypeEqual(got, want) {
			bad(want.String())
		}
	case schema.DecimalType:
		want := &arrow.Decimal128Type{Precision: int32(d.Precision), Scale: int32(d.Scale)}
		if !arrow.TypeEqual(got, want) {
			bad(want.String())
		}
	case *schema.StructType:
		st, ok := got.(*arrow.StructType)
		if !ok || st.NumFields() != len(d.Fields) {
			bad(fmt.Sprintf("struct with %d fields", len(d.Fields)))
			return
		}
		for i, f := range d.Fields {
			af := st.Field(i)
			if af.Name != f.Name || af.Nullable != f.Nullable {
				t.Errorf("column %s field %d: arrow %s nullable=%v, want %s nullable=%v", path, i, af.Name, af.Nullable, f.Name, f.Nullable)
			}
			checkArrowType(t, path+"."+f.Name, f.Type, af.Type)
		}
	case *schema.ArrayType:
		lt, ok := got.(*arrow.ListType)
		if !ok || got.ID() != arrow.LIST {
			bad("list")
			return
		}
		if lt.ElemField().Nullable != d.ContainsNull {
			t.Errorf("column %s: list element nullable=%v, want containsNull=%v", path, lt.ElemField().Nullable, d.ContainsNull)
		}
		checkArrowType(t, path+".element", d.ElementType, lt.Elem())
	case *schema.MapType:
		mt, ok := got.(*arrow.MapType)
		if !ok {
			bad("map")
			return
		}
		if mt.KeyField().Nullable {
			t.Errorf("column %s: map key is nullable", path)
		}
		if mt.ItemField().Nullable != d.ValueContainsNull {
			t.Errorf("column %s: map value nullable=%v, want valueContainsNull=%v", path, mt.ItemField().Nullable, d.ValueContainsNull)
		}
		checkArrowType(t, path+".key", d.KeyType, mt.KeyType())
		checkArrowType(t, path+".value", d.ValueType, mt.ItemType())
	default:
		t.Fatalf("column %s: unexpected Delta type %T", path, dt)
	}
}

// checkArrowSchema checks the file's Arrow schema against the Delta fields
// expected in the file (in order).
func checkArrowSchema(t *testing.T, af *arrowFile, fields []schema.StructField) {
	t.Helper()
	if af.schema.NumFields() != len(fields) {
		t.Fatalf("%s: arrow schema %s, want %d fields", af.path, af.schema, len(fields))
	}
	for i, f := range fields {
		got := af.schema.Field(i)
		if got.Name != f.Name {
			t.Errorf("%s: field %d is %q, want %q", af.path, i, got.Name, f.Name)
			continue
		}
		if got.Nullable != f.Nullable {
			t.Errorf("%s: column %s nullable=%v, want %v", af.path, f.Name, got.Nullable, f.Nullable)
		}
		checkArrowType(t, f.Name, f.Type, got.Type)
	}
}

// leafExpect is the Parquet physical and logical type of a primitive column.
type leafExpect struct {
	phys    parquet.Type
	logical pqschema.LogicalType // nil: no annotation (or the matching INT(64,true))
	typeLen int                  // FIXED_LEN_BYTE_ARRAY width
}

// parquetLeaf is the Parquet type Spark writes for a Delta primitive or
// decimal type (Spark's ParquetSchemaConverter, writeLegacyParquetFormat=false).
func parquetLeaf(dt schema.DataType) (leafExpect, bool) {
	switch d := dt.(type) {
	case schema.PrimitiveType:
		switch d {
		case schema.TypeString:
			return leafExpect{phys: parquet.Types.ByteArray, logical: pqschema.StringLogicalType{}}, true
		case schema.TypeLong:
			return leafExpect{phys: parquet.Types.Int64}, true
		case schema.TypeInteger:
			return leafExpect{phys: parquet.Types.Int32}, true
		case schema.TypeShort:
			return leafExpect{phys: parquet.Types.Int32, logical: pqschema.NewIntLogicalType(16, true)}, true
		case schema.TypeByte:
			return leafExpect{phys: parquet.Types.Int32, logical: pqschema.NewIntLogicalType(8, true)}, true
		case schema.TypeFloat:
			return leafExpect{phys: parquet.Types.Float}, true
		case schema.TypeDouble:
			return leafExpect{phys: parquet.Types.Double}, true
		case schema.TypeBoolean:
			return leafExpect{phys: parquet.Types.Boolean}, true
		case schema.TypeBinary:
			return leafExpect{phys: parquet.Types.ByteArray}, true
		case schema.TypeDate:
			return leafExpect{phys: parquet.Types.Int32, logical: pqschema.DateLogicalType{}}, true
		case schema.TypeTimestamp:
			return leafExpect{phys: parquet.Types.Int64, logical: pqschema.NewTimestampLogicalType(true, pqschema.TimeUnitMicros)}, true
		case schema.TypeTimestampNTZ:
			return leafExpect{phys: parquet.Types.Int64, logical: pqschema.NewTimestampLogicalType(false, pqschema.TimeUnitMicros)}, true
		}
	case schema.DecimalType:
		lt := pqschema.NewDecimalLogicalType(int32(d.Precision), int32(d.Scale))
		switch {
		case d.Precision <= 9:
			return leafExpect{phys: parquet.Types.Int32, logical: lt}, true
		case d.Precision <= 18:
			return leafExpect{phys: parquet.Types.Int64, logical: lt}, true
		default:
			return leafExpect{phys: parquet.Types.FixedLenByteArray, logical: lt, typeLen: int(pqarrow.DecimalSize(int32(d.Precision)))}, true
		}
	}
	return leafExpect{}, false
}

// checkParquetTypes checks the physical and logical type of every leaf
// column of the file (Parquet paths: st.a, arr.list.element,
// m.key_value.key) and the LIST/MAP annotations of nested groups.
func checkParquetTypes(t *testing.T, af *arrowFile, fields []schema.StructField) {
	t.Helper()
	leaves := map[string]*pqschema.Column{}
	for i := 0; i < af.pq.NumColumns(); i++ {
		c := af.pq.Column(i)
		leaves[c.Path()] = c
	}
	want := map[string]leafExpect{}
	var walk func(path string, dt schema.DataType)
	walk = func(path string, dt schema.DataType) {
		switch d := dt.(type) {
		case *schema.StructType:
			for _, f := range d.Fields {
				walk(path+"."+f.Name, f.Type)
			}
		case *schema.ArrayType:
			walk(path+".list.element", d.ElementType)
		case *schema.MapType:
			walk(path+".key_value.key", d.KeyType)
			walk(path+".key_value.value", d.ValueType)
		default:
			e, ok := parquetLeaf(dt)
			if !ok {
				t.Fatalf("no Parquet expectation for %s", dt.TypeName())
			}
			want[path] = e
		}
	}
	for _, f := range fields {
		walk(f.Name, f.Type)
		idx := af.root.FieldIndexByName(f.Name)
		if idx < 0 {
			t.Errorf("%s: no Parquet field %s", af.path, f.Name)
			continue
		}
		node := af.root.Field(idx)
		if f.Nullable != (node.RepetitionType() == parquet.Repetitions.Optional) {
			t.Errorf("%s: Parquet field %s repetition %s, nullable=%v", af.path, f.Name, node.RepetitionType(), f.Nullable)
		}
		switch f.Type.(type) {
		case *schema.ArrayType:
			if !node.LogicalType().Equals(pqschema.NewListLogicalType()) {
				t.Errorf("%s: Parquet group %s logical type %s, want LIST", af.path, f.Name, node.LogicalType())
			}
		case *schema.MapType:
			if !node.LogicalType().Equals(pqschema.MapLogicalType{}) {
				t.Errorf("%s: Parquet group %s logical type %s, want MAP", af.path, f.Name, node.LogicalType())
			}
		}
	}
	if len(leaves) != len(want) {
		var got []string
		for p := range leaves {
			got = append(got, p)
		}
		t.Errorf("%s: Parquet leaf columns %v, want %d", af.path, got, len(want))
	}
	for path, e := range want {
		c, ok := leaves[path]
		if !ok {
			t.Errorf("%s: no Parquet leaf column %s", af.path, path)
			continue
		}
		if c.PhysicalType() != e.phys {
			t.Errorf("%s: column %s physical type %s, want %s", af.path, path, c.PhysicalType(), e.phys)
		}
		lt := c.LogicalType()
		switch {
		case e.logical == nil:
			none := lt == nil || lt.Equals(pqschema.NoLogicalType{}) ||
				(e.phys == parquet.Types.Int64 && lt.Equals(pqschema.NewIntLogicalType(64, true))) ||
				(e.phys == parquet.Types.Int32 && lt.Equals(pqschema.NewIntLogicalType(32, true)))
			if !none {
				t.Errorf("%s: column %s logical type %s, want none", af.path, path, lt)
			}
		case !lt.Equals(e.logical):
			t.Errorf("%s: column %s logical type %s, want %s", af.path, path, lt, e.logical)
		}
		if e.typeLen != 0 && c.TypeLength() != e.typeLen {
			t.Errorf("%s: column %s FIXED_LEN_BYTE_ARRAY(%d), want %d", af.path, path, c.TypeLength(), e.typeLen)
		}
	}
}

// deltaStats is the stats JSON of an add action (PROTOCOL.md, "Per-file Statistics").
type deltaStats struct {
	NumRecords *int64         `json:"numRecords"`
	MinValues  map[string]any `json:"minValues"`
	MaxValues  map[string]any `json:"maxValues"`
	NullCount  map[string]any `json:"nullCount"`
}

func parseStats(t *testing.T, path, js string) deltaStats {
	t.Helper()
	var st deltaStats
	dec := json.NewDecoder(strings.NewReader(js))
	dec.UseNumber()
	if err := dec.Decode(&st); err != nil {
		t.Fatalf("%s: stats %q: %v", path, js, err)
	}
	if st.NumRecords == nil {
		t.Fatalf("%s: stats %q without numRecords", path, js)
	}
	return st
}

// statBound parses a minValues/maxValues entry into a value comparable with
// the Go values of the column (as cmpValue orders them).
func statBound(dt schema.DataType, v any) (any, error) {
	switch d := dt.(type) {
	case schema.PrimitiveType:
		switch d {
		case schema.TypeLong, schema.TypeInteger, schema.TypeShort, schema.TypeByte:
			n, ok := v.(json.Number)
			if !ok {
				return nil, fmt.Errorf("%v is not a number", v)
			}
			return n.Int64()
		case schema.TypeFloat, schema.TypeDouble:
			switch x := v.(type) {
			case json.Number:
				if d == schema.TypeFloat {
					// A float's stats are its shortest float32 rendering:
					// parsed as a float32, as Spark parses them with the
					// column's type.
					f, err := strconv.ParseFloat(string(x), 32)
					return float64(float32(f)), err
				}
				return x.Float64()
			case string:
				switch x {
				case "NaN":
					return math.NaN(), nil
				case "Infinity":
					return math.Inf(1), nil
				case "-Infinity":
					return math.Inf(-1), nil
				}
			}
			return nil, fmt.Errorf("%v is not a float", v)
		case schema.TypeString:
			s, ok := v.(string)
			if !ok {
				return nil, fmt.Errorf("%v is not a string", v)
			}
			return s, nil
		case schema.TypeDate:
			s, _ := v.(string)
			tm, err := time.Parse("2006-01-02", s)
			if err != nil {
				return nil, err
			}
			return int64(tm.Unix() / 86400), nil
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			s, _ := v.(string)
			for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05.999999999"} {
				if tm, err := time.Parse(layout, s); err == nil {
					return tm.UnixMicro(), nil
				}
			}
			return nil, fmt.Errorf("timestamp stat %q does not parse", s)
		}
	case schema.DecimalType:
		n, ok := v.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%v is not a number", v)
		}
		r, ok := new(big.Rat).SetString(string(n))
		if !ok {
			return nil, fmt.Errorf("decimal stat %q does not parse", n)
		}
		return r, nil
	}
	return nil, fmt.Errorf("no stats for %s", dt.TypeName())
}

// ordered maps a column value to the domain of statBound.
func ordered(v any) any {
	switch x := v.(type) {
	case int64:
		return x
	case int32:
		return int64(x)
	case int16:
		return int64(x)
	case int8:
		return int64(x)
	case float32:
		return float64(x)
	case float64:
		return x
	case string:
		return x
	case schema.Date:
		return int64(x)
	case time.Time:
		return x.UnixMicro()
	case schema.Decimal:
		return new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
	}
	return nil
}

// cmpOrdered compares two values of the statBound domain.
func cmpOrdered(a, b any) int {
	switch x := a.(type) {
	case int64:
		y := b.(int64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case float64:
		y := b.(float64)
		switch {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	case string:
		return strings.Compare(x, b.(string))
	case *big.Rat:
		return x.Cmp(b.(*big.Rat))
	}
	panic(fmt.Sprintf("cmpOrdered %T", a))
}

// statsTypes are the primitive types Delta collects min/max for.
var statsTypes = map[schema.DataType]bool{
	schema.TypeString: true, schema.TypeLong: true, schema.TypeInteger: true,
	schema.TypeShort: true, schema.TypeByte: true, schema.TypeFloat: true,
	schema.TypeDouble: true, schema.TypeDate: true, schema.TypeTimestamp: true,
	schema.TypeTimestampNTZ: true,
}

// checkStats checks one column's stats against the values arrow-go read:
// nullCount is exact; min <= every value <= max; for integers, dates and
// decimals the bounds are also attained (Delta's min/max aggregates).
func checkStats(t *testing.T, where, path string, dt schema.DataType, vals []any, st deltaStats, minV, maxV, nulls any) {
	t.Helper()
	if sd, ok := dt.(*schema.StructType); ok {
		sub := func(m any, name string) any {
			if mm, ok := m.(map[string]any); ok {
				return mm[name]
			}
			return nil
		}
		for j, f := range sd.Fields {
			fv := make([]any, len(vals))
			for i, v := range vals {
				if v != nil {
					fv[i] = v.([]any)[j]
				}
			}
			checkStats(t, where, path+"."+f.Name, f.Type, fv, st, sub(minV, f.Name), sub(maxV, f.Name), sub(nulls, f.Name))
		}
		return
	}
	var nullCount int64
	for _, v := range vals {
		if v == nil {
			nullCount++
		}
	}
	if nulls != nil {
		n, ok := nulls.(json.Number)
		if got, err := n.Int64(); !ok || err != nil || got != nullCount {
			t.Errorf("%s: column %s nullCount %v, arrow-go reads %d nulls", where, path, nulls, nullCount)
		}
	}
	if minV == nil && maxV == nil {
		if _, isDec := dt.(schema.DecimalType); nullCount < int64(len(vals)) && (isDec || statsTypes[dt]) {
			t.Errorf("%s: column %s has non-null values but no minValues/maxValues", where, path)
		}
		return
	}
	lo, err := statBound(dt, minV)
	if err != nil {
		t.Errorf("%s: column %s minValues: %v", where, path, err)
		return
	}
	hi, err := statBound(dt, maxV)
	if err != nil {
		t.Errorf("%s: column %s maxValues: %v", where, path, err)
		return
	}
	if dt == schema.TypeTimestamp || dt == schema.TypeTimestampNTZ {
		// Stats timestamps have millisecond precision; Delta readers widen
		// the max by 1 ms before comparing (a max truncated at the end of
		// year 9999 still covers 23:59:59.999999).
		hi = hi.(int64) + 999
	}
	isFloat := dt == schema.TypeFloat || dt == schema.TypeDouble
	exact := !isFloat && dt != schema.TypeString && dt != schema.TypeTimestamp && dt != schema.TypeTimestampNTZ
	var sawLo, sawHi, sawNaN bool
	for i, v := range vals {
		if v == nil {
			continue
		}
		o := ordered(v)
		if isFloat && math.IsNaN(o.(float64)) {
			sawNaN = true
			continue // Spark orders NaN above every value: only a NaN max covers it
		}
		if !(isFloat && math.IsNaN(lo.(float64))) && cmpOrdered(o, lo) < 0 {
			t.Errorf("%s: column %s row %d value %s < minValues %v", where, path, i, show(v), minV)
		}
		if !(isFloat && math.IsNaN(hi.(float64))) && cmpOrdered(o, hi) > 0 {
			t.Errorf("%s: column %s row %d value %s > maxValues %v", where, path, i, show(v), maxV)
		}
		sawLo = sawLo || cmpOrdered(o, lo) == 0
		sawHi = sawHi || cmpOrdered(o, hi) == 0
	}
	if isFloat && sawNaN && !math.IsNaN(hi.(float64)) {
		t.Errorf("%s: column %s holds NaN but maxValues is %v", where, path, maxV)
	}
	if exact && (!sawLo || !sawHi) {
		t.Errorf("%s: column %s min/max %v/%v not attained by the values arrow-go reads", where, path, minV, maxV)
	}
}

// sparkTypeJSON is the JSON of a Spark DataType (DataType.jsonValue), built
// here independently of lakesink's schema encoder; field metadata is left
// out (compared without it).
func sparkTypeJSON(dt schema.DataType) any {
	switch d := dt.(type) {
	case schema.PrimitiveType:
		return string(d)
	case schema.DecimalType:
		return fmt.Sprintf("decimal(%d,%d)", d.Precision, d.Scale)
	case *schema.StructType:
		return sparkStructJSON(d.Fields)
	case *schema.ArrayType:
		return map[string]any{"type": "array", "elementType": sparkTypeJSON(d.ElementType), "containsNull": d.ContainsNull}
	case *schema.MapType:
		return map[string]any{"type": "map", "keyType": sparkTypeJSON(d.KeyType), "valueType": sparkTypeJSON(d.ValueType),
			"valueContainsNull": d.ValueContainsNull}
	}
	return nil
}

func sparkStructJSON(fields []schema.StructField) any {
	fs := make([]any, len(fields))
	for i, f := range fields {
		fs[i] = map[string]any{"name": f.Name, "type": sparkTypeJSON(f.Type), "nullable": f.Nullable}
	}
	return map[string]any{"type": "struct", "fields": fs}
}

// dropMetadata removes "metadata" keys of struct fields.
func dropMetadata(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "metadata" {
				continue
			}
			out[k] = dropMetadata(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = dropMetadata(x[i])
		}
		return out
	}
	return v
}

// sparkRowMetadataKey is the footer key under which Spark stores the
// Catalyst schema of the file (ParquetReadSupport.SPARK_METADATA_KEY); Spark
// prefers it over the Parquet schema to restore the exact Spark types.
const sparkRowMetadataKey = "org.apache.spark.sql.parquet.row.metadata"

// checkSparkRowMetadata checks that the Spark schema in the footer describes the file's columns with the written types.
func checkSparkRowMetadata(t *testing.T, af *arrowFile, fields []schema.StructField) {
	t.Helper()
	js, ok := af.kv[sparkRowMetadataKey]
	if !ok {
		t.Errorf("%s: footer has no %s (Spark always writes it)", af.path, sparkRowMetadataKey)
		return
	}
	var got any
	if err := json.Unmarshal([]byte(js), &got); err != nil {
		t.Errorf("%s: %s is not JSON: %v", af.path, sparkRowMetadataKey, err)
		return
	}
	want := sparkStructJSON(fields)
	gotJS, _ := json.Marshal(dropMetadata(got))
	wantJS, _ := json.Marshal(want)
	if !bytes.Equal(gotJS, wantJS) {
		t.Errorf("%s: %s\n got %s\nwant %s", af.path, sparkRowMetadataKey, gotJS, wantJS)
	}
}
