// Package stream is lakesink's micro-batch driver: it moves records from a
// source (package stream/source) to a sink.Sink batch by batch with
// end-to-end exactly-once, keeping its progress in a Spark-format checkpoint
// directory (package stream/checkpoint; docs/format/checkpoint.md).
//
// The loop follows Spark's MicroBatchExecution
// (sql/core/.../streaming/MicroBatchExecution.scala):
//
//  1. recovery (populateStartOffsets): if the latest offsets/L has no
//     commits/L, batch L is rerun first, with exactly the offsets recorded
//     in offsets/L — for the file source, exactly the same files, from the
//     source log; otherwise the next batch is L+1;
//  2. constructNextBatch: ask the source for the end offset of the next batch
//     (honouring MaxFilesPerTrigger); if nothing is new, no batch runs and
//     nothing is written; else offsets/N is written with put-if-absent BEFORE
//     the batch runs;
//  3. runBatch: read the batch, Sink.AddBatch(ctx, N, batch) (or the
//     ForeachBatch hook), then write commits/N AFTER it returned.
//
// Exactly-once rests on the sink: AddBatch is idempotent per batch id (the
// Delta sink's txn action, the file sink's _spark_metadata/N), so a batch
// rerun whose commit had landed before the crash is skipped by the sink
// (Result.Skipped), and one whose commit had not landed is written now.
// Progress reports mark both (Recovery "rerun" and Sink.Skipped).
//
// A whole ingest as `lakesink ingest` runs it, from URLs and with its guards
// (duplicate-source refusal, source claims, the file-sink first-batch rule,
// bad-records table, checkpoint recovery), is ingest.Run in package
// stream/ingest; Query is the driver underneath.
//
// Triggers: AvailableNow (the backlog in several batches, then return), Once
// (one batch), ProcessingTime(interval) (until ctx is cancelled).
//
// Lifecycle:
//
//	src, _ := source.NewFileSource(inStore, source.Options{Format: source.FormatJSON, Schema: schema})
//	err := stream.Run(ctx, stream.Options{
//		CheckpointStore: cpStore, Source: src, Sink: deltaSink,
//		SinkKind: "delta", SinkURL: tableURL,
//		Trigger: stream.AvailableNow(), MaxFilesPerTrigger: 2,
//		Progress: func(p stream.Progress) { ... },
//	})
//
// Concurrency: a Query runs on the caller's goroutine and starts none of its
// own (the source may fan out internally and waits for its goroutines).
// One checkpoint serves one query at a time: every log file is created with
// put-if-absent, so a second driver on the same checkpoint fails with
// ErrCheckpointInUse at its first batch instead of interleaving.
package stream
