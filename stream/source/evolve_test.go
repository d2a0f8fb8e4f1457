package source

import (
	"context"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
)

var idSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: true},
	{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeString, Nullable: true}}}, Nullable: true},
}}

func (f *fixture) putParquet(t *testing.T, key string, sch *schema.StructType, rows [][]any) {
	t.Helper()
	ctx := context.Background()
	w, err := parquetio.NewFileWriter(ctx, f.src, key, sch, parquetio.DefaultWriteOptions())
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

func readAll(t *testing.T, s *FileSource) (*schema.Batch, error) {
	t.Helper()
	ctx := context.Background()
	end, err := s.LatestOffset(ctx, ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.GetBatch(ctx, "", end)
	return b, err
}

// Issue 14 item 2: a field the schema lacks was dropped silently. By default
// (failOnNewColumns) it is a *RecordError naming file, line and field, for
// JSON (also nested), CSV and Parquet; a null value loses nothing and passes.
func TestMergeSchemaUnknownFieldIsAnError(t *testing.T) {
	cases := []struct {
		name, key, data string
		format          Format
		line            int
		field           string
	}{
		{"json top level", "a.json", "{\"id\":1}\n{\"id\":2,\"extra\":\"x\"}\n", FormatJSON, 2, "extra"},
		{"json nested", "a.json", "{\"id\":1,\"s\":{\"a\":\"x\",\"b\":2}}\n", FormatJSON, 1, "s.b"},
		{"csv column", "a.csv", "id,extra\n1,\n2,x\n", FormatCSV, 3, "extra"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			f.put(t, c.key, c.data)
			_, err := readAll(t, f.open(t, Options{Format: c.format, Schema: idSchema}))
			var re *RecordError
			if !errors.As(err, &re) || !errors.Is(err, ErrUnknownField) || !errors.Is(err, ErrBadRecord) {
				t.Fatalf("err = %v, want *RecordError wrapping ErrUnknownField", err)
			}
			if re.File != f.src.URL()+"/"+c.key || re.Line != c.line || re.Field != c.field {
				t.Errorf("RecordError = %+v, want %s line %d field %s", re, c.key, c.line, c.field)
			}
		})
	}
	t.Run("json null is no new data", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "a.json", "{\"id\":1,\"extra\":null}\n")
		if _, err := readAll(t, f.open(t, Options{Format: FormatJSON, Schema: idSchema})); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("parquet column", func(t *testing.T) {
		f := newFixture(t)
		wide := &schema.StructType{Fields: []schema.StructField{
			{Name: "id", Type: schema.TypeLong, Nullable: true}, {Name: "extra", Type: schema.TypeString, Nullable: true}}}
		f.putParquet(t, "p.parquet", wide, [][]any{{int64(1), "x"}})
		_, err := readAll(t, f.open(t, Options{Format: FormatParquet, Schema: idSchema}))
		var re *RecordError
		if !errors.As(err, &re) || !errors.Is(err, ErrUnknownField) || re.Field != "extra" || re.File != f.src.URL()+"/p.parquet" {
			t.Fatalf("err = %v, want *RecordError for p.parquet field extra", err)
		}
		if strings.Contains(err.Error(), "line") {
			t.Errorf("message %q names a line for a Parquet file", err)
		}
	})
	t.Run("bad record hook", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "a.json", "{\"id\":1}\n{\"id\":2,\"extra\":\"x\"}\n")
		var got []BadRecord
		b, err := readAll(t, f.open(t, Options{Format: FormatJSON, Schema: idSchema,
			OnBadRecord: func(r BadRecord) error { got = append(got, r); return nil }}))
		if err != nil || len(b.Rows) != 1 || len(got) != 1 || got[0].Field != "extra" || got[0].Line != 2 {
			t.Fatalf("err %v rows %d rejects %+v", err, len(b.Rows), got)
		}
	})
}

// With SchemaEvolutionNone the values are dropped, as Spark's readers do with
// a user schema.
func TestMergeSchemaNoneDropsUnknownFields(t *testing.T) {
	f := newFixture(t)
	f.put(t, "a.json", "{\"id\":2,\"extra\":\"x\",\"s\":{\"a\":\"y\",\"b\":1}}\n")
	b, err := readAll(t, f.open(t, Options{Format: FormatJSON, Schema: idSchema, SchemaEvolution: SchemaEvolutionNone}))
	if err != nil {
		t.Fatal(err)
	}
	if want := [][]any{{int64(2), []any{"y"}}}; !reflect.DeepEqual(b.Rows, want) || schemaString(b.Schema) != schemaString(idSchema) {
		t.Errorf("rows %v schema %s", b.Rows, schemaString(b.Schema))
	}
}

// Issue 14 item 2: with addNewColumns each batch's input schema is inferred
// and merged into the given one: its columns keep their types and order, new
// ones (also nested) are appended nullable, and the merged schema stays for
// the next batch.
func TestMergeSchemaAddNewColumns(t *testing.T) {
	ctx := context.Background()
	t.Run("json", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "a.json", "{\"id\":1,\"extra\":\"x\",\"s\":{\"a\":\"y\",\"b\":true}}\n{\"id\":3}\n")
		s := f.open(t, Options{Format: FormatJSON, Schema: idSchema, SchemaEvolution: SchemaEvolutionAddNewColumns})
		b, err := readAll(t, s)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := schemaString(b.Schema), "id:long s:struct<a:string,b:boolean> extra:string"; got != want {
			t.Errorf("schema %s, want %s", got, want)
		}
		want := [][]any{{int64(1), []any{"y", true}, "x"}, {int64(3), nil, nil}}
		if !reflect.DeepEqual(b.Rows, want) {
			t.Errorf("rows %v, want %v", b.Rows, want)
		}
		for _, fl := range b.Schema.Fields {
			if !fl.Nullable {
				t.Errorf("column %s not nullable", fl.Name)
			}
		}
		// The next batch starts from the merged schema and adds to it.
		end0, _ := s.LatestOffset(ctx, ReadLimit{})
		f.put(t, "b.json", "{\"id\":4,\"more\":1.5}\n")
		end1, _ := s.LatestOffset(ctx, ReadLimit{})
		b, _, err = s.GetBatch(ctx, end0, end1)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := schemaString(b.Schema), "id:long s:struct<a:string,b:boolean> extra:string more:double"; got != want {
			t.Errorf("second batch schema %s, want %s", got, want)
		}
		if want := [][]any{{int64(4), nil, nil, 1.5}}; !reflect.DeepEqual(b.Rows, want) {
			t.Errorf("second batch rows %v, want %v", b.Rows, want)
		}
	})
	t.Run("table types are kept", func(t *testing.T) {
		f := newFixture(t)
		f.put(t, "a.json", "{\"id\":1.5}\n")
		_, err := readAll(t, f.open(t, Options{Format: FormatJSON, Schema: idSchema, SchemaEvolution: SchemaEvolutionAddNewColumns}))
		var re *RecordError
		if !errors.As(err, &re) || re.Field != "id" || errors.Is(err, ErrUnknownField) {
			t.Fatalf("err = %v, want a bad record for id (long kept, 1.5 does not fit)", err)
		}
	})
	t.Run("parquet", func(t *testing.T) {
		f := newFixture(t)
		wide := &schema.StructType{Fields: []schema.StructField{
			{Name: "extra", Type: schema.TypeString, Nullable: true}, {Name: "id", Type: schema.TypeLong, Nullable: true}}}
		f.putParquet(t, "p0.parquet", idSchema, [][]any{{int64(1), []any{"a"}}})
		f.putParquet(t, "p1.parquet", wide, [][]any{{"x", int64(2)}})
		b, err := readAll(t, f.open(t, Options{Format: FormatParquet, Schema: idSchema, SchemaEvolution: SchemaEvolutionAddNewColumns}))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := schemaString(b.Schema), "id:long s:struct<a:string> extra:string"; got != want {
			t.Errorf("schema %s, want %s", got, want)
		}
		want := [][]any{{int64(1), []any{"a"}, nil}, {int64(2), nil, "x"}}
		if !reflect.DeepEqual(b.Rows, want) {
			t.Errorf("rows %v, want %v", b.Rows, want)
		}
	})
}

// DecodeJSON decodes an NDJSON buffer with the file source's rules and no
// store: a schema, or inference, and each record that does not fit reported
// with its line.
func TestDecodeJSON(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong, Nullable: true}}}
	data := []byte("{\"id\":1}\n{\"id\":\"x\"}\n{\"id\":3,\"extra\":true}\n{\"id\":4}\n")

	o := DefaultOptions(FormatJSON)
	o.Schema = sch
	b, bad, err := DecodeJSON(data, "kafka values", o)
	if err != nil {
		t.Fatal(err)
	}
	if len(b.Rows) != 2 || b.Rows[0][0] != int64(1) || b.Rows[1][0] != int64(4) {
		t.Fatalf("rows %v, want ids 1 and 4", b.Rows)
	}
	if len(bad) != 2 || bad[0].Line != 2 || bad[1].Line != 3 || bad[1].Field != "extra" || !errors.Is(bad[1].Err, ErrUnknownField) {
		t.Fatalf("bad records %+v, want line 2 (not a long) and line 3 (unknown field extra)", bad)
	}

	o.SchemaEvolution = SchemaEvolutionAddNewColumns
	b, bad, err = DecodeJSON(data, "kafka values", o)
	if err != nil || b.Schema.FieldIndex("extra") < 0 || len(b.Rows) != 3 || len(bad) != 1 {
		t.Fatalf("addNewColumns: schema %v, %d rows, %d bad, %v; want extra added, 3 rows, line 2 bad", b.Schema, len(b.Rows), len(bad), err)
	}

	o = DefaultOptions(FormatJSON) // no schema: inferred from the data
	b, bad, err = DecodeJSON([]byte("{\"a\":1,\"b\":\"x\"}\n"), "v", o)
	if err != nil || len(bad) != 0 || len(b.Schema.Fields) != 2 || b.Schema.Fields[0].Type != schema.TypeLong {
		t.Fatalf("inferred: %v %v %v", b.Schema, bad, err)
	}
}

// TestJSONAfterTopLevelArray: a JSON file starting with an array is read
// to its end (the lines after the array as NDJSON, arrays a line), not to
// the array's ']' (the rows after it were dropped without a word), and
// text after the ']' on its line is a bad record; streamed the same.
func TestJSONAfterTopLevelArray(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong, Nullable: true}}}
	cases := []struct {
		in       string
		ids      []int64
		badLines []int
	}{
		{"[{\"id\":1}]\n[{\"id\":2},{\"id\":3}]\n", []int64{1, 2, 3}, nil},
		{"[\n {\"id\":1},\n {\"id\":2}\n]  \n\n{\"id\":3}\n{\"id\":\"x\"}\n[{\"id\":4}]", []int64{1, 2, 3, 4}, []int{7}},
		{"[{\"id\":1}] {\"id\":2}\n{\"id\":3}\n", []int64{1, 3}, []int{1}},
		{"\xEF\xBB\xBF [{\"id\":1}]\r\n{\"id\":2}\r\n", []int64{1, 2}, nil},
	}
	for _, c := range cases {
		o := DefaultOptions(FormatJSON)
		o.Schema = sch
		b, bad, err := DecodeJSON([]byte(c.in), "v", o)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		var ids []int64
		for _, r := range b.Rows {
			ids = append(ids, r[0].(int64))
		}
		var lines []int
		for _, r := range bad {
			lines = append(lines, r.Line)
		}
		if !slices.Equal(ids, c.ids) || !slices.Equal(lines, c.badLines) {
			t.Errorf("%q: ids %v, bad lines %v; want %v, %v", c.in, ids, lines, c.ids, c.badLines)
		}
	}
	// streamed: the same rows as the whole batch, past the array
	f := newFixture(t)
	f.put(t, "a.json", "["+strings.Repeat("{\"id\":1},\n", 5000)+"{\"id\":2}]\n"+strings.Repeat("[{\"id\":3},{\"id\":4}]\n", 3000))
	o := DefaultOptions(FormatJSON)
	o.Schema = sch
	o.StreamChunkRows = 1000
	sb, err := batchOf(t, f, o, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for chunk, err := range sb.Chunks {
		if err != nil {
			t.Fatal(err)
		}
		n += len(chunk)
	}
	if n != 5001+6000 {
		t.Fatalf("streamed %d rows, want %d", n, 5001+6000)
	}
}
