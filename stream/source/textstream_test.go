package source

import (
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
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
	{"csv quotes after plain lines", FormatCSV, "", flightsSchema, []string{
		plainCSV(flightsCSV(0, 5000)) + flightsCSV(5000, 300)[39:] + plainCSV(flightsCSV(0, 10))[39:],
		"\xEF\xBB\xBF\n\n" + plainCSV(flightsCSV(0, 20)) + "\n\n2001-01-01T00:00:00Z,1,2,\"multi\nline\",\"a\"\"b\"\r\n" + plainCSV(flightsCSV(20, 5000))[39:],
		"\"date\",delay,distance,origin,destination\n" + plainCSV(flightsCSV(0, 30))[39:],
		"date,delay,distance,origin,destination", "delay,origin\n1,x", "\n\ndelay,origin\n1,a\n\"2\",b",
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

// streamBlocks are the block sizes (FileSource.blockBytes) the streamed
// batches are read with: a byte, a few, less than a line, a few lines, the
// default.
var streamBlocks = []int{1, 7, 50, 1000, textBlockBytes}

// batchOf runs one batch of every file in the fixture with opts, the files
// read block bytes at a time when streamed (0: the default).
func batchOf(t *testing.T, f *fixture, opts Options, block int) (*schema.Batch, error) {
	t.Helper()
	s := f.open(t, opts)
	if block > 0 {
		s.blockBytes = block
	}
	end, err := s.LatestOffset(context.Background(), ReadLimit{})
	if err != nil {
		t.Fatal(err)
	}
	b, _, err := s.GetBatch(context.Background(), "", end)
	return b, err
}

// TestStreamedTextMatchesWhole: a JSON or CSV batch streamed in chunks
// (StreamChunkRows, no OnBadRecord) yields the rows the batch decoded whole
// yields, in order, in chunks of at most StreamChunkRows, across pieces,
// files and the blocks the files are read in (streamBlocks; a CSV file cut
// at line ends up to its first quote, split record by record from there);
// without StreamChunkRows the batch is not streamed.
func TestStreamedTextMatchesWhole(t *testing.T) {
	for _, c := range textCases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			for i, data := range c.files {
				f.put(t, fmt.Sprintf("f%02d.%s", i, c.format), data)
			}
			opts := DefaultOptions(c.format)
			opts.Schema, opts.SchemaEvolution = c.sch, c.mode
			whole, err := batchOf(t, f, opts, 0)
			if err != nil {
				t.Fatal(err)
			}
			if whole.Chunks != nil || len(whole.Rows) == 0 {
				t.Fatalf("whole batch: Chunks %v, %d rows", whole.Chunks != nil, len(whole.Rows))
			}
			opts.StreamChunkRows = 1000
			for _, block := range streamBlocks {
				f.cp = f.cp.Sub("again")
				streamed, err := batchOf(t, f, opts, block)
				if err != nil {
					t.Fatal(err)
				}
				if streamed.Chunks == nil {
					t.Fatal("not streamed")
				}
				var rows [][]any
				for chunk, err := range streamed.Chunks {
					if err != nil {
						t.Fatalf("blocks of %d bytes: %v", block, err)
					}
					if len(chunk) == 0 || len(chunk) > opts.StreamChunkRows {
						t.Fatalf("chunk of %d rows (at most %d)", len(chunk), opts.StreamChunkRows)
					}
					rows = append(rows, chunk...)
				}
				if !reflect.DeepEqual(rows, whole.Rows) {
					t.Fatalf("blocks of %d bytes: streamed rows differ from whole: %d vs %d rows\nfirst streamed %v\nfirst whole   %v", block, len(rows), len(whole.Rows), rows[:min(3, len(rows))], whole.Rows[:min(3, len(whole.Rows))])
				}
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
		{"csv quote after plain lines", FormatCSV, []string{plainCSV(flightsCSV(0, 5000)) + "\n\n" + flightsCSV(0, 10)[39:] + "2001-01-01T00:00:00Z,1,1,\"A,B\n"}},
		{"csv fields after quote", FormatCSV, []string{plainCSV(flightsCSV(0, 5000)) + flightsCSV(0, 10)[39:] + "\n1,\"2\"\n"}},
		{"csv bad header quote", FormatCSV, []string{"\"date,delay\n1,2\n"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			for i, data := range c.files {
				f.put(t, fmt.Sprintf("f%02d.%s", i, c.format), data)
			}
			opts := DefaultOptions(c.format)
			opts.Schema = flightsSchema
			_, wantErr := batchOf(t, f, opts, 0)
			var want *RecordError
			if !errors.As(wantErr, &want) {
				t.Fatalf("whole batch: %v, want a *RecordError", wantErr)
			}
			opts.StreamChunkRows = 1000
			for _, block := range streamBlocks {
				f.cp = f.cp.Sub("again")
				b, err := batchOf(t, f, opts, block)
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
					t.Fatalf("blocks of %d bytes: streamed: %v after %d rows, want %v", block, got, n, want)
				}
				if !reflect.DeepEqual(errors.Unwrap(re.Err), errors.Unwrap(want.Err)) && re.Err.Error() != want.Err.Error() {
					t.Fatalf("cause %v, want %v", re.Err, want.Err)
				}
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

// countingStore counts the bytes read from its files.
type countingStore struct {
	storage.Store
	read atomic.Int64
}

func (c *countingStore) Read(ctx context.Context, path string) ([]byte, error) {
	b, err := c.Store.Read(ctx, path)
	c.read.Add(int64(len(b)))
	return b, err
}

func (c *countingStore) NewRangeReader(ctx context.Context, path string, offset, length int64) (io.ReadCloser, error) {
	r, err := c.Store.NewRangeReader(ctx, path, offset, length)
	if err != nil {
		return nil, err
	}
	return struct {
		io.Reader
		io.Closer
	}{countingReader{r, &c.read}, r}, nil
}

type countingReader struct {
	r io.Reader
	n *atomic.Int64
}

func (c countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n.Add(int64(n))
	return n, err
}

// TestStreamedTextReadsBlocks: a streamed NDJSON or CSV batch against a
// known schema reads its file block by block as the rows are taken, not
// whole when the batch is made (the 3M flights' 280 MB NDJSON file was all
// in memory: 610 MiB peak RSS): nothing is read before the first chunk is
// asked for, and with the first chunk taken at most the blocks of the
// pieces in flight are (2 x workers queued, one being cut, one being put
// together, one more block cut from).
func TestStreamedTextReadsBlocks(t *testing.T) {
	const block = 1 << 14
	for _, c := range []struct {
		format Format
		data   string
	}{
		{FormatJSON, flightsNDJSON(0, 40000)},
		{FormatCSV, plainCSV(flightsCSV(0, 60000))},
	} {
		t.Run(string(c.format), func(t *testing.T) {
			f := newFixture(t)
			f.put(t, "f."+string(c.format), c.data)
			cs := &countingStore{Store: f.src}
			f.src = cs
			opts := DefaultOptions(c.format)
			opts.Schema, opts.StreamChunkRows = flightsSchema, 100
			b, err := batchOf(t, f, opts, block)
			if err != nil {
				t.Fatal(err)
			}
			if n := cs.read.Load(); n != 0 {
				t.Fatalf("%d bytes read before the first chunk, want 0", n)
			}
			rows := 0
			for chunk, err := range b.Chunks {
				if err != nil {
					t.Fatal(err)
				}
				if rows == 0 {
					bound := int64(2*min(opts.DecodeConcurrency, runtime.GOMAXPROCS(0))+4) * block
					if n := cs.read.Load(); n > bound || n >= int64(len(c.data)) {
						t.Fatalf("%d of %d bytes read with the first chunk, want at most %d", n, len(c.data), bound)
					}
				}
				rows += len(chunk)
			}
			if want := strings.Count(c.data, "\n") - map[Format]int{FormatJSON: 0, FormatCSV: 1}[c.format]; rows != want {
				t.Fatalf("%d rows, want %d", rows, want)
			}
			if n := cs.read.Load(); n != int64(len(c.data)) {
				t.Fatalf("%d bytes read in all, want %d", n, len(c.data))
			}
		})
	}
}

// TestPlainCSVRecordsMatchesReader: plainCSVRecords cuts quote-free CSV
// into the records, fields and lines encoding/csv's Reader reads (blank
// lines, "\r\n", lone '\r's inside and at the end, empty fields, spaces,
// one- and two-byte delimiters), on 20,000 random inputs.
func TestPlainCSVRecordsMatchesReader(t *testing.T) {
	rng := rand.New(rand.NewPCG(22, 1))
	for _, delim := range []rune{',', ';', '\t', 'é'} {
		alphabet := []string{"a", "b7", " ", "\r", "\n", "\r\n", string(delim), string(delim), "日", "-"}
		for range 5000 {
			var sb strings.Builder
			for range rng.IntN(40) {
				sb.WriteString(alphabet[rng.IntN(len(alphabet))])
			}
			data := sb.String()
			type rec struct {
				line   int
				fields []string
			}
			var want, got []rec
			r := csv.NewReader(strings.NewReader(data))
			r.Comma, r.FieldsPerRecord = delim, -1
			for {
				fs, err := r.Read()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("%q: %v", data, err)
				}
				l, _ := r.FieldPos(0)
				want = append(want, rec{l, fs})
			}
			plainCSVRecords([]byte(data), delim, func(line int, fields [][]byte) bool {
				fs := make([]string, len(fields))
				for i, f := range fields {
					fs[i] = string(f)
				}
				got = append(got, rec{line, fs})
				return true
			})
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("delim %q, %q:\ngot  %v\nwant %v", delim, data, got, want)
			}
		}
	}
}

// TestCSVRowBytesMatchesCSVRow: csvRowBytes gives csvRow's values and
// errors (timestamps repeated, changed, and back; longs at the ends of the
// interned range and past them), and converts a flights record whose
// timestamp is the previous record's without allocating (the strings and
// the longs interned, the timestamp's value reused, no text copied).
func TestCSVRowBytesMatchesCSVRow(t *testing.T) {
	c := converter{strict: true}
	header := []string{"date", "delay", "distance", "origin", "destination", "x"}
	cols, extra := csvColumns(header, flightsSchema), csvExtra(header, flightsSchema)
	var in textInterner
	for _, rec := range [][]string{
		{"2001-01-01T00:47:00Z", "66", "1750", "DTW", "LAS", ""},
		{" 2001-01-01 00:47:00 ", " -3 ", "", "", "日本", ""},
		{"2001-01-01T00:47", "9223372036854775808", "1", "a", "b", ""},
		{"x", "1", "1", "a", "b", ""},
		{"2001-01-01", "1.5", "1", "a", "b", ""},
		{"2001-01-01", "1", "1", "a", "b", "extra"},
		{"2001-01-01T00:47:00Z", "66", "1750", "DTW", "LAS", ""},
		{"2001-01-01T00:47:00Z", "66", "1750", "DTW", "LAS", ""},
		{"2001-01-01T00:48:00Z", "66", "1750", "DTW", "LAS", ""},
		{"2001-01-01T00:47:00+01:00", "1", "1", "a", "b", ""},
		{"2001-01-01T00:47:00Z", "1", "1", "a", "b", ""},
		{"2001-01-01T00:47:00Z", "-1024", "7167", "a", "b", ""},
		{"2001-01-01T00:47:00Z", "-1025", "7168", "a", "b", ""},
		{"2001-01-01T00:47:00Z", "-1024", "7167", "a", "b", ""},
	} {
		fields := make([][]byte, len(rec))
		for i, f := range rec {
			fields[i] = []byte(f)
		}
		want, wantErr := c.csvRow(header, rec, flightsSchema, cols, extra, make([]any, len(flightsSchema.Fields)))
		got, err := c.csvRowBytes(header, fields, flightsSchema, cols, extra, csvKinds(flightsSchema), make([]any, len(flightsSchema.Fields)), &in)
		if fmt.Sprint(err) != fmt.Sprint(wantErr) || !reflect.DeepEqual(got, want) {
			t.Fatalf("%q: %v, %v; want %v, %v", rec, got, err, want, wantErr)
		}
	}
	fields := [][]byte{[]byte("2001-01-01T00:47:00Z"), []byte("66"), []byte("1750"), []byte("DTW"), []byte("LAS"), nil}
	row := make([]any, len(flightsSchema.Fields))
	allocs := testing.AllocsPerRun(100, func() {
		clear(row)
		if _, err := c.csvRowBytes(header, fields, flightsSchema, cols, extra, csvKinds(flightsSchema), row, &in); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Fatalf("%.0f allocations per record, want none", allocs)
	}
}
