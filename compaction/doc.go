// Package compaction keeps streamed Delta tables fast and small: OPTIMIZE
// (bin-packing small files), VACUUM (deleting files no retained snapshot
// references), checkpoints and expired-log cleanup, and the long-running
// maintenance Service that runs them beside the writers.
//
// Lifecycle:
//
//	t, err := table.Open(ctx, "s3://bucket/events")
//	snap, err := t.Snapshot(ctx)
//	plan, err := compaction.NewPlan(snap, compaction.PlanOptions{Where: "origin = 'SFO'"}) // pure; --dry-run prints it
//	res, err := compaction.Execute(ctx, t, plan, compaction.ExecOptions{Workers: 4, Progress: bar})
//	vres, err := compaction.Vacuum(ctx, t, compaction.VacuumOptions{DryRun: true})
//
// OPTIMIZE rewrites the files of each bin one row group at a time and commits
// every remove and add of the run, all with dataChange=false, in ONE commit
// with commitInfo.operation "OPTIMIZE" (PROTOCOL.md, "Add File and Remove
// File"; delta-io/delta OptimizeTableCommand.scala). The commit depends only
// on the files it rewrote, so concurrent appends never conflict; a bin whose
// input was removed concurrently is abandoned, never resurrected.
//
// VACUUM follows Delta's VacuumCommand: it lists the table directory, skips
// _delta_log and every hidden name (a leading "_" or ".") that is not a
// partition directory, and deletes files that neither the latest snapshot nor
// a tombstone younger than the retention (delta.deletedFileRetentionDuration)
// references, when they are older than the retention (PROTOCOL.md,
// "Add File and Remove File": tombstones are kept for vacuum).
//
// Concurrency: every function may be called from many goroutines and
// processes at once; all coordination goes through the log's put-if-absent.
// Execute fans out over bins with errgroup.SetLimit; Service.Run owns its
// goroutines and returns when its context is cancelled.
package compaction
