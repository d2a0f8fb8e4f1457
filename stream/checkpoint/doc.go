// Package checkpoint reads and writes a Spark Structured Streaming checkpoint
// directory, byte-compatible with Spark's own:
//
//	metadata        {"id":"<query uuid>"} (StreamMetadata.scala), written once;
//	                lakesink adds "source", "sinkKind" and "sink", which Spark ignores
//	offsets/N       "v1", an OffsetSeqMetadata JSON line, one offset per source
//	                (OffsetSeqLog.scala, OffsetSeq.scala); written BEFORE batch N runs
//	commits/N       "v1", {"nextBatchWatermarkMs":0} (CommitLog.scala); written AFTER
//	                the sink committed batch N
//	sources/0/N     the file source's log, "v1" + one {"path","timestamp","batchId"}
//	                per line, "N.compact" every 10 batches (FileStreamSourceLog.scala,
//	                CompactibleFileStreamLog.scala)
//
// The layout is documented in docs/format/checkpoint.md.
//
// Every log file is created with put-if-absent (storage.Store.PutIfAbsent),
// which is atomic: no partial file is ever visible, and a second driver on the
// same checkpoint fails with ErrCheckpointInUse at its first write instead of
// interleaving batches (Spark's HDFSMetadataLog.addNewBatchByStream). Files
// are accepted with and without a trailing newline (Spark writes none). An
// empty or truncated file is a *CorruptFileError naming the file and how to
// repair it.
//
// Lifecycle:
//
//	cp, err := checkpoint.Open(ctx, store, checkpoint.Metadata{Source: src, SinkKind: "delta", Sink: tbl}, false)
//	id, seq, ok, err := cp.LatestOffsets(ctx)   // recovery
//	err = cp.WriteOffsets(ctx, n, seq)         // plan batch n
//	... sink.AddBatch(ctx, n, batch) ...
//	err = cp.WriteCommit(ctx, n, checkpoint.CommitMetadata{})
//
// Concurrency: a Checkpoint and a FileSourceLog are used by one goroutine (the
// driver) at a time; several processes are kept apart by put-if-absent only.
package checkpoint
