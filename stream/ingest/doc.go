// Package ingest runs a whole ingest, as `lakesink ingest` does: it opens the
// source, the checkpoint and the sink from their URLs, applies every guard
// of an ingest run, and drives the micro-batches with package stream. A Go
// service that calls Run gets the same protections as the CLI:
//
//   - a fresh checkpoint over a source that another query already ingested
//     into the Delta table (commitInfo.operationParameters sourceUrl and
//     queryId of its STREAMING UPDATE commits) is refused with
//     ErrDuplicateSource, unless Options.AllowReset;
//   - before its first batch a query claims its source in the table
//     (_lakesink/sources/<hash>.json, created put-if-absent), so of two
//     fresh queries started at the same moment on one source exactly one
//     runs (the other gets ErrDuplicateSource);
//   - a fresh checkpoint against a file-sink directory whose
//     _spark_metadata log is already ahead is refused with
//     ErrFileSinkAhead (every batch would be skipped as already written),
//     unless AllowReset, which continues numbering after the log;
//   - records that do not fit the schema go to a bad-records Delta table
//     (Options.BadRecordsTable, Spark's badRecordsPath) once per batch, with
//     their own txn {appId: <queryId>-bad-records, version: batchId};
//   - a lost checkpoint of a Kafka source can be rebuilt from the table's
//     commits (Options.RecoverCheckpointFromTable, as kafka-delta-ingest
//     keeps its offsets in the table);
//   - output modes append, complete and update (each batch merged into the
//     table by Options.MergeKeys in ONE commit with its txn), and Kafka
//     consumer groups (Options.KafkaGroup: the table's txn per partition is
//     the only checkpoint; package stream/kafka).
//
// Lifecycle:
//
//	o := ingest.DefaultOptions()
//	o.Format = ingest.FormatJSON
//	o.Source, o.Checkpoint, o.Table = "s3://in/events", "s3://chk/events", "s3://lake/events"
//	sum, err := ingest.Run(ctx, o)
//	// sum.Batches, sum.NumInputRows; errors.Is(err, ingest.ErrDuplicateSource), ...
//
// Errors name the table, source, checkpoint, batch or version involved and
// never a CLI flag; guards are testable with errors.Is (ErrDuplicateSource,
// ErrFileSinkAhead, ErrCannotRecover, ErrPartitioningChanged,
// ErrInvalidOptions) and errors.As (*DuplicateSourceError,
// *FileSinkAheadError, *PartitioningError); the errors of packages stream,
// sink, filesink and storage pass through wrapped.
//
// Concurrency: Run runs the query on the caller's goroutine; the Kafka
// source and the consumer group start goroutines of their own and wait for
// them before Run returns. One checkpoint serves one Run at a time
// (stream.ErrCheckpointInUse).
package ingest
