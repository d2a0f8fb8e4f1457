package source

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/schema"
)

// textCases are JSON and CSV inputs for the streamed decoding tests: the
// flat and the odd (escapes, invalid UTF-8, duplicate and case-folded keys,
// nested values, whitespace, arrays, nulls).
var textCases = []struct {
	name   string
	format Format
	mode   SchemaEvolutionMode
	sch    *schema.StructType
	files  []string
}{
	{"ndjson flights", FormatJSON, "", flightsSchema, []string{
		flightsNDJSON(0, 5000), flightsNDJSON(5000, 3), "", flightsNDJSON(5003, 4100),
	}},
	{"csv flights", FormatCSV, "", flightsSchema, []string{
		flightsCSV(0, 5000), "date,delay,distance,origin,destination\n", flightsCSV(5000, 4100),
	}},
	{"csv without quotes", FormatCSV, "", flightsSchema, []string{
		"\xEF\xBB\xBF" + plainCSV(flightsCSV(0, 5000)), plainCSV(flightsCSV(5000, 10)) + "\n\n" + plainCSV(flightsCSV(7000, 4100))[39:],
		strings.ReplaceAll(plainCSV(flightsCSV(0, 4200)), "\n", "\r\n"), "delay,origin\n\n1,a\n\n\n2,\n,\n",
	}},
	{"json odd", FormatJSON, SchemaEvolutionNone, &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "n", Type: &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeDouble, Nullable: true}}}, Nullable: true},
		{Name: "a", Type: &schema.ArrayType{ElementType: schema.TypeInteger, ContainsNull: true}, Nullable: true},
		{Name: "m", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: schema.TypeString, ValueContainsNull: true}, Nullable: true},
	}}, []string{
		`{"id":1,"s":"a\"b\\c\u00e9","n":{"x":1.5},"a":[1,null,3],"m":{"k":"v","k2":null}}` + "\n" +
			"  { \"ID\" : 2 , \"s\" : \"\xff\xfe\" }  \n" +
			`{"id":3,"id":4,"S":"fold","s":"exact"}` + "\n" +
			`{"\u0069d":5,"s":{"raw":[1, 2]}}` + "\n" +
			`[{"id":6},{"id":7,"s":null}]` + "\n" +
			`{"Id":8,"iD":9}` + "\n\n" +
			`{"id":-12345678901,"s":"日本"}`,
		` [ {"id":10,"s":"x"}, {"id":11} ]`,
	}},
}

func flightsNDJSON(from, n int) string {
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, `{"date":"2001-01-%02dT%02d:%02d:00Z","delay":%d,"distance":%d,"origin":"O%d","destination":"D%d"}`+"\n",
			1+i%28, i%24, i%60, i%300-50, 100+i%2000, i%97, i%89)
	}
	return b.String()
}

// plainCSV drops the quotes of a CSV text.
func plainCSV(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, `"`, ""), "D,", "D") }

func flightsCSV(from, n int) string {
	var b strings.Builder
	b.WriteString("date,delay,distance,origin,destination\n")
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "2001-01-%02dT%02d:%02d:00Z,%d,%d,O%d,\"D,%d\"\n", 1+i%28, i%24, i%60, i%300-50, 100+i%2000, i%97, i%89)
	}
	return b.String()
}

// batchOf runs one batch of every file in the fixture with opts.
func batchOf(t *testing.T, f *fixture, opts Options) (*schema.Batch, error) {
	t.Helper()
	s := f.open(t, opts)
	end, err := s.LatestOffset(context.Background(), ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.GetBatch(context.Background(), "", end)
	return b, err
}

// TestStreamedTextMatchesWhole: a JSON or CSV batch streamed in chunks
// (StreamChunkRows, no OnBadRecord) yields the rows the batch decoded whole
// yields, in order, in chunks of at most StreamChunkRows, across pieces and
// files; without StreamChunkRows the batch is not streamed.
func TestStreamedTextMatchesWhole(t *testing.T) {
	for _, c := range textCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			for i, data := range c.files {
				f.put(t, fmt.Sprintf("f%02d.%s", i, c.format), data)
			}
			opts := DefaultOptions(c.format)
			opts.Schema, opts.SchemaEvolution = c.sch, c.mode
			whole, err := batchOf(t, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			if whole.Chunks != nil || len(whole.Rows) == 0 {
				t.Fatalf("whole batch: Chunks %v, %d rows", whole.Chunks != nil, len(whole.Rows))
			}
			opts.StreamChunkRows = 1000
			f.cp = f.cp.Sub("again")
			streamed, err := batchOf(t, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			if streamed.Chunks == nil {
				t.Fatal("not streamed")
			}
			var rows [][]any
			for chunk, err := range streamed.Chunks {
				if err != nil {
					t.Fatal(err)
				}
				if len(chunk) == 0 || len(chunk) > opts.StreamChunkRows {
					t.Fatalf("chunk of %d rows (at most %d)", len(chunk), opts.StreamChunkRows)
				}
				rows = append(rows, chunk...)
			}
			if !reflect.DeepEqual(rows, whole.Rows) {
				t.Fatalf("streamed rows differ from whole: %d vs %d rows\nfirst streamed %v\nfirst whole   %v", len(rows), len(whole.Rows), rows[:min(3, len(rows))], whole.Rows[:min(3, len(whole.Rows))])
			}
		})
	}
}

// TestStreamedTextFirstBadRecord: a streamed batch ends with the error the
// whole batch fails with (the first bad record in file and line order:
// same file, line, field and cause), after the rows before it.
func TestStreamedTextFirstBadRecord(t *testing.T) {
	cases := []struct {
		name   string
		format Format
		files  []string
	}{
		{"json type", FormatJSON, []string{flightsNDJSON(0, 5000), flightsNDJSON(0, 4500) + `{"delay":"x"}` + "\n" + `{"delay":true}` + "\n"}},
		{"json malformed", FormatJSON, []string{flightsNDJSON(0, 9000) + "{\"delay\":\n" + `{"delay":"x"}` + "\n"}},
		{"json unknown", FormatJSON, []string{flightsNDJSON(0, 10) + `{"delay":1,"zzz":2,"yyy":3,"xx":null}` + "\n"}},
		{"json array element", FormatJSON, []string{"[" + strings.Repeat(`{"delay":1},`, 5000) + `{"delay":1.5}]`}},
		{"csv type", FormatCSV, []string{flightsCSV(0, 8200) + "2001-01-01T00:00:00Z,x,1,A,B\n"}},
		{"csv fields", FormatCSV, []string{flightsCSV(0, 4096) + "1,2\n"}},
		{"csv quote", FormatCSV, []string{flightsCSV(0, 10) + "2001-01-01T00:00:00Z,1,1,\"A,B\n"}},
		{"csv unknown", FormatCSV, []string{"delay,extra\n1,\n2,x\n"}},
		{"csv without quotes type", FormatCSV, []string{plainCSV(flightsCSV(0, 4096)), plainCSV(flightsCSV(0, 8200)) + "\n\n2001-01-01T00:00:00Z,x,1,A,B\n"}},
		{"csv without quotes fields", FormatCSV, []string{plainCSV(flightsCSV(0, 5000)) + "\r\n1,2\r\n"}},
		{"csv without quotes header", FormatCSV, []string{"a,a\n1,2\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			for i, data := range c.files {
				f.put(t, fmt.Sprintf("f%02d.%s", i, c.format), data)
			}
			opts := DefaultOptions(c.format)
			opts.Schema = flightsSchema
			_, wantErr := batchOf(t, f, opts)
			var want *RecordError
			if !errors.As(wantErr, &want) {
				t.Fatalf("whole batch: %v, want a *RecordError", wantErr)
			}
			opts.StreamChunkRows = 1000
			f.cp = f.cp.Sub("again")
			b, err := batchOf(t, f, opts)
			if err != nil {
				t.Fatal(err)
			}
			n := 0
			var got error
			for chunk, err := range b.Chunks {
				if err != nil {
					got = err
					break
				}
				n += len(chunk)
			}
			var re *RecordError
			if !errors.As(got, &re) || re.Error() != want.Error() || !errors.Is(got, ErrBadRecord) {
				t.Fatalf("streamed: %v after %d rows, want %v", got, n, want)
			}
			if !reflect.DeepEqual(errors.Unwrap(re.Err), errors.Unwrap(want.Err)) && re.Err.Error() != want.Err.Error() {
				t.Fatalf("cause %v, want %v", re.Err, want.Err)
			}
		})
	}
}

// TestJSONRowAllocations counts the allocations of converting one flat
// NDJSON record: the values, their boxes and the number texts, not a map of
// the object and a string per key and value (39 allocations before).
func TestJSONRowAllocations(t *testing.T) {
	var c converter
	raw := []byte(`{"date":"2001-01-01T00:47:00Z","delay":66,"distance":1750,"origin":"DTW","destination":"LAS"}`)
	var scratch []jsonMember
	row := make([]any, len(flightsSchema.Fields))
	allocs := testing.AllocsPerRun(100, func() {
		clear(row)
		if _, err := c.jsonRow(raw, flightsSchema, "", &scratch, row); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 12 {
		t.Fatalf("%.0f allocations per record, want at most 12", allocs)
	}
}
