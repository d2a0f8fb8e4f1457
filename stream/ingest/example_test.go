package ingest_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/lakesink/lakesink/stream/ingest"
)

// Run streams a directory of NDJSON files into a Delta table (created at
// the first batch), then refuses a second fresh checkpoint over the same
// source: its rows would be written again.
func ExampleRun() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ingest-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "incoming")
	_ = os.Mkdir(in, 0o755)
	_ = os.WriteFile(filepath.Join(in, "a.json"), []byte(`{"id":1,"user":"ada"}`+"\n"+`{"id":2,"user":"bob"}`+"\n"), 0o644)

	o := ingest.DefaultOptions()
	o.Format = ingest.FormatJSON
	o.Source = in
	o.Checkpoint = filepath.Join(dir, "checkpoint")
	o.Table = filepath.Join(dir, "events")
	sum, err := ingest.Run(ctx, o)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("%d batch, %d rows into %s\n", sum.Batches, sum.NumInputRows, filepath.Base(sum.SinkURL))

	o.Checkpoint = filepath.Join(dir, "fresh-checkpoint")
	_, err = ingest.Run(ctx, o)
	fmt.Println("second fresh run refused:", errors.Is(err, ingest.ErrDuplicateSource))
	// Output:
	// 1 batch, 2 rows into events
	// second fresh run refused: true
}

// A file sink (Spark's _spark_metadata layout) instead of a Delta table.
func ExampleRun_fileSink() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ingest-example-")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer os.RemoveAll(dir)
	in := filepath.Join(dir, "incoming")
	_ = os.Mkdir(in, 0o755)
	for i, name := range []string{"a.json", "b.json"} {
		_ = os.WriteFile(filepath.Join(in, name), fmt.Appendf(nil, "{\"id\":%d}\n", i), 0o644)
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
	_, err = os.Stat(filepath.Join(dir, "out", "_spark_metadata", "1"))
	fmt.Println("_spark_metadata/1 written:", err == nil)
	// Output:
	// filesink: 2 batches, 2 rows
	// _spark_metadata/1 written: true
}
