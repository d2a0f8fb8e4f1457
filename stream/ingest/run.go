package ingest

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/metrics"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/delta"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// Run validates opts and runs the ingest they describe until the trigger
// says stop (stream.Query.Run): AvailableNow and Once return when done;
// ProcessingTime runs until ctx is cancelled (nil between batches; a batch
// cut short is abandoned uncommitted and Run returns an error wrapping
// ctx.Err()). A KafkaGroup run is a kafka.Group worker instead.
//
// Errors: ErrInvalidOptions; the guards' ErrDuplicateSource,
// ErrFileSinkAhead, ErrPartitioningChanged and ErrCannotRecover; and those
// of packages stream (ErrCheckpointInUse, ErrCheckpointMismatch,
// *BatchError), source (ErrBadRecord, ErrUnknownField), sink, filesink,
// table and storage (storage.ErrCorrupt marks corrupt logs and files).
func Run(ctx context.Context, opts Options) (Summary, error) {
	o := opts
	o.PartitionColumns = slices.Clone(opts.PartitionColumns)
	o.MergeKeys = slices.Clone(opts.MergeKeys)
	if o.Format == "" {
		o.Format = FormatJSON
	}
	if o.FileFormat == "" {
		o.FileFormat = "parquet"
	}
	if err := o.Validate(); err != nil {
		return Summary{}, err
	}
	if o.group() {
		return runGroup(ctx, o)
	}
	return runCheckpointed(ctx, o)
}

func runCheckpointed(ctx context.Context, o Options) (Summary, error) {
	var sum Summary
	kafkaIn := o.Format == FormatKafka
	deltaIn := o.Format == FormatDelta
	sourceURL := kafka.SourceURL(kafka.Options{Brokers: o.Kafka.Brokers, Topics: o.Kafka.Topics, TopicPattern: o.Kafka.TopicPattern})
	var srcStore storage.Store
	if !kafkaIn {
		if err := storage.CheckLocalDir(o.Source); err != nil {
			return sum, fmt.Errorf("source %w", err) // "source directory X: ...", "source X is not a directory ..."
		}
		var err error
		if srcStore, err = storage.Open(ctx, o.Source); err != nil {
			return sum, fmt.Errorf("open source: %w", err)
		}
		defer srcStore.Close()
		sourceURL = srcStore.URL()
	}
	chkStore, err := storage.Open(ctx, o.Checkpoint)
	if err != nil {
		return sum, fmt.Errorf("open checkpoint: %w", err)
	}
	defer chkStore.Close()
	sum.CheckpointURL = chkStore.URL()

	evolution := o.SchemaEvolution
	if evolution == "" {
		evolution = source.SchemaEvolutionFailOnNewColumns
	}
	sch := o.Schema
	// partitioned: the Delta table is (or will be) partitioned, which sizes
	// the chunks of a Parquet source (partitionedChunkRows).
	partitioned := len(o.PartitionColumns) > 0
	lazy := &lazySink{chk: chkStore, afterCommitDelay: o.AfterCommitDelay}
	var firstBatchID int64
	if o.FileSink != "" {
		fsStore, err := storage.Open(ctx, o.FileSink)
		if err != nil {
			return sum, fmt.Errorf("open file sink: %w", err)
		}
		defer fsStore.Close()
		fopts := filesink.DefaultOptions()
		fopts.Format = o.FileFormat
		fopts.PartitionColumns = o.PartitionColumns
		if o.Compression != "" {
			fopts.Compression = o.Compression
		}
		if o.TargetFileSizeBytes > 0 {
			fopts.TargetFileSizeBytes = o.TargetFileSizeBytes
		}
		if o.OutputMode != "" {
			fopts.OutputMode = string(o.OutputMode)
		}
		if err := fopts.Validate(); err != nil {
			return sum, err
		}
		if firstBatchID, err = fileSinkFirstBatch(ctx, chkStore, fsStore, fopts, o.AllowReset); err != nil {
			return sum, err
		}
		if err := checkFileSinkPartitioning(ctx, fsStore, fopts); err != nil {
			return sum, err
		}
		lazy.build = func(ctx context.Context, queryID string, fresh bool) (sink.Sink, error) {
			fo := fopts
			fo.QueryID = queryID
			return filesink.New(ctx, fsStore, fo)
		}
		sum.SinkKind, sum.SinkURL = "filesink", fsStore.URL()
	} else {
		t, err := table.Open(ctx, o.Table)
		if err != nil {
			return sum, err
		}
		defer t.Close()
		if snap, err := t.Snapshot(ctx); err == nil {
			partitioned = len(snap.Metadata().PartitionColumns) > 0
			if sch == nil {
				if sch, err = snap.Schema(); err != nil {
					return sum, err
				}
			}
			if have := snap.Metadata().PartitionColumns; len(o.PartitionColumns) > 0 && !slices.Equal(have, o.PartitionColumns) {
				return sum, &PartitioningError{Location: t.URL(), Have: have, Want: o.PartitionColumns}
			}
		}
		dopts := sink.Options{
			OutputMode: o.OutputMode, PartitionColumns: o.PartitionColumns,
			MergeKeys: o.MergeKeys, SequenceBy: o.SequenceBy, DeleteWhen: o.DeleteWhen, LastRowWins: o.CDCFormat != "",
			TargetFileSizeBytes: o.TargetFileSizeBytes, Compression: o.Compression, MergeSchema: evolution == source.SchemaEvolutionAddNewColumns,
			OperationParameters: txlog.OperationParameters{paramSourceURL: sourceURL},
			BatchParameters:     lazy.batchParameters(ctx),
		}
		if o.CDCFormat != "" && o.DeleteWhen == "" && sch != nil {
			dopts.DeleteWhen = source.DebeziumDeleteWhen(sch) // sch nil: refused below
		}
		check := dopts
		check.QueryID = "validate" // the real one comes from the checkpoint
		if err := check.Validate(); err != nil {
			return sum, err
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
		sum.SinkKind, sum.SinkURL = "delta", t.URL()
		if o.RecoverCheckpointFromTable {
			rec, err := recoverCheckpointFromTable(ctx, chkStore, t, kafkaIn, sourceURL)
			if err != nil {
				return sum, err
			}
			if o.Recovered != nil {
				o.Recovered(rec)
			}
		}
	}

	srcOpts := source.DefaultOptions(source.Format(o.Format))
	srcOpts.Schema = sch
	if o.CDCFormat != "" {
		if sch == nil {
			return sum, &CDCError{Format: o.CDCFormat, Problem: CDCNeedsSchema}
		}
		_, srcOpts.Schema, lazy.transform = source.DebeziumDecoding(sch, o.SequenceBy)
	}
	srcOpts.SchemaEvolution = evolution
	if o.Schema == nil && evolution == source.SchemaEvolutionFailOnNewColumns && o.CDCFormat == "" && expr.ReadsColumnsOutside(o.DeleteWhen, sch) {
		// DeleteWhen reads an input column the table does not have (op):
		// decode the table's columns plus the input's own.
		srcOpts.SchemaEvolution = source.SchemaEvolutionAddNewColumns
	}
	srcOpts.TimestampFormat = o.TimestampFormat
	if o.FileSink == "" && o.CDCFormat == "" && o.OutputMode != sink.Update {
		// A Delta append (or complete) writes a Parquet batch as it reads
		// it, row group by row group: the batch is never in memory whole.
		srcOpts.StreamChunkRows = streamChunkRows
		if partitioned && srcOpts.Format == source.FormatParquet {
			srcOpts.StreamChunkRows, srcOpts.StreamChunkBytes = partitionedChunkRows, partitionedChunkBytes
		}
	}
	if o.BadRecordsTable != "" {
		rt, err := table.Open(ctx, o.BadRecordsTable)
		if err != nil {
			return sum, fmt.Errorf("open bad-records table: %w", err)
		}
		defer rt.Close()
		lazy.rejects = &rejects{table: rt}
		srcOpts.OnBadRecord = lazy.rejects.add
	}
	var im *metrics.Ingest
	if o.Registerer != nil {
		if im, err = metrics.NewIngest(o.Registerer, sum.SinkURL); err != nil {
			return sum, err
		}
	}
	if o.Ready != nil {
		o.Ready() // the table's snapshot (or the file sink's log) is open
	}
	var (
		src      source.Source
		maxBytes int64
	)
	maxFiles := o.MaxFilesPerTrigger
	switch {
	case deltaIn:
		ds, err := deltaSource(srcStore, o.Delta)
		if err != nil {
			return sum, err
		}
		defer ds.Close()
		src, maxBytes = ds, o.Delta.MaxBytesPerTrigger
		if maxFiles == 0 {
			maxFiles = DeltaMaxFilesPerTrigger
		}
	case kafkaIn:
		ko := kafkaOptions(o.Kafka, srcOpts)
		// A change feed's tombstones (Debezium's null value after each
		// delete, for log compaction) carry no change.
		ko.SkipTombstones = ko.SkipTombstones || o.CDCFormat != ""
		ks, err := kafka.NewSource(ko)
		if err != nil {
			return sum, err
		}
		defer ks.Close()
		src = ks
	default:
		if src, err = source.NewFileSource(srcStore, srcOpts); err != nil {
			return sum, err
		}
	}

	qopts := stream.DefaultOptions()
	qopts.CheckpointStore = chkStore
	qopts.Source = src
	qopts.Sink = lazy
	qopts.SinkKind = sum.SinkKind
	qopts.SinkURL = sum.SinkURL
	qopts.FirstBatchID = firstBatchID
	qopts.Trigger = o.Trigger
	qopts.MaxFilesPerTrigger = maxFiles
	qopts.MaxBytesPerTrigger = maxBytes
	qopts.AllowReset = o.AllowReset
	qopts.CheckFresh = lazy.checkFresh
	qopts.Logger = o.Logger
	qopts.Progress = func(pr stream.Progress) {
		observeProgress(im, pr)
		sum.Batches++
		sum.NumInputRows += pr.NumInputRows
		if pr.Sink.Skipped {
			sum.SkippedBatches++
		}
		if o.Progress != nil {
			o.Progress(pr)
		}
	}
	q, err := stream.NewQuery(qopts)
	if err != nil {
		return sum, err
	}
	err = q.Run(ctx)
	sum.QueryID = q.ID()
	return sum, err
}

// kafkaOptions completes the Kafka source options with the row options of
// the run (used for the json value format only).
func kafkaOptions(ko kafka.Options, src source.Options) kafka.Options {
	if ko.ValueFormat == "json" {
		ko.Schema = src.Schema
		ko.TimestampFormat = src.TimestampFormat
		ko.DateFormat = src.DateFormat
		ko.SchemaEvolution = src.SchemaEvolution
		ko.OnBadRecord = src.OnBadRecord
	}
	return ko
}

// deltaSource builds the Delta table source over store.
func deltaSource(store storage.Store, d DeltaSourceOptions) (*delta.Source, error) {
	o := delta.DefaultOptions(store.URL())
	o.Store = store
	o.StartingVersion = d.StartingVersion
	o.StartingTimestamp = d.StartingTimestamp
	o.SkipChangeCommits = d.SkipChangeCommits
	o.Where, o.Columns = d.Where, d.Columns
	return delta.NewSource(o)
}

// observeProgress feeds a micro-batch of the stream driver to m.
func observeProgress(m *metrics.Ingest, pr stream.Progress) {
	if m == nil {
		return
	}
	b := metrics.Batch{Result: "committed", Records: pr.NumInputRows, Files: pr.Sink.NumFiles, FileBytes: pr.Sink.NumBytes,
		Duration: msDuration(pr.DurationMs.TriggerExecution), Commit: msDuration(pr.DurationMs.AddBatch)}
	if pr.Sink.Skipped {
		b.Result = "skipped"
	}
	for _, s := range pr.Sources {
		b.Bytes += s.NumInputBytes
		b.BadRecords += s.NumBadRecords
	}
	m.ObserveBatch(b)
}

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
		return 0, &FileSinkAheadError{Dir: out.URL(), LatestBatchID: latest}
	}
	return latest + 1, nil
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
		return &PartitioningError{Location: out.URL(), FileSink: true, Have: have, Want: opts.PartitionColumns}
	}
	return nil
}

// msDuration converts a DurationMs figure.
func msDuration(ms int64) time.Duration { return time.Duration(ms) * time.Millisecond }

// streamChunkRows is how many records of a Parquet source are decoded at a
// time when a batch is streamed into a Delta table (about 4 MiB of Go values
// for the flights schema; two chunks are alive at a time, one decoded while
// the other is written). 65,536 before: the 3M flights by origin then
// peaked at ~245 MiB RSS against ~210, the unpartitioned ingest at ~105
// against ~94, with no less CPU.
const streamChunkRows = 1 << 15

// partitionedChunkRows and partitionedChunkBytes bound the chunks of a
// Parquet source streamed into a partitioned Delta table instead: each
// chunk is split among its partitions, and every partition's file then
// takes a write of its share (the 229 airports of the 3M flights ~143 rows
// each of a 32,768-row chunk), whose fixed costs (the parquet-go calls per
// column and page, the sizes checked) were ~8% of the CPU. At 131,072 rows
// (about 12 MiB of decoded values for the flights' 5 columns) the 3M
// flights by origin took 0.92x the task-clock of 32,768 (median of 15
// alternated pairs) and peaked at 177 MiB RSS against 150; an
// unpartitioned ingest gained nothing from larger chunks (its values left
// the CPU caches: 1.02x at 131,072, 1.11x at 262,144). The byte bound
// (source.Options.StreamChunkBytes) keeps a wide schema's chunks as small
// as before.
const (
	partitionedChunkRows  = 1 << 17
	partitionedChunkBytes = 16 << 20
)
