package table

import (
	"context"
	"slices"
	"strings"

	"github.com/lakesink/lakesink/schema"
)

// LiveRows reads every row of the table's latest snapshot in table column
// order (partition values from the log), for tests below the reader.
func LiveRows(ctx context.Context, t *Table) ([][]any, *schema.StructType, error) {
	snap, err := t.log.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	sch, err := snap.Schema()
	if err != nil {
		return nil, nil, err
	}
	p := &mergePlan{schema: sch, partCols: snap.Metadata().PartitionColumns}
	p.isPart = make([]bool, len(sch.Fields))
	for i, f := range sch.Fields {
		p.isPart[i] = slices.ContainsFunc(p.partCols, func(c string) bool { return strings.EqualFold(c, f.Name) })
	}
	var out [][]any
	for _, a := range snap.Files() {
		rows, err := t.readRows(ctx, snap, p, a, nil)
		if err != nil {
			return nil, nil, err
		}
		dv, err := t.loadDV(ctx, snap, a)
		if err != nil {
			return nil, nil, err
		}
		for r, row := range rows {
			if !dv.Contains(int64(r)) {
				out = append(out, row)
			}
		}
	}
	return out, sch, nil
}

// MergeWithHook is Merge with hook run once, after the first attempt has
// written its files and before it commits.
func MergeWithHook(ctx context.Context, t *Table, b *schema.Batch, o MergeOptions, hook func()) (MergeResult, error) {
	o.beforeCommit = hook
	return t.Merge(ctx, b, o)
}
