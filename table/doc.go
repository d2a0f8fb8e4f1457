// Package table is the user-facing Delta table: create and open a table at a
// URL, read its schema, snapshots by version or timestamp, history, and the one
// write path that every writer shares (Write): data files first, then ONE
// commit with their add actions and, for an idempotent write, a txn action
// {appId, version} (PROTOCOL.md, "Transaction Identifiers").
//
// Lifecycle:
//
//	t, err := table.Create(ctx, "file:///data/events", table.CreateOptions{Schema: s, PartitionColumns: []string{"day"}})
//	res, err := t.Write(ctx, batch, table.WriteOptions{AppID: "nightly-load", Version: 42})
//	if res.Skipped { /* (appId, version) was already committed: nothing written */ }
//	snap, err := t.Snapshot(ctx)
//
// Concurrency: a *Table is safe for concurrent use; every method reads the log
// anew, and commits are serialised by the log's put-if-absent, never by locks
// in this process (DESIGN.md, "Beyond one machine").
package table
