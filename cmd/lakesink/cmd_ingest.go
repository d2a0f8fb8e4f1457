package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/checkpoint"
	"github.com/lakesink/lakesink/stream/ingest"
	"github.com/lakesink/lakesink/stream/kafka"
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
	f.StringVar(&o.Source, "source", "", "directory URL of input files (required, except with --format kafka)")
	f.StringVar(&o.Format, "format", "json", "input format: json (NDJSON or a JSON array), csv (with header), parquet, kafka, or delta (--source is a Delta table; its new data files)")
	f.StringVar(&o.Checkpoint, "checkpoint", "", "checkpoint directory URL (Spark layout: metadata, offsets/, commits/, sources/) (required, except with --kafka-group)")
	f.StringVar(&o.Table, "table", "", "Delta table URL to write (created at the first batch if absent)")
	f.StringVar(&o.FileSink, "file-sink", "", "Spark file-sink directory URL to write instead of a Delta table")
	f.StringVar(&o.FileFormat, "file-format", "parquet", "file-sink data format: parquet or json")
	f.StringSliceVar(&o.PartitionBy, "partition-by", nil, "partition columns of a new table, comma-separated")
	f.StringVar(&o.OutputMode, "output-mode", "append", "append, complete, or update (Delta only: merge each batch into the table by --merge-key)")
	f.StringSliceVar(&o.MergeKeys, "merge-key", nil, "update mode: the key columns each batch is merged by, comma-separated")
	f.StringVar(&o.SequenceBy, "sequence-by", "", "update mode: column ordering the changes of a key (the highest wins; an older change never overwrites a newer row)")
	f.StringVar(&o.DeleteWhen, "delete-when", "", `update mode: predicate over the input's columns marking deletes, e.g. "op = 'd'"`)
	f.StringVar(&o.CDCFormat, "cdc-format", "", "update mode: input records are change events of this format: debezium (JSON envelope before/after/op/ts_ms, bare or in Kafka Connect's {schema, payload}; --schema is after's; Kafka tombstones are skipped)")
	f.StringVar(&o.Trigger, "trigger", "available-now", "available-now | once | interval=30s")
	f.IntVar(&o.MaxFilesPerTrigger, "max-files-per-trigger", 0, "at most N new files per micro-batch (0: no limit)")
	f.StringVar(&o.Schema, "schema", "", "Delta schema JSON (inline or file); default: the table's, else inferred from the first batch")
	f.StringVar(&o.TimestampFormat, "timestamp-format", "", `pattern of timestamp values without a zone, taken as UTC (Go layout "2006/01/02 15:04" or Spark "yyyy/MM/dd HH:mm")`)
	f.BoolVar(&o.AllowReset, "allow-reset", false, "allow a checkpoint to be reused with another source or sink, or a fresh checkpoint on a source the table already ingested")
	f.StringVar(&o.TargetFileSize, "target-file-size", "", "roll data files at this size (default: delta.targetFileSize, else 128MiB)")
	f.StringVar(&o.Compression, "compression", "", "data file compression: Parquet "+parquetCompressions+" (default snappy); the json file sink gzip or none (default none)")
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
recreated table or a version removed by cleanup-log fails, never skipped. A
schema change on the source stops the query after the rows written before
it, naming both schemas; the restart reads on with the new schema (with
--merge-schema new columns are added to --table).

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
  between batches), 1 error (e.g. a record that does not fit, breaks a
  CHECK constraint of the table, or gives a value for a GENERATED ALWAYS AS
  IDENTITY column), 3 commit conflict or checkpoint in use by another
  ingest, 4 corrupt or unsupported table (e.g. a writer feature lakesink
  does not honour, named: generated columns), 130 interrupted during a
  batch (it is abandoned uncommitted and reruns at the next start; the
  table and checkpoint stay consistent)`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runIngest(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runIngest(ctx context.Context, p *printer, o IngestOptions) error {
	cm, err := o.Metrics.start()
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	defer cm.close()
	opts, err := ingestOptions(o)
	if err != nil {
		return err
	}
	ran := false // the sink is open: the run gets a summary
	opts.Registerer, opts.Ready = cm.registerer(), func() { ran = true; cm.ready() }
	started := time.Now()
	if opts.KafkaGroup != "" {
		opts.GroupProgress = func(pr kafka.GroupProgress) {
			cm.observe(pr.Err == "")
			printGroupProgress(p, pr)
		}
		sum, runErr := ingest.Run(ctx, opts)
		if p.json && ran {
			_ = p.emit("summary", map[string]any{"group": sum.Group, "batches": sum.Batches, "abandonedBatches": sum.AbandonedBatches,
				"numInputRows": sum.NumInputRows, "sink": sum.SinkURL, "durationMs": time.Since(started).Milliseconds(), "ok": runErr == nil})
		} else if !p.quiet && ran {
			fmt.Fprintf(p.err, "ingested %s in %s (%d abandoned) into %s in %s (group %s)\n", plural(sum.NumInputRows, "record", "records"),
				plural(sum.Batches, "batch", "batches"), sum.AbandonedBatches, sum.SinkURL, time.Since(started).Round(time.Millisecond), sum.Group)
		}
		return ingestFlagError(runErr, o.CDCFormat != "")
	}
	var sinkKind string
	opts.Recovered = func(r ingest.Recovered) {
		if p.json {
			_ = p.emit("recovered", map[string]any{"checkpoint": r.Checkpoint, "queryId": r.QueryID, "batchId": r.BatchID,
				"tableVersion": r.TableVersion, "sourceEndOffset": r.EndOffset})
		} else if !p.quiet {
			fmt.Fprintf(p.err, "recovered checkpoint %s from %s version %d: query %s, batch %d ended at %s; continuing at batch %d\n",
				r.Checkpoint, r.Table, r.TableVersion, r.QueryID, r.BatchID, r.EndOffset, r.BatchID+1)
		}
	}
	if o.FileSink != "" {
		sinkKind = "filesink"
	}
	opts.Progress = func(pr stream.Progress) {
		cm.observe(true)
		printProgress(p, pr, sinkKind, o.OutputMode)
	}
	sum, runErr := ingest.Run(ctx, opts)
	if p.json && ran {
		_ = p.emit("summary", map[string]any{"queryId": sum.QueryID, "batches": sum.Batches, "skippedBatches": sum.SkippedBatches,
			"numInputRows": sum.NumInputRows, "sink": sum.SinkURL, "durationMs": time.Since(started).Milliseconds(), "ok": runErr == nil})
	} else if !p.json && !p.quiet && ran && (runErr == nil || sum.Batches > 0) {
		if sum.Batches == 0 {
			fmt.Fprintf(p.err, "no new input: nothing to do (query %s)\n", sum.QueryID)
		} else {
			fmt.Fprintf(p.err, "ingested %s in %s (%d skipped) into %s in %s (query %s)\n",
				plural(sum.NumInputRows, "row", "rows"), plural(sum.Batches, "batch", "batches"), sum.SkippedBatches, sum.SinkURL,
				time.Since(started).Round(time.Millisecond), sum.QueryID)
		}
	}
	return ingestHint(ingestFlagError(runErr, o.CDCFormat != ""), o.BadRecordsPath != "", o.FileSink != "", sum.CheckpointURL)
}

// ingestOptions maps the flags to ingest.Options, refusing flag
// combinations with the flags' names.
func ingestOptions(o IngestOptions) (ingest.Options, error) {
	opts := ingest.DefaultOptions()
	group := o.Kafka.Group != "" || o.Kafka.Assign != ""
	if group {
		if err := checkGroupFlags(o); err != nil {
			return opts, err
		}
	} else {
		if o.Checkpoint == "" {
			return opts, fmt.Errorf(`required flag(s) "checkpoint" not set`)
		}
		if (o.Table == "") == (o.FileSink == "") {
			return opts, fmt.Errorf("give exactly one of --table and --file-sink")
		}
		if o.RecoverFromTable && o.Table == "" {
			return opts, fmt.Errorf("%w: --recover-checkpoint-from-table needs --table (a Delta table)", ingest.ErrCannotRecover)
		}
	}
	switch ingest.Format(o.Format) {
	case ingest.FormatJSON, ingest.FormatCSV, ingest.FormatParquet, ingest.FormatKafka, ingest.FormatDelta:
	default:
		return opts, fmt.Errorf("--format %q: want json, csv, parquet, kafka or delta", o.Format)
	}
	switch sink.OutputMode(o.OutputMode) {
	case sink.Append, sink.Complete, sink.Update:
	default:
		return opts, fmt.Errorf("--output-mode %q: want append, complete or update", o.OutputMode)
	}
	if err := updateModeFlags(o); err != nil {
		return opts, err
	}
	trig, err := stream.ParseTrigger(o.Trigger)
	if err != nil {
		// Named by the flag, as --output-mode above (the library's error
		// names its option, "trigger"). An interval trigger that the
		// library refused has a bad duration: say so.
		if kind, iv, ok := strings.Cut(o.Trigger, "="); ok && (kind == "interval" || kind == "processing-time") {
			return opts, fmt.Errorf("--trigger %q: %q is not a duration of 0 or more; want %s=<duration> such as 30s, 5m or 1h30m (Go's time.ParseDuration units ns, us, ms, s, m, h)",
				o.Trigger, iv, kind)
		}
		return opts, fmt.Errorf("--trigger %q: want available-now, once or interval=<duration> (e.g. interval=30s)", o.Trigger)
	}
	opts.Trigger = trig
	if o.TargetFileSize != "" {
		if opts.TargetFileSizeBytes, err = parseByteSizeFlag("target-file-size", o.TargetFileSize); err != nil {
			return opts, err
		}
	}
	kafkaIn := group || o.Kafka.Enabled(o.Format)
	if flag := o.Delta.misused(); flag != "" && o.Format != "delta" {
		return opts, fmt.Errorf("%s applies to --format delta (a Delta table source), not --format %s", flag, o.Format)
	}
	opts.Format = ingest.Format(o.Format)
	if kafkaIn {
		opts.Format = ingest.FormatKafka
		if opts.Kafka, err = kafkaOptions(o.Kafka); err != nil {
			return opts, err
		}
	} else if o.Source == "" {
		return opts, fmt.Errorf("give --source (a directory URL), or --format kafka with --kafka-bootstrap")
	}
	opts.Source = o.Source
	if o.Format == "delta" {
		if opts.Delta, err = deltaSourceOptions(o.Delta); err != nil {
			return opts, err
		}
	}
	if group {
		opts.KafkaGroup = o.Kafka.Group
		if o.Kafka.Assign != "" {
			if err := json.Unmarshal([]byte(o.Kafka.Assign), &opts.KafkaAssign); err != nil {
				return opts, fmt.Errorf(`--kafka-assign %q: want JSON {"topic":[0,1]}: %w`, o.Kafka.Assign, err)
			}
		}
		if o.MergeSchema {
			opts.SchemaEvolution = source.SchemaEvolutionAddNewColumns
		}
	} else if opts.SchemaEvolution, err = ingestSchemaEvolution(o); err != nil {
		return opts, err
	}
	if o.Schema != "" {
		if opts.Schema, err = loadSchema(o.Schema); err != nil {
			return opts, err
		}
	}
	if err := ingest.CheckCDC(o.CDCFormat, sink.OutputMode(o.OutputMode), o.DeleteWhen); err != nil {
		return opts, cdcFlagError(err)
	}
	opts.Checkpoint, opts.Table, opts.FileSink = o.Checkpoint, o.Table, o.FileSink
	if err := checkPartitionBy(o.PartitionBy); err != nil {
		return opts, err
	}
	if o.FileSink != "" && o.FileFormat == "json" {
		if o.Compression != "" && o.Compression != "gzip" && o.Compression != "none" {
			return opts, fmt.Errorf("--compression %q: the json file sink writes gzip or none", o.Compression)
		}
	} else {
		if err := (table.WriteOptions{Compression: o.Compression}).Validate(); err != nil {
			return opts, &hintError{err, fmt.Sprintf("--compression %q: want %s", o.Compression, parquetCompressions)}
		}
	}
	opts.FileFormat, opts.PartitionColumns = o.FileFormat, o.PartitionBy
	opts.OutputMode = sink.OutputMode(o.OutputMode)
	opts.MergeKeys, opts.SequenceBy, opts.DeleteWhen, opts.CDCFormat = o.MergeKeys, o.SequenceBy, o.DeleteWhen, o.CDCFormat
	opts.MaxFilesPerTrigger = o.MaxFilesPerTrigger
	opts.TimestampFormat = o.TimestampFormat
	opts.AllowReset = o.AllowReset
	opts.Compression = o.Compression
	opts.BadRecordsTable = o.BadRecordsPath
	opts.RecoverCheckpointFromTable = o.RecoverFromTable
	if d, err := time.ParseDuration(os.Getenv("LAKESINK_TEST_AFTER_COMMIT_DELAY")); err == nil {
		opts.AfterCommitDelay = d // crash tests (tests/kill_test.go)
	}
	return opts, nil
}

// printProgress renders one batch of `lakesink ingest`.
func printProgress(p *printer, pr stream.Progress, sinkKind, outputMode string) {
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
		if sinkKind != "filesink" {
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
	if outputMode == string(sink.Update) && !pr.Sink.Skipped {
		merged = fmt.Sprintf(" (%d inserted, %d updated, %d deleted, %s rewritten)", pr.Sink.NumInserted, pr.Sink.NumUpdated, pr.Sink.NumDeleted,
			plural(pr.Sink.NumRemovedFiles, "file", "files"))
	}
	fmt.Fprintf(p.err, "batch %d: %s, %s -> %s%s, %s (%.0f rows/s)%s\n",
		pr.BatchID, plural(files, "file", "files"), plural(pr.NumInputRows, "row", "rows"), plural(pr.Sink.NumFiles, "data file", "data files"),
		merged, state, pr.ProcessedRowsPerSecond, rec)
}

// updateModeFlags refuses the merge flags outside update mode, and update
// mode without --merge-key, by flag (the sink's Options.Validate names its
// fields: "invalid options: update mode needs MergeKeys"). --cdc-format has
// its own rule (ingest.CheckCDC, cdcFlagError).
func updateModeFlags(o IngestOptions) error {
	if o.CDCFormat != "" {
		return nil
	}
	update := sink.OutputMode(o.OutputMode) == sink.Update
	if update && len(o.MergeKeys) == 0 {
		return fmt.Errorf("--output-mode update needs --merge-key (the key columns each batch is merged by)")
	}
	if update {
		return nil
	}
	for _, f := range []struct {
		name string
		set  bool
	}{{"--merge-key", len(o.MergeKeys) > 0}, {"--sequence-by", o.SequenceBy != ""}, {"--delete-when", o.DeleteWhen != ""}} {
		if f.set {
			return fmt.Errorf("%s applies to --output-mode update only (this run's is %s)", f.name, cmp.Or(o.OutputMode, string(sink.Append)))
		}
	}
	return nil
}

// parquetCompressions are the --compression values of Parquet data files
// (table.WriteOptions.Compression, which also takes lz4_raw and
// uncompressed).
const parquetCompressions = "snappy, zstd, gzip, lz4 or none"

// ingestFlagError words the guards' refusals with the flags that lift them,
// and the options a first batch refused with their flags (cdc: the run has
// --cdc-format, see mergeFlagError).
func ingestFlagError(err error, cdc bool) error {
	var dup *ingest.DuplicateSourceError
	var ahead *ingest.FileSinkAheadError
	var pe *ingest.PartitioningError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &dup) && dup.Version >= 0:
		return &hintError{err, fmt.Sprintf("%v: version %d of %s holds source %s from query %s, and the checkpoint's query %s is new: "+
			"reusing the source would write its rows again. Use the original checkpoint, or pass --allow-reset to write a second copy",
			ingest.ErrDuplicateSource, dup.Version, dup.Table, dup.Source, dup.OtherQueryID, dup.QueryID)}
	case errors.As(err, &dup):
		return &hintError{err, fmt.Sprintf("%v: %s was claimed for source %s by query %s at %s (%s), and this checkpoint's query %s is new: "+
			"reusing the source would write its rows again. Use the original checkpoint; if that query never committed "+
			"(lakesink history shows no batch of it), delete the claim file or pass --allow-reset",
			ingest.ErrDuplicateSource, dup.Table, dup.Source, dup.OtherQueryID, dup.ClaimedAt.UTC().Format(time.RFC3339), dup.ClaimPath, dup.QueryID)}
	case errors.As(err, &ahead):
		return &hintError{err, fmt.Sprintf("%v: %s/_spark_metadata ends at batch %d but the checkpoint has no batch: batches 0..%d would be skipped as already written. "+
			"Use the checkpoint that wrote this directory, or pass --allow-reset to continue numbering at batch %d",
			ingest.ErrFileSinkAhead, ahead.Dir, ahead.LatestBatchID, ahead.LatestBatchID, ahead.LatestBatchID+1)}
	case errors.As(err, &pe) && pe.FileSink:
		return &hintError{err, fmt.Sprintf("--partition-by [%s]: %s already holds files partitioned by [%s]; give the same --partition-by",
			strings.Join(pe.Want, ","), pe.Location, strings.Join(pe.Have, ","))}
	case errors.As(err, &pe):
		return &hintError{err, fmt.Sprintf("--partition-by %s: table %s is partitioned by [%s]; a table's partitioning cannot change by writing to it",
			strings.Join(pe.Want, ","), pe.Location, strings.Join(pe.Have, ","))}
	}
	return mergeFlagError(partitionByError(cdcFlagError(err)), cdc)
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

// cdcFlagError words ingest's CDC rule (ingest.CheckCDC, *ingest.CDCError)
// with the CLI's flags; any other error is returned as it is.
func cdcFlagError(err error) error {
	var ce *ingest.CDCError
	if !errors.As(err, &ce) {
		return err
	}
	var msg string
	switch ce.Problem {
	case ingest.CDCUnsupportedFormat:
		msg = fmt.Sprintf("--cdc-format %q: the supported format is %s", ce.Format, ingest.CDCDebezium)
	case ingest.CDCNeedsUpdate:
		msg = fmt.Sprintf("--cdc-format %s needs --output-mode update and --merge-key", ce.Format)
	case ingest.CDCDeleteWhen:
		msg = fmt.Sprintf("--delete-when: with --cdc-format %s deletes are the events with op 'd'", ce.Format)
	case ingest.CDCNeedsSchema:
		msg = fmt.Sprintf("--cdc-format %s needs --schema (the schema of the events' after rows) or an existing --table", ce.Format)
	default:
		return err
	}
	return &hintError{err, msg}
}

// ingestHint adds what to do next to the two failures a new user meets
// first: a record that does not fit, and a planned input file that is gone
// (a rerun must read exactly the files offsets/N planned).
func ingestHint(err error, badRecordsPath, fileSink bool, checkpointURL string) error {
	var be *stream.BatchError
	var me *checkpoint.MismatchError
	var re *source.RecordError
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
	case deltaSourceHint(err) != "":
		return &hintError{err, deltaSourceHint(err)} // ingest_delta.go
	case errors.As(err, &me):
		return &hintError{err, fmt.Sprintf("checkpoint %s records %s %q but this run uses %q: a checkpoint belongs to one source and sink; "+
			"use a new --checkpoint directory, or pass --allow-reset to reuse this one", checkpointURL, me.Field, me.Recorded, me.Given)}
	case errors.As(err, &re) && re.Line == 0:
		// A Parquet file is read or refused whole: --bad-records-path and
		// --timestamp-format do not apply.
		return &hintError{err, err.Error() + "; to go on, rewrite the file with the table's column types (a rerun reads the same files)"}
	case errors.Is(err, source.ErrBadRecord) && !badRecordsPath:
		return &hintError{err, err.Error() + "; to go on, fix the input (a rerun reads the same files) or --schema/--timestamp-format, " +
			"or pass --bad-records-path URL to set such records aside"}
	case errors.Is(err, storage.ErrNotFound) && errors.As(err, &be) && be.Stage == "getBatch":
		return &hintError{err, fmt.Sprintf("%s; batch %d was planned with this file (offsets/%d in the checkpoint %s) and a rerun reads exactly "+
			"the planned files: put the file back (it may be fixed)", err, be.BatchID, be.BatchID, checkpointURL)}
	}
	return err
}
