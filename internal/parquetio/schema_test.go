package parquetio

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"github.com/lakesink/lakesink/schema"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestSchemaJSONRoundTripCorpus parses every schemaString found in the
// Spark/Delta/delta-rs golden tables and checks that re-marshalling yields the
// same JSON document (semantically), so metadata and field order survive.
func TestSchemaJSONRoundTripCorpus(t *testing.T) {
	f, err := os.Open("testdata/schemas.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	n := 0
	for sc.Scan() {
		line := sc.Bytes()
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		n++
		s, err := schema.ParseSchema(line)
		if err != nil {
			t.Fatalf("schema %d: %v\n%s", n, err, line)
		}
		out, err := s.MarshalJSON()
		if err != nil {
			t.Fatalf("schema %d: marshal: %v", n, err)
		}
		var a, b any
		if err := json.Unmarshal(line, &a); err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(out, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("schema %d: round trip differs\n in: %s\nout: %s", n, line, out)
		}
	}
	if n < 10 {
		t.Fatalf("only %d schemas in corpus", n)
	}
}

func TestSchemaMarshalFieldOrder(t *testing.T) {
	s := &schema.StructType{Fields: []schema.StructField{
		{Name: "b", Type: schema.TypeLong, Nullable: true},
		{Name: "a", Type: schema.DecimalType{Precision: 10, Scale: 2}, Nullable: false,
			Metadata: map[string]any{schema.MetaColumnMappingID: json.Number("5"), schema.MetaColumnMappingPhysicalName: "col-x"}},
		{Name: "m", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: &schema.ArrayType{ElementType: schema.TypeTimestampNTZ, ContainsNull: true}, ValueContainsNull: false}, Nullable: true},
	}}
	got, err := s.MarshalJSON()
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[{"name":"b","type":"long","nullable":true,"metadata":{}},` +
		`{"name":"a","type":"decimal(10,2)","nullable":false,"metadata":{"delta.columnMapping.id":5,"delta.columnMapping.physicalName":"col-x"}},` +
		`{"name":"m","type":{"type":"map","keyType":"string","valueType":{"type":"array","elementType":"timestamp_ntz","containsNull":true},"valueContainsNull":false},"nullable":true,"metadata":{}}]}`
	if string(got) != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
	back, err := schema.ParseSchema(got)
	if err != nil {
		t.Fatal(err)
	}
	if !schema.TypesEqual(s, back) {
		t.Fatalf("parse back differs: %s", back)
	}
	if f, ok := back.Field("A"); !ok || f.PhysicalName() != "col-x" {
		t.Fatalf("Field(A) = %+v %v", f, ok)
	}
	if id, ok := back.Fields[1].ColumnMappingID(); !ok || id != 5 {
		t.Fatalf("ColumnMappingID = %d %v", id, ok)
	}
	if back.FieldIndex("nope") != -1 || back.FieldIndex("m") != 2 {
		t.Fatal("FieldIndex")
	}
}

func TestParseSchemaErrors(t *testing.T) {
	cases := []struct {
		name, in, wantIn string
	}{
		{"unknown primitive", `{"type":"struct","fields":[{"name":"x","type":"uuid","nullable":true,"metadata":{}}]}`, "uuid"},
		{"unknown nested", `{"type":"struct","fields":[{"name":"s","type":{"type":"struct","fields":[{"name":"y","type":"int128","nullable":true,"metadata":{}}]},"nullable":true,"metadata":{}}]}`, "s.y"},
		{"bad decimal", `{"type":"struct","fields":[{"name":"d","type":"decimal(40,2)","nullable":true,"metadata":{}}]}`, "decimal(40,2)"},
		{"not a struct", `"long"`, "not a struct"},
		{"bad json", `{"type":`, "parse"},
		{"unknown complex", `{"type":"struct","fields":[{"name":"u","type":{"type":"udt"},"nullable":true,"metadata":{}}]}`, "udt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := schema.ParseSchema([]byte(c.in))
			if !errors.Is(err, schema.ErrSchema) {
				t.Fatalf("err = %v, want ErrSchema", err)
			}
			if !strings.Contains(err.Error(), c.wantIn) {
				t.Fatalf("err %q does not mention %q", err, c.wantIn)
			}
		})
	}
}

func TestVariantParsesButIsNotWritable(t *testing.T) {
	s, err := schema.ParseSchema([]byte(`{"type":"struct","fields":[{"name":"v","type":"variant","nullable":true,"metadata":{}}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if s.Fields[0].Type != schema.TypeVariant {
		t.Fatalf("type = %v", s.Fields[0].Type)
	}
	if _, err := ParquetSchema(s, SchemaOptions{}); !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "variant") {
		t.Fatalf("ParquetSchema(variant) err = %v", err)
	}
}

func TestMergeSchema(t *testing.T) {
	old := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeString, Nullable: true}}}, Nullable: true},
	}}
	cases := []struct {
		name    string
		new     *schema.StructType
		want    *schema.StructType
		wantErr string
	}{
		{
			name: "add nullable top-level and nested",
			new: &schema.StructType{Fields: []schema.StructField{
				{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeString, Nullable: true}, {Name: "b", Type: schema.TypeInteger, Nullable: true}}}, Nullable: true},
				{Name: "z", Type: schema.TypeDate, Nullable: true},
			}},
			want: &schema.StructType{Fields: []schema.StructField{
				{Name: "id", Type: schema.TypeLong, Nullable: false},
				{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeString, Nullable: true}, {Name: "b", Type: schema.TypeInteger, Nullable: true}}}, Nullable: true},
				{Name: "z", Type: schema.TypeDate, Nullable: true},
			}},
		},
		{
			name:    "type change",
			new:     &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeString, Nullable: false}}},
			wantErr: "id",
		},
		{
			name:    "nested type change",
			new:     &schema.StructType{Fields: []schema.StructField{{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeLong, Nullable: true}}}, Nullable: true}}},
			wantErr: "s.a",
		},
		{
			name:    "non-nullable new column",
			new:     &schema.StructType{Fields: []schema.StructField{{Name: "q", Type: schema.TypeLong, Nullable: false}}},
			wantErr: "q",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := schema.MergeSchema(old, c.new)
			if c.wantErr != "" {
				if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), c.wantErr) {
					t.Fatalf("err = %v, want ErrSchema naming %q", err, c.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !schema.TypesEqual(got, c.want) {
				t.Fatalf("got %s\nwant %s", got, c.want)
			}
		})
	}
}

func TestParquetSchemaMapping(t *testing.T) {
	s := &schema.StructType{Fields: []schema.StructField{
		{Name: "zstr", Type: schema.TypeString, Nullable: true},
		{Name: "long", Type: schema.TypeLong, Nullable: false},
		{Name: "int", Type: schema.TypeInteger, Nullable: true},
		{Name: "short", Type: schema.TypeShort, Nullable: true},
		{Name: "byte", Type: schema.TypeByte, Nullable: true},
		{Name: "float", Type: schema.TypeFloat, Nullable: true},
		{Name: "double", Type: schema.TypeDouble, Nullable: true},
		{Name: "bool", Type: schema.TypeBoolean, Nullable: true},
		{Name: "bin", Type: schema.TypeBinary, Nullable: true},
		{Name: "date", Type: schema.TypeDate, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "tsntz", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "d9", Type: schema.DecimalType{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "d18", Type: schema.DecimalType{Precision: 18, Scale: 2}, Nullable: true},
		{Name: "d38", Type: schema.DecimalType{Precision: 38, Scale: 0}, Nullable: true},
		{Name: "st", Type: &schema.StructType{Fields: []schema.StructField{{Name: "y", Type: schema.TypeLong, Nullable: true}, {Name: "x", Type: schema.TypeLong, Nullable: true}}}, Nullable: true},
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.TypeInteger, ContainsNull: true}, Nullable: true},
		{Name: "map", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: schema.TypeLong, ValueContainsNull: false}, Nullable: true},
		{Name: "logical", Type: schema.TypeLong, Nullable: true, Metadata: map[string]any{schema.MetaColumnMappingPhysicalName: "col-123", schema.MetaColumnMappingID: json.Number("7")}},
	}}
	ps, err := ParquetSchema(s, SchemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, c := range ps.Columns() {
		paths = append(paths, strings.Join(c, "."))
	}
	wantPaths := []string{"zstr", "long", "int", "short", "byte", "float", "double", "bool", "bin", "date", "ts", "tsntz",
		"d9", "d18", "d38", "st.y", "st.x", "arr.list.element", "map.key_value.key", "map.key_value.value", "logical"}
	if !reflect.DeepEqual(paths, wantPaths) {
		t.Fatalf("columns\n got %v\nwant %v", paths, wantPaths)
	}
	str := ps.String()
	for _, want := range []string{
		"optional binary zstr (STRING)",
		"required int64 long",
		"optional int32 short (INT(16,true))",
		"optional int32 byte (INT(8,true))",
		"optional int32 date (DATE)",
		"optional int64 ts (TIMESTAMP(isAdjustedToUTC=true,unit=MICROS))",
		"optional int64 tsntz (TIMESTAMP(isAdjustedToUTC=false,unit=MICROS))",
		"optional int32 d9 (DECIMAL(9,2))",
		"optional int64 d18 (DECIMAL(18,2))",
		"optional fixed_len_byte_array(16) d38 (DECIMAL(38,0))",
		"optional group arr (LIST)",
		"repeated group list",
		"optional int32 element",
		"optional group map (MAP)",
		"repeated group key_value",
		"required binary key (STRING)",
		"required int64 value",
	} {
		if !strings.Contains(str, want) {
			t.Errorf("schema lacks %q:\n%s", want, str)
		}
	}
	ps2, err := ParquetSchema(s, SchemaOptions{PhysicalNames: true})
	if err != nil {
		t.Fatal(err)
	}
	last := ps2.Fields()[len(ps2.Fields())-1]
	if last.Name() != "col-123" || last.ID() != 7 {
		t.Fatalf("physical field = %s id %d", last.Name(), last.ID())
	}
}

func TestDecimalBytes(t *testing.T) {
	// Spark's Decimal.minBytesForPrecision for a few precisions.
	for p, want := range map[int]int{1: 1, 2: 1, 3: 2, 9: 4, 10: 5, 18: 8, 19: 9, 38: 16} {
		if got := decimalBytes(p); got != want {
			t.Errorf("decimalBytes(%d) = %d, want %d", p, got, want)
		}
	}
}
