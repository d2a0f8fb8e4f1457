// Package table is the user-facing Delta table: create and open a table at a
// URL, read its schema, snapshots by version or timestamp, history, and the one
// write path that every writer shares (Write): data files first, then ONE
// commit with their add actions and, for an idempotent write, a txn action
// {appId, version} (PROTOCOL.md, "Transaction Identifiers"); and Merge, an
// upsert of a change batch by key (inserts, updates, deletes, a sequence
// column so that late changes lose), copy-on-write or, with
// delta.enableDeletionVectors=true, with deletion vectors, in ONE MERGE commit with
// its txn, conflict-checked at Serializable and re-planned after a conflict.
//
// Writer features (PROTOCOL.md "Table Features"): Write appends to tables an
// engine wrote with deletion vectors, type widening, in-commit timestamps,
// column mapping in name and id mode (data files by physical name with
// field ids, "Writer Requirements for Column Mapping"), row tracking
// (baseRowId, defaultRowCommitVersion and the delta.rowTracking high-water
// mark, assigned by the commit: "Writer Requirements for Row Tracking"),
// CHECK constraints (every new row checked with package expr; a row for
// which one is false or null fails the write with a
// *ConstraintViolationError, "CHECK Constraints") and identity columns
// (values beyond delta.identity.highWaterMark, which the commit's metaData
// moves on, "Identity Columns") and change data feed (an append or
// overwrite updates no row, so it needs no change data files). It refuses by name, as a
// *txlog.UnsupportedFeatureError, generated columns and a CHECK constraint
// expr cannot evaluate. Merge honours only the first three.
//
// Lifecycle:
//
//	t, err := table.Create(ctx, "file:///data/events", table.CreateOptions{Schema: s, PartitionColumns: []string{"day"}})
//	res, err := t.Write(ctx, batch, table.WriteOptions{AppID: "nightly-load", Version: 42})
//	if res.Skipped { /* (appId, version) was already committed: nothing written */ }
//	m, err := t.Merge(ctx, changes, table.MergeOptions{Keys: []string{"id"}, SequenceBy: "ts", DeleteWhen: "op = 'd'", AppID: "cdc", Version: 7})
//	snap, err := t.Snapshot(ctx)
//
// Concurrency: a *Table is safe for concurrent use; every method reads the log
// anew, and commits are serialised by the log's put-if-absent, never by locks
// in this process (docs/design.md, "Beyond one machine").
package table
