package interop

import (
	"context"
	"encoding/json"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/apache/arrow-go/v18/arrow"
	"github.com/apache/arrow-go/v18/parquet"
	pqschema "github.com/apache/arrow-go/v18/parquet/schema"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
)

// Reference tables written by PySpark + Delta (Delta Acceptance Testing,
// copied from the shared testdata: dat/<case>/delta, Apache-2.0).

// readSparkTable reads the Spark-written table at dir: its schema, its single
// data file as arrow-go reads it, and its rows.
func readSparkTable(t *testing.T, dir string) (*schema.StructType, *arrowFile, [][]any) {
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
	sch, err := snap.Schema()
	if err != nil {
		t.Fatal(err)
	}
	files := snap.Files()
	if len(files) != 1 {
		t.Fatalf("%s: %d files, want 1", dir, len(files))
	}
	key, err := snap.FileKey(files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	af := readArrow(t, filepath.Join(dir, filepath.FromSlash(key)))
	return sch, af, fileRows(t, sch, af, nil)
}

// sortRowsBy sorts rows by column j (an orderable non-null column).
func sortRowsBy(rows [][]any, j int) {
	slices.SortFunc(rows, func(a, b []any) int { return cmpOrdered(ordered(a[j]), ordered(b[j])) })
}

// lakesinkFile writes rows with the Delta sink in one batch and returns the
// one data file as arrow-go reads it, plus the rows read back.
func lakesinkFile(t *testing.T, sch *schema.StructType, rows [][]any) (*arrowFile, [][]any) {
	t.Helper()
	dir := t.TempDir()
	ctx := context.Background()
	s, err := sink.NewDelta(ctx, "file://"+dir, deltaOpts())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.AddBatch(ctx, 0, &schema.Batch{Schema: sch, Rows: rows}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
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
	if len(files) != 1 {
		t.Fatalf("lakesink wrote %d files, want 1", len(files))
	}
	key, err := snap.FileKey(files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	af := readArrow(t, filepath.Join(dir, filepath.FromSlash(key)))
	return af, fileRows(t, sch, af, nil)
}

// TestSparkReferenceFilesMatchLakesink rewrites the rows of Spark-written
// data files with lakesink and checks, column by column, that arrow-go sees
// the same Parquet types, the same Arrow schema, the same Spark row metadata
// and the same values in both files. The one allowed difference is Spark's
// default INT96 timestamp, which lakesink writes as INT64
// TIMESTAMP(MICROS,true) (spark.sql.parquet.outputTimestampType
// TIMESTAMP_MICROS; Spark reads both).
func TestSparkReferenceFilesMatchLakesink(t *testing.T) {
	for _, name := range []string{"all_primitive_types", "nested_types"} {
		t.Run(name, func(t *testing.T) {
			dir, err := filepath.Abs(filepath.Join("testdata", "dat", name))
			if err != nil {
				t.Fatal(err)
			}
			sch, spark, sparkRows := readSparkTable(t, dir)
			if len(sparkRows) == 0 {
				t.Fatal("the reference file has no rows")
			}
			ours, ourRows := lakesinkFile(t, sch, sparkRows)

			// Values.
			sortRowsBy(sparkRows, 0)
			sortRowsBy(ourRows, 0)
			compareRowsKey(t, sch, sparkRows, ourRows)

			// Parquet leaf types.
			sparkLeaves, ourLeaves := map[string]int{}, map[string]int{}
			for i := 0; i < spark.pq.NumColumns(); i++ {
				sparkLeaves[spark.pq.Column(i).Path()] = i
			}
			for i := 0; i < ours.pq.NumColumns(); i++ {
				ourLeaves[ours.pq.Column(i).Path()] = i
			}
			if !reflect.DeepEqual(keysOf(sparkLeaves), keysOf(ourLeaves)) {
				t.Fatalf("Parquet leaf paths: Spark %v, lakesink %v", keysOf(sparkLeaves), keysOf(ourLeaves))
			}
			for p, si := range sparkLeaves {
				sc, oc := spark.pq.Column(si), ours.pq.Column(ourLeaves[p])
				if sc.PhysicalType() == parquet.Types.Int96 {
					if oc.PhysicalType() != parquet.Types.Int64 || oc.LogicalType().String() != "Timestamp(isAdjustedToUTC=true, timeUnit=microseconds, is_from_converted_type=false, force_set_converted_type=false)" {
						t.Errorf("column %s: Spark INT96 timestamp, lakesink %s %s", p, oc.PhysicalType(), oc.LogicalType())
					}
					continue
				}
				sameLogical := sc.LogicalType().Equals(oc.LogicalType()) ||
					// An INT(64|32, signed) annotation on INT64|INT32 where
					// Spark writes none: Spark reads both as long|integer
					// (ParquetSchemaConverter), as does every reader.
					sc.LogicalType().IsNone() && oc.LogicalType().Equals(pqschema.NewIntLogicalType(int8(bitWidth(sc.PhysicalType())), true))
				if sc.PhysicalType() != oc.PhysicalType() || !sameLogical ||
					(sc.PhysicalType() == parquet.Types.FixedLenByteArray && sc.TypeLength() != oc.TypeLength()) ||
					sc.MaxDefinitionLevel() != oc.MaxDefinitionLevel() || sc.MaxRepetitionLevel() != oc.MaxRepetitionLevel() {
					t.Errorf("column %s: Spark %s %s (def %d rep %d), lakesink %s %s (def %d rep %d)", p,
						sc.PhysicalType(), sc.LogicalType(), sc.MaxDefinitionLevel(), sc.MaxRepetitionLevel(),
						oc.PhysicalType(), oc.LogicalType(), oc.MaxDefinitionLevel(), oc.MaxRepetitionLevel())
				}
			}

			// Arrow schema (field metadata aside: arrow-go reports field ids).
			if spark.schema.NumFields() != ours.schema.NumFields() {
				t.Fatalf("arrow schema: Spark %s, lakesink %s", spark.schema, ours.schema)
			}
			for i := range spark.schema.NumFields() {
				sf, of := spark.schema.Field(i), ours.schema.Field(i)
				st := sf.Type
				if ts, ok := st.(*arrow.TimestampType); ok && ts.Unit == arrow.Nanosecond { // INT96
					st = &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: ts.TimeZone}
				}
				if sf.Name != of.Name || sf.Nullable != of.Nullable || !arrow.TypeEqual(st, of.Type) {
					t.Errorf("arrow field %d: Spark %s, lakesink %s", i, sf, of)
				}
			}

			// Spark row metadata: same Spark schema JSON.
			var sj, oj any
			if err := json.Unmarshal([]byte(spark.kv[sparkRowMetadataKey]), &sj); err != nil {
				t.Fatal(err)
			}
			if err := json.Unmarshal([]byte(ours.kv[sparkRowMetadataKey]), &oj); err != nil {
				t.Fatalf("lakesink %s: %v", sparkRowMetadataKey, err)
			}
			if !reflect.DeepEqual(sj, oj) {
				t.Errorf("%s:\nSpark    %s\nlakesink %s", sparkRowMetadataKey, spark.kv[sparkRowMetadataKey], ours.kv[sparkRowMetadataKey])
			}
		})
	}
}

func keysOf(m map[string]int) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// compareRowsKey is compareRows for rows whose first column is the key.
func compareRowsKey(t *testing.T, sch *schema.StructType, want, got [][]any) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("lakesink file has %d rows, Spark's %d", len(got), len(want))
	}
	for i := range want {
		for j, f := range sch.Fields {
			if !sameValue(want[i][j], got[i][j]) {
				t.Errorf("key %s column %s: lakesink %s, Spark %s", show(want[i][0]), f.Name, show(got[i][j]), show(want[i][j]))
			}
		}
	}
}

func bitWidth(t parquet.Type) int {
	switch t {
	case parquet.Types.Int32:
		return 32
	case parquet.Types.Int64:
		return 64
	}
	return 0 // no INT annotation matches
}
