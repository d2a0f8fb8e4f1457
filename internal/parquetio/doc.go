// Package parquetio is the row model and Parquet layer shared by the Delta
// sink, the file sink, the reader and compaction.
//
// It owns:
//   - the Delta/Spark schema model (types.go) and its JSON form
//     (PROTOCOL.md, "Schema Serialization Format"): ParseSchema,
//     (*StructType).MarshalJSON, MergeSchema;
//   - the mapping of Delta types to Parquet as Spark writes it
//     (ParquetSchema);
//   - writing a Batch to Parquet data files with per-file Delta statistics
//     (PROTOCOL.md, "Per-file Statistics"), partitioned Hive style and rolled at a
//     target size (WriteFiles);
//   - Hive-style partition paths and values (PROTOCOL.md, "Partition Value
//     Serialization"): PartitionPath, ParsePartitionPath,
//     SerializePartitionValue, ParsePartitionValue;
//   - reading Parquet files back, one row group at a time (OpenFile).
//
// Lifecycle:
//
//	schema, err := parquetio.ParseSchema([]byte(metadata.SchemaString))
//	files, err := parquetio.WriteFiles(ctx, store, &parquetio.Batch{Schema: schema, Rows: rows}, opts)
//	// ... commit files (add actions with files[i].Path, .Stats, ...)
//	f, err := parquetio.OpenFile(ctx, store, files[0].Path, files[0].Size)
//	for rows, err := range f.RowGroups(ctx, schema, parquetio.ReadOptions{}) { ... }
//
// Concurrency: every function is safe for concurrent use; a *File is used by
// one goroutine at a time. Nothing here keeps global state.
package parquetio
