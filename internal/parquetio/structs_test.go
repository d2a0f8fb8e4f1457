package parquetio

import (
	"context"
	"errors"
	"github.com/lakesink/lakesink/schema"
	"math/big"
	"testing"
	"time"
)

type flight struct {
	Time   time.Time `parquet:"time"`
	Delay  int64     `parquet:"delay"`
	Dist   int64     `parquet:"distance"`
	Origin string    `parquet:"origin"`
	Dest   *string   `parquet:"destination"`
}

type nestedRec struct {
	ID      int32
	Tags    []string          `parquet:"tags"`
	Attrs   map[string]*int64 `parquet:"attrs"`
	Inner   struct{ A, B float64 }
	Ptr     *struct{ X int16 }
	Day     schema.Date
	Amount  schema.Decimal `parquet:"amount,decimal(10:2)"`
	Local   time.Time      `parquet:"local,timestamp_ntz"`
	Skipped string         `parquet:"-"`
	Small   int8
	Flag    bool `parquet:"flag,optional"`
	Raw     []byte
	private int
}

func TestFromStructsSchemaAndRoundTrip(t *testing.T) {
	d := "JFK"
	n := int64(9)
	recs := []nestedRec{
		{ID: 1, Tags: []string{"a", "b"}, Attrs: map[string]*int64{"z": &n, "a": nil}, Inner: struct{ A, B float64 }{1, 2},
			Ptr: &struct{ X int16 }{3}, Day: 5, Amount: schema.Decimal{Unscaled: big.NewInt(1234), Scale: 2},
			Local: time.Date(2020, 1, 1, 1, 2, 3, 0, time.UTC), Small: -1, Flag: true, Raw: []byte{1}},
		{ID: 2},
	}
	_ = d
	b, err := schema.FromStructs(recs)
	if err != nil {
		t.Fatal(err)
	}
	want := `{"type":"struct","fields":[{"name":"ID","type":"integer","nullable":false,"metadata":{}},` +
		`{"name":"tags","type":{"type":"array","elementType":"string","containsNull":false},"nullable":true,"metadata":{}},` +
		`{"name":"attrs","type":{"type":"map","keyType":"string","valueType":"long","valueContainsNull":true},"nullable":true,"metadata":{}},` +
		`{"name":"Inner","type":{"type":"struct","fields":[{"name":"A","type":"double","nullable":false,"metadata":{}},{"name":"B","type":"double","nullable":false,"metadata":{}}]},"nullable":false,"metadata":{}},` +
		`{"name":"Ptr","type":{"type":"struct","fields":[{"name":"X","type":"short","nullable":false,"metadata":{}}]},"nullable":true,"metadata":{}},` +
		`{"name":"Day","type":"date","nullable":false,"metadata":{}},` +
		`{"name":"amount","type":"decimal(10,2)","nullable":false,"metadata":{}},` +
		`{"name":"local","type":"timestamp_ntz","nullable":false,"metadata":{}},` +
		`{"name":"Small","type":"byte","nullable":false,"metadata":{}},` +
		`{"name":"flag","type":"boolean","nullable":true,"metadata":{}},` +
		`{"name":"Raw","type":"binary","nullable":true,"metadata":{}}]}`
	if got := b.Schema.String(); got != want {
		t.Fatalf("schema\n got %s\nwant %s", got, want)
	}
	if m := b.Rows[0][2].([]schema.MapEntry); m[0].Key != "a" || m[0].Value != nil || m[1].Value != int64(9) {
		t.Errorf("map = %v", m)
	}
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, b, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(context.Background(), st, files[0].Path, files[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	got, err := f.ReadAll(context.Background(), b.Schema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range got {
		if !valuesEqual(got[i], b.Rows[i]) {
			t.Errorf("row %d\n got %#v\nwant %#v", i, got[i], b.Rows[i])
		}
	}
}

func TestFromStructsFlights(t *testing.T) {
	dst := "LAX"
	b, err := schema.FromStructs([]flight{{Time: time.Unix(10, 0), Delay: 1, Dist: 2, Origin: "SFO", Dest: &dst}, {Origin: "JFK"}})
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Schema.Fields) != 5 || b.Schema.Fields[0].Type != schema.TypeTimestamp || !b.Schema.Fields[4].Nullable || b.Schema.Fields[3].Nullable {
		t.Fatalf("schema %s", b.Schema)
	}
	if b.Rows[1][4] != nil || b.Rows[0][4] != "LAX" {
		t.Fatalf("rows %v", b.Rows)
	}
}

func TestFromStructsRejectsUnsupported(t *testing.T) {
	type bad struct{ C chan int }
	if _, err := schema.FromStructs([]bad{{}}); !errors.Is(err, schema.ErrSchema) {
		t.Fatalf("err = %v", err)
	}
	if _, err := schema.SchemaOf[int](); !errors.Is(err, schema.ErrSchema) {
		t.Fatalf("SchemaOf[int] err = %v", err)
	}
}
