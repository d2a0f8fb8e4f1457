package compaction

import "errors"

var (
	// ErrInvalidOptions: PlanOptions, ExecOptions, VacuumOptions or
	// ServiceOptions failed Validate. The message lists every violation.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrPassInterrupted: Service.Run was cancelled while a pass was in
	// progress on a table (its step was abandoned, the table consistent).
	// Run returns it as a *PassInterruptedError naming the tables, which
	// also matches the context's error. A cancel between passes is ctx.Err()
	// alone.
	ErrPassInterrupted = errors.New("maintenance pass interrupted")
	// ErrPredicate: an OPTIMIZE partition filter does not parse, does not fit
	// the schema, or refers to a column that is not a partition column
	// (OPTIMIZE ... WHERE may only name partition columns, as in Delta).
	ErrPredicate = errors.New("invalid partition filter")
	// ErrRetentionTooShort: a VACUUM retention below the table's
	// delta.deletedFileRetentionDuration without Force (Delta's
	// spark.databricks.delta.retentionDurationCheck).
	ErrRetentionTooShort = errors.New("retention shorter than the table's deletedFileRetentionDuration")
	// ErrUntrackedMinAgeTooShort: a VACUUM untracked-file floor below
	// DefaultUntrackedMinAge without ForceUntrackedMinAge.
	ErrUntrackedMinAgeTooShort = errors.New("untracked-file minimum age shorter than the default")
	// ErrUnconvertedBatches: VACUUM of a file-sink directory published as a
	// Delta table (convert) whose _spark_metadata log has batches that the
	// table does not hold yet; their files would look unreferenced.
	ErrUnconvertedBatches = errors.New("file-sink log has batches not yet converted")
	// ErrPlanStale: a plan cannot be executed because the snapshot it was made
	// from cannot be loaded (cleaned-up log) or its table changed identity.
	ErrPlanStale = errors.New("plan is stale")
	// ErrRowCountMismatch: a rewritten bin does not hold exactly the rows of
	// its inputs (the stats numRecords of the inputs disagree with the rows
	// read). Nothing is committed.
	ErrRowCountMismatch = errors.New("row count mismatch")
	// ErrNotFileSink: Convert was pointed at a directory without a
	// _spark_metadata log, or whose files are not Parquet.
	ErrNotFileSink = errors.New("not a Parquet file-sink directory")
)
