package parquetio

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"github.com/lakesink/lakesink/schema"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
)

// loadFixture puts a testdata file into a fresh memStore under name.
func loadFixture(t *testing.T, file, name string) *memStore {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	if err := st.Put(context.Background(), name, b); err != nil {
		t.Fatal(err)
	}
	return st
}

// logInfo returns the schema and first add action of a copied _delta_log commit.
func logInfo(t *testing.T, file string) (*schema.StructType, map[string]any) {
	t.Helper()
	f, err := os.Open(file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var sch *schema.StructType
	var add map[string]any
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var a map[string]any
		if err := json.Unmarshal(sc.Bytes(), &a); err != nil {
			continue
		}
		if md, ok := a["metaData"].(map[string]any); ok {
			s, err := schema.ParseSchema([]byte(md["schemaString"].(string)))
			if err != nil {
				t.Fatal(err)
			}
			sch = s
		}
		if ad, ok := a["add"].(map[string]any); ok && add == nil {
			add = ad
		}
	}
	return sch, add
}

func openFixture(t *testing.T, file string) *File {
	t.Helper()
	st := loadFixture(t, file, "f.parquet")
	f, err := OpenFile(context.Background(), st, "f.parquet", -1)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

func TestReadAllPrimitiveTypes(t *testing.T) {
	sch, _ := logInfo(t, "testdata/dat/all_primitive_types.json")
	f := openFixture(t, "testdata/dat/all_primitive_types.parquet")
	if !schema.TypesEqual(f.Schema(), sch) {
		t.Errorf("file schema %s\nlog schema %s", f.Schema(), sch)
	}
	rows, err := f.ReadAll(context.Background(), sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	// Row i of the dat case holds the value i in every column (see its stats:
	// min 0, max 4), the decimal 10+i with scale 3, the date 1970-01-01+i
	// days, and the timestamp 1970-01-01 00:00 + i hours.
	for i, r := range rows {
		want := []any{
			string(rune('0' + i)), int64(i), int32(i), int16(i), int8(i), float32(i), float64(i),
			i%2 == 0, []byte(string(rune('0' + i))), schema.Decimal{Unscaled: big.NewInt(int64(10000 + 1000*i)), Scale: 3}, schema.Date(i), time.Unix(int64(3600*i), 0).UTC(),
		}
		for j := range want {
			if j == 7 || j == 8 {
				continue // bool and binary patterns are not in the stats; checked by type below
			}
			if !valuesEqual(r[j], want[j]) {
				t.Errorf("row %d col %s: got %#v want %#v", i, sch.Fields[j].Name, r[j], want[j])
			}
		}
		if _, ok := r[7].(bool); !ok {
			t.Errorf("row %d bool: %T", i, r[7])
		}
		if _, ok := r[8].([]byte); !ok {
			t.Errorf("row %d binary: %T", i, r[8])
		}
	}
}

func TestReadNestedTypes(t *testing.T) {
	sch, _ := logInfo(t, "testdata/dat/nested_types.json")
	f := openFixture(t, "testdata/dat/nested_types.parquet")
	if !schema.TypesEqual(f.Schema(), sch) {
		t.Errorf("file schema %s\nlog schema %s", f.Schema(), sch)
	}
	rows, err := f.ReadAll(context.Background(), sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 5 {
		t.Fatalf("%d rows", len(rows))
	}
	for _, r := range rows {
		pk := r[0].(int32)
		st := r[1].([]any)
		if st[0].(float64) != float64(pk) {
			t.Errorf("pk %d: struct.float64 = %v", pk, st[0])
		}
		arr := r[2].([]any)
		if len(arr) != int(pk)+1 {
			t.Errorf("pk %d: array %v", pk, arr)
		}
		for k, e := range arr {
			if e.(int16) != int16(k) {
				t.Errorf("pk %d: array %v", pk, arr)
			}
		}
		m := r[3].([]schema.MapEntry)
		if len(m) != int(pk) {
			t.Errorf("pk %d: map %v", pk, m)
		}
		for k, e := range m {
			if e.Key != string(rune('0'+k)) || e.Value != int32(k) {
				t.Errorf("pk %d: map %v", pk, m)
			}
		}
	}
	// Projection: only the map, and a missing column reading as null.
	want := &schema.StructType{Fields: []schema.StructField{
		{Name: "map", Type: sch.Fields[3].Type, Nullable: true},
		{Name: "absent", Type: schema.TypeLong, Nullable: true},
	}}
	rows2, err := f.ReadAll(context.Background(), want, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for i := range rows {
		if !reflect.DeepEqual(rows2[i][0], rows[i][3]) || rows2[i][1] != nil {
			t.Errorf("projected row %d = %v", i, rows2[i])
		}
	}
}

func TestReadCheckpointParquet(t *testing.T) {
	// A Spark-written checkpoint: structs of maps, arrays, nested structs.
	f := openFixture(t, "testdata/dat/with_checkpoint.checkpoint.parquet")
	rows, err := f.ReadAll(context.Background(), nil, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if int64(len(rows)) != f.NumRows() || len(rows) == 0 {
		t.Fatalf("%d rows, file says %d", len(rows), f.NumRows())
	}
	addIdx := f.Schema().FieldIndex("add")
	metaIdx := f.Schema().FieldIndex("metaData")
	adds, metas := 0, 0
	for _, r := range rows {
		if a, ok := r[addIdx].([]any); ok {
			adds++
			path := a[0].(string)
			if len(path) < 10 {
				t.Errorf("add path %q", path)
			}
			if _, ok := a[1].([]schema.MapEntry); !ok {
				t.Errorf("add.partitionValues = %T", a[1])
			}
		}
		if m, ok := r[metaIdx].([]any); ok {
			metas++
			mt := f.Schema().Fields[metaIdx].Type.(*schema.StructType)
			si := mt.FieldIndex("schemaString")
			if _, err := schema.ParseSchema([]byte(m[si].(string))); err != nil {
				t.Errorf("schemaString in checkpoint: %v", err)
			}
		}
	}
	if adds == 0 || metas != 1 {
		t.Fatalf("adds %d metas %d", adds, metas)
	}
}

func TestReadEdgeTimestamps(t *testing.T) {
	sch, _ := logInfo(t, "testdata/deltars/edge_timestamps.json")
	f := openFixture(t, "testdata/deltars/edge_timestamps.parquet")
	rows, err := f.ReadAll(context.Background(), sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	// stats: BIG_DATE 9999-12-31T00:00:00.000Z, NORMAL_DATE 2022-01-01, SOME_VALUE 1
	want := []any{time.Date(9999, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2022, 1, 1, 0, 0, 0, 0, time.UTC), int32(1)}
	if len(rows) != 1 || !valuesEqual(rows[0], want) {
		t.Fatalf("rows = %v, want %v", rows, want)
	}
}

func TestReadColumnMappingByPhysicalName(t *testing.T) {
	sch, add := logInfo(t, "testdata/deltars/column_mapping.json")
	f := openFixture(t, "testdata/deltars/column_mapping.parquet")
	data := &schema.StructType{Fields: []schema.StructField{sch.Fields[1]}} // "Super Name"; the other is the partition column
	byLogical, err := f.ReadAll(context.Background(), data, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if byLogical[0][0] != nil {
		t.Fatalf("logical name matched a physical column: %v", byLogical[0])
	}
	for _, opts := range []ReadOptions{{ByPhysicalName: true}, {ByFieldID: true}} {
		rows, err := f.ReadAll(context.Background(), data, opts)
		if err != nil {
			t.Fatal(err)
		}
		var stats struct {
			NumRecords int
			MinValues  map[string]string
		}
		if err := json.Unmarshal([]byte(add["stats"].(string)), &stats); err != nil {
			t.Fatal(err)
		}
		if len(rows) != stats.NumRecords {
			t.Fatalf("%+v: %d rows, want %d", opts, len(rows), stats.NumRecords)
		}
		minName := stats.MinValues[data.Fields[0].PhysicalName()]
		found := false
		for _, r := range rows {
			if r[0] == minName {
				found = true
			}
		}
		if !found {
			t.Errorf("%+v: min value %q not among rows %v", opts, minName, rows)
		}
	}
}

// valuesEqual compares Batch values (Decimal by value, times by instant).
func valuesEqual(a, b any) bool {
	switch x := a.(type) {
	case schema.Decimal:
		y, ok := b.(schema.Decimal)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case time.Time:
		y, ok := b.(time.Time)
		return ok && x.Equal(y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	case []schema.MapEntry:
		y, ok := b.([]schema.MapEntry)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !valuesEqual(x[i].Key, y[i].Key) || !valuesEqual(x[i].Value, y[i].Value) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

func readFixtureBytes(p string) ([]byte, error) { return os.ReadFile(p) }

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// TestReadSharedCorpus reads every data and checkpoint Parquet file of the
// shared Spark/Delta/delta-rs tables with the file's own schema. The corpus
// lives outside the repository (package corpus finds it); the test skips
// without it, or fails under LAKESINK_REQUIRE_CORPUS=1.
func TestReadSharedCorpus(t *testing.T) {
	if testing.Short() {
		t.Skip("reads ~400 files; skipped with -short")
	}
	root := corpus.Dir(t, corpus.Testdata, "")
	var files []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".parquet") && !strings.Contains(p, "/expected/") {
			files = append(files, p)
		}
		return nil
	})
	if len(files) < 50 {
		t.Fatalf("only %d parquet files under %s", len(files), root)
	}
	read := 0
	for _, p := range files {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		st := newMemStore()
		_ = st.Put(context.Background(), "f.parquet", b)
		f, err := OpenFile(context.Background(), st, "f.parquet", int64(len(b)))
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		rows, err := f.ReadAll(context.Background(), nil, ReadOptions{})
		if err != nil {
			t.Errorf("%s: %v", p, err)
			continue
		}
		if int64(len(rows)) != f.NumRows() {
			t.Errorf("%s: %d rows, footer says %d", p, len(rows), f.NumRows())
		}
		read++
	}
	t.Logf("read %d Parquet files", read)
}
