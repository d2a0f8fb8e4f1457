package ingest

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/lakesink/lakesink/sink"
)

var (
	// ErrInvalidOptions: Options.Validate failed (the message names each
	// field at fault).
	ErrInvalidOptions = errors.New("invalid ingest options")
	// ErrDuplicateSource: a fresh checkpoint over a source that another
	// query already ingested into (or claimed in) the table; its rows
	// would be written again under the new query id. Returned as a
	// *DuplicateSourceError.
	ErrDuplicateSource = errors.New("source already ingested into this table by another query")
	// ErrFileSinkAhead: a fresh checkpoint against a _spark_metadata log
	// that already has batches; every batch would be skipped as already
	// written. Returned as a *FileSinkAheadError.
	ErrFileSinkAhead = errors.New("file-sink log is ahead of a fresh checkpoint")
	// ErrCannotRecover: Options.RecoverCheckpointFromTable cannot (or must
	// not) rebuild the checkpoint from the table.
	ErrCannotRecover = errors.New("cannot recover the checkpoint from the table")
	// ErrPartitioningChanged: the partition columns asked for differ from
	// those of the existing table or file-sink directory. Returned as a
	// *PartitioningError.
	ErrPartitioningChanged = errors.New("partition columns differ from the existing data")
)

// DuplicateSourceError is ErrDuplicateSource with what the table records:
// either a commit of another query (Version >= 0, from the table's history)
// or the source claim of another query (Version -1, ClaimPath set).
type DuplicateSourceError struct {
	// Table is the URL of the Delta table.
	Table string
	// Source is the source URL both queries read.
	Source string
	// QueryID is the new query's id (its checkpoint is fresh).
	QueryID string
	// OtherQueryID is the query that ingested or claimed the source first.
	OtherQueryID string
	// Version is the table version holding a batch of OtherQueryID, or -1
	// when the source claim refused the query.
	Version int64
	// ClaimPath is the claim file inside the table ("" when Version >= 0).
	ClaimPath string
	// ClaimedAt is when the claim was created (zero when Version >= 0).
	ClaimedAt time.Time
}

// Error implements error.
func (e *DuplicateSourceError) Error() string {
	if e.Version >= 0 {
		return fmt.Sprintf("%v: version %d of %s holds source %s from query %s, and the checkpoint's query %s is new: "+
			"reusing the source would write its rows again. Use the original checkpoint, or allow a reset (AllowReset) to write a second copy",
			ErrDuplicateSource, e.Version, e.Table, e.Source, e.OtherQueryID, e.QueryID)
	}
	return fmt.Sprintf("%v: %s was claimed for source %s by query %s at %s (%s), and this checkpoint's query %s is new: "+
		"reusing the source would write its rows again. Use the original checkpoint; if that query never committed "+
		"(the table's history shows no batch of it), delete the claim file or allow a reset (AllowReset)",
		ErrDuplicateSource, e.Table, e.Source, e.OtherQueryID, e.ClaimedAt.UTC().Format(time.RFC3339), e.ClaimPath, e.QueryID)
}

// Unwrap returns ErrDuplicateSource.
func (e *DuplicateSourceError) Unwrap() error { return ErrDuplicateSource }

// FileSinkAheadError is ErrFileSinkAhead: Dir's _spark_metadata log ends at
// batch LatestBatchID while the checkpoint has no batch.
type FileSinkAheadError struct {
	// Dir is the URL of the file-sink directory.
	Dir string
	// LatestBatchID is the newest batch of its log.
	LatestBatchID int64
}

// Error implements error.
func (e *FileSinkAheadError) Error() string {
	return fmt.Sprintf("%v: %s/_spark_metadata ends at batch %d but the checkpoint has no batch: batches 0..%d would be skipped as already written. "+
		"Use the checkpoint that wrote this directory, or allow a reset (AllowReset) to continue numbering at batch %d",
		ErrFileSinkAhead, e.Dir, e.LatestBatchID, e.LatestBatchID, e.LatestBatchID+1)
}

// Unwrap returns ErrFileSinkAhead.
func (e *FileSinkAheadError) Unwrap() error { return ErrFileSinkAhead }

// PartitioningError is ErrPartitioningChanged: Location (a Delta table, or
// a file-sink directory when FileSink) is partitioned by Have, and the run
// asked for Want.
type PartitioningError struct {
	// Location is the URL of the table or directory.
	Location string
	// FileSink is true for a file-sink directory.
	FileSink bool
	// Have are the existing partition columns, Want the ones asked for.
	Have, Want []string
}

// Error implements error.
func (e *PartitioningError) Error() string {
	if e.FileSink {
		return fmt.Sprintf("partition columns [%s]: %s already holds files partitioned by [%s]; give the same partition columns",
			strings.Join(e.Want, ","), e.Location, strings.Join(e.Have, ","))
	}
	return fmt.Sprintf("partition columns [%s]: table %s is partitioned by [%s]; a table's partitioning cannot change by writing to it",
		strings.Join(e.Want, ","), e.Location, strings.Join(e.Have, ","))
}

// Unwrap returns ErrPartitioningChanged.
func (e *PartitioningError) Unwrap() error { return ErrPartitioningChanged }

// CDCProblem is what a CDCError found wrong.
type CDCProblem int

// The CDC rules (CheckCDC).
const (
	// CDCUnsupportedFormat: the format is not CDCDebezium.
	CDCUnsupportedFormat CDCProblem = iota
	// CDCNeedsUpdate: change events are merged by key, so the output mode
	// must be update (with MergeKeys).
	CDCNeedsUpdate
	// CDCDeleteWhen: a DeleteWhen was given, but the deletes of change
	// events are the events with op 'd'.
	CDCDeleteWhen
	// CDCNeedsSchema: no schema of the events' after rows (neither
	// Options.Schema nor an existing table).
	CDCNeedsSchema
)

// CDCError is a change-event input (Options.CDCFormat) whose options break
// a rule of CheckCDC. It matches ErrInvalidOptions; the CLI words it with
// its flags.
type CDCError struct {
	// Format is the Options.CDCFormat given.
	Format string
	// Problem is the rule broken.
	Problem CDCProblem
}

// Error names the field at fault and the rule, as Options.Validate does.
func (e *CDCError) Error() string {
	var msg string
	switch e.Problem {
	case CDCUnsupportedFormat:
		msg = fmt.Sprintf("CDCFormat %q: the supported format is %s", e.Format, CDCDebezium)
	case CDCNeedsUpdate:
		msg = fmt.Sprintf("CDCFormat %s needs OutputMode update and MergeKeys", e.Format)
	case CDCDeleteWhen:
		msg = fmt.Sprintf("DeleteWhen: with CDCFormat %s deletes are the events with op 'd'", e.Format)
	default:
		msg = fmt.Sprintf("CDCFormat %s needs Schema (the schema of the events' after rows) or an existing Table", e.Format)
	}
	return ErrInvalidOptions.Error() + ": " + msg
}

// Is makes a *CDCError match ErrInvalidOptions.
func (e *CDCError) Is(target error) bool { return target == ErrInvalidOptions }

// CheckCDC is the one rule for change-event input, used by Options.Validate
// and by `lakesink merge --cdc-format`: format is "" (no change events) or
// CDCDebezium; with a format, mode is sink.Update and deleteWhen is empty
// (the deletes are the events with op 'd'). Run also refuses change events
// without a row schema (CDCNeedsSchema). Errors are *CDCError, joined when
// both of the last two rules are broken.
func CheckCDC(format string, mode sink.OutputMode, deleteWhen string) error {
	switch format {
	case "":
		return nil
	case CDCDebezium:
	default:
		return &CDCError{Format: format, Problem: CDCUnsupportedFormat}
	}
	var errs []error
	if mode != sink.Update {
		errs = append(errs, &CDCError{Format: format, Problem: CDCNeedsUpdate})
	}
	if deleteWhen != "" {
		errs = append(errs, &CDCError{Format: format, Problem: CDCDeleteWhen})
	}
	return errors.Join(errs...)
}
