package filesink

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
)

var testSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: false},
	{Name: "name", Type: schema.TypeString, Nullable: true},
	{Name: "country", Type: schema.TypeString, Nullable: true},
}}

func rows(from, to int64, country func(int64) any) *schema.Batch {
	b := &schema.Batch{Schema: testSchema}
	for i := from; i < to; i++ {
		var c any
		if country != nil {
			c = country(i)
		}
		b.Rows = append(b.Rows, []any{i, fmt.Sprintf("n%d", i), c})
	}
	return b
}

func openLocal(t *testing.T) (storage.Store, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "out dir")
	st, err := storage.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st, dir
}

func TestSinkWritesSparkLayout(t *testing.T) {
	ctx := context.Background()
	st, dir := openLocal(t)
	o := DefaultOptions()
	o.PartitionColumns = []string{"country"}
	s, err := New(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	countries := []any{"FR", "a b/c:é", nil}
	res, err := s.AddBatch(ctx, 0, rows(0, 30, func(i int64) any { return countries[i%3] }))
	if err != nil {
		t.Fatal(err)
	}
	if res.Skipped || res.NumFiles != 3 || res.NumRows != 30 || res.Version != -1 || res.NumBytes <= 0 {
		t.Fatalf("result = %+v", res)
	}
	name := `part-\d{5}-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-c000\.snappy\.parquet`
	wantDirs := map[string]bool{"country=FR": false, "country=a b%2Fc%3Aé": false, "country=__HIVE_DEFAULT_PARTITION__": false}
	var dataKeys []string
	for fi, err := range st.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		if strings.HasPrefix(fi.Path, MetadataDir+"/") {
			continue
		}
		d, base := filepath.Split(fi.Path)
		d = strings.TrimSuffix(d, "/")
		if _, ok := wantDirs[d]; !ok || !regexp.MustCompile("^"+name+"$").MatchString(base) {
			t.Fatalf("data file %q: not a Spark name in an expected partition directory", fi.Path)
		}
		wantDirs[d] = true
		dataKeys = append(dataKeys, fi.Path)
	}
	for d, seen := range wantDirs {
		if !seen {
			t.Fatalf("no file in %s", d)
		}
	}
	log0, err := st.Read(ctx, MetadataDir+"/0")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(log0), "\n")
	if lines[0] != "v1" || len(lines) != 4 || bytes.HasSuffix(log0, []byte("\n")) {
		t.Fatalf("log file 0 = %q: want v1 and 3 lines, no trailing newline", log0)
	}
	// The URI: file:///abs/dir (escaped as java.net.URI: space %20, and the
	// partition directory's own escapes %2F %3A quoted again as %252F %253A;
	// non-ASCII kept).
	escRoot := strings.ReplaceAll(filepath.ToSlash(dir), " ", "%20")
	lineRE := regexp.MustCompile(`^\{"path":"file://` + regexp.QuoteMeta(escRoot) + `/country=(FR|a%20b%252Fc%253Aé|__HIVE_DEFAULT_PARTITION__)/` + name +
		`","size":\d+,"isDir":false,"modificationTime":\d{13},"blockReplication":1,"blockSize":33554432,"action":"add"\}$`)
	for _, l := range lines[1:] {
		if !lineRE.MatchString(l) {
			t.Fatalf("log line does not have Spark's structure:\n%s\nwant %s", l, lineRE)
		}
	}
	// Read back through the log: keys and partition values.
	ls, err := ListFiles(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	parts := map[string]bool{}
	for _, f := range ls.Files {
		keys = append(keys, f.Key)
		if len(f.Partition) != 1 || f.Partition[0].Column != "country" {
			t.Fatalf("partition of %s = %+v", f.Key, f.Partition)
		}
		v := "<null>"
		if f.Partition[0].Value != nil {
			v = *f.Partition[0].Value
		}
		parts[v] = true
		fi, err := st.Stat(ctx, f.Key)
		if err != nil || fi.Size != f.Size {
			t.Fatalf("log entry %s: size %d, store says %v %v", f.Key, f.Size, fi.Size, err)
		}
	}
	slices.Sort(keys)
	slices.Sort(dataKeys)
	if !ls.FromLog || !slices.Equal(keys, dataKeys) {
		t.Fatalf("ListFiles = %v (fromLog %v), want %v", keys, ls.FromLog, dataKeys)
	}
	if !parts["FR"] || !parts["a b/c:é"] || !parts["<null>"] {
		t.Fatalf("partition values = %v", parts)
	}
	// Rows read back.
	if got := readAllIDs(t, st, ls); len(got) != 30 {
		t.Fatalf("read %d rows, want 30", len(got))
	}
}

func readAllIDs(t *testing.T, st storage.Store, ls *Listing) []int64 {
	t.Helper()
	ctx := context.Background()
	var ids []int64
	want := &schema.StructType{Fields: testSchema.Fields[:2]}
	for _, f := range ls.Files {
		pf, err := parquetio.OpenFile(ctx, st, f.Key, f.Size)
		if err != nil {
			t.Fatal(err)
		}
		rs, err := pf.ReadAll(ctx, want, parquetio.ReadOptions{})
		pf.Close()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			ids = append(ids, r[0].(int64))
		}
	}
	slices.Sort(ids)
	return ids
}

func TestSinkSkipGapEmptyAndModes(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	var logBuf bytes.Buffer
	o := DefaultOptions()
	o.Logger = slog.New(slog.NewTextHandler(&logBuf, nil))
	s, err := New(ctx, st, o)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddBatch(ctx, 0, rows(0, 5, nil)); err != nil {
		t.Fatal(err)
	}
	before := len(keysOf(t, st))
	res, err := s.AddBatch(ctx, 0, rows(0, 5, nil))
	if err != nil || !res.Skipped || res.BatchID != 0 {
		t.Fatalf("replayed batch 0: %+v, %v; want skipped", res, err)
	}
	if !strings.Contains(logBuf.String(), "skipping already committed batch") || !strings.Contains(logBuf.String(), "level=WARN") {
		t.Fatalf("no warning logged for the skipped batch: %q", logBuf.String())
	}
	if after := len(keysOf(t, st)); after != before {
		t.Fatalf("a skipped batch wrote %d objects", after-before)
	}
	if _, err := s.AddBatch(ctx, 2, rows(0, 1, nil)); !errors.Is(err, ErrBatchGap) || !strings.Contains(err.Error(), "batch 2") || !strings.Contains(err.Error(), "batch 0") {
		t.Fatalf("gap: %v, want ErrBatchGap naming batches 2 and 0", err)
	}
	res, err = s.AddBatch(ctx, 1, &schema.Batch{Schema: testSchema})
	if err != nil || res.NumFiles != 0 {
		t.Fatalf("empty batch: %+v %v", res, err)
	}
	if d, err := st.Read(ctx, MetadataDir+"/1"); err != nil || string(d) != "v1" {
		t.Fatalf("empty batch log file = %q, %v; want \"v1\"", d, err)
	}
	for _, mode := range []string{"complete", "update"} {
		o := DefaultOptions()
		o.OutputMode = mode
		if _, err := New(ctx, st, o); !errors.Is(err, ErrUnsupportedOutputMode) {
			t.Fatalf("output mode %s: %v, want ErrUnsupportedOutputMode", mode, err)
		}
	}
}

func keysOf(t *testing.T, st storage.Store) []string {
	t.Helper()
	var out []string
	for fi, err := range st.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fi.Path)
	}
	return out
}

func TestTwoQueriesOnOnePath(t *testing.T) {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	a, _ := New(ctx, st, DefaultOptions())
	b, _ := New(ctx, st, DefaultOptions())
	if _, err := a.AddBatch(ctx, 0, rows(0, 3, nil)); err != nil {
		t.Fatal(err)
	}
	// b saw an empty log when it started batch 0: simulate it reaching the
	// commit after a did, by committing directly through its log.
	err = b.Log().Add(ctx, 0, nil)
	if !errors.Is(err, ErrConcurrentWriter) {
		t.Fatalf("second query committing batch 0: %v, want ErrConcurrentWriter", err)
	}
	// And the put-if-absent itself: the file appears between check and put.
	if err := b.Log().putIfAbsent(ctx, batchFileKey(0, false), []byte("v1")); !errors.Is(err, ErrConcurrentWriter) || !strings.Contains(err.Error(), "_spark_metadata/0") {
		t.Fatalf("put-if-absent clash: %v", err)
	}
}

func TestSinkJSONFormat(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		compression string
		ext         string
	}{{"", ".json"}, {"gzip", ".json.gz"}} {
		t.Run(tc.ext, func(t *testing.T) {
			st, err := storage.Open(ctx, "mem://"+strings.ReplaceAll(t.Name(), "/", "_"))
			if err != nil {
				t.Fatal(err)
			}
			o := DefaultOptions()
			o.Format, o.Compression = FormatJSON, tc.compression
			o.PartitionColumns = []string{"country"}
			s, err := New(ctx, st, o)
			if err != nil {
				t.Fatal(err)
			}
			b := rows(0, 4, func(i int64) any { return []any{"FR", "DE"}[i%2] })
			b.Rows[3][1] = nil // null fields are left out, as Spark's JSON writer does
			if _, err := s.AddBatch(ctx, 0, b); err != nil {
				t.Fatal(err)
			}
			ls, err := ListFiles(ctx, st, o)
			if err != nil {
				t.Fatal(err)
			}
			if len(ls.Files) != 2 {
				t.Fatalf("%d files, want 2", len(ls.Files))
			}
			var got []string
			for _, f := range ls.Files {
				if !regexp.MustCompile(`^country=(FR|DE)/part-\d{5}-[0-9a-f-]{36}-c000` + regexp.QuoteMeta(tc.ext) + `$`).MatchString(f.Key) {
					t.Fatalf("file %q is not a Spark JSON file name", f.Key)
				}
				data, err := st.Read(ctx, f.Key)
				if err != nil {
					t.Fatal(err)
				}
				if tc.compression == "gzip" {
					zr, err := gzip.NewReader(bytes.NewReader(data))
					if err != nil {
						t.Fatal(err)
					}
					if data, err = io.ReadAll(zr); err != nil {
						t.Fatal(err)
					}
				}
				for _, l := range strings.Split(strings.TrimSuffix(string(data), "\n"), "\n") {
					var m map[string]any
					if err := json.Unmarshal([]byte(l), &m); err != nil {
						t.Fatalf("line %q: %v", l, err)
					}
					got = append(got, l)
				}
			}
			sort.Strings(got)
			want := []string{`{"id":0,"name":"n0"}`, `{"id":1,"name":"n1"}`, `{"id":2,"name":"n2"}`, `{"id":3}`}
			if !slices.Equal(got, want) {
				t.Fatalf("JSON lines = %v, want %v", got, want)
			}
		})
	}
}

func TestListFilesPaths(t *testing.T) {
	ctx := context.Background()
	line := func(p string) string {
		return `{"path":"` + p + `","size":1,"isDir":false,"modificationTime":1,"blockReplication":1,"blockSize":1,"action":"add"}`
	}
	for _, tc := range []struct {
		name    string
		path    string
		wantKey string
		wantErr error
	}{
		{"qualified file:///", "file:///data/out/a=1/part-0.parquet", "a=1/part-0.parquet", nil},
		{"hadoop file:/ form", "file:/data/out/part-0.parquet", "part-0.parquet", nil},
		{"bare absolute inside", "/data/out/x/part-1", "x/part-1", nil},
		{"escaped", "file:///data/out/k=a%20b%253A/p", "k=a b%3A/p", nil},
		{"outside the root", "file:///data/other/part-0", "", ErrPathOutsideRoot},
		{"sibling with common prefix", "file:///data/outside/part-0", "", ErrPathOutsideRoot},
		{"dot-dot escape", "file:///data/out/../secret", "", ErrPathOutsideRoot},
		{"other scheme", "s3a://bucket/data/out/part-0", "", ErrPathOutsideRoot},
		{"the root itself", "file:///data/out", "", ErrPathOutsideRoot},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemStore(t, "file:///data/out", nil)
			m.putAt(MetadataDir+"/0", []byte("v1\n"+line(tc.path)), time.Unix(0, 0))
			ls, err := ListFiles(ctx, m, DefaultOptions())
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if err == nil && (len(ls.Files) != 1 || ls.Files[0].Key != tc.wantKey) {
				t.Fatalf("files = %+v, want key %q", ls.Files, tc.wantKey)
			}
		})
	}
	t.Run("s3 root accepts s3a paths", func(t *testing.T) {
		m := newMemStore(t, "s3://bucket/tables/t?region=us-east-1", nil)
		m.putAt(MetadataDir+"/0", []byte("v1\n"+line("s3a://bucket/tables/t/part-0")), time.Unix(0, 0))
		ls, err := ListFiles(ctx, m, DefaultOptions())
		if err != nil || len(ls.Files) != 1 || ls.Files[0].Key != "part-0" {
			t.Fatalf("ListFiles = %+v, %v", ls, err)
		}
	})
	t.Run("no log: listing without hidden files", func(t *testing.T) {
		m := newMemStore(t, "file:///data/out", nil)
		for _, k := range []string{"a=1/part-0", "_SUCCESS", ".part-1.crc", "_delta_log/0.json", "_p=1/part-2", "part-3"} {
			m.putAt(k, []byte("x"), time.Unix(0, 0))
		}
		ls, err := ListFiles(ctx, m, DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		var keys []string
		for _, f := range ls.Files {
			keys = append(keys, f.Key)
		}
		if ls.FromLog || !slices.Equal(keys, []string{"_p=1/part-2", "a=1/part-0", "part-3"}) {
			t.Fatalf("listing = %v (fromLog %v)", keys, ls.FromLog)
		}
	})
	t.Run("ignore log option", func(t *testing.T) {
		m := newMemStore(t, "file:///data/out", nil)
		m.putAt(MetadataDir+"/0", []byte("v1"), time.Unix(0, 0))
		m.putAt("part-9", []byte("x"), time.Unix(0, 0))
		o := DefaultOptions()
		ls, _ := ListFiles(ctx, m, o)
		if len(ls.Files) != 0 || !ls.FromLog {
			t.Fatalf("through the log: %+v", ls)
		}
		o.IgnoreLog = true
		ls, _ = ListFiles(ctx, m, o)
		if len(ls.Files) != 1 || ls.FromLog {
			t.Fatalf("ignoring the log: %+v", ls)
		}
	})
}

func TestEscapeURIPath(t *testing.T) {
	for in, want := range map[string]string{
		"/a b/c":               "/a%20b/c",
		"/k=a%2Fb":             "/k=a%252Fb",
		"/é/ü":                 "/é/ü",
		"/x#y?z":               "/x%23y%3Fz",
		"/ok-_.!~*'()@,;:$&+=": "/ok-_.!~*'()@,;:$&+=",
		"/tab\there":           "/tab%09here",
		"/nbsp\u00a0":          "/nbsp%C2%A0",
		"/[]{}|\\^`\"<>":       "/%5B%5D%7B%7D%7C%5C%5E%60%22%3C%3E",
	} {
		if got := escapeURIPath(in); got != want {
			t.Errorf("escapeURIPath(%q) = %q, want %q", in, got, want)
		}
	}
	for _, tc := range []struct{ url, scheme, want string }{
		{"file:///tmp/my dir", "s3a", "file:///tmp/my%20dir"},
		{"file:///tmp/my%20dir/k=a%252Fb", "s3a", "file:///tmp/my%20dir/k=a%252Fb"},
		{"file://localhost/tmp/x", "s3a", "file:///tmp/x"},
		{"s3://bucket/pre/fix?region=x", "s3a", "s3a://bucket/pre/fix"},
		{"s3://bucket", "s3", "s3://bucket"},
		{"mem://name/d", "s3a", "mem://name/d"},
	} {
		if got, err := rootURI(tc.url, tc.scheme); err != nil || got != tc.want {
			t.Errorf("rootURI(%q) = %q, %v; want %q", tc.url, got, err, tc.want)
		}
	}
}

// TestBatchGoldenBytes writes a batch with a fixed clock and fixed file ids
// and compares the log file byte for byte, and its key order with the lines
// of Spark's own log files.
func TestBatchGoldenBytes(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 2, 3, 4, 5, 678_000_000, time.UTC)}
	m := newMemStore(t, "file:///data/stream out", clock.Now)
	o := testOptions(clock)
	o.Format, o.Compression = FormatJSON, ""
	o.PartitionColumns = []string{"country"}
	s, err := New(ctx, m, o)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	s.newID = func() string { n++; return fmt.Sprintf("00000000-0000-0000-0000-%012d", n) }
	b := rows(0, 2, func(i int64) any { return []any{"FR", "a/b"}[i] })
	if _, err := s.AddBatch(ctx, 0, b); err != nil {
		t.Fatal(err)
	}
	got, err := m.Read(ctx, MetadataDir+"/0")
	if err != nil {
		t.Fatal(err)
	}
	want := "v1\n" +
		`{"path":"file:///data/stream%20out/country=FR/part-00000-00000000-0000-0000-0000-000000000001-c000.json","size":21,"isDir":false,"modificationTime":1767323045678,"blockReplication":1,"blockSize":33554432,"action":"add"}` + "\n" +
		`{"path":"file:///data/stream%20out/country=a%252Fb/part-00001-00000000-0000-0000-0000-000000000002-c000.json","size":21,"isDir":false,"modificationTime":1767323045678,"blockReplication":1,"blockSize":33554432,"action":"add"}`
	if string(got) != want {
		t.Fatalf("log file 0:\n got %s\nwant %s", got, want)
	}
	if d, _ := m.Read(ctx, "country=a%2Fb/part-00001-00000000-0000-0000-0000-000000000002-c000.json"); string(d) != `{"id":1,"name":"n1"}`+"\n" {
		t.Fatalf("data file = %q", d)
	}
	spark, err := os.ReadFile(filepath.Join(sparkLogDir, "9"))
	if err != nil {
		t.Fatal(err)
	}
	sparkKeys := jsonKeys(t, strings.Split(strings.TrimSpace(string(spark)), "\n")[1])
	for _, l := range strings.Split(string(got), "\n")[1:] {
		if k := jsonKeys(t, l); !slices.Equal(k, sparkKeys) {
			t.Fatalf("key order %v, Spark's %v", k, sparkKeys)
		}
	}
}

func jsonKeys(t *testing.T, line string) []string {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(line))
	var keys []string
	if _, err := dec.Token(); err != nil {
		t.Fatal(err)
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			t.Fatal(err)
		}
		keys = append(keys, k.(string))
		var v any
		if err := dec.Decode(&v); err != nil {
			t.Fatal(err)
		}
	}
	return keys
}

func TestJSONValues(t *testing.T) {
	dec := func(s string, scale int) schema.Decimal {
		d, err := schema.ParseDecimal(s, scale)
		if err != nil {
			t.Fatal(err)
		}
		return d
	}
	st := &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeInteger, Nullable: true}, {Name: "y", Type: schema.TypeString, Nullable: true}}}
	for _, tc := range []struct {
		name string
		v    any
		t    schema.DataType
		want string
	}{
		{"long", int64(-5), schema.TypeLong, `-5`},
		{"string no html escape", "<a&b>", schema.TypeString, `"<a&b>"`},
		{"nan", math.NaN(), schema.TypeDouble, `"NaN"`},
		{"-inf float", float32(math.Inf(-1)), schema.TypeFloat, `"-Infinity"`},
		{"double", 1.5, schema.TypeDouble, `1.5`},
		{"binary base64", []byte{0, 1, 2}, schema.TypeBinary, `"AAEC"`},
		{"date", schema.Date(19723), schema.TypeDate, `"2024-01-01"`},
		{"timestamp utc millis", time.Date(2024, 1, 2, 3, 4, 5, 6_000_000, time.FixedZone("x", 3600)), schema.TypeTimestamp, `"2024-01-02T02:04:05.006Z"`},
		{"timestamp_ntz", time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC), schema.TypeTimestampNTZ, `"2024-01-02T03:04:05.000"`},
		{"decimal", dec("12.50", 2), schema.DecimalType{Precision: 5, Scale: 2}, `12.50`},
		{"struct without nulls", []any{int32(1), nil}, st, `{"x":1}`},
		{"array with null", []any{int32(1), nil}, &schema.ArrayType{ElementType: schema.TypeInteger, ContainsNull: true}, `[1,null]`},
		{"map", []schema.MapEntry{{Key: int32(1), Value: "a"}}, &schema.MapType{KeyType: schema.TypeInteger, ValueType: schema.TypeString}, `{"1":"a"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := appendJSONValue(&buf, tc.v, tc.t); err != nil {
				t.Fatal(err)
			}
			if buf.String() != tc.want {
				t.Fatalf("got %s, want %s", buf.String(), tc.want)
			}
		})
	}
}

// TestConcurrentQueriesOneWinner races two sinks on the same batches: for
// each batch exactly one commits; the other is skipped or refused with
// ErrConcurrentWriter, and every row is read once through the log.
func TestConcurrentQueriesOneWinner(t *testing.T) {
	ctx := context.Background()
	for iter := 0; iter < 5; iter++ {
		st, err := storage.Open(ctx, fmt.Sprintf("mem://%s-%d", t.Name(), iter))
		if err != nil {
			t.Fatal(err)
		}
		o := DefaultOptions()
		o.CompactInterval = 3
		sinks := make([]*Sink, 2)
		for i := range sinks {
			if sinks[i], err = New(ctx, st, o); err != nil {
				t.Fatal(err)
			}
		}
		for b := int64(0); b < 7; b++ {
			from, to := batchRows(b)
			type out struct {
				res sink.Result
				err error
			}
			ch := make(chan out, 2)
			for _, s := range sinks {
				go func() {
					r, err := s.AddBatch(ctx, b, rows(from, to, nil))
					ch <- out{r, err}
				}()
			}
			wins := 0
			for range sinks {
				o := <-ch
				switch {
				case o.err == nil && !o.res.Skipped:
					wins++
				case o.err == nil && o.res.Skipped:
				case errors.Is(o.err, ErrConcurrentWriter):
				default:
					t.Fatalf("batch %d: %v", b, o.err)
				}
			}
			if wins != 1 {
				t.Fatalf("batch %d: %d winners, want 1", b, wins)
			}
		}
		ls, err := ListFiles(ctx, st, o)
		if err != nil {
			t.Fatal(err)
		}
		got := readAllIDs(t, st, ls)
		if len(got) != 70 {
			t.Fatalf("iteration %d: %d rows, want 70", iter, len(got))
		}
		for i, id := range got {
			if id != int64(i) || len(got) != 70 {
				t.Fatalf("iteration %d: rows = %v, want 0..69 once each", iter, got)
			}
		}
	}
}
