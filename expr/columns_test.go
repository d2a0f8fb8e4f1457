package expr

import (
	"testing"

	"github.com/lakesink/lakesink/schema"
)

func TestReadsColumnsOutside(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeLong}}}},
	}}
	for _, tc := range []struct {
		predicate string
		sch       *schema.StructType
		want      bool
	}{
		{"op = 'd'", sch, true},
		{"id = 1 AND op = 'd'", sch, true},
		{"id = 1", sch, false},
		{"s.x = 1", sch, false},
		{"", sch, false},
		{"op = 'd'", nil, false},
		{"op = = 'd'", sch, false}, // does not parse: binding reports it later
	} {
		if got := ReadsColumnsOutside(tc.predicate, tc.sch); got != tc.want {
			t.Errorf("ReadsColumnsOutside(%q, schema nil=%v) = %v, want %v", tc.predicate, tc.sch == nil, got, tc.want)
		}
	}
}
