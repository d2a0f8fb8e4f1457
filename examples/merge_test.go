package examples

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// Change is a row of a change batch: an event's new values, and whether
// the change deletes it.
type Change struct {
	ID      int64       `parquet:"id"`
	Country string      `parquet:"country"`
	Day     schema.Date `parquet:"day"`
	Op      string      `parquet:"op"`
}

// Merge a change batch into a table by key (Delta's MERGE: update the
// matched rows, insert the others, delete where the predicate holds) in ONE
// commit; with AppID/Version a replayed merge is skipped.
func Example_mergeChangeBatch() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	url := filepath.Join(dir, "events")

	first, _ := schema.FromStructs(events(0, 4)) // ids 0..3: NL FR NL FR
	t, err := table.Create(ctx, url, table.CreateOptions{Schema: first.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	if _, err := t.Write(ctx, first, table.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}

	day := events(0, 1)[0].Day
	changes, _ := schema.FromStructs([]Change{
		{ID: 1, Country: "DE", Day: day, Op: "u"}, // update
		{ID: 2, Day: day, Op: "d"},                // delete
		{ID: 9, Country: "BE", Day: day, Op: "c"}, // insert
	})
	for range 2 { // the second run replays the same change batch
		res, err := t.Merge(ctx, changes, table.MergeOptions{
			Keys: []string{"id"}, DeleteWhen: "op = 'd'", AppID: "cdc", Version: 1,
		})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("merge: skipped=%v inserted=%d updated=%d deleted=%d\n", res.Skipped, res.NumInserted, res.NumUpdated, res.NumDeleted)
	}

	snap, err := reader.Open(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer snap.Close()
	var rows []string
	for e, err := range reader.Rows[Event](ctx, snap, reader.ReadOptions{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		rows = append(rows, fmt.Sprintf("%d:%s", e.ID, e.Country))
	}
	slices.Sort(rows)
	fmt.Println(rows)
	// Output:
	// merge: skipped=false inserted=1 updated=1 deleted=1
	// merge: skipped=true inserted=0 updated=0 deleted=0
	// [0:NL 1:DE 3:FR 9:BE]
}
