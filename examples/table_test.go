package examples

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// Event is a row of the example tables; the parquet tags name the columns
// (see package schema for the tag rules).
type Event struct {
	ID      int64       `parquet:"id"`
	Country string      `parquet:"country"`
	Day     schema.Date `parquet:"day"`
}

func events(from, n int) []Event {
	day, _ := schema.ParseDate("2024-01-31")
	out := make([]Event, n)
	for i := range out {
		c := "NL"
		if (from+i)%2 == 1 {
			c = "FR"
		}
		out[i] = Event{ID: int64(from + i), Country: c, Day: day}
	}
	return out
}

func tempDir() string {
	dir, err := os.MkdirTemp("", "lakesink-example-")
	if err != nil {
		panic(err)
	}
	return dir
}

// An idempotent write (Delta's txnAppId/txnVersion): writing the same
// (AppID, Version) twice commits once; the second write is skipped.
func Example_idempotentWrite() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)

	batch, err := schema.FromStructs(events(0, 3))
	if err != nil {
		fmt.Println(err)
		return
	}
	t, err := table.Create(ctx, filepath.Join(dir, "events"), table.CreateOptions{Schema: batch.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	for range 2 { // e.g. a nightly job run again after a crash
		res, err := t.Write(ctx, batch, table.WriteOptions{AppID: "nightly", Version: 20240131})
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("version %d skipped=%v rows=%d\n", res.Version, res.Skipped, res.NumRows)
	}
	// Output:
	// version 1 skipped=false rows=3
	// version 1 skipped=true rows=0
}

// Time travel: read a snapshot by version and by timestamp into Go structs,
// with a filter.
func Example_readSnapshot() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	url := filepath.Join(dir, "events")

	first, _ := schema.FromStructs(events(0, 4))
	t, err := table.Create(ctx, url, table.CreateOptions{Schema: first.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	if _, err := t.Write(ctx, first, table.WriteOptions{}); err != nil { // version 1
		fmt.Println(err)
		return
	}
	afterFirst := time.Now()
	time.Sleep(10 * time.Millisecond) // commit timestamps are in milliseconds
	second, _ := schema.FromStructs(events(4, 4))
	if _, err := t.Write(ctx, second, table.WriteOptions{}); err != nil { // version 2
		fmt.Println(err)
		return
	}

	for _, at := range []reader.Option{reader.AtVersion(1), reader.AsOf(afterFirst), reader.AtVersion(2)} {
		snap, err := reader.Open(ctx, url, at)
		if err != nil {
			fmt.Println(err)
			return
		}
		var ids []int64
		for e, err := range reader.Rows[Event](ctx, snap, reader.ReadOptions{Where: "country = 'FR'"}) {
			if err != nil {
				fmt.Println(err)
				return
			}
			ids = append(ids, e.ID)
		}
		slices.Sort(ids) // files are read in snapshot order, not insertion order
		fmt.Printf("version %d: FR ids %v\n", snap.Version(), ids)
		snap.Close()
	}
	// Output:
	// version 1: FR ids [1 3]
	// version 1: FR ids [1 3]
	// version 2: FR ids [1 3 5 7]
}

// Read the table you hold: after writing through a *table.Table, read its
// rows with reader.OpenTable, through the same store and log, instead of
// reopening it by URL.
func Example_readTheTableYouHold() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)

	batch, _ := schema.FromStructs(events(0, 6))
	t, err := table.Create(ctx, filepath.Join(dir, "events"), table.CreateOptions{Schema: batch.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	if _, err := t.Write(ctx, batch, table.WriteOptions{}); err != nil {
		fmt.Println(err)
		return
	}
	snap, err := reader.OpenTable(ctx, t) // or reader.OpenTable(ctx, t, reader.AtVersion(0))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer snap.Close()
	var ids []int64
	for e, err := range reader.Rows[Event](ctx, snap, reader.ReadOptions{Where: "country = 'NL' AND id > 0"}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	fmt.Printf("version %d: NL ids after 0: %v\n", snap.Version(), ids)
	// Output:
	// version 1: NL ids after 0: [2 4]
}

// OPTIMIZE then VACUUM: small files are rewritten into one in a commit that
// changes no data, and VACUUM later deletes the files it replaced.
func Example_compactAndVacuum() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)

	b, _ := schema.FromStructs(events(0, 1))
	t, err := table.Create(ctx, filepath.Join(dir, "events"), table.CreateOptions{Schema: b.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	for i := range 5 {
		b, _ := schema.FromStructs(events(i, 1))
		if _, err := t.Write(ctx, b, table.WriteOptions{}); err != nil {
			fmt.Println(err)
			return
		}
	}
	_, res, err := compaction.Optimize(ctx, t, compaction.PlanOptions{}, compaction.DefaultExecOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("optimize: version %d, %d files removed, %d added\n", res.Version, res.NumRemovedFiles, res.NumAddedFiles)

	// A zero retention needs Force (readers of old versions lose their
	// files); the untracked-file floor keeps files of commits in flight.
	// The clock is moved past the floor here instead of waiting an hour.
	later := time.Now().Add(2 * time.Hour)
	vres, err := compaction.Vacuum(ctx, t, compaction.VacuumOptions{
		RetainZero: true, Force: true, Now: func() time.Time { return later },
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("vacuum: %d files deleted\n", vres.FilesDeleted)
	// Output:
	// optimize: version 6, 5 files removed, 1 added
	// vacuum: 5 files deleted
}
