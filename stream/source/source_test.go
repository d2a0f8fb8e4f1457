package source

import (
	"context"
	"errors"
	"fmt"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/testutil/memtest"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/checkpoint"
)

var flightsSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "date", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "delay", Type: schema.TypeLong, Nullable: true},
	{Name: "distance", Type: schema.TypeLong, Nullable: true},
	{Name: "origin", Type: schema.TypeString, Nullable: true},
	{Name: "destination", Type: schema.TypeString, Nullable: true},
}}

type fixture struct {
	src    storage.Store // local disk: files are ordered by modification time
	srcDir string
	cp     storage.Store
	clock  time.Time
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	src, dir := memtest.Local(t)
	return &fixture{src: src, srcDir: dir, cp: memtest.New(t), clock: time.Unix(1700000000, 0)}
}

// setModTime sets the modification time of the source file key.
func (f *fixture) setModTime(t *testing.T, key string, mod time.Time) {
	t.Helper()
	if err := os.Chtimes(filepath.Join(f.srcDir, filepath.FromSlash(key)), mod, mod); err != nil {
		t.Fatal(err)
	}
}

// put writes a file whose modification time is one second after the last.
func (f *fixture) put(t *testing.T, key, data string) {
	t.Helper()
	if err := f.src.Put(context.Background(), key, []byte(data)); err != nil {
		t.Fatal(err)
	}
	f.clock = f.clock.Add(time.Second)
	f.setModTime(t, key, f.clock)
}

func (f *fixture) open(t *testing.T, opts Options) *FileSource {
	t.Helper()
	s, err := NewFileSource(f.src, opts)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background(), f.cp.Sub("sources/0")); err != nil {
		t.Fatal(err)
	}
	return s
}

func logOffset(t *testing.T, o string) int64 {
	t.Helper()
	off, err := checkpoint.ParseFileSourceOffset(o)
	if err != nil {
		t.Fatal(err)
	}
	return off.LogOffset
}

func TestFlightsJSONWithTimestampFormat(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.put(t, "flights-00.json", `{"date":"2001/01/01 00:47","delay":66,"distance":1750,"origin":"DTW","destination":"LAS"}
{"date":"2001/01/01 01:10","delay":-5,"distance":2399,"origin":"HNL","destination":"SFO"}`)
	s := f.open(t, Options{Format: FormatJSON, Schema: flightsSchema, TimestampFormat: "yyyy/MM/dd HH:mm"})
	end, err := s.LatestOffset(ctx, ReadLimit{})
	if err != nil || logOffset(t, end) != 0 {
		t.Fatalf("LatestOffset = %q, %v", end, err)
	}
	b, stats, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{time.Date(2001, 1, 1, 0, 47, 0, 0, time.UTC), int64(66), int64(1750), "DTW", "LAS"},
		{time.Date(2001, 1, 1, 1, 10, 0, 0, time.UTC), int64(-5), int64(2399), "HNL", "SFO"},
	}
	if !reflect.DeepEqual(b.Rows, want) {
		t.Errorf("rows = %v\nwant %v", b.Rows, want)
	}
	if stats.NumFiles != 1 || stats.NumBytes == 0 {
		t.Errorf("stats = %+v", stats)
	}
}

func TestJSONTypes(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "i", Type: schema.TypeInteger, Nullable: true},
		{Name: "d", Type: schema.TypeDouble, Nullable: true},
		{Name: "b", Type: schema.TypeBoolean, Nullable: true},
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "day", Type: schema.TypeDate, Nullable: true},
		{Name: "amount", Type: schema.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "nested", Type: &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeLong, Nullable: true}}}, Nullable: true},
		{Name: "tags", Type: &schema.ArrayType{ElementType: schema.TypeString, ContainsNull: true}, Nullable: true},
		{Name: "attrs", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: schema.TypeLong, ValueContainsNull: true}, Nullable: true},
	}}
	f := newFixture(t)
	// A top-level JSON array file.
	f.put(t, "a.json", `[
  {"i":7,"d":1.5,"b":true,"s":"x","ts":"2024-03-01T10:00:00.5+01:00","day":"2024-03-01","amount":"12.345",
   "nested":{"x":3},"tags":["a",null],"attrs":{"z":1,"a":2},"extra":"ignored"},
  {"s":42,"amount":7, "nested":null}
]`)
	s := f.open(t, Options{Format: FormatJSON, Schema: sch, SchemaEvolution: SchemaEvolutionNone}) // "extra" is ignored
	end, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 2 {
		t.Fatalf("%d rows", len(b.Rows))
	}
	r := b.Rows[0]
	wantTS := time.Date(2024, 3, 1, 9, 0, 0, 500000000, time.UTC)
	checks := []struct {
		name      string
		got, want any
	}{
		{"integer", r[0], int32(7)}, {"double", r[1], 1.5}, {"boolean", r[2], true}, {"string", r[3], "x"},
		{"timestamp", r[4], wantTS}, {"date", r[5], schema.Date(19783)},
		{"nested", r[7], []any{int64(3)}}, {"array", r[8], []any{"a", nil}},
		{"map keeps order", r[9], []schema.MapEntry{{Key: "z", Value: int64(1)}, {Key: "a", Value: int64(2)}}},
		{"number as string", b.Rows[1][3], "42"}, {"missing is null", b.Rows[1][0], nil},
	}
	for _, c := range checks {
		if !reflect.DeepEqual(c.got, c.want) {
			t.Errorf("%s: got %#v, want %#v", c.name, c.got, c.want)
		}
	}
	if d := r[6].(schema.Decimal); d.Unscaled.Cmp(big.NewInt(1235)) != 0 || d.Scale != 2 {
		t.Errorf("decimal 12.345 -> %v scale %d, want 1235 (half up)", d.Unscaled, d.Scale)
	}
	if d := b.Rows[1][6].(schema.Decimal); d.Unscaled.Cmp(big.NewInt(700)) != 0 {
		t.Errorf("decimal 7 -> %v", d.Unscaled)
	}
}

func TestRecordErrorAndBadRecordHook(t *testing.T) {
	ctx := context.Background()
	data := `{"date":"2001/01/01 00:47","delay":66,"distance":1750,"origin":"DTW","destination":"LAS"}

{"date":"2001/01/01 00:48","delay":"late","distance":1,"origin":"A","destination":"B"}
not json
{"date":"2001/01/01 00:49","delay":1,"distance":2,"origin":"C","destination":"D"}
`
	t.Run("fails naming file, line and field", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "bad.json", data)
		s := f.open(t, Options{Format: FormatJSON, Schema: flightsSchema, TimestampFormat: "yyyy/MM/dd HH:mm"})
		end, _ := s.LatestOffset(ctx, ReadLimit{})
		_, _, err := s.GetBatch(ctx, "", end)
		var re *RecordError
		if !errors.As(err, &re) || !errors.Is(err, ErrBadRecord) {
			t.Fatalf("err = %v, want *RecordError", err)
		}
		if re.File != f.src.URL()+"/bad.json" || re.Line != 3 || re.Field != "delay" {
			t.Errorf("RecordError = %+v, want .../bad.json line 3 field delay", re)
		}
	})
	t.Run("hook drops and reports", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "bad.json", data)
		var got []BadRecord
		s := f.open(t, Options{Format: FormatJSON, Schema: flightsSchema, TimestampFormat: "yyyy/MM/dd HH:mm",
			OnBadRecord: func(b BadRecord) error { got = append(got, b); return nil }})
		end, _ := s.LatestOffset(ctx, ReadLimit{})
		b, stats, err := s.GetBatch(ctx, "", end)
		if err != nil {
			t.Fatal(err)
		}
		if len(b.Rows) != 2 || stats.NumBadRecords != 2 || len(got) != 2 {
			t.Fatalf("rows %d, bad %d/%d", len(b.Rows), stats.NumBadRecords, len(got))
		}
		if got[0].Line != 3 || got[0].Field != "delay" || !strings.Contains(got[0].Raw, `"late"`) ||
			got[1].Line != 4 || got[1].Raw != "not json" || got[1].Reason == "" {
			t.Errorf("bad records = %+v", got)
		}
	})
}

func TestCSV(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.put(t, "a.csv", "origin,delay,date,unused\nDTW,66,2001/01/01 00:47,x\nLAS,,2001/01/01 01:00,y\n")
	s := f.open(t, Options{Format: FormatCSV, Schema: flightsSchema, TimestampFormat: "yyyy/MM/dd HH:mm", SchemaEvolution: SchemaEvolutionNone}) // "unused" is ignored
	end, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{
		{time.Date(2001, 1, 1, 0, 47, 0, 0, time.UTC), int64(66), nil, "DTW", nil},
		{time.Date(2001, 1, 1, 1, 0, 0, 0, time.UTC), nil, nil, "LAS", nil},
	}
	if !reflect.DeepEqual(b.Rows, want) {
		t.Errorf("rows = %v\nwant %v", b.Rows, want)
	}
	f.put(t, "b.csv", "origin,delay\nX,notanumber\n")
	end2, _ := s.LatestOffset(ctx, ReadLimit{})
	_, _, err = s.GetBatch(ctx, end, end2)
	var re *RecordError
	if !errors.As(err, &re) || re.Line != 2 || re.Field != "delay" || re.File != f.src.URL()+"/b.csv" {
		t.Errorf("err = %v", err)
	}
}

func TestInference(t *testing.T) {
	ctx := context.Background()
	cases := []struct {
		name, format, file, data, tsFormat string
		want                               string
	}{
		{"json", "json", "a.json", `{"b":1,"a":"x","c":true,"n":{"y":1.5,"x":2}}` + "\n" + `{"b":2.5,"d":null,"t":[1,2]}`, "",
			"a:string b:double c:boolean d:string n:struct<x:long,y:double> t:array<long>"},
		{"json timestamps when asked", "json", "a.json", `{"date":"2001/01/01 00:47","n":3}`, "yyyy/MM/dd HH:mm",
			"date:timestamp n:long"},
		{"json strings stay strings", "json", "a.json", `{"date":"2001/01/01 00:47"}`, "", "date:string"},
		{"csv", "csv", "a.csv", "id,score,ok,name\n1,2,true,x\n2,2.5,false,\n", "", "id:long score:double ok:boolean name:string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.put(t, c.file, c.data)
			s := f.open(t, Options{Format: Format(c.format), TimestampFormat: c.tsFormat})
			end, _ := s.LatestOffset(ctx, ReadLimit{})
			b, _, err := s.GetBatch(ctx, "", end)
			if err != nil {
				t.Fatal(err)
			}
			if got := schemaString(b.Schema); got != c.want {
				t.Errorf("schema = %s\nwant   %s", got, c.want)
			}
			if s.Schema() != b.Schema {
				t.Error("inferred schema is not kept for the run")
			}
		})
	}
}

func schemaString(st *schema.StructType) string {
	var parts []string
	for _, f := range st.Fields {
		parts = append(parts, f.Name+":"+typeString(f.Type))
	}
	return strings.Join(parts, " ")
}

func typeString(t schema.DataType) string {
	switch tt := t.(type) {
	case *schema.StructType:
		var parts []string
		for _, f := range tt.Fields {
			parts = append(parts, f.Name+":"+typeString(f.Type))
		}
		return "struct<" + strings.Join(parts, ",") + ">"
	case *schema.ArrayType:
		return "array<" + typeString(tt.ElementType) + ">"
	}
	return t.TypeName()
}

func TestFileSelection(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	// Written in this order; modification time increases one second each.
	for _, k := range []string{"c.json", "a.json", ".hidden.json", "_SUCCESS", "_tmp/x.json", "dir/.part.json",
		"date=2024-01-01/p.json", "b.json._COPYING_", "dir/b c.json"} {
		f.put(t, k, `{"x":1}`)
	}
	// Same modification time as a.json: ordered by name after it.
	_ = f.src.Put(ctx, "aa.json", []byte(`{"x":1}`))
	f.setModTime(t, "aa.json", time.Unix(1700000002, 0))
	s := f.open(t, Options{Format: FormatJSON})
	var taken []string
	var ends []int64
	for {
		end, err := s.LatestOffset(ctx, ReadLimit{MaxFiles: 2})
		if err != nil {
			t.Fatal(err)
		}
		if len(ends) > 0 && logOffset(t, end) == ends[len(ends)-1] {
			break
		}
		ends = append(ends, logOffset(t, end))
		entries, err := checkpoint.NewFileSourceLog(f.cp.Sub("sources/0"), 0).Get(ctx, logOffset(t, end))
		if err != nil {
			t.Fatal(err)
		}
		if len(entries) > 2 {
			t.Errorf("batch %d has %d files, max 2", logOffset(t, end), len(entries))
		}
		for _, e := range entries {
			taken = append(taken, strings.TrimPrefix(e.Path, f.src.URL()+"/"))
		}
	}
	want := []string{"c.json", "a.json", "aa.json", "date=2024-01-01/p.json", "dir/b%20c.json"}
	if !reflect.DeepEqual(taken, want) {
		t.Errorf("taken = %v\nwant  %v", taken, want)
	}
	if !reflect.DeepEqual(ends, []int64{0, 1, 2}) {
		t.Errorf("log offsets = %v", ends)
	}
	// A restarted source remembers every file taken; a new file is taken once.
	s2 := f.open(t, Options{Format: FormatJSON})
	if end, _ := s2.LatestOffset(ctx, ReadLimit{}); logOffset(t, end) != 2 {
		t.Errorf("restart re-took files: offset %s", end)
	}
	f.put(t, "z.json", `{"x":2}`)
	end, _ := s2.LatestOffset(ctx, ReadLimit{})
	b, _, err := s2.GetBatch(ctx, `{"logOffset":2}`, end)
	if err != nil || len(b.Rows) != 1 || logOffset(t, end) != 3 {
		t.Errorf("new file: end %s rows %v err %v", end, b, err)
	}
	// Rereading an old range gives the same rows (what a rerun relies on).
	b1, _, _ := s2.GetBatch(ctx, "", `{"logOffset":1}`)
	b2, _, _ := s.GetBatch(ctx, "", "1") // Spark 2.1 offsets are plain numbers
	if len(b1.Rows) != 4 || !reflect.DeepEqual(b1.Rows, b2.Rows) {
		t.Errorf("reread: %d vs %d rows", len(b1.Rows), len(b2.Rows))
	}
}

func TestLatestFirstAndAvailableNow(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	for _, k := range []string{"1.json", "2.json", "3.json"} {
		f.put(t, k, `{"x":1}`)
	}
	s := f.open(t, Options{Format: FormatJSON, LatestFirst: true})
	if err := s.PrepareAvailableNow(ctx); err != nil {
		t.Fatal(err)
	}
	f.put(t, "4.json", `{"x":1}`) // after the snapshot: not in this run
	end, _ := s.LatestOffset(ctx, ReadLimit{MaxFiles: 1})
	e, _ := checkpoint.NewFileSourceLog(f.cp.Sub("sources/0"), 0).Get(ctx, logOffset(t, end))
	if len(e) != 1 || !strings.HasSuffix(e[0].Path, "/3.json") {
		t.Errorf("latest first took %v, want 3.json", e)
	}
	_, _ = s.LatestOffset(ctx, ReadLimit{})
	end, _ = s.LatestOffset(ctx, ReadLimit{})
	if logOffset(t, end) != 1 {
		t.Errorf("AvailableNow saw a file written after the snapshot: offset %s", end)
	}
}

func TestJavaLayout(t *testing.T) {
	cases := []struct{ in, want string }{
		{"yyyy/MM/dd HH:mm", "2006/01/02 15:04"},
		{"yyyy-MM-dd'T'HH:mm:ss.SSSXXX", "2006-01-02T15:04:05.000Z07:00"},
		{"dd MMM yy h:mm a", "02 Jan 06 3:04 PM"},
		{"2006-01-02 15:04", "2006-01-02 15:04"},
	}
	for _, c := range cases {
		if got, err := javaLayout(c.in); err != nil || got != c.want {
			t.Errorf("javaLayout(%q) = %q, %v; want %q", c.in, got, err, c.want)
		}
	}
	if _, err := javaLayout("yyyy QQ"); !errors.Is(err, ErrFormat) {
		t.Errorf("unsupported letter: %v", err)
	}
}

func TestOptionsValidate(t *testing.T) {
	err := (&Options{Format: "xml", DecodeConcurrency: -1}).Validate()
	if !errors.Is(err, ErrInvalidOptions) || !errors.Is(err, ErrFormat) || !strings.Contains(err.Error(), "DecodeConcurrency") {
		t.Errorf("Validate = %v", err)
	}
}

func TestParquet(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	fileSchema := &schema.StructType{Fields: []schema.StructField{
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "delay", Type: schema.TypeLong, Nullable: true},
	}}
	for i, rows := range [][][]any{{{"DTW", int64(66)}, {"LAS", nil}}, {{"SFO", int64(-3)}}} {
		key := fmt.Sprintf("part-%d.parquet", i)
		w, err := parquetio.NewFileWriter(ctx, f.src, key, fileSchema, parquetio.DefaultWriteOptions())
		if err != nil {
			t.Fatal(err)
		}
		if err := w.Write(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		f.clock = f.clock.Add(time.Second)
		f.setModTime(t, key, f.clock)
	}
	t.Run("file schema", func(t *testing.T) {
		f.cp = memtest.New(t)
		s := f.open(t, Options{Format: FormatParquet})
		end, _ := s.LatestOffset(ctx, ReadLimit{})
		b, stats, err := s.GetBatch(ctx, "", end)
		if err != nil {
			t.Fatal(err)
		}
		want := [][]any{{"DTW", int64(66)}, {"LAS", nil}, {"SFO", int64(-3)}}
		if !reflect.DeepEqual(b.Rows, want) || schemaString(b.Schema) != "origin:string delay:long" || stats.NumBytes == 0 {
			t.Errorf("rows %v schema %s stats %+v", b.Rows, schemaString(b.Schema), stats)
		}
	})
	t.Run("given schema by name", func(t *testing.T) {
		f.cp = memtest.New(t)
		s := f.open(t, Options{Format: FormatParquet, Schema: flightsSchema})
		end, _ := s.LatestOffset(ctx, ReadLimit{MaxFiles: 1})
		b, _, err := s.GetBatch(ctx, "", end)
		if err != nil {
			t.Fatal(err)
		}
		want := [][]any{{nil, int64(66), nil, "DTW", nil}, {nil, nil, nil, "LAS", nil}}
		if !reflect.DeepEqual(b.Rows, want) {
			t.Errorf("rows %v", b.Rows)
		}
	})
}

// The demo's input: the committed flight records with their schema file.
func TestFlightsSample(t *testing.T) {
	ctx := context.Background()
	root := filepath.Join("..", "..", "testdata")
	schemaJSON, err := os.ReadFile(filepath.Join(root, "flights-schema.json"))
	if err != nil {
		t.Skipf("flights sample not in this checkout: %v", err)
	}
	sch, err := schema.ParseSchema(schemaJSON)
	if err != nil {
		t.Fatal(err)
	}
	in := memtest.Load(t, filepath.Join(root, "flights"))
	_ = in.Delete(ctx, "README.md") // not input
	s, err := NewFileSource(in, Options{Format: FormatJSON, Schema: sch, TimestampFormat: "yyyy/MM/dd HH:mm"})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(ctx, memtest.New(t)); err != nil {
		t.Fatal(err)
	}
	end, err := s.LatestOffset(ctx, ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	b, stats, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	if stats.NumFiles != 20 || len(b.Rows) != 20000 {
		t.Fatalf("%d files, %d rows; want 20 and 20000", stats.NumFiles, len(b.Rows))
	}
	seen := map[string]bool{}
	for _, r := range b.Rows {
		if _, ok := r[0].(time.Time); !ok || r[3] == nil || r[4] == nil {
			t.Fatalf("row %v", r)
		}
		seen[fmt.Sprint(r...)] = true
	}
	if len(seen) < 19900 {
		t.Errorf("only %d distinct rows", len(seen))
	}
}

func TestKeyOf(t *testing.T) {
	s := &FileSource{base: "file:///data/in"}
	cases := []struct {
		path, key string
		ok        bool
	}{
		{"file:///data/in/a%20b.json", "a b.json", true},
		{"file:/data/in/x/y.json", "x/y.json", true}, // Spark's form
		{"file:///data/other/y.json", "", false},
		{"/a/b/0", "", false},
	}
	for _, c := range cases {
		key, err := s.keyOf(c.path)
		if (err == nil) != c.ok || key != c.key || (!c.ok && !errors.Is(err, ErrForeignPath)) {
			t.Errorf("keyOf(%q) = %q, %v", c.path, key, err)
		}
	}
	if got := s.fileURL("dir/a b#1.json"); got != "file:///data/in/dir/a%20b%231.json" {
		t.Errorf("fileURL = %q", got)
	}
}

func TestInferenceWaitsForRecords(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.put(t, "empty.json", "\n")
	s := f.open(t, Options{Format: FormatJSON})
	end, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err := s.GetBatch(ctx, "", end)
	if err != nil || len(b.Rows) != 0 || s.Schema() != nil {
		t.Fatalf("empty batch: rows %v schema %v err %v", b, s.Schema(), err)
	}
	f.put(t, "a.json", `{"x":1}`)
	end2, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err = s.GetBatch(ctx, end, end2)
	if err != nil || len(b.Rows) != 1 || schemaString(s.Schema()) != "x:long" {
		t.Fatalf("rows %v schema %v err %v", b, s.Schema(), err)
	}
}

func TestCSVDelimiterAndQuotes(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	f.put(t, "a.csv", "origin;destination\n\"D;TW\";\"multi\nline\"\nLAS;SFO\n")
	s := f.open(t, Options{Format: FormatCSV, Schema: flightsSchema, CSVDelimiter: ';'})
	end, _ := s.LatestOffset(ctx, ReadLimit{})
	b, _, err := s.GetBatch(ctx, "", end)
	if err != nil {
		t.Fatal(err)
	}
	want := [][]any{{nil, nil, nil, "D;TW", "multi\nline"}, {nil, nil, nil, "LAS", "SFO"}}
	if !reflect.DeepEqual(b.Rows, want) {
		t.Errorf("rows = %q", b.Rows)
	}
}

// Issue 22: a Parquet batch streamed with StreamChunkRows is never decoded
// whole: GetBatch returns no Rows, and the chunks hold at most
// StreamChunkRows records each (never spanning files), in the same order and
// with the same values as the batch decoded into Rows.
func TestParquetStreamedChunks(t *testing.T) {
	ctx := context.Background()
	f := newFixture(t)
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "s", Type: schema.TypeString, Nullable: true},
	}}
	const files, perFile, chunkRows = 3, 1000, 64
	for i := range files {
		key := fmt.Sprintf("part-%d.parquet", i)
		opts := parquetio.DefaultWriteOptions()
		opts.RowGroupRows = 300 // 4 row groups per file, the last one short
		w, err := parquetio.NewFileWriter(ctx, f.src, key, sch, opts)
		if err != nil {
			t.Fatal(err)
		}
		var rows [][]any
		for r := range perFile {
			var s any = fmt.Sprintf("v%d", r%7)
			if r%11 == 0 {
				s = nil
			}
			rows = append(rows, []any{int64(i*perFile + r), s})
		}
		if err := w.Write(ctx, rows); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Close(ctx); err != nil {
			t.Fatal(err)
		}
		f.clock = f.clock.Add(time.Second)
		f.setModTime(t, key, f.clock)
	}
	f.cp = memtest.New(t)
	whole, err := readAll(t, f.open(t, Options{Format: FormatParquet}))
	if err != nil {
		t.Fatal(err)
	}
	f.cp = memtest.New(t)
	b, err := readAll(t, f.open(t, Options{Format: FormatParquet, StreamChunkRows: chunkRows}))
	if err != nil {
		t.Fatal(err)
	}
	if b.Rows != nil || b.Chunks == nil {
		t.Fatalf("streamed batch: %d Rows, Chunks set %v", len(b.Rows), b.Chunks != nil)
	}
	if schemaString(b.Schema) != "id:long s:string" {
		t.Errorf("schema %s", schemaString(b.Schema))
	}
	var got [][]any
	chunks, biggest := 0, 0
	for rows, err := range b.Chunks {
		if err != nil {
			t.Fatal(err)
		}
		chunks++
		biggest = max(biggest, len(rows))
		if len(rows) > 0 && rows[0][0].(int64)/perFile != rows[len(rows)-1][0].(int64)/perFile {
			t.Errorf("chunk %d spans files: ids %v..%v", chunks, rows[0][0], rows[len(rows)-1][0])
		}
		got = append(got, rows...)
	}
	if biggest > chunkRows {
		t.Errorf("a chunk held %d records, StreamChunkRows is %d", biggest, chunkRows)
	}
	if len(got) != files*perFile || !reflect.DeepEqual(got, whole.Rows) {
		t.Errorf("streamed %d rows in %d chunks, differ from the %d rows read whole", len(got), chunks, len(whole.Rows))
	}
	// Collect turns the streamed batch into Rows (a fresh GetBatch: chunks
	// are ranged over once).
	f.cp = memtest.New(t)
	b, err = readAll(t, f.open(t, Options{Format: FormatParquet, StreamChunkRows: chunkRows}))
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Collect(); err != nil || b.Chunks != nil || !reflect.DeepEqual(b.Rows, whole.Rows) {
		t.Errorf("Collect: %v, %d rows", err, len(b.Rows))
	}
}
