package reader

import (
	"errors"
	"testing"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/txlog"
)

// TestWidenedColumnStatsNotUsed: statistics of a column with a
// delta.typeChanges entry may be in its older type (a file written before
// int -> long, date -> timestamp_ntz, ...), so they never skip a file
// (PROTOCOL.md "Type Widening"); the same statistics on a column without a
// type change do.
func TestWidenedColumnStatsNotUsed(t *testing.T) {
	st, err := expr.ParseStats(`{"numRecords":2,"minValues":{"id":10},"maxValues":{"id":20},"nullCount":{"id":0}}`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name    string
		meta    map[string]any
		mayHold bool
	}{
		{"no type change", nil, false},
		{"widened", map[string]any{schema.MetaTypeChanges: []any{map[string]any{"fromType": "integer", "toType": "long"}}}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sch := &schema.StructType{Fields: []schema.StructField{{Name: "id", Type: schema.TypeLong, Nullable: true, Metadata: tc.meta}}}
			s := &Snapshot{schema: sch}
			pred, err := expr.ParseAndBind("id = 5", sch)
			if err != nil {
				t.Fatal(err)
			}
			f := File{Stats: st}
			if got := s.mayMatch(pred, &f); got != tc.mayHold {
				t.Errorf("mayMatch(id = 5) on stats [10, 20] = %v, want %v", got, tc.mayHold)
			}
		})
	}
}

// TestReadableFeatures: typeWidening and variantType (and their preview
// names) are read; a shredded variant table (variantShredding-preview) and
// catalog-managed ones are refused by name.
func TestReadableFeatures(t *testing.T) {
	for _, f := range []string{"typeWidening", "typeWidening-preview", "variantType", "variantType-preview", "deletionVectors", "columnMapping"} {
		if err := checkReadable(txlog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{f}}, txlog.Metadata{}); err != nil {
			t.Errorf("%s: %v", f, err)
		}
	}
	for _, f := range []string{"variantShredding-preview", "catalogManaged", "catalogOwned-preview"} {
		err := checkReadable(txlog.Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{f}}, txlog.Metadata{})
		var ufe *txlog.UnsupportedFeatureError
		if !errors.As(err, &ufe) || ufe.Feature != f {
			t.Errorf("%s: err = %v, want an UnsupportedFeatureError naming it", f, err)
		}
	}
}
