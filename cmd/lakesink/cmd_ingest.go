package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/internal/storage"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
)

// IngestOptions are the flags of `lakesink ingest`.
type IngestOptions struct {
	Source             string
	Format             string
	Checkpoint         string
	Table              string
	FileSink           string
	FileFormat         string
	PartitionBy        []string
	OutputMode         string
	Trigger            string
	MaxFilesPerTrigger int
	Schema             string
	TimestampFormat    string
	AllowReset         bool
	TargetFileSize     string
	Compression        string
	MergeSchema        bool
}

// AddFlags registers the flags.
func (o *IngestOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Source, "source", "", "directory URL of input files (required)")
	f.StringVar(&o.Format, "format", "json", "input format: json (NDJSON or a JSON array), csv (with header), parquet")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "checkpoint directory URL (Spark layout: metadata, offsets/, commits/, sources/) (required)")
	f.StringVar(&o.Table, "table", "", "Delta table URL to write (created at the first batch if absent)")
	f.StringVar(&o.FileSink, "file-sink", "", "Spark file-sink directory URL to write instead of a Delta table")
	f.StringVar(&o.FileFormat, "file-format", "parquet", "file-sink data format: parquet or json")
	f.StringSliceVar(&o.PartitionBy, "partition-by", nil, "partition columns of a new table, comma-separated")
	f.StringVar(&o.OutputMode, "output-mode", "append", "append or complete (Delta only; update is refused)")
	f.StringVar(&o.Trigger, "trigger", "available-now", "available-now | once | interval=30s")
	f.IntVar(&o.MaxFilesPerTrigger, "max-files-per-trigger", 0, "at most N new files per micro-batch (0: no limit)")
	f.StringVar(&o.Schema, "schema", "", "Delta schema JSON (inline or file); default: the table's, else inferred from the first batch")
	f.StringVar(&o.TimestampFormat, "timestamp-format", "", `pattern of timestamp values without a zone, taken as UTC (Go layout "2006/01/02 15:04" or Spark "yyyy/MM/dd HH:mm")`)
	f.BoolVar(&o.AllowReset, "allow-reset", false, "allow a checkpoint to be reused with another source or sink, or a fresh checkpoint on a source the table already ingested")
	f.StringVar(&o.TargetFileSize, "target-file-size", "", "roll data files at this size (default: delta.targetFileSize, else 128MiB)")
	f.StringVar(&o.Compression, "compression", "snappy", "Parquet compression: snappy, zstd, gzip, lz4, none")
	f.BoolVar(&o.MergeSchema, "merge-schema", false, "add new nullable input columns to the table schema")
}

func newIngestCommand(g *globalOptions) *cobra.Command {
	var o IngestOptions
	cmd := &cobra.Command{
		Use:   "ingest --source URL --checkpoint URL (--table URL | --file-sink URL)",
		Short: "Stream files from a directory into a Delta table or a file-sink directory, exactly once",
		Long: `Run a micro-batch streaming query: new files in --source are decoded into
batches and written to --table (a Delta table: each batch ONE commit with a
txn {appId: queryId, version: batchId}) or --file-sink (Spark's file sink with
its _spark_metadata log). The checkpoint (Spark's layout) records which files
each batch took: offsets/N is written before batch N runs, commits/N after
the sink's commit. A killed ingest, restarted with the same flags, reruns the
unfinished batch with exactly the same files; the sink skips it if its commit
had already landed. Files whose names start with "." or "_" are ignored.

Triggers: available-now (default; process the backlog in batches of
--max-files-per-trigger files, then exit), once (one batch of everything new),
interval=30s (run until SIGINT/SIGTERM). With no new input no batch runs.

EXAMPLE
  lakesink ingest --source ./incoming --format json --schema schema.json \
    --checkpoint ./chk --table ./events --partition-by day --max-files-per-trigger 10

EXIT STATUS
  0 ok (skipped batches are ok), 1 error, 3 commit conflict, 4 corrupt or
  unsupported table, 130 interrupted (the table and checkpoint stay consistent)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), o)
		},
	}
	o.AddFlags(cmd.Flags())
	_ = cmd.MarkFlagRequired("source")
	_ = cmd.MarkFlagRequired("checkpoint")
	return cmd
}

// errDuplicateSource: a fresh checkpoint over a source the table already
// ingested under another query id would write every row again.
var errDuplicateSource = errors.New("source already ingested into this table by another query")

func runIngest(ctx context.Context, p *printer, o IngestOptions) error {
	if (o.Table == "") == (o.FileSink == "") {
		return fmt.Errorf("give exactly one of --table and --file-sink")
	}
	trig, err := stream.ParseTrigger(o.Trigger)
	if err != nil {
		return err
	}
	var target int64
	if o.TargetFileSize != "" {
		if target, err = parseBytes(o.TargetFileSize); err != nil {
			return fmt.Errorf("--target-file-size: %w", err)
		}
	}
	srcStore, err := storage.Open(ctx, o.Source)
	if err != nil {
		return fmt.Errorf("--source: %w", err)
	}
	defer srcStore.Close()
	chkStore, err := storage.Open(ctx, o.Checkpoint)
	if err != nil {
		return fmt.Errorf("--checkpoint: %w", err)
	}
	defer chkStore.Close()

	var schema *parquetio.StructType
	if o.Schema != "" {
		if schema, err = loadSchema(o.Schema); err != nil {
			return err
		}
	}
	if o.FileSink != "" {
		return fmt.Errorf("--file-sink: not available yet in this build (the file-sink target lands with the file-sink issue)")
	}

	t, err := table.Open(ctx, o.Table)
	if err != nil {
		return err
	}
	defer t.Close()
	if schema == nil {
		if snap, err := t.Snapshot(ctx); err == nil {
			if schema, err = snap.Schema(); err != nil {
				return err
			}
		}
	}
	srcOpts := source.DefaultOptions(source.Format(o.Format))
	srcOpts.Schema = schema
	srcOpts.TimestampFormat = o.TimestampFormat
	src, err := source.NewFileSource(srcStore, srcOpts)
	if err != nil {
		return err
	}

	lazy := &lazyDeltaSink{table: t, sourceURL: srcStore.URL(), allowReset: o.AllowReset, opts: sink.Options{
		OutputMode: sink.OutputMode(o.OutputMode), PartitionColumns: o.PartitionBy,
		TargetFileSizeBytes: target, Compression: o.Compression, MergeSchema: o.MergeSchema,
	}}
	if d, err := time.ParseDuration(os.Getenv("LAKESINK_TEST_AFTER_COMMIT_DELAY")); err == nil {
		lazy.afterCommitDelay = d
	}
	if err := lazy.opts.Validate(); err != nil && !errors.Is(err, sink.ErrInvalidOptions) {
		return err // an output mode error; the missing query id comes from the checkpoint
	}

	var (
		batches, skipped, rows int64
		started                = time.Now()
	)
	qopts := stream.DefaultOptions()
	qopts.CheckpointStore = chkStore
	qopts.Source = src
	qopts.Sink = lazy
	qopts.SinkKind = "delta"
	qopts.SinkURL = t.URL()
	qopts.Trigger = trig
	qopts.MaxFilesPerTrigger = o.MaxFilesPerTrigger
	qopts.AllowReset = o.AllowReset
	qopts.CheckFresh = lazy.checkFresh
	qopts.Progress = func(pr stream.Progress) {
		batches++
		rows += pr.NumInputRows
		if pr.Sink.Skipped {
			skipped++
		}
		if p.json {
			_ = p.emitValue("progress", pr)
			return
		}
		if p.quiet {
			return
		}
		state := fmt.Sprintf("committed version %d", pr.Sink.Version)
		if pr.Sink.Skipped {
			state = fmt.Sprintf("skipped: already committed (table version %d)", pr.Sink.Version)
		}
		rec := ""
		if pr.Recovery != "" {
			rec = " [recovered: " + pr.Recovery + "]"
		}
		files := 0
		for _, s := range pr.Sources {
			files += s.NumInputFiles
		}
		fmt.Fprintf(p.err, "batch %d: %d files, %d rows -> %d data files, %s (%.0f rows/s)%s\n",
			pr.BatchID, files, pr.NumInputRows, pr.Sink.NumFiles, state, pr.ProcessedRowsPerSecond, rec)
	}
	q, err := stream.NewQuery(qopts)
	if err != nil {
		return err
	}
	runErr := q.Run(ctx)
	if p.json {
		_ = p.emit("summary", map[string]any{"queryId": q.ID(), "batches": batches, "skippedBatches": skipped,
			"numInputRows": rows, "table": t.URL(), "durationMs": time.Since(started).Milliseconds(), "ok": runErr == nil})
	} else if !p.quiet {
		if batches == 0 && runErr == nil {
			fmt.Fprintf(p.err, "no new input: nothing to do (query %s)\n", q.ID())
		} else {
			fmt.Fprintf(p.err, "ingested %d rows in %d batches (%d skipped) into %s in %s (query %s)\n",
				rows, batches, skipped, t.URL(), time.Since(started).Round(time.Millisecond), q.ID())
		}
	}
	return runErr
}

// lazyDeltaSink builds the Delta sink once the query id is known (it lives in
// the checkpoint's metadata file, opened by the driver), and guards a fresh
// checkpoint against re-ingesting a source the table already holds.
type lazyDeltaSink struct {
	table      *table.Table
	sourceURL  string
	allowReset bool
	opts       sink.Options

	afterCommitDelay time.Duration

	mu    sync.Mutex
	delta *sink.Delta
}

// checkFresh is stream.Options.CheckFresh: it creates the sink for queryID,
// and for a fresh checkpoint refuses a source that another query id already
// ingested into the table (found through commitInfo.operationParameters.sourceUrl).
func (l *lazyDeltaSink) checkFresh(ctx context.Context, queryID string, fresh bool) error {
	o := l.opts
	o.QueryID = queryID
	o.OperationParameters = map[string]string{"sourceUrl": l.sourceURL}
	l.mu.Lock()
	l.delta = sink.NewDeltaTable(l.table, o)
	l.mu.Unlock()
	if !fresh || l.allowReset {
		return nil
	}
	exists, err := l.table.Exists(ctx)
	if err != nil || !exists {
		return err
	}
	hist, err := l.table.History(ctx, 0)
	if err != nil {
		return err
	}
	for _, c := range hist {
		params := c.CommitInfo.StringMap("operationParameters")
		if params["sourceUrl"] == l.sourceURL && params["queryId"] != "" && params["queryId"] != queryID {
			return fmt.Errorf("%w: version %d of %s holds source %s from query %s, and checkpoint query %s is new: "+
				"reusing the source would write its rows again. Use the original checkpoint, or pass --allow-reset if you really want a second copy",
				errDuplicateSource, c.Version, l.table.URL(), l.sourceURL, params["queryId"], queryID)
		}
	}
	return nil
}

func (l *lazyDeltaSink) AddBatch(ctx context.Context, batchID int64, b *sink.Batch) (sink.Result, error) {
	l.mu.Lock()
	d := l.delta
	l.mu.Unlock()
	if d == nil {
		return sink.Result{}, fmt.Errorf("ingest: sink used before the checkpoint was opened")
	}
	res, err := d.AddBatch(ctx, batchID, b)
	if err == nil && l.afterCommitDelay > 0 {
		// Test knob (LAKESINK_TEST_AFTER_COMMIT_DELAY): widens the window
		// between the table commit and commits/N so that crash tests reach
		// the "commit landed, checkpoint not yet" recovery path often.
		// Sleeping here is always safe: it only delays commits/N.
		select {
		case <-time.After(l.afterCommitDelay):
		case <-ctx.Done():
		}
	}
	return res, err
}
