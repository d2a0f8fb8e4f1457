package interop

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io/fs"
	"math"
	"math/big"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow-go/v18/parquet"
	"github.com/apache/arrow-go/v18/parquet/file"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// allTypes is a schema with every primitive Delta type, the three decimal
// physical layouts (INT32, INT64, FIXED_LEN_BYTE_ARRAY) and nested types.
var allTypes = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong},
	{Name: "s", Type: schema.TypeString, Nullable: true},
	{Name: "l", Type: schema.TypeLong, Nullable: true},
	{Name: "i", Type: schema.TypeInteger, Nullable: true},
	{Name: "sh", Type: schema.TypeShort, Nullable: true},
	{Name: "b", Type: schema.TypeByte, Nullable: true},
	{Name: "f", Type: schema.TypeFloat, Nullable: true},
	{Name: "d", Type: schema.TypeDouble, Nullable: true},
	{Name: "bo", Type: schema.TypeBoolean, Nullable: true},
	{Name: "bin", Type: schema.TypeBinary, Nullable: true},
	{Name: "dt", Type: schema.TypeDate, Nullable: true},
	{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "tsntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	{Name: "dec5", Type: schema.DecimalType{Precision: 5, Scale: 2}, Nullable: true},
	{Name: "dec18", Type: schema.DecimalType{Precision: 18, Scale: 4}, Nullable: true},
	{Name: "dec30", Type: schema.DecimalType{Precision: 30, Scale: 6}, Nullable: true},
	{Name: "st", Nullable: true, Type: &schema.StructType{Fields: []schema.StructField{
		{Name: "a", Type: schema.TypeInteger, Nullable: true},
		{Name: "b", Type: schema.TypeString, Nullable: true},
	}}},
	{Name: "arr", Nullable: true, Type: &schema.ArrayType{ElementType: schema.TypeInteger, ContainsNull: true}},
	{Name: "m", Nullable: true, Type: &schema.MapType{KeyType: schema.TypeString, ValueType: schema.TypeLong, ValueContainsNull: true}},
}}

// withPartitions is allTypes plus a string and a date partition column.
func withPartitions() *schema.StructType {
	s := &schema.StructType{Fields: slices.Clone(allTypes.Fields)}
	s.Fields = append(s.Fields,
		schema.StructField{Name: "p_s", Type: schema.TypeString, Nullable: true},
		schema.StructField{Name: "p_d", Type: schema.TypeDate, Nullable: true})
	return s
}

var partitionColumns = []string{"p_s", "p_d"}

func dec(s string, scale int) schema.Decimal {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		panic("bad decimal " + s)
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)))
	if !r.IsInt() {
		panic("decimal " + s + " has more digits than scale")
	}
	return schema.Decimal{Unscaled: new(big.Int).Set(r.Num()), Scale: scale}
}

func date(y int, m time.Month, d int) schema.Date {
	return schema.Date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// allTypesRows returns rows of allTypes: an all-null row, the extremes of
// every type, NaN/±Inf/-0, a timestamp given in a non-UTC zone, then regular
// rows with nulls scattered over every column.
func allTypesRows() [][]any { return allTypesRowsN(45) }

// allTypesRowsN is allTypesRows with n rows (n >= 5); strings get longer
// with the id (up to 400 bytes) so that large n spans several pages.
func allTypesRowsN(n int64) [][]any {
	ist := time.FixedZone("IST", 5*3600+1800)
	rows := [][]any{
		{int64(0), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{int64(1), "", int64(math.MinInt64), int32(math.MinInt32), int16(math.MinInt16), int8(math.MinInt8),
			float32(-math.MaxFloat32), math.Inf(-1), false, []byte{},
			date(1, 1, 1), time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(1, 1, 1, 0, 0, 0, 1000, time.UTC),
			dec("-999.99", 2), dec("-99999999999999.9999", 4), dec("-999999999999999999999999.999999", 6),
			[]any{nil, nil}, []any{}, []schema.MapEntry{}},
		{int64(2), "ü日本語 ☃ \x00 tail", int64(math.MaxInt64), int32(math.MaxInt32), int16(math.MaxInt16), int8(math.MaxInt8),
			float32(math.MaxFloat32), math.Inf(1), true, []byte{0, 0xff, 0x7f},
			// Millisecond-aligned: see TestDeltaStatsTimestampMaxAtYear9999.
			date(9999, 12, 31), time.Date(9999, 12, 31, 23, 59, 59, 999000000, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 999000000, time.UTC),
			dec("999.99", 2), dec("99999999999999.9999", 4), dec("999999999999999999999999.999999", 6),
			[]any{int32(math.MaxInt32), "x"}, []any{nil, int32(1), int32(-1)},
			[]schema.MapEntry{{Key: "a", Value: nil}, {Key: "b", Value: int64(5)}}},
		{int64(3), "nan row", int64(-1), int32(-1), int16(-1), int8(-1),
			float32(math.NaN()), math.NaN(), false, []byte("nan"),
			date(1969, 12, 31), time.Date(1969, 12, 31, 23, 59, 59, 999999000, ist), time.Date(1969, 12, 31, 23, 59, 59, 123456000, time.UTC),
			dec("-0.01", 2), dec("0.0001", 4), dec("-0.000001", 6),
			[]any{int32(0), ""}, []any{nil}, []schema.MapEntry{{Key: "", Value: int64(math.MinInt64)}}},
		{int64(4), "neg zero", int64(0), int32(0), int16(0), int8(0),
			float32(math.Copysign(0, -1)), math.Copysign(0, -1), true, []byte{0},
			date(1970, 1, 1), time.Date(2024, 2, 29, 12, 30, 45, 678901000, ist), time.Date(2024, 2, 29, 12, 30, 45, 678901000, time.UTC),
			dec("0", 2), dec("0", 4), dec("0", 6),
			nil, nil, nil},
	}
	for id := int64(5); id < n; id++ {
		k := int(id)
		r := []any{id,
			fmt.Sprintf("row-%03d", id) + strings.Repeat("x", int(id%400)),
			id * 1_000_000_007,
			int32(id * 1001),
			int16(id * 7),
			int8(id - 20),
			float32(id) / 3,
			float64(id) * -1.5e100,
			id%2 == 0,
			[]byte(fmt.Sprintf("b%d", id)),
			date(2000, 1, k%3000),
			time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC).Add(time.Duration(id)*time.Hour + time.Duration(id)*time.Microsecond),
			time.Date(1950, 6, 1, 0, 0, 0, 0, time.UTC).Add(-time.Duration(id) * 1234567 * time.Microsecond),
			dec(fmt.Sprintf("%d.%02d", id%1000, id%100), 2),
			dec(fmt.Sprintf("-%d.%04d", id*1_000_000_000, id), 4),
			dec(fmt.Sprintf("%d123456789012345678.%06d", id, id), 6),
			[]any{int32(id), fmt.Sprintf("st%d", id)},
			[]any{int32(id), int32(-id), nil},
			[]schema.MapEntry{{Key: fmt.Sprintf("k%d", id), Value: id}, {Key: "z", Value: nil}},
		}
		// Nulls in a different column for each row (id 0 is never null).
		r[1+k%(len(r)-1)] = nil
		rows = append(rows, r)
	}
	return rows
}

// partitionValues are the partition values of row i: nulls, the empty
// string (read back as null, as Spark does), and every character Spark
// escapes in directory names.
func partitionValues(i int) (any, any) {
	ss := []any{"plain", nil, "", "a/b", "a=b", "sp ace", "pct%20x", "ü日本", "colon:x", "#hash?", `q"'*\[]^{}`, "\x01ctl"}
	ds := []any{date(2024, 1, 2), nil, date(1969, 7, 20), date(1, 1, 1)}
	return ss[i%len(ss)], ds[(i/3)%len(ds)]
}

func partitionedRows() [][]any {
	rows := allTypesRows()
	for i := range rows {
		s, d := partitionValues(i)
		rows[i] = append(rows[i], s, d)
	}
	return rows
}

// expected returns the rows as a reader must see them: sorted by id, with
// empty-string partition values read back as null.
func expected(sch *schema.StructType, rows [][]any, partCols []string) [][]any {
	out := make([][]any, len(rows))
	for i, r := range rows {
		out[i] = slices.Clone(r)
		for j, f := range sch.Fields {
			if slices.Contains(partCols, f.Name) && out[i][j] == "" {
				out[i][j] = nil
			}
		}
	}
	sortByID(out)
	return out
}

func sortByID(rows [][]any) {
	slices.SortFunc(rows, func(a, b []any) int { return int(a[0].(int64) - b[0].(int64)) })
}

// compareRows compares the rows read by arrow-go with the rows written,
// value by value.
func compareRows(t *testing.T, sch *schema.StructType, want, got [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("arrow-go reads %d rows, want %d", len(got), len(want))
	}
	for i := range want {
		for j, f := range sch.Fields {
			if !sameValue(want[i][j], got[i][j]) {
				t.Errorf("id %v column %s: arrow-go reads %s, wrote %s", want[i][0], f.Name, show(got[i][j]), show(want[i][j]))
			}
		}
	}
}

// parsePartition parses a partition value (a Delta partitionValues entry or
// an unescaped Hive directory value) of a string or date column.
func parsePartition(t *testing.T, dt schema.DataType, v *string) any {
	t.Helper()
	if v == nil {
		return nil
	}
	switch dt {
	case schema.TypeString:
		return *v
	case schema.TypeDate:
		tm, err := time.Parse("2006-01-02", *v)
		if err != nil {
			t.Fatalf("date partition value %q: %v", *v, err)
		}
		return schema.Date(tm.Unix() / 86400)
	}
	t.Fatalf("no partition parser for %s", dt.TypeName())
	return nil
}

func dataFields(sch *schema.StructType, partCols []string) []schema.StructField {
	var out []schema.StructField
	for _, f := range sch.Fields {
		if !slices.Contains(partCols, f.Name) {
			out = append(out, f)
		}
	}
	return out
}

// fileRows assembles full rows from a file's columns and its partition values.
func fileRows(t *testing.T, sch *schema.StructType, af *arrowFile, part map[string]*string) [][]any {
	t.Helper()
	rows := make([][]any, af.numRows)
	for r := range rows {
		rows[r] = make([]any, len(sch.Fields))
		for j, f := range sch.Fields {
			if v, ok := part[f.Name]; ok {
				rows[r][j] = parsePartition(t, f.Type, v)
				continue
			}
			col, ok := af.cols[f.Name]
			if !ok || len(col) != len(rows) {
				t.Fatalf("%s: column %s has %d values, want %d", af.path, f.Name, len(col), len(rows))
			}
			rows[r][j] = col[r]
		}
	}
	return rows
}

// writeDelta writes rows with the Delta sink in two batches.
func writeDelta(t *testing.T, dir string, sch *schema.StructType, rows [][]any, partCols []string) {
	t.Helper()
	o := deltaOpts()
	o.PartitionColumns = partCols
	writeDeltaOpts(t, dir, sch, rows, o)
}

func deltaOpts() sink.Options { return sink.Options{QueryID: "q"} }

func writeDeltaOpts(t *testing.T, dir string, sch *schema.StructType, rows [][]any, opts sink.Options) {
	t.Helper()
	ctx := context.Background()
	s, err := sink.NewDelta(ctx, "file://"+dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	half := len(rows) / 2
	for b, part := range [][][]any{rows[:half], rows[half:]} {
		res, err := s.AddBatch(ctx, int64(b), &schema.Batch{Schema: sch, Rows: part})
		if err != nil {
			t.Fatalf("batch %d: %v", b, err)
		}
		if res.NumRows != int64(len(part)) {
			t.Fatalf("batch %d: %+v, want %d rows", b, res, len(part))
		}
	}
}

// readDelta reads every data file named by the table's log with arrow-go,
// checks schema, Parquet types and stats of each, and returns the rows.
func readDelta(t *testing.T, dir string, sch *schema.StructType, partCols []string) [][]any {
	t.Helper()
	ctx := context.Background()
	tb, err := table.Open(ctx, "file://"+dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	files := snap.Files()
	if len(files) == 0 {
		t.Fatal("the log names no data file")
	}
	fields := dataFields(sch, partCols)
	var rows [][]any
	for _, a := range files {
		key, err := snap.FileKey(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		af := readArrow(t, filepath.Join(dir, filepath.FromSlash(key)))
		checkArrowSchema(t, af, fields)
		checkParquetTypes(t, af, fields)
		st := parseStats(t, a.Path, a.Stats)
		if *st.NumRecords != af.numRows {
			t.Errorf("%s: stats numRecords %d, Parquet footer %d rows", a.Path, *st.NumRecords, af.numRows)
		}
		for _, f := range fields {
			checkStats(t, a.Path, f.Name, f.Type, af.cols[f.Name], st, st.MinValues[f.Name], st.MaxValues[f.Name], st.NullCount[f.Name])
		}
		if len(a.PartitionValues) != len(partCols) {
			t.Errorf("%s: partitionValues %v, want columns %v", a.Path, a.PartitionValues, partCols)
		}
		// The Hive-style directories name the same values (Spark discovers
		// partitions from them when it reads the files without the log).
		if len(partCols) > 0 {
			dirs := hivePartition(t, key)
			for _, c := range partCols {
				d, v := dirs[c], a.PartitionValues[c]
				if (d == nil) != (v == nil) || d != nil && *d != *v {
					t.Errorf("%s: directory value of %s is %s, partitionValues has %s", key, c, show(deref(d)), show(deref(v)))
				}
			}
		}
		checkSparkRowMetadata(t, af, fields)
		rows = append(rows, fileRows(t, sch, af, a.PartitionValues)...)
	}
	sortByID(rows)
	return rows
}

func TestDeltaTableReadByArrow(t *testing.T) {
	cases := []struct {
		name     string
		schema   *schema.StructType
		rows     [][]any
		partCols []string
	}{
		{name: "unpartitioned", schema: allTypes, rows: allTypesRows()},
		{name: "partitioned_string_and_date", schema: withPartitions(), rows: partitionedRows(), partCols: partitionColumns},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			writeDelta(t, dir, tc.schema, tc.rows, tc.partCols)
			got := readDelta(t, dir, tc.schema, tc.partCols)
			compareRows(t, tc.schema, expected(tc.schema, tc.rows, tc.partCols), got)
		})
	}
}

// TestDeltaCodecsAndLayoutsReadByArrow writes the all-types table with every
// compression codec, and with row groups and files small enough to hold a
// few rows each, and reads it back with arrow-go.
func TestDeltaCodecsAndLayoutsReadByArrow(t *testing.T) {
	cases := []struct {
		name     string
		opts     sink.Options
		rows     int64 // default 45
		minFiles int
		minRGs   int
	}{
		{name: "zstd", opts: sink.Options{Compression: "zstd"}},
		{name: "gzip", opts: sink.Options{Compression: "gzip"}},
		{name: "lz4", opts: sink.Options{Compression: "lz4"}},
		{name: "none", opts: sink.Options{Compression: "none"}},
		{name: "small_row_groups", opts: sink.Options{RowGroupSizeBytes: 64 << 10}, rows: 4000, minRGs: 2},
		{name: "small_files", opts: sink.Options{TargetFileSizeBytes: 128 << 10}, rows: 4000, minFiles: 4},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			opts := tc.opts
			opts.QueryID = "q"
			rows := allTypesRows()
			if tc.rows > 0 {
				rows = allTypesRowsN(tc.rows)
			}
			writeDeltaOpts(t, dir, allTypes, rows, opts)
			got := readDelta(t, dir, allTypes, nil)
			compareRows(t, allTypes, expected(allTypes, rows, nil), got)
			files, maxRGs := parquetLayout(t, dir)
			if files < tc.minFiles || maxRGs < tc.minRGs {
				t.Errorf("%d files, at most %d row groups per file; want >= %d files, >= %d row groups", files, maxRGs, tc.minFiles, tc.minRGs)
			}
		})
	}
}

// parquetLayout counts the Parquet files under dir and the largest number
// of row groups of one file, as arrow-go reads the footers.
func parquetLayout(t *testing.T, dir string) (files, maxRowGroups int) {
	t.Helper()
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		r, err := file.OpenParquetFile(p, false)
		if err != nil {
			return err
		}
		defer r.Close()
		files++
		maxRowGroups = max(maxRowGroups, r.NumRowGroups())
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files, maxRowGroups
}

// TestDeltaStatsBoundsTimestamps checks, on a file of timestamps with
// sub-millisecond parts, that the millisecond stats bracket the values
// arrow-go reads (PROTOCOL.md, "Per-file Statistics": timestamps in stats are
// milliseconds; a max truncated down would exclude the file's last row).
func TestDeltaStatsBoundsTimestamps(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "tsntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	}}
	base := time.Date(2023, 3, 4, 5, 6, 7, 0, time.UTC)
	rows := [][]any{
		{int64(0), base.Add(999 * time.Microsecond), base.Add(-1 * time.Microsecond)},
		{int64(1), base.Add(1001 * time.Microsecond), base.Add(1 * time.Microsecond)},
		{int64(2), nil, nil},
	}
	dir := t.TempDir()
	writeDelta(t, dir, sch, rows, nil)
	got := readDelta(t, dir, sch, nil)
	compareRows(t, sch, expected(sch, rows, nil), got)
}

// sparkLogPaths reads _spark_metadata directly (not through filesink): the
// latest N.compact file plus the plain batch files after it, each the line
// "v1" then one JSON SinkFileStatus per line (CompactibleFileStreamLog).
func sparkLogPaths(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(dir, "_spark_metadata"))
	if err != nil {
		t.Fatal(err)
	}
	type logFile struct {
		id      int64
		compact bool
		name    string
	}
	var logs []logFile
	for _, e := range ents {
		name := e.Name()
		base, compact := strings.CutSuffix(name, ".compact")
		id, err := strconv.ParseInt(base, 10, 64)
		if err != nil {
			continue // claims and temporary files
		}
		logs = append(logs, logFile{id, compact, name})
	}
	slices.SortFunc(logs, func(a, b logFile) int { return int(a.id - b.id) })
	start := 0
	for i, l := range logs {
		if l.compact {
			start = i
		}
	}
	var paths []string
	for _, l := range logs[start:] {
		data, err := os.ReadFile(filepath.Join(dir, "_spark_metadata", l.name))
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(bytes.NewReader(data))
		sc.Buffer(nil, 1<<20)
		if !sc.Scan() || sc.Text() != "v1" {
			t.Fatalf("_spark_metadata/%s does not start with v1", l.name)
		}
		for sc.Scan() {
			var e struct {
				Path   string `json:"path"`
				Size   int64  `json:"size"`
				Action string `json:"action"`
			}
			if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
				t.Fatalf("_spark_metadata/%s: %q: %v", l.name, sc.Text(), err)
			}
			if e.Action != "add" {
				t.Errorf("_spark_metadata/%s: action %q", l.name, e.Action)
			}
			paths = append(paths, e.Path)
		}
	}
	return paths
}

// hivePartition parses the Hive-style directories of rel (relative,
// unescaped URI path): col=value with Spark's %XX escaping of the value.
func hivePartition(t *testing.T, rel string) map[string]*string {
	t.Helper()
	out := map[string]*string{}
	dirs := strings.Split(path.Dir(rel), "/")
	if path.Dir(rel) == "." {
		return out
	}
	for _, d := range dirs {
		col, val, ok := strings.Cut(d, "=")
		if !ok {
			t.Fatalf("%s: directory %q is not col=value", rel, d)
		}
		if val == "__HIVE_DEFAULT_PARTITION__" {
			out[col] = nil
			continue
		}
		v, err := url.PathUnescape(val)
		if err != nil {
			t.Fatalf("%s: partition value %q: %v", rel, val, err)
		}
		out[col] = &v
	}
	return out
}

func deref(p *string) any {
	if p == nil {
		return nil
	}
	return *p
}

func TestSparkFileSinkReadByArrow(t *testing.T) {
	cases := []struct {
		name     string
		schema   *schema.StructType
		rows     [][]any
		partCols []string
	}{
		{name: "unpartitioned", schema: allTypes, rows: allTypesRows()},
		{name: "partitioned_string_and_date", schema: withPartitions(), rows: partitionedRows(), partCols: partitionColumns},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st, err := storage.Open(ctx, "file://"+dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			opts := filesink.DefaultOptions()
			opts.PartitionColumns = tc.partCols
			opts.QueryID = "q"
			s, err := filesink.New(ctx, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			half := len(tc.rows) / 2
			for b, part := range [][][]any{tc.rows[:half], tc.rows[half:]} {
				if _, err := s.AddBatch(ctx, int64(b), &schema.Batch{Schema: tc.schema, Rows: part}); err != nil {
					t.Fatalf("batch %d: %v", b, err)
				}
			}

			paths := sparkLogPaths(t, dir)
			// The package's own listing names the same files.
			ls, err := filesink.ListFiles(ctx, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			var listed, logged []string
			for _, f := range ls.Files {
				listed = append(listed, f.Key)
			}
			fields := dataFields(tc.schema, tc.partCols)
			var rows [][]any
			for _, p := range paths {
				u, err := url.Parse(p)
				if err != nil || u.Scheme != "file" {
					t.Fatalf("log path %q is not a file URI (%v)", p, err)
				}
				rel, ok := strings.CutPrefix(u.Path, filepath.ToSlash(dir)+"/")
				if !ok {
					t.Fatalf("log path %q is outside %s", p, dir)
				}
				logged = append(logged, rel)
				af := readArrow(t, filepath.Join(dir, filepath.FromSlash(rel)))
				checkArrowSchema(t, af, fields)
				checkParquetTypes(t, af, fields)
				part := hivePartition(t, rel)
				if len(part) != len(tc.partCols) {
					t.Errorf("%s: partition directories %v, want %v", rel, part, tc.partCols)
				}
				checkSparkRowMetadata(t, af, fields)
				rows = append(rows, fileRows(t, tc.schema, af, part)...)
			}
			slices.Sort(listed)
			slices.Sort(logged)
			if !slices.Equal(listed, logged) {
				t.Errorf("filesink.ListFiles = %q\n_spark_metadata names %q", listed, logged)
			}
			sortByID(rows)
			compareRows(t, tc.schema, expected(tc.schema, tc.rows, tc.partCols), rows)
		})
	}
}

// TestDeltaStatsTimestampMaxAtYear9999 writes the largest Spark timestamp,
// 9999-12-31T23:59:59.999999. Its millisecond max must stay a timestamp a
// Delta reader can parse (Spark's range ends in year 9999), yet cover the
// value.
func TestDeltaStatsTimestampMaxAtYear9999(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "tsntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	}}
	last := time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC)
	rows := [][]any{{int64(0), last, last}, {int64(1), last.Add(-time.Hour), last.Add(-time.Hour)}}
	dir := t.TempDir()
	writeDelta(t, dir, sch, rows, nil)
	got := readDelta(t, dir, sch, nil) // checks min <= value <= max per column
	compareRows(t, sch, expected(sch, rows, nil), got)
}

// TestDataFileEncodingsReadableBySparkBefore33 checks that every column chunk
// uses encodings that Spark's vectorized Parquet reader decodes in every
// Spark 3.x: PLAIN, RLE, BIT_PACKED and dictionary encodings. The DELTA_*
// encodings are decoded only since Spark 3.3 (SPARK-36879); Delta 1.x/2.0 run
// on Spark 3.0-3.2.
func TestDataFileEncodingsReadableBySparkBefore33(t *testing.T) {
	dir := t.TempDir()
	writeDelta(t, dir, allTypes, allTypesRows(), nil)
	ok := []parquet.Encoding{parquet.Encodings.Plain, parquet.Encodings.RLE, parquet.Encodings.BitPacked,
		parquet.Encodings.PlainDict, parquet.Encodings.RLEDict}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !strings.HasSuffix(p, ".parquet") {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		r, err := file.NewParquetReader(bytes.NewReader(data))
		if err != nil {
			return err
		}
		defer r.Close()
		md := r.MetaData()
		for g := 0; g < md.NumRowGroups(); g++ {
			rg := md.RowGroup(g)
			for c := 0; c < rg.NumColumns(); c++ {
				cc, err := rg.ColumnChunk(c)
				if err != nil {
					return err
				}
				for _, e := range cc.Encodings() {
					if !slices.Contains(ok, e) {
						t.Errorf("%s: column %s uses %s", filepath.Base(p), cc.PathInSchema(), e)
					}
				}
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
