package table

import (
	"context"
	"slices"
	"strings"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// LiveRows reads every row of the table's latest snapshot in table column
// order (partition values from the log), for tests below the reader.
func LiveRows(ctx context.Context, t *Table) ([][]any, *parquetio.StructType, error) {
	snap, err := t.log.Snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	schema, err := snap.Schema()
	if err != nil {
		return nil, nil, err
	}
	p := &mergePlan{schema: schema, partCols: snap.Metadata().PartitionColumns}
	p.isPart = make([]bool, len(schema.Fields))
	for i, f := range schema.Fields {
		p.isPart[i] = slices.ContainsFunc(p.partCols, func(c string) bool { return strings.EqualFold(c, f.Name) })
	}
	var out [][]any
	for _, a := range snap.Files() {
		rows, err := t.readRows(ctx, snap, p, a, nil)
		if err != nil {
			return nil, nil, err
		}
		out = append(out, rows...)
	}
	return out, schema, nil
}

// MergeWithHook is Merge with hook run once, after the first attempt has
// written its files and before it commits.
func MergeWithHook(ctx context.Context, t *Table, b *parquetio.Batch, o MergeOptions, hook func()) (MergeResult, error) {
	o.beforeCommit = hook
	return t.Merge(ctx, b, o)
}
