package parquetio

import (
	"errors"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
)

// TestLevelsMirror: the layout mirror matches this parquet-go version, so the
// fast path is in use (a failure after a parquet-go upgrade means updating
// valueLayout; writing stays correct meanwhile, only slower).
func TestLevelsMirror(t *testing.T) {
	if !levelsMirrorOK() {
		t.Fatal("valueLayout no longer mirrors parquet.Value: update levels.go for this parquet-go version")
	}
}

// TestSetLevelsPaths: both paths give Level's result, nulls keep level 0.
func TestSetLevelsPaths(t *testing.T) {
	in := []parquet.Value{parquet.Int64Value(7), {}, parquet.ByteArrayValue([]byte("x")), parquet.ByteArrayValue(nil), {}}
	for _, fast := range []bool{false, true} {
		vals := append([]parquet.Value(nil), in...)
		setLevels(vals, 1, 4, fast)
		for i, v := range vals {
			wantDef := 1
			if in[i].IsNull() {
				wantDef = 0
			}
			if v.DefinitionLevel() != wantDef || v.RepetitionLevel() != 0 || v.Column() != 4 || v.IsNull() != in[i].IsNull() || !parquet.Equal(v, in[i]) && !v.IsNull() {
				t.Errorf("fast=%v value %d: def %d rep %d col %d null %v, want def %d col 4", fast, i, v.DefinitionLevel(), v.RepetitionLevel(), v.Column(), v.IsNull(), wantDef)
			}
		}
	}
}

// TestPlanRefusesLevelsParquetCannotHold: levels are bytes in parquet.Value;
// a schema nested past 255 definition levels is a clear ErrSchema, never a
// silently wrapped level (or a parquet-go panic).
func TestPlanRefusesLevelsParquetCannotHold(t *testing.T) {
	var typ schema.DataType = schema.TypeLong
	for range 300 {
		typ = &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: typ, Nullable: true}}}
	}
	_, err := compilePlan(&schema.StructType{Fields: []schema.StructField{{Name: "deep", Type: typ, Nullable: true}}}, 32, false)
	if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "definition level") {
		t.Fatalf("err = %v, want ErrSchema naming the definition level", err)
	}
	var ok schema.DataType = schema.TypeLong
	for range 200 {
		ok = &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: ok, Nullable: true}}}
	}
	if _, err := compilePlan(&schema.StructType{Fields: []schema.StructField{{Name: "deep", Type: ok, Nullable: true}}}, 32, false); err != nil {
		t.Fatalf("200 levels: %v", err)
	}
}

// TestSchemaLimitsMatchParquetGo pins package schema's Parquet limits (which
// schema states without importing parquet-go) to parquet-go's own.
func TestSchemaLimitsMatchParquetGo(t *testing.T) {
	if schema.MaxColumnDepth != parquet.MaxColumnDepth {
		t.Errorf("schema.MaxColumnDepth = %d, parquet-go's MaxColumnDepth = %d", schema.MaxColumnDepth, parquet.MaxColumnDepth)
	}
	if schema.MaxLeafColumns != parquet.MaxColumnIndex+1 {
		t.Errorf("schema.MaxLeafColumns = %d, parquet-go's MaxColumnIndex+1 = %d", schema.MaxLeafColumns, parquet.MaxColumnIndex+1)
	}
}

// TestLevelsMirrorPinsParquetValueLayout: valueLayout names the fields of
// parquet.Value (v0.32.0: ptr, u64, kind, definitionLevel, repetitionLevel,
// columnIndex) with their kinds, offsets and sizes; a parquet-go release that
// renames, reorders, resizes or adds a field fails here, by name.
func TestLevelsMirrorPinsParquetValueLayout(t *testing.T) {
	if d := layoutMismatch(); d != "" {
		t.Fatalf("%s: update valueLayout and valueFields in levels.go for this parquet-go version", d)
	}
}
