package compaction

import (
	"context"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// Rows survive OPTIMIZE exactly in the awkward cases: null partition values,
// files written before a schema evolution (the new column reads as null),
// and bins that roll into several output files.
func TestOptimizePreservesRows(t *testing.T) {
	ctx := context.Background()
	wide := flightsSchema()
	wide.Fields = append(wide.Fields, schema.StructField{Name: "tail", Type: schema.TypeString, Nullable: true})
	for _, tc := range []struct {
		name     string
		partCols []string
		write    func(t *testing.T, tb *table.Table)
		plan     PlanOptions
		minAdds  int
	}{
		{
			name: "null partition values", partCols: []string{"origin"},
			write: func(t *testing.T, tb *table.Table) {
				for i := range 4 {
					rows := flightsRows(int64(i*10), 10, origins)
					for j := range rows {
						if j%2 == 0 {
							rows[j][3] = nil
						}
					}
					appendRows(t, tb, rows)
				}
			},
		},
		{
			name: "schema evolved between files",
			write: func(t *testing.T, tb *table.Table) {
				appendRows(t, tb, flightsRows(0, 10, origins))
				appendRows(t, tb, flightsRows(10, 10, origins))
				rows := flightsRows(20, 10, origins)
				for j := range rows {
					rows[j] = append(rows[j], "N12345")
				}
				if _, err := tb.Write(ctx, &schema.Batch{Schema: wide, Rows: rows}, table.WriteOptions{MergeSchema: true}); err != nil {
					t.Fatal(err)
				}
			},
		},
		{
			name: "bins roll into several files",
			write: func(t *testing.T, tb *table.Table) {
				for i := range 8 {
					appendRows(t, tb, flightsRows(int64(i*200), 200, origins))
				}
			},
			plan:    PlanOptions{TargetFileSizeBytes: 12 << 10, MinFileSizeBytes: 1 << 30},
			minAdds: 2,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tb, st := newTable(t, tc.partCols, nil)
			tc.write(t, tb)
			before, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			want, err := readSnapshot(ctx, st, before)
			if err != nil {
				t.Fatal(err)
			}
			_, res, err := Optimize(ctx, tb, tc.plan, ExecOptions{RowGroupSizeBytes: 4 << 10})
			if err != nil {
				t.Fatal(err)
			}
			if res.NumRemovedFiles == 0 || res.NumAddedFiles < tc.minAdds {
				t.Fatalf("result %+v", res)
			}
			after, err := tb.Snapshot(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readSnapshot(ctx, st, after)
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || !equalRowSets(rowSet(got), rowSet(want)) {
				t.Fatalf("rows changed: %d vs %d", len(got), len(want))
			}
			// The new files' stats count their rows.
			var n int64
			for _, a := range after.Files() {
				if a.DataChange {
					continue
				}
				k, ok := numRecords(a.Stats)
				if !ok {
					t.Fatalf("add %s without numRecords", a.Path)
				}
				n += k
			}
			if n != res.NumRows {
				t.Fatalf("stats count %d rows, rewrote %d", n, res.NumRows)
			}
		})
	}
}

// OPTIMIZE changes no data, so an append-only table may be compacted (its
// removes carry dataChange=false; PROTOCOL.md, "Append-only Tables").
func TestOptimizeAppendOnlyTable(t *testing.T) {
	ctx := context.Background()
	tb, st := newTable(t, nil, map[string]string{"delta.appendOnly": "true"})
	for i := range 3 {
		appendRows(t, tb, flightsRows(int64(i*10), 10, origins))
	}
	before, _ := tb.Snapshot(ctx)
	want, err := readSnapshot(ctx, st, before)
	if err != nil {
		t.Fatal(err)
	}
	_, res, err := Optimize(ctx, tb, PlanOptions{}, ExecOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.NumRemovedFiles != 3 {
		t.Fatalf("%+v", res)
	}
	after, _ := tb.Snapshot(ctx)
	got, err := readSnapshot(ctx, st, after)
	if err != nil || !equalRowSets(rowSet(got), rowSet(want)) {
		t.Fatalf("rows changed: %v", err)
	}
}
