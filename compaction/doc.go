// Package compaction keeps streamed Delta tables fast and small: OPTIMIZE
// (bin-packing small files), VACUUM (deleting files no retained snapshot
// references), checkpoints and expired-log cleanup, converting a Spark
// file-sink directory into a Delta table in place, and the long-running
// maintenance Service that runs them beside the writers.
//
// Lifecycle:
//
//	t, err := table.Open(ctx, "s3://bucket/events")
//	snap, err := t.Snapshot(ctx)
//	plan, err := compaction.NewPlan(snap, compaction.PlanOptions{Where: "origin = 'SFO'"}) // pure; --dry-run prints it
//	res, err := compaction.Execute(ctx, t, plan, compaction.ExecOptions{Workers: 4, Progress: bar})
//	vres, err := compaction.Vacuum(ctx, t, compaction.VacuumOptions{DryRun: true})
//	cp, err := compaction.Checkpoint(ctx, t)
//	cl, err := compaction.CleanupLog(ctx, t, compaction.CleanupLogOptions{})
//
//	svc, err := compaction.NewService([]*table.Table{t}, compaction.ServiceOptions{Interval: 5 * time.Minute})
//	err = svc.Run(ctx) // until ctx is cancelled; svc.RunOnce(ctx) for --once
//
// # OPTIMIZE
//
// NewPlan groups, per partition, the live files smaller than the target
// (delta.targetFileSize, else 128 MiB) into bins up to the target and drops
// bins of one file (delta-io/delta OptimizeTableCommand.scala). Execute
// rewrites each bin one row group at a time through a streaming Parquet writer
// (memory: a row group per worker, not a file or a table), with statistics,
// and commits every remove and add of the run, all with dataChange=false, in
// ONE commit with commitInfo.operation "OPTIMIZE" and Delta's
// operationMetrics (PROTOCOL.md, "Add File and Remove File"). Readers see the
// table before or after, never in between. The commit depends only on the
// files it rewrote (Transaction.ReadFiles), so concurrent appends never
// conflict; a bin whose input was removed concurrently is abandoned and the
// rest retried on the latest snapshot, so removed rows are never resurrected.
//
// # VACUUM
//
// Vacuum follows Delta's VacuumCommand: it lists the table directory, skips
// _delta_log and every hidden name (a leading "_" or ".") that is not a
// partition directory, and deletes files that neither the latest snapshot nor
// a tombstone younger than the retention (delta.deletedFileRetentionDuration,
// default 7 days) references, once they are older than the retention. A
// shorter retention needs Force. Files a _spark_metadata log names are never
// deleted. Untracked files (named by no action in the log: a commit in
// flight) must also be older than VacuumOptions.UntrackedMinAge (1 hour),
// which no retention lowers. VacuumLite (Delta's VACUUM LITE) lists nothing
// and deletes only the files of expired tombstones. A VACUUM that deletes
// records VACUUM START and VACUUM END commits, as Delta 2.3+ does.
//
// # Checkpoints, log cleanup, convert
//
// Checkpoint and CleanupLog call txlog (PROTOCOL.md, "Checkpoints", "Metadata
// Cleanup"). Convert publishes a file-sink directory as a Delta table beside
// its _spark_metadata, incrementally, recording the last converted batch as
// txn{appId: "filesink-convert"}.
//
// Concurrency: every function may be called from many goroutines and
// processes at once; all coordination goes through the log's put-if-absent.
// Execute fans out over bins with errgroup.SetLimit; Service.Run owns its
// goroutines, merges triggers through a one-slot channel, backs off after
// errors and returns when its context is cancelled. ExecOptions.Progress is
// called serially.
package compaction
