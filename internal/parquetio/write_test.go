package parquetio

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"reflect"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// TestStatsMatchDelta re-writes the rows of Spark/Delta-written files and
// compares our stats JSON with the one Delta put in the log.
func TestStatsMatchDelta(t *testing.T) {
	cases := []struct {
		name, log, data string
		// maxPatch overrides maxValues entries of the expected stats where
		// we deliberately differ: Delta 1.2.1 truncated a timestamp max with
		// sub-millisecond digits down, which can exclude the file's own
		// maximum; we round it up (as readers assume since Delta 2.x).
		maxPatch map[string]any
	}{
		{"dat all_primitive_types", "testdata/dat/all_primitive_types.json", "testdata/dat/all_primitive_types.parquet", nil},
		{"dat nested_types", "testdata/dat/nested_types.json", "testdata/dat/nested_types.parquet", nil},
		{"delta-rs only_struct_stats", "testdata/deltars/only_struct_stats.json", "testdata/deltars/only_struct_stats.parquet",
			map[string]any{"timestamp": "2022-10-24T22:59:32.847Z"}},
		{"delta-rs edge_timestamps", "testdata/deltars/edge_timestamps.json", "testdata/deltars/edge_timestamps.parquet", nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			sch, add := logInfo(t, c.log)
			f := openFixture(t, c.data)
			rows, err := f.ReadAll(context.Background(), sch, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			st := newMemStore()
			files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 {
				t.Fatalf("%d files", len(files))
			}
			var got, want any
			if err := json.Unmarshal([]byte(files[0].Stats), &got); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(add["stats"].(string)), &want); err != nil {
				t.Fatal(err)
			}
			for k, v := range c.maxPatch {
				want.(map[string]any)["maxValues"].(map[string]any)[k] = v
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("stats differ\n got %s\nwant %s", files[0].Stats, add["stats"])
			}
		})
	}
}

// fullSchema has every type, nullable and not, nested.
func fullSchema() *schema.StructType {
	inner := &schema.StructType{Fields: []schema.StructField{
		{Name: "a", Type: schema.TypeLong, Nullable: true},
		{Name: "b", Type: &schema.ArrayType{ElementType: schema.TypeString, ContainsNull: true}, Nullable: true},
	}}
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "l", Type: schema.TypeLong, Nullable: false},
		{Name: "i", Type: schema.TypeInteger, Nullable: true},
		{Name: "sh", Type: schema.TypeShort, Nullable: true},
		{Name: "by", Type: schema.TypeByte, Nullable: true},
		{Name: "f", Type: schema.TypeFloat, Nullable: true},
		{Name: "d", Type: schema.TypeDouble, Nullable: true},
		{Name: "bo", Type: schema.TypeBoolean, Nullable: true},
		{Name: "bi", Type: schema.TypeBinary, Nullable: true},
		{Name: "da", Type: schema.TypeDate, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ntz", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "d5", Type: schema.DecimalType{Precision: 5, Scale: 2}, Nullable: true},
		{Name: "d15", Type: schema.DecimalType{Precision: 15, Scale: 3}, Nullable: true},
		{Name: "d30", Type: schema.DecimalType{Precision: 30, Scale: 4}, Nullable: true},
		{Name: "st", Type: inner, Nullable: true},
		{Name: "arr", Type: &schema.ArrayType{ElementType: &schema.ArrayType{ElementType: schema.TypeInteger, ContainsNull: false}, ContainsNull: true}, Nullable: true},
		{Name: "m", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: inner, ValueContainsNull: true}, Nullable: true},
		{Name: "arrst", Type: &schema.ArrayType{ElementType: inner, ContainsNull: true}, Nullable: true},
	}}
}

func dec(s string, scale int) schema.Decimal {
	d, err := schema.ParseDecimal(s, scale)
	if err != nil {
		panic(err)
	}
	return d
}

func fullRows() [][]any {
	ts := time.Date(2024, 2, 29, 13, 14, 15, 123456000, time.UTC)
	return [][]any{
		{"héllo 🌍", int64(-1), int32(7), int16(-300), int8(-5), float32(1.5), 2.25, true, []byte{0, 1, 255}, schema.Date(19782), ts, ts, dec("-123.45", 2), dec("123456789012.345", 3), dec("-12345678901234567890123456.7890", 4),
			[]any{int64(5), []any{"x", nil, ""}},
			[]any{[]any{int32(1), int32(2)}, nil, []any{}},
			[]schema.MapEntry{{Key: "k1", Value: []any{nil, []any{}}}, {Key: "k2", Value: nil}},
			[]any{nil, []any{int64(1), nil}}},
		{nil, int64(math.MaxInt64), nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil, nil},
		{"", int64(0), int32(math.MinInt32), int16(0), int8(127), float32(math.Inf(-1)), math.NaN(), false, []byte{}, schema.Date(-1), time.Unix(-1, 999000).UTC(), time.Date(1900, 1, 1, 0, 0, 0, 1000, time.UTC), dec("999.99", 2), dec("0.001", 3), dec("0", 4),
			[]any{nil, nil},
			[]any{},
			[]schema.MapEntry{},
			[]any{}},
	}
}

func TestRoundTripAllTypes(t *testing.T) {
	sch := fullSchema()
	rows := fullRows()
	for _, comp := range []string{"snappy", "zstd", "gzip", "lz4", "none"} {
		t.Run(comp, func(t *testing.T) {
			st := newMemStore()
			files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{Compression: comp})
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != 1 || files[0].NumRecords != 3 {
				t.Fatalf("files %+v", files)
			}
			wf := files[0]
			if !strings.HasPrefix(wf.Path, "part-00000-") || !strings.HasSuffix(wf.Path, ".parquet") {
				t.Errorf("path %q", wf.Path)
			}
			f, err := OpenFile(context.Background(), st, wf.Path, wf.Size)
			if err != nil {
				t.Fatal(err)
			}
			if !schema.TypesEqual(f.Schema(), sch) {
				t.Errorf("file schema\n%s\nwant\n%s", f.Schema(), sch)
			}
			got, err := f.ReadAll(context.Background(), sch, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(rows) {
				t.Fatalf("%d rows", len(got))
			}
			for i := range rows {
				for j := range rows[i] {
					w := rows[i][j]
					if fl, ok := w.(float64); ok && math.IsNaN(fl) {
						if g, ok := got[i][j].(float64); !ok || !math.IsNaN(g) {
							t.Errorf("row %d %s: got %v want NaN", i, sch.Fields[j].Name, got[i][j])
						}
						continue
					}
					if !valuesEqual(got[i][j], w) {
						t.Errorf("row %d %s: got %#v want %#v", i, sch.Fields[j].Name, got[i][j], w)
					}
				}
			}
		})
	}
}

func TestStatsDetails(t *testing.T) {
	sch := fullSchema()
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: fullRows()}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var stats struct {
		NumRecords int64
		MinValues  map[string]any
		MaxValues  map[string]any
		NullCount  map[string]any
	}
	dec := json.NewDecoder(strings.NewReader(files[0].Stats))
	dec.UseNumber()
	if err := dec.Decode(&stats); err != nil {
		t.Fatal(err)
	}
	check := func(what string, got, want any) {
		t.Helper()
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v (stats %s)", what, got, want, files[0].Stats)
		}
	}
	check("numRecords", stats.NumRecords, 3)
	check("min s", stats.MinValues["s"], "")
	check("max s", stats.MaxValues["s"], "héllo 🌍")
	check("min l", stats.MinValues["l"], "-1")
	check("max l", stats.MaxValues["l"], "9223372036854775807")
	check("max d (NaN wins)", stats.MaxValues["d"], "NaN")
	check("min d", stats.MinValues["d"], "2.25")
	check("min f", stats.MinValues["f"], "-Infinity")
	check("min ts", stats.MinValues["ts"], "1969-12-31T23:59:59.000Z")  // -0.999s truncated down
	check("max ts", stats.MaxValues["ts"], "2024-02-29T13:14:15.124Z")  // .123456 rounded up
	check("min ntz", stats.MinValues["ntz"], "1900-01-01T00:00:00.000") // no Z
	check("max ntz", stats.MaxValues["ntz"], "2024-02-29T13:14:15.124")
	check("min da", stats.MinValues["da"], "1969-12-31")
	check("min d5", stats.MinValues["d5"], "-123.45")
	check("max d30", stats.MaxValues["d30"], "0.0000")
	check("min d30", stats.MinValues["d30"], "-12345678901234567890123456.7890")
	check("max d15", stats.MaxValues["d15"], "123456789012.345")
	check("min st", stats.MinValues["st"], "map[a:5]")
	check("nulls st", stats.NullCount["st"], "map[a:2 b:2]")
	check("nulls arr", stats.NullCount["arr"], "1")
	check("nulls m", stats.NullCount["m"], "1")
	check("nulls s", stats.NullCount["s"], "1")
	for _, k := range []string{"bo", "bi", "arr", "m"} {
		if _, ok := stats.MinValues[k]; ok {
			t.Errorf("min of %s written", k)
		}
	}
}

func TestStringStatsTruncation(t *testing.T) {
	long := strings.Repeat("a", 40)
	cases := []struct {
		name, in, min, max string
	}{
		{"short", "abc", "abc", "abc"},
		{"exactly 32", strings.Repeat("b", 32), strings.Repeat("b", 32), strings.Repeat("b", 32)},
		{"ascii long", long, strings.Repeat("a", 32), strings.Repeat("a", 32) + "\u007f"},
		{"non-ascii after prefix", strings.Repeat("a", 32) + "é", strings.Repeat("a", 32), strings.Repeat("a", 32) + "\U0010FFFF"},
		{"surrogate at the cut", strings.Repeat("a", 31) + "😀xyz", strings.Repeat("a", 31) + "😀", strings.Repeat("a", 31) + "😀\u007f"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := truncateMinString(c.in, 32); got != c.min {
				t.Errorf("min %q want %q", got, c.min)
			}
			got, ok := truncateMaxString(c.in, 32)
			if !ok || got != c.max {
				t.Errorf("max %q want %q", got, c.max)
			}
			if got < c.in && len(c.in) > 0 {
				t.Errorf("max %q sorts before the value %q", got, c.in)
			}
		})
	}
}

func TestRowErrors(t *testing.T) {
	sch := fullSchema()
	good := fullRows()[0]
	mod := func(col int, v any) []any {
		r := append([]any(nil), good...)
		r[col] = v
		return r
	}
	cases := []struct {
		name  string
		row   []any
		field string
	}{
		{"wrong go type", mod(2, int64(7)), "i"},
		{"null in non-nullable", mod(1, nil), "l"},
		{"decimal overflow", mod(12, dec("1000.00", 2)), "d5"},
		{"decimal too many digits", mod(12, dec("1.234", 3)), "d5"},
		{"nested wrong type", mod(15, []any{"x", nil}), "st.a"},
		{"struct arity", mod(15, []any{int64(1)}), "st"},
		{"null in non-null array element", mod(16, []any{[]any{int32(1), nil}}), "arr.[0].[1]"},
		{"null map key", mod(17, []schema.MapEntry{{Key: nil, Value: nil}}), "m.[0]"},
		{"map value type", mod(17, []schema.MapEntry{{Key: "k", Value: "v"}}), "m.[0].value"},
		{"short record", good[:3], ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			st := newMemStore()
			rows := [][]any{good, good, c.row}
			_, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{})
			var re *schema.RowError
			if !errors.As(err, &re) || !errors.Is(err, schema.ErrRowMismatch) {
				t.Fatalf("err = %v, want *RowError", err)
			}
			if re.Row != 2 || re.Field != c.field {
				t.Errorf("RowError{Row:%d Field:%q}, want row 2 field %q (%v)", re.Row, re.Field, c.field, err)
			}
			if ks := st.keys(); len(ks) != 0 || st.openWriters() != 0 {
				t.Errorf("store has %v and %d open writers after a validation error", ks, st.openWriters())
			}
		})
	}
}

func TestRollingFiles(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "payload", Type: schema.TypeString, Nullable: true},
	}}
	const n = 20000
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), fmt.Sprintf("payload-%d-%s", i, strings.Repeat("x", i%50))}
	}
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows},
		WriteOptions{TargetFileSizeBytes: 64 << 10, RowGroupSizeBytes: 16 << 10, Compression: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) < 5 {
		t.Fatalf("only %d files at a 64 KiB target", len(files))
	}
	var total int64
	seen := map[int64]bool{}
	for i, wf := range files {
		total += wf.NumRecords
		if !strings.HasPrefix(wf.Path, fmt.Sprintf("part-%05d-", i)) {
			t.Errorf("file %d path %q", i, wf.Path)
		}
		f, err := OpenFile(context.Background(), st, wf.Path, wf.Size)
		if err != nil {
			t.Fatal(err)
		}
		if f.NumRowGroups() < 2 && i < len(files)-1 {
			t.Errorf("file %d has %d row groups at a 16 KiB row group size", i, f.NumRowGroups())
		}
		got, err := f.ReadAll(context.Background(), sch, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(got)) != wf.NumRecords {
			t.Errorf("file %d: %d rows, NumRecords %d", i, len(got), wf.NumRecords)
		}
		for _, r := range got {
			seen[r[0].(int64)] = true
		}
	}
	if total != n || len(seen) != n {
		t.Fatalf("total %d distinct %d, want %d", total, len(seen), n)
	}
}

func TestPartitionedWrite(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "n", Type: schema.TypeLong, Nullable: false},
		{Name: "day", Type: schema.TypeDate, Nullable: true},
	}}
	rows := [][]any{
		{"SFO", int64(1), schema.Date(0)},
		{"a/b c%", int64(2), schema.Date(0)},
		{nil, int64(3), nil},
		{"SFO", int64(4), schema.Date(0)},
		{"", int64(5), schema.Date(1)},
	}
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{PartitionColumns: []string{"origin", "day"}})
	if err != nil {
		t.Fatal(err)
	}
	dirs := map[string]int64{}
	for _, wf := range files {
		dir := wf.Path[:strings.LastIndex(wf.Path, "/")]
		dirs[dir] += wf.NumRecords
		kvs, err := ParsePartitionPath(dir)
		if err != nil {
			t.Fatal(err)
		}
		for _, kv := range kvs {
			got, want := wf.PartitionValues[kv.Column], kv.Value
			if (got == nil) != (want == nil) || (got != nil && *got != *want) {
				t.Errorf("%s: PartitionValues[%s] = %v, path says %v", wf.Path, kv.Column, got, want)
			}
		}
		f, err := OpenFile(context.Background(), st, wf.Path, wf.Size)
		if err != nil {
			t.Fatal(err)
		}
		if len(f.Schema().Fields) != 1 || f.Schema().Fields[0].Name != "n" {
			t.Errorf("data file schema %s stores partition columns", f.Schema())
		}
		var stats map[string]any
		_ = json.Unmarshal([]byte(wf.Stats), &stats)
		if _, ok := stats["minValues"].(map[string]any)["origin"]; ok {
			t.Errorf("stats include a partition column: %s", wf.Stats)
		}
	}
	want := map[string]int64{
		"origin=SFO/day=1970-01-01":                                        2,
		"origin=a%2Fb c%25/day=1970-01-01":                                 1,
		"origin=__HIVE_DEFAULT_PARTITION__/day=__HIVE_DEFAULT_PARTITION__": 1,
		"origin=__HIVE_DEFAULT_PARTITION__/day=1970-01-02":                 1,
	}
	if !reflect.DeepEqual(dirs, want) {
		t.Fatalf("dirs %v\nwant %v", dirs, want)
	}
}

func TestWriteRefusesBadSchemas(t *testing.T) {
	cases := []struct {
		name   string
		schema *schema.StructType
		opts   WriteOptions
	}{
		{"variant", &schema.StructType{Fields: []schema.StructField{{Name: "v", Type: schema.TypeVariant, Nullable: true}}}, WriteOptions{}},
		{"unknown partition column", &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeLong}}}, WriteOptions{PartitionColumns: []string{"b"}}},
		{"all columns partition", &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeLong}}}, WriteOptions{PartitionColumns: []string{"a"}}},
		{"struct partition", &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeLong}, {Name: "s", Type: &schema.StructType{}}}}, WriteOptions{PartitionColumns: []string{"s"}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := WriteFiles(context.Background(), newMemStore(), &schema.Batch{Schema: c.schema, Rows: [][]any{{int64(1)}}}, c.opts)
			if !errors.Is(err, schema.ErrSchema) {
				t.Fatalf("err = %v, want ErrSchema", err)
			}
		})
	}
	if _, err := WriteFiles(context.Background(), newMemStore(), &schema.Batch{Schema: fullSchema()}, WriteOptions{Compression: "brotli9", TargetFileSizeBytes: -1}); !errors.Is(err, ErrOptions) || !strings.Contains(err.Error(), "TargetFileSizeBytes") || !strings.Contains(err.Error(), "brotli9") {
		t.Fatalf("options err = %v", err)
	}
}

func TestDecimalTwosComplement(t *testing.T) {
	for _, s := range []string{"0", "1", "-1", "127", "-128", "128", "-129", "99999999999999999999999999999999999999", "-99999999999999999999999999999999999999"} {
		x, _ := new(big.Int).SetString(s, 10)
		b := twosComplement(x, 16)
		if got := fromTwosComplement(b); got.Cmp(x) != 0 {
			t.Errorf("%s -> %x -> %s", s, b, got)
		}
	}
}

// TestWritePhysicalNames writes a column-mapped table's rows as Delta does:
// Parquet columns, stats keys and partition values use physical names, and
// the Parquet field ids are the column-mapping ids.
func TestWritePhysicalNames(t *testing.T) {
	sch, add := logInfo(t, "testdata/deltars/column_mapping.json")
	f := openFixture(t, "testdata/deltars/column_mapping.parquet")
	data := &schema.StructType{Fields: []schema.StructField{sch.Fields[1]}}
	rows, err := f.ReadAll(context.Background(), data, ReadOptions{ByPhysicalName: true})
	if err != nil {
		t.Fatal(err)
	}
	full := make([][]any, len(rows))
	for i, r := range rows {
		full[i] = []any{"BMS", r[0]}
	}
	st := newMemStore()
	files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: full},
		WriteOptions{PhysicalNames: true, PartitionColumns: []string{sch.Fields[0].Name}})
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	wf := files[0]
	var got, want any
	_ = json.Unmarshal([]byte(wf.Stats), &got)
	_ = json.Unmarshal([]byte(add["stats"].(string)), &want)
	if !reflect.DeepEqual(got, want) {
		t.Errorf("stats\n got %s\nwant %s", wf.Stats, add["stats"])
	}
	pk := sch.Fields[0].PhysicalName()
	if v := wf.PartitionValues[pk]; v == nil || *v != "BMS" || !strings.HasPrefix(wf.Path, pk+"=BMS/") {
		t.Errorf("partition values %v path %s", wf.PartitionValues, wf.Path)
	}
	back, err := OpenFile(context.Background(), st, wf.Path, wf.Size)
	if err != nil {
		t.Fatal(err)
	}
	fld := back.Schema().Fields[0]
	if id, _ := fld.ColumnMappingID(); fld.Name != data.Fields[0].PhysicalName() || id != 2 {
		t.Errorf("written column %s id %d", fld.Name, id)
	}
	again, err := back.ReadAll(context.Background(), data, ReadOptions{ByFieldID: true})
	if err != nil || !valuesEqual(again, rows) {
		t.Errorf("read back by field id: %v %v", again, err)
	}
}

func TestRowGroupRowsAndFileWriter(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong, Nullable: false}}}
	rows := make([][]any, 5000)
	for i := range rows {
		rows[i] = []any{int64(i)}
	}
	ctx := context.Background()
	st := newMemStore()
	fw, err := NewFileWriter(ctx, st, "dir/one.parquet", sch, WriteOptions{RowGroupRows: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := fw.Write(ctx, rows[:2500]); err != nil {
		t.Fatal(err)
	}
	// A bad record fails the call and writes none of its rows.
	bad := [][]any{{int64(1)}, {"x"}}
	var re *schema.RowError
	if err := fw.Write(ctx, bad); !errors.As(err, &re) || re.Row != 1 || re.Field != "id" {
		t.Fatalf("err = %v", err)
	}
	if err := fw.Write(ctx, rows[2500:]); err != nil {
		t.Fatal(err)
	}
	if len(st.keys()) != 0 {
		t.Fatalf("file visible before Close: %v", st.keys())
	}
	wf, err := fw.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if wf.NumRecords != 5000 || wf.Path != "dir/one.parquet" {
		t.Fatalf("%+v", wf)
	}
	f, err := OpenFile(ctx, st, wf.Path, wf.Size)
	if err != nil {
		t.Fatal(err)
	}
	if f.NumRowGroups() != 5 {
		t.Errorf("%d row groups, want 5 of 1000 rows", f.NumRowGroups())
	}
	got, err := f.ReadAll(ctx, sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i, r := range got {
		if r[0] != int64(i) {
			t.Fatalf("row %d = %v", i, r)
		}
	}
	// Abort leaves nothing behind.
	fw2, err := NewFileWriter(ctx, st, "dir/two.parquet", sch, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	_ = fw2.Write(ctx, rows)
	if err := fw2.Abort(); err != nil {
		t.Fatal(err)
	}
	if ks := st.keys(); len(ks) != 1 {
		t.Fatalf("keys after abort: %v", ks)
	}
}

func TestFileNames(t *testing.T) {
	delta := regexp.MustCompile(`^part-00007-[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.c000\.snappy\.parquet$`)
	if n := DeltaFileName(7, ".snappy"); !delta.MatchString(n) {
		t.Errorf("DeltaFileName = %q", n)
	}
	if n := SparkFileName("1b2c")(3, ".zstd"); n != "part-00003-1b2c-c000.zstd.parquet" {
		t.Errorf("SparkFileName = %q", n)
	}
	st := newMemStore()
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeLong}}}
	files, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: [][]any{{int64(1)}}},
		WriteOptions{Compression: "none", FileName: SparkFileName("job")})
	if err != nil || len(files) != 1 || files[0].Path != "part-00000-job-c000.parquet" {
		t.Fatalf("%v %v", files, err)
	}
}

// failingStore fails NewWriter after `after` successful calls. WriteFiles
// writes partitions in parallel, so the count is atomic.
type failingStore struct {
	*memStore
	after int
	calls atomic.Int64
}

var errInjected = errors.New("injected storage failure")

func (f *failingStore) NewWriter(ctx context.Context, path string) (storage.Writer, error) {
	if f.calls.Add(1) > int64(f.after) {
		return nil, fmt.Errorf("create %s: %w", path, errInjected)
	}
	return f.memStore.NewWriter(ctx, path)
}

func TestWriteFilesFailureLeavesNothing(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "k", Type: schema.TypeString, Nullable: true}, {Name: "v", Type: schema.TypeLong}}}
	var rows [][]any
	for i := range 30 {
		rows = append(rows, []any{fmt.Sprint(i % 3), int64(i)})
	}
	st := &failingStore{memStore: newMemStore(), after: 2}
	_, err := WriteFiles(context.Background(), st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{PartitionColumns: []string{"k"}})
	if !errors.Is(err, errInjected) {
		t.Fatalf("err = %v", err)
	}
	if ks := st.keys(); len(ks) != 0 {
		t.Fatalf("files left after a failed write: %v", ks)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	st2 := newMemStore()
	if _, err := WriteFiles(ctx, st2, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{}); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled: err = %v", err)
	}
	if ks := st2.keys(); len(ks) != 0 || st2.openWriters() != 0 {
		t.Fatalf("cancelled write left %v, %d open writers", ks, st2.openWriters())
	}
}

// TestDefaultRowGroupsAreBounded: with the default options a file of more
// than 1,048,576 rows (arrow-rs's and delta-rs's row cap) is cut into row
// groups of at most that many rows, so readers can split it; the 3M
// flights of an ingest were one row group before. -1 lifts the cap.
func TestDefaultRowGroupsAreBounded(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong}}}
	const n = defaultRowGroupRows + 5000
	chunk := make([][]any, 1<<16)
	for i := range chunk {
		chunk[i] = []any{int64(i % 1000)}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		rowCap int64
		want   []int64
	}{{0, []int64{defaultRowGroupRows, 5000}}, {-1, []int64{n}}} {
		st := newMemStore()
		bw, err := NewBatchWriter(st, sch, WriteOptions{RowGroupRows: tc.rowCap})
		if err != nil {
			t.Fatal(err)
		}
		for left := n; left > 0; left -= len(chunk) {
			if err := bw.Write(ctx, chunk[:min(left, len(chunk))]); err != nil {
				t.Fatal(err)
			}
		}
		files, err := bw.Close(ctx)
		if err != nil || len(files) != 1 {
			t.Fatalf("files %v, %v", files, err)
		}
		f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
		if err != nil {
			t.Fatal(err)
		}
		var got []int64
		for _, rg := range f.pf.RowGroups() {
			got = append(got, rg.NumRows())
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("RowGroupRows %d: row groups of %v rows, want %v", tc.rowCap, got, tc.want)
		}
	}
}

// TestStringStatsInvalidUTF8 is the regression test of a string column
// whose least or greatest value is not valid UTF-8: JSON has no form for it
// (each bad byte became U+FFFD, so maxValues "\ufffd" sorted below the row
// "\xff" and a reader's data skipping could drop the file for
// s >= "\xf5"). Such a column gets nullCount only; a valid one beside it
// keeps its bounds.
func TestStringStatsInvalidUTF8(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "bad", Type: schema.TypeString, Nullable: true},
		{Name: "ok", Type: schema.TypeString, Nullable: true},
	}}
	for _, c := range []struct{ name, lo, hi string }{
		{"max", "a", "\xff"},
		{"min", "a\x80", "b"},
	} {
		t.Run(c.name, func(t *testing.T) {
			rows := [][]any{{c.lo, "x"}, {c.hi, "y"}, {nil, "z"}}
			files, err := WriteFiles(context.Background(), newMemStore(), &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var stats struct {
				MinValues, MaxValues map[string]any
				NullCount            map[string]int64
			}
			if err := json.Unmarshal([]byte(files[0].Stats), &stats); err != nil {
				t.Fatal(err)
			}
			if _, ok := stats.MinValues["bad"]; ok {
				t.Errorf("minValues.bad written: %s", files[0].Stats)
			}
			if _, ok := stats.MaxValues["bad"]; ok {
				t.Errorf("maxValues.bad written: %s", files[0].Stats)
			}
			if stats.NullCount["bad"] != 1 || stats.MinValues["ok"] != "x" || stats.MaxValues["ok"] != "z" {
				t.Errorf("stats %s, want nullCount.bad 1 and ok in [x, z]", files[0].Stats)
			}
		})
	}
}
