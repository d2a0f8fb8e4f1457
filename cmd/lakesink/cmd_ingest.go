package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/checkpoint"
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
	SchemaEvolution    string
	BadRecordsPath     string
	MergeKeys          []string // --output-mode update
	SequenceBy         string
	DeleteWhen         string
	CDCFormat          string
	RecoverFromTable   bool         // ingest_recover.go
	Kafka              KafkaFlags   // ingest_kafka.go
	Delta              DeltaFlags   // ingest_delta.go
	Metrics            MetricsFlags // metrics_flags.go
}

// AddFlags registers the flags.
func (o *IngestOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Source, "source", "", "directory URL of input files (required)")
	f.StringVar(&o.Format, "format", "json", "input format: json (NDJSON or a JSON array), csv (with header), parquet, kafka, or delta (--source is a Delta table; its new data files)")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "checkpoint directory URL (Spark layout: metadata, offsets/, commits/, sources/) (required)")
	f.StringVar(&o.Table, "table", "", "Delta table URL to write (created at the first batch if absent)")
	f.StringVar(&o.FileSink, "file-sink", "", "Spark file-sink directory URL to write instead of a Delta table")
	f.StringVar(&o.FileFormat, "file-format", "parquet", "file-sink data format: parquet or json")
	f.StringSliceVar(&o.PartitionBy, "partition-by", nil, "partition columns of a new table, comma-separated")
	f.StringVar(&o.OutputMode, "output-mode", "append", "append, complete, or update (Delta only: merge each batch into the table by --merge-key)")
	f.StringSliceVar(&o.MergeKeys, "merge-key", nil, "update mode: the key columns each batch is merged by, comma-separated")
	f.StringVar(&o.SequenceBy, "sequence-by", "", "update mode: column ordering the changes of a key (the highest wins; an older change never overwrites a newer row)")
	f.StringVar(&o.DeleteWhen, "delete-when", "", `update mode: predicate over the input's columns marking deletes, e.g. "op = 'd'"`)
	f.StringVar(&o.CDCFormat, "cdc-format", "", "update mode: input records are change events of this format: debezium (JSON envelope before/after/op/ts_ms; --schema is after's)")
	f.StringVar(&o.Trigger, "trigger", "available-now", "available-now | once | interval=30s")
	f.IntVar(&o.MaxFilesPerTrigger, "max-files-per-trigger", 0, "at most N new files per micro-batch (0: no limit)")
	f.StringVar(&o.Schema, "schema", "", "Delta schema JSON (inline or file); default: the table's, else inferred from the first batch")
	f.StringVar(&o.TimestampFormat, "timestamp-format", "", `pattern of timestamp values without a zone, taken as UTC (Go layout "2006/01/02 15:04" or Spark "yyyy/MM/dd HH:mm")`)
	f.BoolVar(&o.AllowReset, "allow-reset", false, "allow a checkpoint to be reused with another source or sink, or a fresh checkpoint on a source the table already ingested")
	f.StringVar(&o.TargetFileSize, "target-file-size", "", "roll data files at this size (default: delta.targetFileSize, else 128MiB)")
	f.StringVar(&o.Compression, "compression", "snappy", "Parquet compression: snappy, zstd, gzip, lz4, none")
	f.BoolVar(&o.MergeSchema, "merge-schema", false, "add the input's new columns to the table schema, nullable (Delta's mergeSchema; same as --schema-evolution-mode addNewColumns)")
	f.StringVar(&o.SchemaEvolution, "schema-evolution-mode", "", "input fields not in the schema: failOnNewColumns (default: the record is an error), addNewColumns (as --merge-schema) or none (drop their values), as Auto Loader's cloudFiles.schemaEvolutionMode")
	f.StringVar(&o.BadRecordsPath, "bad-records-path", "", "Delta table URL for records that do not fit the schema (as Spark's badRecordsPath): valid rows go on, rejects land there once per batch")
	f.BoolVar(&o.RecoverFromTable, "recover-checkpoint-from-table", false, "rebuild a lost checkpoint from the Delta table's commits (Kafka source only): continue after the newest batch the table recorded for this source, with its query id")
	o.Kafka.AddFlags(f)
	o.Delta.AddFlags(f)
	o.Metrics.AddFlags(f)
}

func newIngestCommand(g *globalOptions) *cobra.Command {
	var o IngestOptions
	cmd := &cobra.Command{
		Use:   "ingest (--source URL | --format delta --source TABLE | --format kafka --kafka-bootstrap HOST:PORT --kafka-topic T) (--checkpoint URL | --kafka-group G) (--table URL | --file-sink URL)",
		Short: "Stream files from a directory, or a Kafka topic, into a Delta table or a file-sink directory, exactly once",
		Long: `Run a micro-batch streaming query: new files in --source are decoded into
batches and written to --table (a Delta table: each batch ONE commit with a
txn {appId: queryId, version: batchId}) or --file-sink (Spark's file sink with
its _spark_metadata log). The checkpoint (Spark's layout) records which files
each batch took: offsets/N is written before batch N runs, commits/N after
the sink's commit. A killed ingest, restarted with the same flags, reruns the
unfinished batch with exactly the same files; the sink skips it if its commit
had already landed. Files whose names start with "." or "_" are ignored.

Consumer-group mode (--kafka-group G, no --checkpoint): N processes with the
same group share the topic's partitions; each commit carries a txn per
partition (appId <group>-<topic>-<partition>, version = its last offset) and
a worker starts each partition it is assigned after the table's txn version
(docs/kafka.md). --metrics-addr serves /metrics and /healthz (docs/metrics.md).

Triggers: available-now (default; process the backlog in batches of
--max-files-per-trigger files, then exit), once (one batch of everything new),
interval=30s (run until SIGINT/SIGTERM). With no new input no batch runs.
--max-files-per-trigger defaults to 0: every new file in one batch (for
--format delta: 1000, as Delta).

Delta source (--format delta --source TABLE, Delta's DeltaSource): the
table's latest snapshot first, then each later commit (or --starting-version
/ --starting-timestamp: the commits from there); offsets/N holds Spark's
DeltaSourceOffset. Only adds with dataChange=true are new rows, so OPTIMIZE
commits give none; a commit that removes data (DELETE, UPDATE, MERGE,
overwrite) fails naming its version unless --skip-change-commits; a
recreated table or a version removed by cleanup-log fails, never skipped.

Schema: --schema, else the table's, else inferred from the first batch. An
input field that the schema lacks (a new column) fails the batch, naming
file, line and field (--bad-records-path sets such records aside instead);
--merge-schema infers each batch's schema and adds its new columns to the
table, nullable, keeping the table's columns and types (Delta's mergeSchema);
--schema-evolution-mode none drops their values.

EXAMPLE
  lakesink ingest --source ./incoming --format json --schema schema.json \
    --checkpoint ./chk --table ./events --partition-by day --max-files-per-trigger 10

EXIT STATUS
  0 ok (skipped batches are ok; also interval stopped by SIGINT/SIGTERM
  between batches), 1 error (e.g. a record that does not fit), 3 commit
  conflict or checkpoint in use by another ingest, 4 corrupt or unsupported
  table, 130 interrupted during a batch (it is abandoned uncommitted and
  reruns at the next start; the table and checkpoint stay consistent)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// errDuplicateSource: a fresh checkpoint over a source the table already
// ingested under another query id would write every row again.
var errDuplicateSource = errors.New("source already ingested into this table by another query")

func runIngest(ctx context.Context, p *printer, o IngestOptions) error {
	cm, err := o.Metrics.start()
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	defer cm.close()
	if o.Kafka.Group != "" || o.Kafka.Assign != "" {
		return runGroupIngest(ctx, p, o, cm) // ingest_group.go
	}
	if o.Checkpoint == "" {
		return fmt.Errorf(`required flag(s) "checkpoint" not set`)
	}
	if (o.Table == "") == (o.FileSink == "") {
		return fmt.Errorf("give exactly one of --table and --file-sink")
	}
	if o.RecoverFromTable && o.Table == "" {
		return fmt.Errorf("%w: --recover-checkpoint-from-table needs --table (a Delta table)", errRecover)
	}
	trig, err := stream.ParseTrigger(o.Trigger)
	if err != nil {
		return err
	}
	var target int64
	if o.TargetFileSize != "" {
		if target, err = parseByteSizeFlag("target-file-size", o.TargetFileSize); err != nil {
			return err
		}
	}
	kafkaIn := o.Kafka.Enabled(o.Format)
	sourceURL := kafkaSourceURL(o.Kafka)
	deltaIn := o.Format == "delta"
	if flag := o.Delta.misused(); flag != "" && !deltaIn {
		return fmt.Errorf("%s applies to --format delta (a Delta table source), not --format %s", flag, o.Format)
	}
	var srcStore storage.Store
	if !kafkaIn {
		if o.Source == "" {
			return fmt.Errorf("give --source (a directory URL), or --format kafka with --kafka-bootstrap")
		}
		if err := checkLocalDir(o.Source); err != nil {
			return fmt.Errorf("--source: %w", err)
		}
		if srcStore, err = storage.Open(ctx, o.Source); err != nil {
			return fmt.Errorf("--source: %w", err)
		}
		defer srcStore.Close()
		sourceURL = srcStore.URL()
	}
	chkStore, err := storage.Open(ctx, o.Checkpoint)
	if err != nil {
		return fmt.Errorf("--checkpoint: %w", err)
	}
	defer chkStore.Close()

	evolution, err := ingestSchemaEvolution(o)
	if err != nil {
		return err
	}
	var sch *schema.StructType
	if o.Schema != "" {
		if sch, err = loadSchema(o.Schema); err != nil {
			return err
		}
	}
	lazy := &lazySink{allowReset: o.AllowReset, chk: chkStore}
	if d, err := time.ParseDuration(os.Getenv("LAKESINK_TEST_AFTER_COMMIT_DELAY")); err == nil {
		lazy.afterCommitDelay = d
	}
	var (
		sinkKind, sinkURL string
		firstBatchID      int64
	)
	if o.FileSink != "" {
		fsStore, err := storage.Open(ctx, o.FileSink)
		if err != nil {
			return fmt.Errorf("--file-sink: %w", err)
		}
		defer fsStore.Close()
		fopts := filesink.DefaultOptions()
		fopts.Format = o.FileFormat
		fopts.PartitionColumns = o.PartitionBy
		if o.FileFormat == "parquet" {
			fopts.Compression = o.Compression
		}
		if target > 0 {
			fopts.TargetFileSizeBytes = target
		}
		if o.OutputMode != "" {
			fopts.OutputMode = o.OutputMode
		}
		if err := fopts.Validate(); err != nil {
			return err
		}
		if firstBatchID, err = fileSinkFirstBatch(ctx, chkStore, fsStore, fopts, o.AllowReset); err != nil {
			return err
		}
		if err := checkFileSinkPartitioning(ctx, fsStore, fopts); err != nil {
			return err
		}
		lazy.build = func(ctx context.Context, queryID string, fresh bool) (sink.Sink, error) {
			fo := fopts
			fo.QueryID = queryID
			return filesink.New(ctx, fsStore, fo)
		}
		sinkKind, sinkURL = "filesink", fsStore.URL()
	} else {
		t, err := table.Open(ctx, o.Table)
		if err != nil {
			return err
		}
		defer t.Close()
		if snap, err := t.Snapshot(ctx); err == nil {
			if sch == nil {
				if sch, err = snap.Schema(); err != nil {
					return err
				}
			}
			if have := snap.Metadata().PartitionColumns; len(o.PartitionBy) > 0 && !slices.Equal(have, o.PartitionBy) {
				return fmt.Errorf("--partition-by %s: table %s is partitioned by [%s]; a table's partitioning cannot change by writing to it",
					strings.Join(o.PartitionBy, ","), t.URL(), strings.Join(have, ","))
			}
		}
		dopts := sink.Options{
			OutputMode: sink.OutputMode(o.OutputMode), PartitionColumns: o.PartitionBy,
			MergeKeys: o.MergeKeys, SequenceBy: o.SequenceBy, DeleteWhen: o.DeleteWhen, LastRowWins: o.CDCFormat != "",
			TargetFileSizeBytes: target, Compression: o.Compression, MergeSchema: evolution == source.SchemaEvolutionAddNewColumns,
			OperationParameters: map[string]string{"sourceUrl": sourceURL},
			BatchParameters:     lazy.batchParameters(ctx),
		}
		if o.CDCFormat != "" && o.DeleteWhen == "" && sch != nil {
			dopts.DeleteWhen = source.DebeziumDeleteWhen(sch) // sch nil: checkCDC refuses below
		}
		check := dopts
		check.QueryID = "validate" // the real one comes from the checkpoint
		if err := check.Validate(); err != nil {
			return err
		}
		lazy.build = func(ctx context.Context, queryID string, fresh bool) (sink.Sink, error) {
			if fresh && !o.AllowReset {
				if err := checkSourceNotIngested(ctx, t, sourceURL, queryID); err != nil {
					return nil, err
				}
			}
			if err := claimSource(ctx, t.Store(), sourceURL, queryID, fresh, o.AllowReset); err != nil {
				return nil, err
			}
			do := dopts
			do.QueryID = queryID
			return sink.NewDeltaTable(t, do), nil
		}
		sinkKind, sinkURL = "delta", t.URL()
		if o.RecoverFromTable {
			if err := recoverCheckpointFromTable(ctx, p, chkStore, t, kafkaIn, sourceURL); err != nil {
				return err
			}
		}
	}

	srcOpts := source.DefaultOptions(source.Format(o.Format))
	srcOpts.Schema = sch
	if err := checkCDC(o, sch); err != nil {
		return err
	}
	if o.CDCFormat != "" {
		_, srcOpts.Schema, lazy.transform = cdcDecoding(sch, o.SequenceBy)
	}
	srcOpts.SchemaEvolution = evolution
	if o.Schema == "" && evolution == source.SchemaEvolutionFailOnNewColumns && o.CDCFormat == "" && readsMissingColumns(sch, o.DeleteWhen) {
		// --delete-when reads an input column the table does not have (op):
		// decode the table's columns plus the input's own.
		srcOpts.SchemaEvolution = source.SchemaEvolutionAddNewColumns
	}
	srcOpts.TimestampFormat = o.TimestampFormat
	if o.BadRecordsPath != "" {
		rt, err := table.Open(ctx, o.BadRecordsPath)
		if err != nil {
			return fmt.Errorf("--bad-records-path: %w", err)
		}
		defer rt.Close()
		lazy.rejects = &rejects{table: rt}
		srcOpts.OnBadRecord = lazy.rejects.add
	}
	im, err := cm.ingest(sinkURL)
	if err != nil {
		return err
	}
	cm.ready() // the table's snapshot (or the file sink's log) is open
	var (
		src      source.Source
		maxBytes int64
	)
	maxFiles := o.MaxFilesPerTrigger
	if deltaIn {
		ds, mb, err := deltaSource(srcStore, o.Delta)
		if err != nil {
			return err
		}
		defer ds.Close()
		src, maxBytes = ds, mb
		if maxFiles == 0 {
			maxFiles = deltaMaxFilesPerTrigger
		}
	} else if kafkaIn {
		ks, err := kafkaSource(ctx, o.Kafka, srcOpts)
		if err != nil {
			return err
		}
		defer ks.Close()
		src = ks
	} else if src, err = source.NewFileSource(srcStore, srcOpts); err != nil {
		return err
	}

	var (
		batches, skipped, rows int64
		started                = time.Now()
	)
	qopts := stream.DefaultOptions()
	qopts.CheckpointStore = chkStore
	qopts.Source = src
	qopts.Sink = lazy
	qopts.SinkKind = sinkKind
	qopts.SinkURL = sinkURL
	qopts.FirstBatchID = firstBatchID
	qopts.Trigger = trig
	qopts.MaxFilesPerTrigger = maxFiles
	qopts.MaxBytesPerTrigger = maxBytes
	qopts.AllowReset = o.AllowReset
	qopts.CheckFresh = lazy.checkFresh
	qopts.Progress = func(pr stream.Progress) {
		observeProgress(im, pr)
		cm.observe(true)
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
		if sinkKind == "filesink" {
			state = fmt.Sprintf("logged as _spark_metadata/%d", pr.BatchID)
		}
		if pr.Sink.Skipped {
			state = "skipped: already committed"
			if sinkKind == "delta" {
				state += fmt.Sprintf(" (table version %d)", pr.Sink.Version)
			}
		}
		rec := ""
		if pr.Recovery != "" {
			rec = " [recovered: " + pr.Recovery + "]"
		}
		files := 0
		for _, s := range pr.Sources {
			files += s.NumInputFiles
		}
		merged := ""
		if o.OutputMode == string(sink.Update) && !pr.Sink.Skipped {
			merged = fmt.Sprintf(" (%d inserted, %d updated, %d deleted, %s rewritten)", pr.Sink.NumInserted, pr.Sink.NumUpdated, pr.Sink.NumDeleted,
				plural(pr.Sink.NumRemovedFiles, "file", "files"))
		}
		fmt.Fprintf(p.err, "batch %d: %s, %s -> %s%s, %s (%.0f rows/s)%s\n",
			pr.BatchID, plural(files, "file", "files"), plural(pr.NumInputRows, "row", "rows"), plural(pr.Sink.NumFiles, "data file", "data files"),
			merged, state, pr.ProcessedRowsPerSecond, rec)
	}
	q, err := stream.NewQuery(qopts)
	if err != nil {
		return ingestHint(err, o.BadRecordsPath != "", o.FileSink != "", chkStore.URL())
	}
	runErr := q.Run(ctx)
	if p.json {
		_ = p.emit("summary", map[string]any{"queryId": q.ID(), "batches": batches, "skippedBatches": skipped,
			"numInputRows": rows, "sink": sinkURL, "durationMs": time.Since(started).Milliseconds(), "ok": runErr == nil})
	} else if !p.quiet && (runErr == nil || batches > 0) {
		if batches == 0 {
			fmt.Fprintf(p.err, "no new input: nothing to do (query %s)\n", q.ID())
		} else {
			fmt.Fprintf(p.err, "ingested %s in %s (%d skipped) into %s in %s (query %s)\n",
				plural(rows, "row", "rows"), plural(batches, "batch", "batches"), skipped, sinkURL, time.Since(started).Round(time.Millisecond), q.ID())
		}
	}
	return ingestHint(runErr, o.BadRecordsPath != "", o.FileSink != "", chkStore.URL())
}

// ingestSchemaEvolution maps --merge-schema and --schema-evolution-mode to
// the source's mode. The default is failOnNewColumns, whether the schema is
// the table's, --schema or inferred: an input field the schema lacks is never
// dropped silently (Delta refuses such a write without mergeSchema).
// addNewColumns evolves a Delta table's schema; a file-sink directory has no
// schema to evolve, so it is refused there.
func ingestSchemaEvolution(o IngestOptions) (source.SchemaEvolutionMode, error) {
	mode, err := source.ParseSchemaEvolutionMode(o.SchemaEvolution)
	if err != nil {
		return "", fmt.Errorf("--schema-evolution-mode: %w", err)
	}
	if o.MergeSchema {
		if o.SchemaEvolution != "" && mode != source.SchemaEvolutionAddNewColumns {
			return "", fmt.Errorf("--merge-schema adds new columns, --schema-evolution-mode %s does not: give one of them", o.SchemaEvolution)
		}
		mode = source.SchemaEvolutionAddNewColumns
	}
	if mode == source.SchemaEvolutionAddNewColumns && o.FileSink != "" {
		return "", fmt.Errorf("--merge-schema (addNewColumns) evolves a Delta table's schema; the file sink %s has none: give --table, or --schema-evolution-mode none to drop new fields", o.FileSink)
	}
	return mode, nil
}

// cdcDecoding is how --cdc-format debezium reads events of rows with the
// given schema: the envelope schema to decode, and the transform into change
// rows. With --sequence-by ts_ms the event's ts_ms becomes a table column
// (and is not expected inside after).
func cdcDecoding(sch *schema.StructType, sequenceBy string) (*schema.StructType, *schema.StructType, func(*schema.Batch) (*schema.Batch, error)) {
	row := sch
	withTs := strings.EqualFold(sequenceBy, source.DebeziumTsColumn)
	if i := row.FieldIndex(source.DebeziumTsColumn); withTs && i >= 0 {
		row = &schema.StructType{Fields: slices.Delete(slices.Clone(row.Fields), i, i+1)}
	}
	return row, source.DebeziumSchema(row), func(b *schema.Batch) (*schema.Batch, error) { return source.DebeziumChanges(b, row, withTs) }
}

// checkCDC checks the update-mode flags that the sink cannot: --cdc-format
// needs the row schema (--schema, or the table's) and update mode.
func checkCDC(o IngestOptions, sch *schema.StructType) error {
	switch o.CDCFormat {
	case "":
		return nil
	case "debezium":
	default:
		return fmt.Errorf("--cdc-format %q: the supported format is debezium", o.CDCFormat)
	}
	if o.OutputMode != string(sink.Update) {
		return fmt.Errorf("--cdc-format %s needs --output-mode update and --merge-key", o.CDCFormat)
	}
	if o.DeleteWhen != "" {
		return fmt.Errorf("--delete-when: with --cdc-format %s deletes are the events with op 'd'", o.CDCFormat)
	}
	if sch == nil {
		return fmt.Errorf("--cdc-format %s needs --schema (the schema of the events' after rows) or an existing --table", o.CDCFormat)
	}
	return nil
}

// ingestHint adds what to do next to the two failures a new user meets
// first: a record that does not fit, and a planned input file that is gone
// (a rerun must read exactly the files offsets/N planned).
func ingestHint(err error, badRecordsPath, fileSink bool, checkpointURL string) error {
	var be *stream.BatchError
	var me *checkpoint.MismatchError
	switch {
	case err == nil:
		return nil
	case errors.Is(err, source.ErrUnknownField) && fileSink:
		// A file sink has no schema to evolve (--merge-schema is refused).
		return &hintError{err, err.Error() + "; give a --schema with the new columns, " +
			"or --schema-evolution-mode none to drop such fields"}
	case errors.Is(err, source.ErrUnknownField):
		return &hintError{err, err.Error() + "; to add new columns to the table pass --merge-schema, " +
			"or --schema-evolution-mode none to drop such fields"}
	case errors.As(err, &me):
		return &hintError{err, fmt.Sprintf("checkpoint %s records %s %q but this run uses %q: a checkpoint belongs to one source and sink; "+
			"use a new --checkpoint directory, or pass --allow-reset to reuse this one", checkpointURL, me.Field, me.Recorded, me.Given)}
	case errors.Is(err, source.ErrBadRecord) && !badRecordsPath:
		return &hintError{err, err.Error() + "; to go on, fix the input (a rerun reads the same files) or --schema/--timestamp-format, " +
			"or pass --bad-records-path URL to set such records aside"}
	case errors.Is(err, storage.ErrNotFound) && errors.As(err, &be) && be.Stage == "getBatch":
		return &hintError{err, fmt.Sprintf("%s; batch %d was planned with this file (offsets/%d in the checkpoint %s) and a rerun reads exactly "+
			"the planned files: put the file back (it may be fixed)", err, be.BatchID, be.BatchID, checkpointURL)}
	}
	return err
}

// lazySink builds the sink once the query id is known (it lives in the
// checkpoint's metadata file, opened by the driver): build runs from
// stream.Options.CheckFresh, before the first batch.
type lazySink struct {
	build            func(ctx context.Context, queryID string, fresh bool) (sink.Sink, error)
	allowReset       bool
	afterCommitDelay time.Duration
	rejects          *rejects // nil without --bad-records-path
	chk              storage.Store
	transform        func(*schema.Batch) (*schema.Batch, error) // --cdc-format: change events to change rows

	mu      sync.Mutex
	sink    sink.Sink
	queryID string
}

// checkFresh is stream.Options.CheckFresh.
func (l *lazySink) checkFresh(ctx context.Context, queryID string, fresh bool) error {
	s, err := l.build(ctx, queryID, fresh)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.sink, l.queryID = s, queryID
	l.mu.Unlock()
	return nil
}

func (l *lazySink) AddBatch(ctx context.Context, batchID int64, b *schema.Batch) (sink.Result, error) {
	l.mu.Lock()
	s := l.sink
	l.mu.Unlock()
	if s == nil {
		return sink.Result{}, fmt.Errorf("ingest: sink used before the checkpoint was opened")
	}
	if l.rejects != nil {
		// The batch's rejects first, in their own table with their own txn:
		// a replayed batch (same files, same rejects) writes them once.
		if err := l.rejects.flush(ctx, l.queryID, batchID); err != nil {
			return sink.Result{}, err
		}
	}
	if l.transform != nil {
		var err error
		if b, err = l.transform(b); err != nil {
			return sink.Result{}, fmt.Errorf("batch %d: %w", batchID, err)
		}
	}
	res, err := s.AddBatch(ctx, batchID, b)
	if err == nil && l.afterCommitDelay > 0 {
		// Test knob (LAKESINK_TEST_AFTER_COMMIT_DELAY): widens the window
		// between the sink's commit and commits/N so that crash tests reach
		// the "commit landed, checkpoint not yet" recovery path often.
		// Sleeping here is always safe: it only delays commits/N.
		select {
		case <-time.After(l.afterCommitDelay):
		case <-ctx.Done():
		}
	}
	return res, err
}

// checkSourceNotIngested refuses a fresh checkpoint over a source that another
// query id already ingested into the table (commitInfo.operationParameters
// sourceUrl and queryId of earlier STREAMING UPDATE commits): its rows would
// be written again under the new query id.
func checkSourceNotIngested(ctx context.Context, t *table.Table, sourceURL, queryID string) error {
	exists, err := t.Exists(ctx)
	if err != nil || !exists {
		return err
	}
	hist, err := t.History(ctx, 0)
	if err != nil {
		return err
	}
	for _, c := range hist {
		params := c.CommitInfo.StringMap("operationParameters")
		if params["sourceUrl"] == sourceURL && params["queryId"] != "" && params["queryId"] != queryID {
			return fmt.Errorf("%w: version %d of %s holds source %s from query %s, and the checkpoint's query %s is new: "+
				"reusing the source would write its rows again. Use the original checkpoint, or pass --allow-reset to write a second copy",
				errDuplicateSource, c.Version, t.URL(), sourceURL, params["queryId"], queryID)
		}
	}
	return nil
}

// errFileSinkAhead: a fresh checkpoint against a _spark_metadata log that is
// already ahead would have every batch silently skipped.
var errFileSinkAhead = errors.New("file-sink log is ahead of a fresh checkpoint")

// fileSinkFirstBatch returns the first batch id of the query: 0, unless the
// checkpoint is fresh (no offsets yet) and the file sink's log already has
// batches: then every new batch would be skipped as "already committed", so it
// is refused unless allowReset, which continues after the log's latest batch.
func fileSinkFirstBatch(ctx context.Context, chk, out storage.Store, opts filesink.Options, allowReset bool) (int64, error) {
	for _, err := range chk.List(ctx, "offsets/", "") {
		if err != nil {
			return 0, err
		}
		return 0, nil // not fresh: the checkpoint decides
	}
	has, err := filesink.HasLog(ctx, out)
	if err != nil || !has {
		return 0, err
	}
	log, err := filesink.NewLog(out, opts)
	if err != nil {
		return 0, err
	}
	latest, err := log.LatestBatchID(ctx)
	if err != nil || latest < 0 {
		return 0, err
	}
	if !allowReset {
		return 0, fmt.Errorf("%w: %s/_spark_metadata ends at batch %d but the checkpoint has no batch: batches 0..%d would be skipped as already written. "+
			"Use the checkpoint that wrote this directory, or pass --allow-reset to continue numbering at batch %d", errFileSinkAhead, out.URL(), latest, latest, latest+1)
	}
	return latest + 1, nil
}

// rejectsSchema is the schema of the --bad-records-path table.
var rejectsSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "batchId", Type: schema.TypeLong, Nullable: false},
	{Name: "file", Type: schema.TypeString, Nullable: true},
	{Name: "line", Type: schema.TypeLong, Nullable: true},
	{Name: "field", Type: schema.TypeString, Nullable: true},
	{Name: "reason", Type: schema.TypeString, Nullable: true},
	{Name: "record", Type: schema.TypeString, Nullable: true},
}}

// rejects collects the records of the batch being read that do not fit the
// schema and writes them to a quarantine Delta table, committed with its own
// txn {appId: <queryId>-bad-records, version: batchId} (the rejects-table
// pattern): a batch replayed after a crash writes its rejects once.
type rejects struct {
	table *table.Table
	mu    sync.Mutex
	rows  [][]any
}

// add is source.Options.OnBadRecord.
func (r *rejects) add(b source.BadRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, []any{nil, b.File, int64(b.Line), b.Field, b.Reason, b.Raw})
	return nil
}

// flush writes the collected rejects as batch batchID.
func (r *rejects) flush(ctx context.Context, queryID string, batchID int64) error {
	r.mu.Lock()
	rows := r.rows
	r.rows = nil
	r.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	for _, row := range rows {
		row[0] = batchID
	}
	_, err := r.table.Write(ctx, &schema.Batch{Schema: rejectsSchema, Rows: rows}, table.WriteOptions{
		AppID: queryID + "-bad-records", Version: batchID, Operation: "STREAMING UPDATE",
		OperationParameters: map[string]any{"outputMode": "Append", "queryId": queryID, "epochId": fmt.Sprint(batchID), "badRecords": "true"},
	})
	if err != nil {
		return fmt.Errorf("write %d rejected records of batch %d to %s: %w", len(rows), batchID, r.table.URL(), err)
	}
	return nil
}

// checkLocalDir refuses a local source that does not exist or is not a
// directory (a typo would otherwise read as "no new input"). Object-store
// prefixes cannot be told apart from empty ones and are not checked.
func checkLocalDir(url string) error {
	if strings.Contains(url, "://") && !strings.HasPrefix(url, "file://") {
		return nil
	}
	p := strings.TrimPrefix(url, "file://")
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("directory %s: %w", url, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (give a folder; globs are not supported)", url)
	}
	return nil
}

// checkFileSinkPartitioning refuses to append to a file-sink directory with
// other partition columns than its files already have: Spark (and lakesink)
// could no longer read the directory.
func checkFileSinkPartitioning(ctx context.Context, out storage.Store, opts filesink.Options) error {
	has, err := filesink.HasLog(ctx, out)
	if err != nil || !has {
		return err
	}
	ls, err := filesink.ListFiles(ctx, out, opts)
	if err != nil || len(ls.Files) == 0 {
		return err
	}
	var have []string
	for _, kv := range ls.Files[0].Partition {
		have = append(have, kv.Column)
	}
	if !slices.Equal(have, opts.PartitionColumns) {
		return fmt.Errorf("--partition-by [%s]: %s already holds files partitioned by [%s]; give the same --partition-by",
			strings.Join(opts.PartitionColumns, ","), out.URL(), strings.Join(have, ","))
	}
	return nil
}
