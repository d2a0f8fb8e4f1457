package examples

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/ingest"
)

// writeInput writes n NDJSON files of two events each into dir.
func writeInput(dir string, from, n int) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for i := from; i < from+n; i++ {
		body := fmt.Sprintf("{\"id\":%d,\"country\":\"NL\",\"day\":\"2024-01-31\"}\n{\"id\":%d,\"country\":\"FR\",\"day\":\"2024-01-31\"}\n", 2*i, 2*i+1)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("events-%03d.json", i)), []byte(body), 0o644); err != nil {
			return err
		}
	}
	return nil
}

// Stream the files of a directory into a Delta table with ingest.Run, as
// `lakesink ingest` does, guards included: a restart on the same checkpoint
// reads only new files, and a second fresh checkpoint over the same source
// is refused (its rows would be written twice).
func Example_streamFilesIntoDelta() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "incoming")
	if err := writeInput(in, 0, 3); err != nil {
		fmt.Println(err)
		return
	}

	o := ingest.DefaultOptions()
	o.Format = ingest.FormatJSON
	o.Source = in
	o.Checkpoint = filepath.Join(dir, "checkpoint")
	o.Table = filepath.Join(dir, "events")
	o.PartitionColumns = []string{"day"}
	o.Schema = eventSchema() // else inferred from the first batch ("day" would be a string)
	o.MaxFilesPerTrigger = 2
	sum, err := ingest.Run(ctx, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("first run: %d batches, %d rows\n", sum.Batches, sum.NumInputRows)

	if err := writeInput(in, 3, 1); err != nil { // one new file
		fmt.Println(err)
		return
	}
	sum, err = ingest.Run(ctx, o) // same checkpoint: only the new file
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("restart: %d batch, %d rows\n", sum.Batches, sum.NumInputRows)

	fresh := o
	fresh.Checkpoint = filepath.Join(dir, "another-checkpoint")
	_, err = ingest.Run(ctx, fresh)
	var dup *ingest.DuplicateSourceError
	fmt.Println("fresh checkpoint refused:", errors.Is(err, ingest.ErrDuplicateSource), errors.As(err, &dup) && dup.Version >= 0)

	snap, err := reader.Open(ctx, o.Table)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer snap.Close()
	var ids []int64
	for e, err := range reader.Rows[Event](ctx, snap, reader.ReadOptions{}) {
		if err != nil {
			fmt.Println(err)
			return
		}
		ids = append(ids, e.ID)
	}
	slices.Sort(ids)
	fmt.Println("table ids:", ids)
	// Output:
	// first run: 2 batches, 6 rows
	// restart: 1 batch, 2 rows
	// fresh checkpoint refused: true true
	// table ids: [0 1 2 3 4 5 6 7]
}

// Stream into a Spark file-sink directory (data files plus its
// _spark_metadata log) and list the files the log names.
func Example_streamIntoFileSink() {
	ctx := context.Background()
	dir := tempDir()
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "incoming")
	if err := writeInput(in, 0, 2); err != nil {
		fmt.Println(err)
		return
	}
	o := ingest.DefaultOptions()
	o.Source = in
	o.Checkpoint = filepath.Join(dir, "checkpoint")
	o.FileSink = filepath.Join(dir, "out")
	o.MaxFilesPerTrigger = 1
	sum, err := ingest.Run(ctx, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%s: %d batches, %d rows\n", sum.SinkKind, sum.Batches, sum.NumInputRows)

	// A fresh checkpoint against a log that is ahead would skip every batch.
	fresh := o
	fresh.Checkpoint = filepath.Join(dir, "another-checkpoint")
	_, err = ingest.Run(ctx, fresh)
	fmt.Println("fresh checkpoint refused:", errors.Is(err, ingest.ErrFileSinkAhead))

	st, err := storage.Open(ctx, o.FileSink)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	ls, err := filesink.ListFiles(ctx, st, filesink.DefaultOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("files in the log:", len(ls.Files))
	// Output:
	// filesink: 2 batches, 4 rows
	// fresh checkpoint refused: true
	// files in the log: 2
}

// eventSchema is the Delta schema of Event (from its parquet tags).
func eventSchema() *schema.StructType {
	b, err := schema.FromStructs([]Event{{}})
	if err != nil {
		panic(err)
	}
	return b.Schema
}
