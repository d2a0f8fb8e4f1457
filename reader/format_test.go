package reader

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
)

func TestRecordJSON(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "ts", Type: schema.TypeTimestamp},
		{Name: "d", Type: schema.TypeDate},
		{Name: "dec", Type: schema.DecimalType{Precision: 10, Scale: 2}},
		{Name: "bin", Type: schema.TypeBinary},
		{Name: "nan", Type: schema.TypeDouble},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "z", Type: schema.TypeLong}, {Name: "a", Type: schema.TypeString}}}},
		{Name: "m", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: schema.TypeLong}},
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.TypeDate}},
		{Name: "n", Type: schema.TypeString},
	}}
	r := Record{Schema: sch, Values: []any{
		time.Date(2001, 1, 1, 0, 47, 0, 123456000, time.UTC), schema.Date(1),
		schema.Decimal{Unscaled: big.NewInt(-1999), Scale: 2}, []byte{1, 2}, math.NaN(),
		[]any{int64(1), "x"}, []schema.MapEntry{{Key: "k", Value: int64(2)}}, []any{schema.Date(0)}, nil,
	}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ts":"2001-01-01T00:47:00.123456Z","d":"1970-01-02","dec":"-19.99","bin":"AQI=","nan":"NaN","s":{"z":1,"a":"x"},"m":{"k":2},"arr":["1970-01-01"],"n":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if got := FormatValue(schema.Decimal{Unscaled: big.NewInt(5), Scale: 3}, nil); got != "0.005" {
		t.Errorf("FormatValue(decimal) = %q", got)
	}
	if got := FormatValue(nil, schema.TypeString); got != "" {
		t.Errorf("FormatValue(nil) = %q", got)
	}
	f := File{Path: "p=1/a.parquet", PartitionValues: map[string]any{"p": schema.Date(2)}, NumRecords: 3}
	fb, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	var back map[string]any
	json.Unmarshal(fb, &back)
	if back["partitionValues"].(map[string]any)["p"] != "1970-01-03" || back["path"] != "p=1/a.parquet" {
		t.Fatalf("file JSON %s", fb)
	}
}
