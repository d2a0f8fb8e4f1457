// Package parquetio is the Parquet layer shared by the Delta sink, the file
// sink, the reader and compaction. The row model it writes and reads (the
// schema types, schema.Batch and the Go value of each type) is package
// schema's.
//
// It owns:
//
//   - the Delta → Parquet schema mapping as Spark writes it (ParquetSchema);
//   - writing a Batch to Parquet data files (WriteFiles, or FileWriter to
//     stream one file): every record is validated against the schema first
//     (*RowError), partition columns pick the Hive directory and are not
//     stored, files roll at TargetFileSizeBytes, and each file gets Delta
//     statistics (PROTOCOL.md, "Per-file Statistics");
//   - Hive-style partition paths and partition values (PROTOCOL.md,
//     "Partition Value Serialization"; Spark's ExternalCatalogUtils):
//     PartitionPath, ParsePartitionPath, EscapePathName,
//     SerializePartitionValue, ParsePartitionValue;
//   - reading Parquet files back one row group at a time, in the Batch value
//     representation, for a requested schema (OpenFile, File.ReadRowGroup,
//     File.RowGroups), including what Spark and older writers produce: INT96
//     and millisecond timestamps, decimals in INT32/INT64/FIXED/BINARY,
//     legacy 2-level lists and bare repeated fields, maps, nested structs.
//
// Lifecycle:
//
//	sch, err := schema.ParseSchema([]byte(metadata.SchemaString))
//	files, err := parquetio.WriteFiles(ctx, store, &schema.Batch{Schema: sch, Rows: rows},
//		parquetio.WriteOptions{PartitionColumns: []string{"date"}})
//	// commit: one add action per file (files[i].Path, .PartitionValues, .Size,
//	// .Stats, .ModificationTime)
//	f, err := parquetio.OpenFile(ctx, store, files[0].Path, files[0].Size)
//	for rows, err := range f.RowGroups(ctx, sch, parquetio.ReadOptions{}) { ... }
//
// Paths: WrittenFile.Path is a plain storage key ("a=x%2Fy/part-….parquet":
// the partition directory is Hive-escaped once, as on disk). A Delta add
// action's path is a URI and must be percent-encoded once more by the log
// writer ("a=x%252Fy/…"; PROTOCOL.md, "Add File and Remove File").
//
// Write path: a file's top-level fields are split into lanes of about equal
// work, one per CPU (GOMAXPROCS). For each segment of rows (up to 16,384, fewer
// near the target file or row-group size) every lane shreds its fields into
// parquet.Values, 512 rows at a time, and hands them to its columns' writers
// on its own goroutine; columns are independent until the row group is
// flushed, so the file's bytes do not depend on the lanes (TestLanesWriteTheSameFile).
//
// Limits (hostile input): schema.ParseSchema refuses types nested deeper than
// schema.MaxSchemaDepth (1000); schema.ValidateForWrite (called by WriteFiles,
// ParquetSchema and table creation) refuses a leaf column more than
// MaxColumnDepth (255) Parquet elements deep — 254 nested structs, or 127
// nested arrays or maps — and more than MaxLeafColumns (65,535) leaves,
// where parquet-go would panic in a writer goroutine. OpenFile reads files
// up to the same depth. A batch with 100,000 partitions writes 100,000 files
// in linear time (~100 µs each to an in-memory store) with Workers writers
// open at once; its heap peaked at ~260 MiB, the rows and results included.
//
// Concurrency: package functions are safe for concurrent use; a *File or
// *FileWriter is used by one goroutine at a time (the lanes it starts are
// waited for within each call). Nothing here keeps mutable global state.
package parquetio
