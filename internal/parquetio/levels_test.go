package parquetio

import (
	"testing"

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
