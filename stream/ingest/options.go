package ingest

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/stream/source"
)

// Format is what the source holds.
type Format string

// The source formats.
const (
	// FormatJSON: files of NDJSON lines or JSON arrays.
	FormatJSON Format = "json"
	// FormatCSV: CSV files with a header line.
	FormatCSV Format = "csv"
	// FormatParquet: Parquet files.
	FormatParquet Format = "parquet"
	// FormatKafka: a Kafka topic (Options.Kafka).
	FormatKafka Format = "kafka"
	// FormatDelta: a Delta table's new data files (Options.Delta; Delta's
	// DeltaSource).
	FormatDelta Format = "delta"
)

// CDCDebezium is the Options.CDCFormat of Debezium change events (the JSON
// envelope before/after/op/ts_ms).
const CDCDebezium = "debezium"

// DeltaMaxFilesPerTrigger is Delta's default maxFilesPerTrigger
// (DeltaOptions.MAX_FILES_PER_TRIGGER_OPTION_DEFAULT), used for FormatDelta
// when Options.MaxFilesPerTrigger is 0.
const DeltaMaxFilesPerTrigger = 1000

// DeltaSourceOptions are the options of a Delta table source (Delta's
// DeltaSource options; package stream/delta).
type DeltaSourceOptions struct {
	// StartingVersion starts at the commits of this version, without the
	// initial snapshot (Delta's startingVersion). -1 (DefaultOptions): the
	// latest snapshot's files, then later commits.
	StartingVersion int64
	// StartingTimestamp starts at the first commit at or after this time
	// (Delta's startingTimestamp). Zero: not set.
	StartingTimestamp time.Time
	// SkipChangeCommits skips commits that remove data (DELETE, UPDATE,
	// MERGE, overwrite) instead of failing (Delta's skipChangeCommits).
	SkipChangeCommits bool
	// MaxBytesPerTrigger is a soft cap on the bytes of new files per
	// micro-batch, at least one file (Delta's maxBytesPerTrigger). 0: none.
	MaxBytesPerTrigger int64
	// Where keeps only the source rows matching this predicate (package
	// expr), e.g. "country = 'NL'". Default: every row.
	Where string
	// Columns are the source columns to stream. Default: all.
	Columns []string
}

func (d DeltaSourceOptions) set() string {
	switch {
	case d.StartingVersion != -1:
		return "StartingVersion"
	case !d.StartingTimestamp.IsZero():
		return "StartingTimestamp"
	case d.SkipChangeCommits:
		return "SkipChangeCommits"
	case d.MaxBytesPerTrigger != 0:
		return "MaxBytesPerTrigger"
	case d.Where != "":
		return "Where"
	case len(d.Columns) > 0:
		return "Columns"
	}
	return ""
}

// Options configure one ingest run. Start from DefaultOptions.
type Options struct {
	// Format is what Source holds: FormatJSON, FormatCSV, FormatParquet,
	// FormatDelta, or FormatKafka (then Kafka, not Source, names the input).
	// Default FormatJSON.
	Format Format
	// Source is the URL of the directory of input files, or of the Delta
	// table for FormatDelta (package storage's URL forms). Files whose names
	// start with "." or "_" are ignored. Unused for FormatKafka.
	Source string
	// Kafka is the Kafka source for FormatKafka: brokers, topics, starting
	// offsets, TLS, SASL, value format. Its Schema, TimestampFormat,
	// SchemaEvolution and OnBadRecord are taken from these Options.
	Kafka kafka.Options
	// KafkaGroup, when set, runs one worker of this Kafka consumer group
	// writing to Table: the table's txn per partition (appId
	// <group>-<topic>-<partition>) is the only checkpoint, so Checkpoint
	// must be empty (package stream/kafka, Group).
	KafkaGroup string
	// KafkaAssign, with KafkaGroup, reads exactly these partitions with no
	// group membership (Spark's assign option, {"topic":[0,1]}).
	KafkaAssign map[string][]int32
	// Delta holds the options of a FormatDelta source.
	Delta DeltaSourceOptions

	// Schema is the schema of the input rows. Default: the table's, else
	// inferred from the first batch.
	Schema *schema.StructType
	// TimestampFormat is the pattern of timestamp values without a zone,
	// taken as UTC (a Go layout such as "2006/01/02 15:04" or a Spark one
	// such as "yyyy/MM/dd HH:mm"). Default: ISO 8601 forms.
	TimestampFormat string
	// SchemaEvolution says what happens to input fields the schema lacks:
	// source.SchemaEvolutionFailOnNewColumns (default: the record is an
	// error), AddNewColumns (Delta's mergeSchema; Delta tables only) or
	// None (their values are dropped), as Auto Loader's
	// cloudFiles.schemaEvolutionMode.
	SchemaEvolution source.SchemaEvolutionMode
	// BadRecordsTable, when set, is the URL of a Delta table that receives
	// the records that do not fit the schema (Spark's badRecordsPath):
	// valid rows go on, rejects land there once per batch. Default: such a
	// record fails the batch.
	BadRecordsTable string

	// Checkpoint is the URL of the checkpoint directory (Spark's layout:
	// metadata, offsets/, commits/, sources/). Required, except with
	// KafkaGroup.
	Checkpoint string
	// RecoverCheckpointFromTable rebuilds a lost checkpoint from the Delta
	// table's commits (Kafka source only): the query continues after the
	// newest batch the table recorded for this source, with its query id.
	RecoverCheckpointFromTable bool
	// AllowReset lets a checkpoint be reused with another source or sink,
	// and a fresh checkpoint run on a source the table already ingested
	// (a second copy, on purpose), or continue a file-sink log that is
	// ahead of it.
	AllowReset bool
	// Trigger decides when batches run. Default stream.AvailableNow().
	Trigger stream.Trigger
	// MaxFilesPerTrigger caps the new files of one batch; 0: no cap
	// (DeltaMaxFilesPerTrigger for FormatDelta).
	MaxFilesPerTrigger int

	// Table is the URL of the Delta table to write (created at the first
	// batch if absent). Exactly one of Table and FileSink is set.
	Table string
	// FileSink is the URL of a Spark file-sink directory to write instead.
	FileSink string
	// FileFormat is the file sink's data format: "parquet" (default) or
	// "json".
	FileFormat string
	// PartitionColumns are the partition columns of a new table or
	// directory; an existing one must have the same.
	PartitionColumns []string
	// OutputMode is sink.Append (default), sink.Complete or sink.Update
	// (Delta only: each batch is merged into the table by MergeKeys).
	OutputMode sink.OutputMode
	// MergeKeys are the key columns of update mode.
	MergeKeys []string
	// SequenceBy, in update mode, is the column ordering the changes of a
	// key: the highest wins, an older change never overwrites a newer row.
	SequenceBy string
	// DeleteWhen, in update mode, is a predicate over the input's columns
	// marking deletes, e.g. "op = 'd'".
	DeleteWhen string
	// CDCFormat, in update mode, says the input records are change events
	// of this format: CDCDebezium (Schema is then the schema of the
	// events' after rows, or the table's).
	CDCFormat string
	// TargetFileSizeBytes rolls data files at this size. 0: the table's
	// delta.targetFileSize, else 128 MiB.
	TargetFileSizeBytes int64
	// Compression is the codec of data files: for Parquet snappy
	// (default), zstd, gzip, lz4, none; for the json file sink
	// (FileFormat "json") gzip or none (default), as filesink.Options.
	Compression string

	// Progress, when set, receives a report after each batch, from Run's
	// goroutine (not called with KafkaGroup).
	Progress func(stream.Progress)
	// GroupProgress, when set, receives each batch of a KafkaGroup run.
	GroupProgress func(kafka.GroupProgress)
	// Recovered, when set, is called once RecoverCheckpointFromTable has
	// rebuilt the checkpoint.
	Recovered func(Recovered)
	// Registerer, when set, receives the run's ingest metrics (package
	// metrics, labelled with the sink's URL).
	Registerer prometheus.Registerer
	// Ready, when set, is called once the sink is open and before the
	// first batch (a health endpoint's readiness).
	Ready func()
	// Logger receives the driver's messages. Default: discard.
	Logger *slog.Logger

	// AfterCommitDelay is a test hook: it waits this long after each
	// batch's sink commit and before commits/N is written, so that crash
	// tests reach the "commit landed, checkpoint not yet" recovery path
	// often. Waiting there is always safe: it only delays commits/N.
	// Default 0.
	AfterCommitDelay time.Duration
}

// Recovered is what RecoverCheckpointFromTable rebuilt: the query QueryID
// continues after batch BatchID, recorded in table version TableVersion with
// source end offset EndOffset.
type Recovered struct {
	// Checkpoint and Table are the URLs involved.
	Checkpoint, Table string
	// QueryID is the query id taken from the table.
	QueryID string
	// BatchID is the newest batch of the source the table recorded.
	BatchID int64
	// TableVersion is the version of that batch's commit.
	TableVersion int64
	// EndOffset is the batch's raw source end offset (Kafka's JSON).
	EndOffset string
}

// Summary is what a Run did; filled as far as the run got, also when it
// returns an error.
type Summary struct {
	// QueryID is the checkpoint's query id ("" in a KafkaGroup run, or
	// when the checkpoint was not opened).
	QueryID string
	// Group is the consumer group of a KafkaGroup run.
	Group string
	// SinkKind is "delta" or "filesink"; SinkURL the table or directory.
	SinkKind, SinkURL string
	// CheckpointURL is the checkpoint directory as opened ("" in a
	// KafkaGroup run).
	CheckpointURL string
	// Batches counts the batches run (skipped and abandoned ones included).
	Batches int64
	// SkippedBatches were already committed (a rerun after a crash).
	SkippedBatches int64
	// AbandonedBatches were given up in a KafkaGroup run (a rebalance).
	AbandonedBatches int64
	// NumInputRows counts the rows read (records of committed batches in
	// a KafkaGroup run).
	NumInputRows int64
}

// DefaultOptions returns the defaults; Source, Checkpoint and Table (or
// FileSink) stay to be set.
func DefaultOptions() Options {
	return Options{
		Format: FormatJSON, Trigger: stream.AvailableNow(), FileFormat: "parquet", OutputMode: sink.Append,
		Delta:           DeltaSourceOptions{StartingVersion: -1},
		SchemaEvolution: source.SchemaEvolutionFailOnNewColumns,
	}
}

func (o *Options) group() bool { return o.KafkaGroup != "" || o.KafkaAssign != nil }

// Validate lists every problem with the options, each wrapping
// ErrInvalidOptions and naming the field.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	switch o.Format {
	case FormatJSON, FormatCSV, FormatParquet, FormatDelta, FormatKafka:
	default:
		bad("Format %q (want json, csv, parquet, kafka or delta)", o.Format)
	}
	if o.Format != FormatKafka && o.Source == "" {
		bad("Source is required (a directory URL), or Format kafka")
	}
	if f := o.Delta.set(); f != "" && o.Format != FormatDelta {
		bad("Delta.%s applies to Format delta (a Delta table source), not %s", f, o.Format)
	}
	if _, err := source.ParseSchemaEvolutionMode(string(o.SchemaEvolution)); err != nil {
		errs = append(errs, fmt.Errorf("%w: SchemaEvolution: %w", ErrInvalidOptions, err))
	}
	if o.SchemaEvolution == source.SchemaEvolutionAddNewColumns && o.FileSink != "" {
		bad("SchemaEvolution addNewColumns evolves a Delta table's schema; the file sink %s has none", o.FileSink)
	}
	if o.MaxFilesPerTrigger < 0 {
		bad("MaxFilesPerTrigger %d < 0", o.MaxFilesPerTrigger)
	}
	// A new table's partition columns that the given Schema cannot have
	// (*schema.PartitionColumnError) are refused here, before the source
	// is claimed: refused by the first batch, the claim made the rerun
	// with the right columns a "source already ingested" of another query.
	// (Change events' rows are not Schema's: the sink checks those.)
	if o.Schema != nil && len(o.PartitionColumns) > 0 && o.CDCFormat == "" {
		if err := schema.CheckPartitionColumns(o.Schema, o.PartitionColumns); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOptions, err))
		}
	}
	if o.TargetFileSizeBytes < 0 {
		bad("TargetFileSizeBytes %d < 0", o.TargetFileSizeBytes)
	}
	if o.group() {
		switch {
		case o.KafkaGroup == "":
			bad("KafkaAssign needs KafkaGroup (it names the txn appIds <group>-<topic>-<partition>)")
		case o.Table == "":
			bad("KafkaGroup writes a Delta table: set Table (a file sink has no txn per partition)")
		case o.Checkpoint != "":
			bad("KafkaGroup keeps no checkpoint: the table's txn per partition records what was written; leave Checkpoint empty")
		case o.RecoverCheckpointFromTable:
			bad("RecoverCheckpointFromTable does not apply to KafkaGroup (there is no checkpoint)")
		case o.OutputMode != "" && o.OutputMode != sink.Append:
			bad("KafkaGroup appends: OutputMode %s is not supported", o.OutputMode)
		case o.Kafka.TopicPattern != "":
			bad("KafkaGroup reads Kafka.Topics (a TopicPattern is not supported)")
		case o.BadRecordsTable != "":
			bad("BadRecordsTable is not supported with KafkaGroup yet")
		}
		return errors.Join(errs...)
	}
	if o.Checkpoint == "" {
		bad("Checkpoint is required")
	}
	if (o.Table == "") == (o.FileSink == "") {
		bad("set exactly one of Table and FileSink")
	}
	if o.RecoverCheckpointFromTable && o.Table == "" {
		errs = append(errs, fmt.Errorf("%w: %w: RecoverCheckpointFromTable needs Table (a Delta table)", ErrInvalidOptions, ErrCannotRecover))
	}
	if err := CheckCDC(o.CDCFormat, o.OutputMode, o.DeleteWhen); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}
