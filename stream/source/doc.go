// Package source holds the streaming sources of package stream and the
// Source contract they implement (Spark's Source / SupportsAdmissionControl:
// latestOffset, getBatch, commit).
//
// FileSource streams the files of a directory on any storage.Store (local,
// mem://, s3://), each file once, as Spark's FileStreamSource does
// (sql/core/.../streaming/FileStreamSource.scala): listing is recursive;
// names with a path element starting with "." or "_" are ignored; new files
// are taken oldest first (modification time, then name), at most
// ReadLimit.MaxFiles per batch (newest first with LatestFirst); each batch of
// files is recorded in the source log sources/<i>/N of the checkpoint
// (package checkpoint) before the batch's offset {"logOffset":N} is, so a
// batch rerun after a crash reads exactly the same files.
//
// Formats: json (NDJSON, or a top-level JSON array per file), csv (header
// line; columns mapped to the schema by name; an empty cell is null) and
// parquet (lakesink's own Parquet reader, or Options.ReadParquet). Records are
// decoded into schema.Batch rows against a schema: given, or inferred from
// the first batch's files (long, double, boolean, string, struct, array;
// timestamp only when a TimestampFormat is set). Timestamps without a zone are
// taken as UTC. A record that does not fit fails the batch with a
// *RecordError naming file, line and field, or, with Options.OnBadRecord,
// is handed to that hook and dropped. A field the schema lacks is such a
// record by default (ErrUnknownField); Options.SchemaEvolution adds new
// columns to the schema (Delta's mergeSchema, EvolveSchema) or ignores them.
//
// Lifecycle (the driver in package stream does this):
//
//	src, err := source.NewFileSource(store, source.Options{Format: source.FormatJSON, Schema: schema})
//	err = src.Start(ctx, checkpointStore.Sub("sources/0"))
//	end, err := src.LatestOffset(ctx, source.ReadLimit{MaxFiles: 2})
//	batch, stats, err := src.GetBatch(ctx, prevEnd, end)
//
// Concurrency: a source is driven by one goroutine; GetBatch reads and decodes
// files in parallel internally (errgroup, Options.DecodeConcurrency).
package source
