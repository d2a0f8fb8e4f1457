// Package delta is a source.Source over a Delta table for lakesink's
// micro-batch driver (package stream): a stream of the table's new data,
// as Delta's DeltaSource (delta-io/delta spark/.../sql/delta/sources/
// DeltaSource.scala) reads it, so that a query can stream a bronze table
// into a silver one.
//
// Offsets are Spark's DeltaSourceOffset JSON (Offset), stored verbatim in
// offsets/N:
//
//	{"sourceVersion":1,"reservoirId":"<table id>","reservoirVersion":5,"index":2,"isStartingVersion":false}
//
// A batch is the range of files (start, end] in (version, index) order,
// where index numbers the adds with dataChange=true of a commit in commit
// order, or the live files of the starting snapshot sorted by
// (modificationTime, path) as DeltaSourceSnapshot does; a rerun
// of batch N after a crash reads exactly its files again.
//
// The stream starts with the files of the table's latest snapshot
// (isStartingVersion) and goes on with each later commit; or, with
// StartingVersion or StartingTimestamp, with the commits from there and no
// snapshot. The starting point is resolved on the first run and recorded in
// the source's checkpoint directory, so a restart does not move it.
//
// Only adds with dataChange=true are new data: OPTIMIZE's rewrites
// (dataChange=false) produce no rows. A commit with a remove of
// dataChange=true (DELETE, UPDATE, MERGE, overwrite, complete mode, a
// deletion vector added to an existing file) fails the batch with
// ErrChangeCommit naming the version, unless SkipChangeCommits (Delta's
// skipChangeCommits) skips the whole commit. A recreated table
// (ErrTableChanged) and a commit removed by log cleanup
// (ErrVersionUnavailable) fail with an error naming the version; nothing is
// skipped silently.
//
// The query reads with the schema of the latest snapshot at Start, as
// DeltaSource does. A schema change under a running query (a metaData
// action whose schema the query's cannot read, SchemaUtils.isReadCompatible)
// fails it with ErrSchemaChanged naming the version, the column and both
// schemas, once the files before the change were planned: a restart then
// resumes at the change and reads on with the new schema (an added
// nullable column is Spark's retryable case). A restarted query that would
// read files written before a change with the newer schema fails at its
// first plan (DeltaSource.checkReadIncompatibleSchemaChangeOnStreamStartOnce).
//
// Files are read with package reader: deletion vectors and column mapping
// are honoured, Where filters rows and Columns projects them.
package delta
