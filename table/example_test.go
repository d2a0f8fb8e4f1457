package table_test

import (
	"context"
	"fmt"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

type event struct {
	ID      int64  `parquet:"id"`
	Country string `parquet:"country"`
}

// An idempotent write (Delta's txnAppId/txnVersion): the same (AppID,
// Version) commits once, and a replay is skipped.
func ExampleTable_Write() {
	ctx := context.Background()
	batch, _ := schema.FromStructs([]event{{1, "NL"}, {2, "FR"}})
	t, err := table.Create(ctx, "mem://example-table-write/events", table.CreateOptions{Schema: batch.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	for range 2 { // a nightly job, run again after a crash
		res, err := t.Write(ctx, batch, table.WriteOptions{AppID: "nightly", Version: 20240131})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("version %d skipped=%v rows=%d\n", res.Version, res.Skipped, res.NumRows)
	}
	// Output:
	// version 1 skipped=false rows=2
	// version 1 skipped=true rows=0
}

// Merge a change batch by key in one commit: matched rows are updated,
// the others inserted, and rows where DeleteWhen holds deleted.
func ExampleTable_Merge() {
	ctx := context.Background()
	first, _ := schema.FromStructs([]event{{1, "NL"}, {2, "FR"}})
	t, err := table.Create(ctx, "mem://example-table-merge/events", table.CreateOptions{Schema: first.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	if _, err := t.Write(ctx, first, table.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	type change struct {
		ID      int64  `parquet:"id"`
		Country string `parquet:"country"`
		Op      string `parquet:"op"`
	}
	changes, _ := schema.FromStructs([]change{{1, "DE", "u"}, {2, "", "d"}, {3, "BE", "c"}})
	res, err := t.Merge(ctx, changes, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("version %d: inserted=%d updated=%d deleted=%d\n", res.Version, res.NumInserted, res.NumUpdated, res.NumDeleted)
	// Output:
	// version 2: inserted=1 updated=1 deleted=1
}
