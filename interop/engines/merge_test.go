package engines

// Issue 16: Spark reads tables that lakesink MERGEd into, in copy-on-write
// and deletion-vector mode, with the rows of the model; delta-rs reads the
// copy-on-write one (its pyarrow reader refuses deletion vectors).

import (
	"context"
	"path/filepath"
	"sort"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

func TestEnginesReadMergedTable(t *testing.T) {
	for _, mode := range []struct {
		name  string
		props map[string]string
	}{
		{"copy-on-write", nil},
		{"deletion vectors", map[string]string{txlog.PropEnableDeletionVectors: "true"}},
	} {
		t.Run(mode.name, func(t *testing.T) {
			needEngines(t, "both", "setup")
			ctx := context.Background()
			path := localURL(t, filepath.Join(t.TempDir(), "merged"))
			base := smallBatch(0, 30, false)
			write(t, path, base, table.WriteOptions{PartitionColumns: []string{"part"}, Properties: mode.props})
			model := map[int64][]any{}
			for _, r := range base.Rows {
				model[r[0].(int64)] = r
			}
			changeSchema := &schema.StructType{Fields: append(append([]schema.StructField(nil), base.Schema.Fields...), field("op", prim("string")))}
			tb, err := table.Open(ctx, path)
			if err != nil {
				t.Fatal(err)
			}
			defer tb.Close()
			for batch := range 3 {
				b := &schema.Batch{Schema: changeSchema}
				for i := range 10 {
					id := int64(batch*7 + i*3) // updates, deletes, inserts beyond 29
					switch {
					case i%4 == 0:
						b.Rows = append(b.Rows, []any{id, "a", 0.0, "d"})
						delete(model, id)
					default:
						r := []any{id, []string{"a", "b", "c", "d"}[(batch+i)%4], float64(batch*100 + i)}
						b.Rows = append(b.Rows, append(append([]any(nil), r...), "u"))
						model[id] = r
					}
				}
				if _, err := tb.Merge(ctx, b, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'", AppID: "merge-interop", Version: int64(batch)}); err != nil {
					t.Fatal(err)
				}
			}
			want := &schema.Batch{Schema: base.Schema}
			var ids []int64
			for id := range model {
				ids = append(ids, id)
			}
			sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
			for _, id := range ids {
				want.Rows = append(want.Rows, model[id])
			}
			sameRows(t, "lakesink reader", batchRows(want), lakesinkRows(t, path))
			if mode.props == nil {
				bothEngines(t, "after MERGE ("+mode.name+")", path, batchRows(want))
				return
			}
			// delta-rs 1.6.6's pyarrow dataset refuses the deletionVectors
			// reader feature ("not yet supported by the deltalake reader"):
			// Spark alone checks the deletion-vector table.
			t.Run("spark", func(t *testing.T) {
				needEngines(t, "Spark", "after MERGE ("+mode.name+")")
				checkSpark(t, path, path, batchRows(want))
			})
		})
	}
}
