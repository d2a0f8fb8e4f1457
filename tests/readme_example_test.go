package tests

import (
	"context"
	"fmt"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
)

// Event is the README's row type: a Delta date column is a schema.Date field
// (a Go string would make day a string column, and `day = DATE '...'` a
// type error).
type Event struct {
	Day  schema.Date `parquet:"day"`
	User string      `parquet:"user"`
	N    int64       `parquet:"n"`
}

// Example_readmeLibrary is the README's "Using the library" example, run:
// stream a batch into a Delta table exactly once per (queryID, batchID),
// then read a consistent snapshot with a filter on the date partition.
func Example_readmeLibrary() {
	ctx := context.Background()
	url := "mem://example-readme/events" // or "s3://bucket/events?region=eu-west-1", or a local path
	day := func(s string) schema.Date {
		t, _ := time.Parse(time.DateOnly, s)
		return schema.DateOf(t)
	}
	events := []Event{
		{Day: day("2024-01-30"), User: "ann", N: 1},
		{Day: day("2024-01-31"), User: "bob", N: 2},
		{Day: day("2024-01-31"), User: "cy", N: 3},
	}

	s, err := sink.NewDelta(ctx, url, sink.Options{
		QueryID:          "events-ingest", // stable across restarts
		PartitionColumns: []string{"day"}, // for a table the sink creates
	})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	batch, err := schema.FromStructs(events)
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 2 { // the second AddBatch is a replay after a crash
		res, err := s.AddBatch(ctx, 0, batch)
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("batch 0: version %d, %d rows, skipped %v\n", res.Version, res.NumRows, res.Skipped)
	}

	snap, err := reader.Open(ctx, url)
	if err != nil {
		fmt.Println(err)
		return
	}
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Where: "day = DATE '2024-01-31'", Columns: []string{"user", "n"}}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Println(rec.Values...)
	}
	// Unordered output:
	// batch 0: version 0, 3 rows, skipped false
	// batch 0: version 0, 0 rows, skipped true
	// bob 2
	// cy 3
}
