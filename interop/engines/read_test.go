package engines

// Must-show 1 and 2: Spark + Delta and delta-rs read every kind of table
// lakesink writes, rows identical to the source rows.

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/big"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
)

func prim(name string) schema.PrimitiveType { return schema.PrimitiveType(name) }

func field(name string, t schema.DataType) schema.StructField {
	return schema.StructField{Name: name, Type: t, Nullable: true}
}

func dec(s string, scale int) schema.Decimal {
	d, err := schema.ParseDecimal(s, scale)
	if err != nil {
		panic(err) // test data only; a typo here is a bug in the test
	}
	return d
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err) // test data only
	}
	return t.UTC()
}

// typesBatch has every primitive type, decimals at both ends of their range,
// timestamps before 1970 and at 9999, NaN and signed zeros, nested types with
// nulls at every level.
func typesBatch() *schema.Batch {
	inner := &schema.StructType{Fields: []schema.StructField{field("x", prim("integer")), field("y", prim("string"))}}
	sch := &schema.StructType{Fields: []schema.StructField{
		field("id", prim("long")),
		field("s", prim("string")),
		field("i", prim("integer")),
		field("sh", prim("short")),
		field("b", prim("byte")),
		field("f", prim("float")),
		field("d", prim("double")),
		field("bool", prim("boolean")),
		field("bin", prim("binary")),
		field("date", prim("date")),
		field("ts", prim("timestamp")),
		field("ntz", prim("timestamp_ntz")),
		field("dec38", schema.DecimalType{Precision: 38, Scale: 18}),
		field("dec9", schema.DecimalType{Precision: 9, Scale: 2}),
		field("dec18", schema.DecimalType{Precision: 18, Scale: 0}),
		field("st", inner),
		field("arr", &schema.ArrayType{ElementType: prim("long"), ContainsNull: true}),
		field("arrst", &schema.ArrayType{ElementType: inner, ContainsNull: true}),
		field("m", &schema.MapType{KeyType: prim("string"), ValueType: prim("double"), ValueContainsNull: true}),
		field("mnest", &schema.MapType{KeyType: prim("integer"), ValueType: &schema.ArrayType{ElementType: prim("string"), ContainsNull: true}, ValueContainsNull: true}),
	}}
	max38 := strings.Repeat("9", 20) + "." + strings.Repeat("9", 18)
	rows := [][]any{
		{int64(1), "plain", int32(1), int16(1), int8(1), float32(1.5), 2.25, true, []byte("bin"), schema.Date(0),
			ts("2024-01-31T10:00:00.123456Z"), ts("2024-01-31T10:00:00.123456Z"), dec("1.000000000000000001", 18), dec("12.34", 2), dec("123456789012345678", 0),
			[]any{int32(7), "seven"}, []any{int64(1), nil, int64(3)}, []any{[]any{int32(1), "a"}, nil, []any{nil, nil}},
			[]schema.MapEntry{{Key: "a", Value: 1.0}, {Key: "b", Value: nil}}, []schema.MapEntry{{Key: int32(1), Value: []any{"x", nil}}}},
		{int64(2), "", int32(math.MaxInt32), int16(math.MaxInt16), int8(math.MaxInt8), float32(math.Inf(1)), math.NaN(), false, []byte{}, schema.Date(-719162),
			ts("0001-01-01T00:00:00Z"), ts("0001-01-01T00:00:00Z"), dec(max38, 18), dec("9999999.99", 2), dec("999999999999999999", 0),
			[]any{nil, nil}, []any{}, []any{}, []schema.MapEntry{}, []schema.MapEntry{}},
		{int64(3), "ünïcødé ✓ 漢字 \"quoted\" \\ <&>", int32(math.MinInt32), int16(math.MinInt16), int8(math.MinInt8), float32(math.Copysign(0, -1)), math.Copysign(0, -1), nil, []byte{0, 255, 10}, schema.Date(2932896),
			ts("9999-12-31T23:59:59.999999Z"), ts("9999-12-31T23:59:59.999999Z"), dec("-"+max38, 18), dec("-0.01", 2), dec("-999999999999999999", 0),
			nil, nil, nil, nil, nil},
		{int64(4), nil, nil, nil, nil, float32(-math.MaxFloat32), -math.MaxFloat64, nil, nil, schema.Date(-1),
			ts("1969-12-31T23:59:59.999999Z"), ts("1969-12-31T23:59:59.999999Z"), dec("0", 18), dec("0", 2), dec("0", 0),
			[]any{int32(0), ""}, []any{nil}, []any{nil}, []schema.MapEntry{{Key: "nan", Value: math.Inf(-1)}}, []schema.MapEntry{{Key: int32(-1), Value: nil}}},
		{int64(5), nil, nil, nil, nil, nil, 4.9e-324, nil, nil, nil, nil, nil, dec("-0.000000000000000001", 18), nil, nil, nil, nil, nil, nil, nil},
	}
	_ = big.NewInt
	return &schema.Batch{Schema: sch, Rows: rows}
}

// partitionBatch: partition values that need escaping, the empty string and null.
func partitionBatch() *schema.Batch {
	sch := &schema.StructType{Fields: []schema.StructField{
		field("id", prim("long")), field("p", prim("string")), field("n", prim("integer")), field("day", prim("date")),
	}}
	vals := []any{"a b", "a/b", "a=b", "100%", "ünï ✓", "", nil, "x:y", "#?&", "..", "tab\there", "%2F", "__HIVE_DEFAULT_PARTITION__ no", "{a,b}", "'quote'"}
	var rows [][]any
	for i, v := range vals {
		var n any = int32(i % 3)
		if i%4 == 0 {
			n = nil
		}
		var day any = schema.Date(19000 + i%2)
		if i == 3 {
			day = nil
		}
		rows = append(rows, []any{int64(i), v, n, day}, []any{int64(100 + i), v, n, day})
	}
	return &schema.Batch{Schema: sch, Rows: rows}
}

// emptyPartitionIsNull is b as Delta reads it back: an empty string
// partition value is a null (PROTOCOL.md, "Partition Value Serialization":
// "an empty string for any type translates to a null partition value").
func emptyPartitionIsNull(b *schema.Batch, cols ...string) *schema.Batch {
	out := &schema.Batch{Schema: b.Schema}
	for _, r := range b.Rows {
		nr := append([]any(nil), r...)
		for _, c := range cols {
			if i := b.Schema.FieldIndex(c); i >= 0 && nr[i] == "" {
				nr[i] = nil
			}
		}
		out.Rows = append(out.Rows, nr)
	}
	return out
}

func smallBatch(from, n int, extra bool) *schema.Batch {
	fields := []schema.StructField{field("id", prim("long")), field("part", prim("string")), field("v", prim("double"))}
	if extra {
		fields = append(fields, field("added", prim("string")))
	}
	b := &schema.Batch{Schema: &schema.StructType{Fields: fields}}
	for i := from; i < from+n; i++ {
		r := []any{int64(i), []string{"a", "b", "c"}[i%3], float64(i) / 4}
		if extra {
			r = append(r, "new-"+string(rune('a'+i%26)))
		}
		b.Rows = append(b.Rows, r)
	}
	return b
}

func concatRows(bs ...*schema.Batch) []string {
	var out []string
	for _, b := range bs {
		out = append(out, batchRows(b)...)
	}
	return out
}

// withNulls returns b's rows under the wider schema, new columns null.
func withNulls(b *schema.Batch, wide *schema.StructType) *schema.Batch {
	out := &schema.Batch{Schema: wide}
	for _, r := range b.Rows {
		nr := make([]any, len(wide.Fields))
		copy(nr, r)
		out.Rows = append(out.Rows, nr)
	}
	return out
}

func write(t *testing.T, url string, b *schema.Batch, o table.WriteOptions) {
	t.Helper()
	ctx := context.Background()
	tb, err := table.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Write(ctx, b, o); err != nil {
		t.Fatalf("lakesink write %s: %v", url, err)
	}
}

// cli runs the lakesink CLI and returns its stdout.
func cli(t *testing.T, args ...string) string {
	t.Helper()
	cmd := exec.Command(lakesinkBin, args...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("lakesink %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
	}
	return string(out)
}

// bothEngines runs the Spark and the delta-rs check of one table.
func bothEngines(t *testing.T, kase, path string, want []string) {
	t.Helper()
	t.Run("spark", func(t *testing.T) {
		needEngines(t, "Spark", kase)
		checkSpark(t, path, path, want)
	})
	t.Run("delta-rs", func(t *testing.T) {
		needEngines(t, "delta-rs", kase)
		checkDeltaRS(t, path, path, want, nil)
	})
}

func TestEnginesReadEveryType(t *testing.T) {
	needEngines(t, "both", "setup")
	path := localURL(t, filepath.Join(t.TempDir(), "types"))
	b := typesBatch()
	write(t, path, b, table.WriteOptions{})
	bothEngines(t, "every type incl. decimal(38,18), timestamp, timestamp_ntz, binary, date, nested", path, batchRows(b))
}

func TestEnginesReadTrickyPartitionValues(t *testing.T) {
	needEngines(t, "both", "setup")
	path := localURL(t, filepath.Join(t.TempDir(), "parts"))
	b := partitionBatch()
	write(t, path, b, table.WriteOptions{PartitionColumns: []string{"p", "n", "day"}})
	bothEngines(t, "partition values with space, /, =, %, unicode, empty string, null", path, batchRows(emptyPartitionIsNull(b, "p")))
}

func TestEnginesReadFlightsDemoTable(t *testing.T) {
	needEngines(t, "both", "setup")
	root, _ := repoRoot()
	dir := t.TempDir()
	path := localURL(t, filepath.Join(dir, "flights"))
	cli(t, "ingest", "--source", filepath.Join(root, "testdata", "flights"), "--format", "json",
		"--schema", filepath.Join(root, "testdata", "flights-schema.json"), "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", filepath.Join(dir, "cp"), "--table", path, "--partition-by", "origin",
		"--trigger", "available-now", "--max-files-per-trigger", "10", "--quiet")
	want := lakesinkRows(t, path)
	if len(want) != 20000 {
		t.Fatalf("lakesink reads %d flights, want 20000", len(want))
	}
	bothEngines(t, "flights demo table (ingest, partitioned by origin)", path, want)
}

func TestEnginesReadAfterMaintenance(t *testing.T) {
	needEngines(t, "both", "setup")
	ctx := context.Background()
	path := localURL(t, filepath.Join(t.TempDir(), "maint"))
	var batches []*schema.Batch
	for i := 0; i < 12; i++ {
		b := smallBatch(i*10, 10, false)
		batches = append(batches, b)
		write(t, path, b, table.WriteOptions{PartitionColumns: []string{"part"}, AppID: "maint-app", Version: int64(i)})
	}
	want := concatRows(batches...)
	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	t.Run("optimize", func(t *testing.T) {
		if _, _, err := compaction.Optimize(ctx, tb, compaction.PlanOptions{}, compaction.DefaultExecOptions()); err != nil {
			t.Fatal(err)
		}
		bothEngines(t, "after OPTIMIZE", path, want)
	})
	t.Run("vacuum", func(t *testing.T) {
		res, err := compaction.Vacuum(ctx, tb, compaction.VacuumOptions{RetainZero: true, Force: true})
		if err != nil {
			t.Fatal(err)
		}
		if res.FilesDeleted == 0 {
			t.Fatalf("VACUUM deleted nothing after OPTIMIZE: %+v", res)
		}
		bothEngines(t, "after VACUUM", path, want)
	})
	t.Run("checkpoint", func(t *testing.T) {
		if _, err := compaction.Checkpoint(ctx, tb); err != nil {
			t.Fatal(err)
		}
		write(t, path, smallBatch(1000, 3, false), table.WriteOptions{})
		want = append(want, batchRows(smallBatch(1000, 3, false))...)
		bothEngines(t, "after a checkpoint (+1 commit)", path, want)
	})
	t.Run("cleanup-log", func(t *testing.T) {
		res, err := compaction.CleanupLog(ctx, tb, compaction.CleanupLogOptions{Now: func() time.Time { return time.Now().Add(40 * 24 * time.Hour) }})
		if err != nil {
			t.Fatal(err)
		}
		if res.FilesDeleted == 0 {
			t.Fatalf("cleanup-log deleted nothing: %+v", res)
		}
		bothEngines(t, "after cleanup-log", path, want)
	})
}

// TestEnginesReadReusedCheckpoint: Spark and delta-rs read a table whose
// latest checkpoint copies row groups of the one before it (txlog's
// checkpoint reuse): 30 files at version 0, then one file a version from
// one Table (its automatic checkpoints every 10 versions): the checkpoint
// of 20 copies the 40 adds of 10's and encodes the 10 newest, 30's merges
// them all into one group of 60 (the carry: 2x20 >= 40), 40's copies that
// group and encodes 10, and 50's copies it again and merges the newest 20,
// so its row groups are [state][60, copied][20].
func TestEnginesReadReusedCheckpoint(t *testing.T) {
	needEngines(t, "both", "setup")
	ctx := context.Background()
	dir := filepath.Join(t.TempDir(), "reuse")
	path := localURL(t, dir)
	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	sch := &schema.StructType{Fields: []schema.StructField{field("id", prim("long")), field("part", prim("string"))}}
	first := &schema.Batch{Schema: sch}
	for i := range 30 {
		first.Rows = append(first.Rows, []any{int64(i), fmt.Sprintf("p%02d", i)})
	}
	batches := []*schema.Batch{first}
	if _, err := tb.Write(ctx, first, table.WriteOptions{PartitionColumns: []string{"part"}}); err != nil {
		t.Fatal(err)
	}
	for v := 1; v <= 52; v++ {
		b := &schema.Batch{Schema: sch, Rows: [][]any{{int64(1000 + v), fmt.Sprintf("p%02d", v%30)}}}
		batches = append(batches, b)
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tb.Log().Wait()
	data, err := os.ReadFile(filepath.Join(dir, "_delta_log", "00000000000000000050.checkpoint.parquet"))
	if err != nil {
		t.Fatal(err)
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var groups []int64
	for _, rg := range f.RowGroups() {
		groups = append(groups, rg.NumRows())
	}
	if want := []int64{2, 60, 20}; !slices.Equal(groups, want) {
		t.Fatalf("checkpoint 50 row groups of %v rows, want %v (the reused layout)", groups, want)
	}
	bothEngines(t, "whose checkpoint copies row groups of the one before", path, concatRows(batches...))
}

func TestEnginesReadAfterSchemaEvolution(t *testing.T) {
	needEngines(t, "both", "setup")
	path := localURL(t, filepath.Join(t.TempDir(), "evolve"))
	old, wide := smallBatch(0, 20, false), smallBatch(20, 20, true)
	write(t, path, old, table.WriteOptions{PartitionColumns: []string{"part"}})
	write(t, path, wide, table.WriteOptions{MergeSchema: true})
	bothEngines(t, "after schema evolution (added column)", path, concatRows(withNulls(old, wide.Schema), wide))
}

func TestEnginesReadCompleteMode(t *testing.T) {
	needEngines(t, "both", "setup")
	ctx := context.Background()
	path := localURL(t, filepath.Join(t.TempDir(), "complete"))
	s, err := sink.NewDelta(ctx, path, sink.Options{QueryID: "complete-q", OutputMode: sink.Complete})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var last *schema.Batch
	for i := int64(0); i < 3; i++ {
		last = smallBatch(int(i)*100, 5+int(i), false)
		if _, err := s.AddBatch(ctx, i, last); err != nil {
			t.Fatal(err)
		}
	}
	bothEngines(t, "after complete mode (3 batches, last one read)", path, batchRows(last))
}

func TestEnginesReadConvertedFileSink(t *testing.T) {
	needEngines(t, "both", "setup")
	root, _ := repoRoot()
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"flights-00.json", "flights-01.json", "flights-02.json"} {
		data, err := os.ReadFile(filepath.Join(root, "testdata", "flights", f))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, f), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	out := localURL(t, filepath.Join(dir, "out"))
	cli(t, "ingest", "--source", src, "--format", "json", "--schema", filepath.Join(root, "testdata", "flights-schema.json"),
		"--timestamp-format", "2006/01/02 15:04", "--checkpoint", filepath.Join(dir, "cp"), "--file-sink", out,
		"--partition-by", "origin", "--trigger", "available-now", "--max-files-per-trigger", "1", "--quiet")
	want := lakesinkRows(t, out) // through _spark_metadata
	if len(want) != 3000 {
		t.Fatalf("file sink holds %d rows, want 3000", len(want))
	}
	cli(t, "convert", out)
	bothEngines(t, "table made by convert from a file-sink directory", out, want)
}

// TestEnginesReadS3Table: a table written to the local S3 server, read by
// Spark through s3a (hadoop-aws) and by delta-rs through its S3 store.
func TestEnginesReadS3Table(t *testing.T) {
	needEngines(t, "both", "setup")
	s3 := s3test.Start(t)
	url := s3.URL("tables/s3t")
	b := partitionBatch()
	write(t, url, b, table.WriteOptions{PartitionColumns: []string{"p"}})
	write(t, url, smallBatchLike(b), table.WriteOptions{})
	want := concatRows(emptyPartitionIsNull(b, "p"), smallBatchLike(b))
	t.Run("spark", func(t *testing.T) {
		needEngines(t, "Spark", "table on the local S3 server, via s3a (hadoop-aws)")
		srv.must(t, map[string]any{"op": "spark_conf", "conf": map[string]any{
			"fs.s3a.endpoint":                     s3.Endpoint,
			"fs.s3a.endpoint.region":              s3test.Region,
			"fs.s3a.access.key":                   s3test.AccessKeyID,
			"fs.s3a.secret.key":                   s3test.SecretAccessKey,
			"fs.s3a.path.style.access":            "true",
			"fs.s3a.connection.ssl.enabled":       "false",
			"fs.s3a.impl.disable.cache":           "true",
			"fs.s3a.aws.credentials.provider":     "org.apache.hadoop.fs.s3a.SimpleAWSCredentialsProvider",
			"fs.s3a.change.detection.mode":        "none",
			"fs.s3a.create.conditional.enabled":   "false",
			"fs.s3a.attempts.maximum":             "2",
			"fs.s3a.retry.limit":                  "2",
			"fs.s3a.connection.establish.timeout": "5s",
		}}, nil)
		checkSpark(t, "s3a://"+s3test.Bucket+"/tables/s3t", url, want)
	})
	t.Run("delta-rs", func(t *testing.T) {
		needEngines(t, "delta-rs", "table on the local S3 server")
		checkDeltaRS(t, "s3://"+s3test.Bucket+"/tables/s3t", url, want, map[string]string{
			"AWS_ENDPOINT_URL":           s3.Endpoint,
			"AWS_REGION":                 s3test.Region,
			"AWS_ACCESS_KEY_ID":          s3test.AccessKeyID,
			"AWS_SECRET_ACCESS_KEY":      s3test.SecretAccessKey,
			"AWS_ALLOW_HTTP":             "true",
			"AWS_S3_ALLOW_UNSAFE_RENAME": "true",
			"AWS_FORCE_PATH_STYLE":       "true",
		})
	})
}

func smallBatchLike(b *schema.Batch) *schema.Batch {
	out := &schema.Batch{Schema: b.Schema}
	for i, r := range b.Rows[:3] {
		nr := append([]any(nil), r...)
		nr[0] = int64(1000 + i)
		out.Rows = append(out.Rows, nr)
	}
	return out
}
