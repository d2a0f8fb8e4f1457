package delta

import "errors"

// Errors of the Delta source; test them with errors.Is. Messages name the
// table and the version involved.
var (
	// ErrInvalidOptions: Options are invalid (see Options.Validate).
	ErrInvalidOptions = errors.New("delta source: invalid options")
	// ErrBadOffset: an offset is not a DeltaSourceOffset this source reads.
	ErrBadOffset = errors.New("delta source: bad offset")
	// ErrChangeCommit: a commit removes or rewrites data (a remove with
	// dataChange=true: DELETE, UPDATE, MERGE, overwrite, complete mode, a
	// deletion vector on an existing file). A stream of appends cannot
	// express it; Options.SkipChangeCommits skips such commits (Delta's
	// skipChangeCommits; DeltaErrors.deltaSourceIgnoreChangesError, and
	// deltaSourceIgnoreDeleteError for a commit without adds).
	ErrChangeCommit = errors.New("delta source: a commit changes existing data")
	// ErrTableChanged: the table's id is not the one the checkpoint was
	// started on: the table was deleted and recreated
	// (DeltaErrors.differentDeltaTableReadByStreamingSource).
	ErrTableChanged = errors.New("delta source: the table was replaced")
	// ErrVersionUnavailable: a version the stream must read is gone (its
	// commit file removed by log cleanup, or its snapshot no longer
	// reconstructable); the stream never skips it silently
	// (DeltaErrors.failOnDataLossException).
	ErrVersionUnavailable = errors.New("delta source: version no longer available")
	// ErrSchemaChanged: a version's schema is one the query's cannot read
	// (SchemaUtils.isReadCompatible): a change under a running query, which
	// a restart reads on from with the new schema, or a version before the
	// query's snapshot, which it does not (DeltaErrors.schemaChangedException
	// and its retryable flag).
	ErrSchemaChanged = errors.New("delta source: schema changed")
)
