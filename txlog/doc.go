// Package txlog implements the Delta Lake transaction log (delta-io/delta
// PROTOCOL.md): the actions (protocol, metaData, add, remove, txn,
// commitInfo, domainMetadata, cdc and the V2 checkpoint actions), commit
// files _delta_log/%020d.json, checkpoints (classic, multi-part, V2) and
// _last_checkpoint, log replay into an immutable Snapshot (PROTOCOL.md,
// "Action Reconciliation"), optimistic commits with Delta's conflict rules,
// and log cleanup.
//
// Lifecycle:
//
//	log, err := txlog.New(store, txlog.DefaultOptions()) // store rooted at the table root
//	snap, err := log.Snapshot(ctx)                       // latest; ErrTableNotFound if none
//	tx := log.Begin(snap)                                // nil snapshot: create the table (version 0)
//	tx.ReadWholeTable()                                  // what the transaction depends on
//	tx.Add(txlog.Action{Add: &txlog.Add{...}})
//	v, err := tx.Commit(ctx, "WRITE", params, metrics)
//
// Concurrency: a Log holds no mutable state and may be shared by goroutines;
// every guarantee rests on the store's put-if-absent, so many processes may
// write one table. A Snapshot never changes. A Transaction is used by one
// goroutine.
//
// Errors: *CorruptLogError (ErrCorruptLog) for unreadable log files,
// *UnsupportedFeatureError (ErrUnsupportedFeature), *ConflictError
// (ErrConcurrentModification), ErrVersionAlreadyExists,
// ErrCommitStateUnknown, ErrTableNotFound, ErrTableExists,
// ErrPathOutsideTable. See errors.go.
package txlog
