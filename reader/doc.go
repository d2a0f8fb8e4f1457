// Package reader reads consistent snapshots of Delta tables and Spark
// file-sink directories: the live files (pruned by partition values and
// statistics) and their rows, as dynamic records, typed Go structs, or
// columnar batches.
//
// Lifecycle:
//
//	snap, err := reader.Open(ctx, "s3://bucket/table", reader.AtVersion(12)) // or reader.AsOf(t)
//	snap, err := reader.OpenTable(ctx, tbl)                                  // tbl: a *table.Table already open
//	defer snap.Close()
//	files, err := snap.Files(ctx, pred)                 // pred from snap.Predicate("country = 'NL'")
//	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id", "country"}, Where: "id > 10"}) { ... }
//	for v, err := range reader.Rows[Event](ctx, snap, reader.ReadOptions{}) { ... }
//	for b, err := range snap.Batches(ctx, reader.ReadOptions{Columns: []string{"distance"}}) { ... } // b.Columns[0].Int64
//
// Rows and Batches are two forms of one read (same plan, files, order and
// parallelism): Rows boxes each value in a Record, Batches decodes
// top-level numeric, string and boolean columns into typed slices with a
// null flag per row, for scans and aggregates that touch every value.
//
// A snapshot never changes once opened (docs/design.md, "Readers see only
// committed snapshots"). The predicate language and its evaluation live in
// expr; pruning is an optimisation, the predicate is always applied
// to the rows as well.
//
// What is read (PROTOCOL.md sections):
//   - the log through txlog ("Action Reconciliation", "Checkpoints");
//   - partition values from the add actions, never from paths ("Partition
//     Value Serialization"); statistics for skipping ("Per-file
//     Statistics");
//   - column mapping, modes name and id ("Column Mapping"): Parquet columns
//     are matched by physical name or field id, the user sees logical names;
//   - deletion vectors, inline and on disk ("Deletion Vectors", "Deletion
//     Vector Format"): deleted rows are dropped by their index in the file;
//   - any other reader feature stops the read with a
//     *txlog.UnsupportedFeatureError naming it ("Reader Version
//     Requirements").
//
// File-sink directories (a URL ending in _spark_metadata, or a directory
// with that log and no _delta_log) are read through filesink's log; their
// schema comes from the Parquet files and their partition columns from the
// Hive-style paths.
//
// For the CLI: Record and File implement json.Marshaler (timestamps RFC
// 3339, decimals as strings, binary base64), and FormatValue renders a value
// for CSV and table output. testdata/conformance.md lists which interop
// tables read correctly.
//
// Concurrency: a *Snapshot is safe for concurrent use. Rows (and Batches)
// read up to
// ReadOptions.Workers files at once (errgroup.SetLimit) and emits records in
// snapshot file order, one row group at a time per file, so memory stays
// bounded; stopping an iteration cancels and waits for every reader
// goroutine. Nothing here keeps global state.
package reader
