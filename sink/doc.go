// Package sink defines the streaming Sink contract (Sink, Result) and
// implements the Delta streaming sink: each micro-batch is written as Parquet
// files and committed to a Delta table in ONE commit together with a txn
// action {appId: queryId, version: batchId, lastUpdated}, so that a replayed
// batch is a no-op (delta-io/delta DeltaSink.scala; PROTOCOL.md, "Transaction
// Identifiers").
//
// Lifecycle:
//
//	s, err := sink.NewDelta(ctx, "s3://bucket/events?region=eu-west-1", sink.Options{QueryID: id})
//	defer s.Close()
//	res, err := s.AddBatch(ctx, batchID, batch) // res.Skipped: already committed
//
// Rows enter as a *schema.Batch; Go structs through schema.FromStructs.
//
// Concurrency: AddBatch may be called from several goroutines and several
// processes for different query ids; conflicts are retried by the log. Two
// sinks with the same query id never commit one batch twice: the loser skips.
package sink
