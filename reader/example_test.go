package reader_test

import (
	"context"
	"fmt"
	"slices"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

type event struct {
	ID      int64  `parquet:"id"`
	Country string `parquet:"country"`
}

// Read a snapshot by version into Go structs, with a filter (partition
// values and file statistics prune files before any is opened).
// reader.AsOf(t) reads the snapshot at a time instead.
func ExampleRows() {
	ctx := context.Background()
	const url = "mem://example-reader-rows/events"
	b, _ := schema.FromStructs([]event{{1, "NL"}, {2, "FR"}})
	t, err := table.Create(ctx, url, table.CreateOptions{Schema: b.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	_, _ = t.Write(ctx, b, table.WriteOptions{}) // version 1
	b2, _ := schema.FromStructs([]event{{3, "FR"}})
	_, _ = t.Write(ctx, b2, table.WriteOptions{}) // version 2

	for _, v := range []int64{1, 2} {
		snap, err := reader.Open(ctx, url, reader.AtVersion(v))
		if err != nil {
			fmt.Println(err)
			return
		}
		var ids []int64
		for e, err := range reader.Rows[event](ctx, snap, reader.ReadOptions{Where: "country = 'FR'"}) {
			if err != nil {
				fmt.Println(err)
				return
			}
			ids = append(ids, e.ID)
		}
		slices.Sort(ids)
		fmt.Printf("version %d: FR ids %v\n", snap.Version(), ids)
		snap.Close()
	}
	// Output:
	// version 1: FR ids [2]
	// version 2: FR ids [2 3]
}

// Read a table already open as a *table.Table (e.g. the one just written
// to) without reopening it by URL: OpenTable reads through the table's own
// store and log, at the latest version or at AtVersion/AsOf.
func ExampleOpenTable() {
	ctx := context.Background()
	b, _ := schema.FromStructs([]event{{1, "NL"}, {2, "FR"}, {3, "FR"}})
	t, err := table.Create(ctx, "mem://example-reader-opentable/events", table.CreateOptions{Schema: b.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	if _, err := t.Write(ctx, b, table.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	snap, err := reader.OpenTable(ctx, t)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer snap.Close() // t's store stays open
	var ids []int64
	for e, err := range reader.Rows[event](ctx, snap, reader.ReadOptions{Where: "country = 'FR'"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	fmt.Printf("version %d: FR ids %v\n", snap.Version(), ids)
	// Output:
	// version 1: FR ids [2 3]
}

// Aggregate a column without a boxed value per row: Batches decodes the
// projected long column into int64 slices, with a null flag per row.
func ExampleSnapshot_Batches() {
	ctx := context.Background()
	const url = "mem://example-reader-batches/events"
	b, _ := schema.FromStructs([]event{{1, "NL"}, {2, "FR"}, {3, "FR"}})
	t, err := table.Create(ctx, url, table.CreateOptions{Schema: b.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	if _, err := t.Write(ctx, b, table.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := reader.Open(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer snap.Close()
	var n, sum int64
	for b, err := range snap.Batches(ctx, reader.ReadOptions{Columns: []string{"id"}, Where: "country = 'FR'"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		n += int64(b.Len)
		ids := &b.Columns[0]
		for i, id := range ids.Int64 {
			if !ids.IsNull(i) {
				sum += id
			}
		}
	}
	fmt.Printf("count %d, sum(id) %d\n", n, sum)
	// Output:
	// count 2, sum(id) 5
}
