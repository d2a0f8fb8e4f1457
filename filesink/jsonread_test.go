package filesink

import (
	"context"
	"errors"
	"reflect"
	"testing"

	"github.com/lakesink/lakesink/schema"
)

// TestInferJSONSchemaAsSparkReadJSON: the schema of a JSON file sink is
// what spark.read.json infers with its defaults (JsonInferSchema): fields
// sorted, long widened to double, big integers decimal, conflicts string,
// always-null string, timestamps written as text stay strings; rows convert
// to it, and a line that is not an object is ErrCorruptDataFile.
func TestInferJSONSchemaAsSparkReadJSON(t *testing.T) {
	ctx := context.Background()
	m := newMemStore(t, "file:///out", nil)
	_ = m.Put(ctx, "a.json", []byte(`{"n":1,"x":1,"big":12345678901234567890,"s":{"b":true,"a":"q"},"ts":"2024-01-01T00:00:00.000Z","mix":1,"none":null}
{"n":2,"x":2.5,"arr":[1,null],"mix":"t"}
`))
	sch, err := InferJSONSchema(ctx, m, []string{"a.json"})
	if err != nil {
		t.Fatal(err)
	}
	want := &schema.StructType{Fields: []schema.StructField{
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.TypeLong, ContainsNull: true}, Nullable: true},
		{Name: "big", Type: schema.DecimalType{Precision: 20, Scale: 0}, Nullable: true},
		{Name: "mix", Type: schema.TypeString, Nullable: true},
		{Name: "n", Type: schema.TypeLong, Nullable: true},
		{Name: "none", Type: schema.TypeString, Nullable: true},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{
			{Name: "a", Type: schema.TypeString, Nullable: true}, {Name: "b", Type: schema.TypeBoolean, Nullable: true}}}, Nullable: true},
		{Name: "ts", Type: schema.TypeString, Nullable: true},
		{Name: "x", Type: schema.TypeDouble, Nullable: true},
	}}
	if !schema.TypesEqual(sch, want) {
		t.Fatalf("schema %+v\nwant %+v", sch, want)
	}
	rows, err := ReadJSONFile(ctx, m, "a.json", sch)
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 || !reflect.DeepEqual(rows[0][2], "1") || rows[0][3] != int64(1) || rows[0][7] != 1.0 || rows[1][7] != 2.5 ||
		!reflect.DeepEqual(rows[0][5], []any{"q", true}) || !reflect.DeepEqual(rows[1][0], []any{int64(1), nil}) {
		t.Fatalf("rows %v", rows)
	}
	if d, ok := rows[0][1].(schema.Decimal); !ok || d.Unscaled.String() != "12345678901234567890" {
		t.Fatalf("big = %v", rows[0][1])
	}
	_ = m.Put(ctx, "bad.json", []byte("{\"n\":1}\nnot json\n"))
	if _, err := InferJSONSchema(ctx, m, []string{"bad.json"}); !errors.Is(err, ErrCorruptDataFile) {
		t.Fatalf("bad line: %v, want ErrCorruptDataFile", err)
	}
}
