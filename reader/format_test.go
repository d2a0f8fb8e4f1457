package reader

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
)

func TestRecordJSON(t *testing.T) {
	schema := &parquetio.StructType{Fields: []parquetio.StructField{
		{Name: "ts", Type: parquetio.TypeTimestamp},
		{Name: "d", Type: parquetio.TypeDate},
		{Name: "dec", Type: parquetio.DecimalType{Precision: 10, Scale: 2}},
		{Name: "bin", Type: parquetio.TypeBinary},
		{Name: "nan", Type: parquetio.TypeDouble},
		{Name: "s", Type: &parquetio.StructType{Fields: []parquetio.StructField{{Name: "z", Type: parquetio.TypeLong}, {Name: "a", Type: parquetio.TypeString}}}},
		{Name: "m", Type: &parquetio.MapType{KeyType: parquetio.TypeString, ValueType: parquetio.TypeLong}},
		{Name: "arr", Type: &parquetio.ArrayType{ElementType: parquetio.TypeDate}},
		{Name: "n", Type: parquetio.TypeString},
	}}
	r := Record{Schema: schema, Values: []any{
		time.Date(2001, 1, 1, 0, 47, 0, 123456000, time.UTC), parquetio.Date(1),
		parquetio.Decimal{Unscaled: big.NewInt(-1999), Scale: 2}, []byte{1, 2}, math.NaN(),
		[]any{int64(1), "x"}, []parquetio.MapEntry{{Key: "k", Value: int64(2)}}, []any{parquetio.Date(0)}, nil,
	}}
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"ts":"2001-01-01T00:47:00.123456Z","d":"1970-01-02","dec":"-19.99","bin":"AQI=","nan":"NaN","s":{"z":1,"a":"x"},"m":{"k":2},"arr":["1970-01-01"],"n":null}`
	if string(b) != want {
		t.Fatalf("got  %s\nwant %s", b, want)
	}
	if got := FormatValue(parquetio.Decimal{Unscaled: big.NewInt(5), Scale: 3}, nil); got != "0.005" {
		t.Errorf("FormatValue(decimal) = %q", got)
	}
	if got := FormatValue(nil, parquetio.TypeString); got != "" {
		t.Errorf("FormatValue(nil) = %q", got)
	}
	f := File{Path: "p=1/a.parquet", PartitionValues: map[string]any{"p": parquetio.Date(2)}, NumRecords: 3}
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
