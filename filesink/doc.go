// Package filesink is Spark Structured Streaming's classic file sink
// (FileStreamSink) and its _spark_metadata log (FileStreamSinkLog), byte
// compatible with Spark: Spark reads a directory written here as if Spark had
// written it, and this package reads Spark's.
//
// # Lifecycle
//
//	st, _ := storage.Open(ctx, "file:///data/out")
//	opts := filesink.DefaultOptions()
//	opts.PartitionColumns = []string{"country"}
//	week, _ := filesink.ParseRetention("7d")
//	opts.Retention = filesink.RetentionOf(week) // nil: entries are kept forever
//	s, err := filesink.New(ctx, st, opts)     // refuses complete/update modes
//	res, err := s.AddBatch(ctx, 0, batch)      // data files, then _spark_metadata/0
//	res, err = s.AddBatch(ctx, 0, batch)       // res.Skipped: already committed
//
//	ls, err := filesink.ListFiles(ctx, st, opts)                 // live files through the log
//	orphans, err := filesink.Orphans(ctx, st, 24*time.Hour, opts) // older than a day at opts.Now
//	deleted, err := filesink.DeleteOrphans(ctx, st, orphans, opts)
//	res, deletedLogs, err := filesink.CompactLog(ctx, st, opts) // retention now
//
// # On-disk format
//
// An output directory holds data files (Parquet or JSON lines), possibly in
// Hive-style partition directories, and the log folder _spark_metadata/
// (docs/format/spark-metadata.md has the full layout). JSON lines files
// (IsJSONFile) carry no schema: readers infer it as spark.read.json does
// (InferJSONSchema) and decode them with ReadJSONFile.
//
//	out/
//	  part-00000-<uuid>-c000.snappy.parquet
//	  country=FR/part-00000-<uuid>-c000.snappy.parquet
//	  _spark_metadata/
//	    0  1  ...  8  9.compact  10  11 ...
//
// Every batch N has one log file, "N", or "N.compact" when N is a compaction
// batch: (N+1) % compactInterval == 0 (CompactibleFileStreamLog.isCompactionBatch).
// A log file is the version line "v1" followed by one JSON SinkFileStatus per
// line, each line preceded by '\n', and no trailing newline
// (CompactibleFileStreamLog.serialize). Fields are written in Spark's order:
// path, size, isDir, modificationTime, blockReplication, blockSize, action.
// path is the fully qualified URL-escaped URI (Hadoop's Path.toUri.toString):
// file:///abs/dir/part-..., s3a://bucket/prefix/part-...; an empty batch is the
// file "v1" alone so that batch numbering stays contiguous.
//
// A log written by a newer Spark (a version line above "v1") is
// ErrUnsupportedLogVersion when read, and AddBatch checks the newest log
// file's version line before writing anything, so no batch is ever appended
// to a log in a format we do not know. A line longer than MaxLogLineBytes
// (64 MiB) is a *CorruptLogError, found after reading at most that much.
//
// N.compact holds every live entry: the previous compaction file, the batches
// since, and batch N (getValidBatchesBeforeCompactionBatch), minus entries
// older than the retention (FileStreamSinkLog.shouldRetain). The state of the
// log is the latest .compact file plus the batches after it (allFiles).
//
// # Compaction in bounded memory
//
// Compaction reads every source line by line and writes as it reads. A
// compaction file whose estimated size is at most
// Options.MaxInMemoryCompactBytes is built in memory and created with one
// PutIfAbsent, like every plain batch file. A larger one cannot be: the store's
// put-if-absent takes a byte slice. It is then created in two steps that keep
// put-if-absent semantics for writers that follow this protocol:
//
//  1. PutIfAbsent of a claim object "_spark_metadata/.N.compact.claim" holding
//     the writer id (Options.QueryID, else random). Losing it to another id is
//     ErrConcurrentWriter; our own id (a retry, or a restart of the same query)
//     takes it over if N.compact does not exist yet.
//  2. Store.NewWriter("_spark_metadata/N.compact"), streamed, published
//     atomically by Close (a local rename or an S3 multipart completion).
//
// Spark ignores the claim (its name does not parse as a batch id, like
// Hadoop's own ".N.<uuid>.tmp" files); it is deleted with the old log files.
// The residual risk is a non-lakesink writer (Spark itself) racing on the same
// compaction batch, which Spark's own rename-based commit on S3 does not
// exclude either.
//
// # Log file deletion
//
// After each batch, with Options.DeleteExpiredLog, log files are deleted as
// CompactibleFileStreamLog.deleteExpiredLog does: only once
// compactInterval <= current+1-MinBatchesToRetain, only files of batches
// before the compaction batch that keeps MinBatchesToRetain batches readable,
// only files older than CleanupDelay, and never the latest compaction file or
// anything after it. Data files are never deleted by the sink.
//
// # Delete actions
//
// Spark up to 3.0 honoured "action":"delete" lines (the path left the listing
// and the next compaction); Spark 3.1+ ignores the action. The default follows
// current Spark; Options.LegacyDeleteAction restores the old semantics.
//
// # Concurrency
//
// A Log and a Sink keep no cached state of the directory: every call lists
// _spark_metadata again, so any number of readers (and processes) may read
// while one query writes. A Sink must not be used by two goroutines at once
// (AddBatch calls of one query are sequential). Two queries writing one output
// directory are detected by the put-if-absent of the batch file and fail with
// ErrConcurrentWriter, as Spark fails.
package filesink
