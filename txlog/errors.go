package txlog

import (
	"github.com/lakesink/lakesink/storage"

	"errors"
	"fmt"
	"strings"
)

var (
	// ErrCorruptLog: a commit file, checkpoint or _last_checkpoint cannot be
	// parsed, or the log is not contiguous. Wrapped by *CorruptLogError.
	ErrCorruptLog = storage.MarkCorrupt(errors.New("corrupt log"))
	// ErrTableNotFound: there is no _delta_log with at least one commit or
	// checkpoint under the table root.
	ErrTableNotFound = errors.New("table not found")
	// ErrTableExists: creating a table (version 0) when version 0 exists.
	ErrTableExists = errors.New("table already exists")
	// ErrVersionNotFound: a requested version is not in the log (not yet
	// written, or cleaned up and not reachable from a checkpoint).
	ErrVersionNotFound = errors.New("version not found")
	// ErrTimestampOutOfRange: time travel to a timestamp before the first
	// retained commit or after the latest one.
	ErrTimestampOutOfRange = errors.New("timestamp out of range")
	// ErrUnsupportedFeature: the table's protocol needs a reader or writer
	// version or table feature this package does not implement. Wrapped by
	// *UnsupportedFeatureError.
	ErrUnsupportedFeature = storage.MarkCorrupt(errors.New("unsupported table feature"))
	// ErrPathOutsideTable: a path in an add/remove/cdc action resolves to a
	// location outside the table root (absolute URI elsewhere, or ".."
	// escaping the root).
	ErrPathOutsideTable = storage.MarkCorrupt(errors.New("path outside the table root"))
	// ErrConcurrentModification is the base class of commit conflicts
	// (Delta's DeltaConcurrentModificationException). Wrapped by *ConflictError.
	ErrConcurrentModification = errors.New("concurrent modification")
	// ErrVersionAlreadyExists: the put-if-absent of a commit lost. Surfaced
	// only when retries run out; it then also matches ErrConcurrentModification.
	ErrVersionAlreadyExists = errors.New("version already exists")
	// ErrCommitStateUnknown: the outcome of the commit put is unknown and
	// reading the version back did not resolve it. Never retried blindly.
	// Errors carrying it also match storage.ErrCommitStateUnknown.
	ErrCommitStateUnknown = errors.New("commit state unknown")
	// ErrUnknownAction: the log holds an action type this package does not
	// know, and the operation would have to drop it (a checkpoint carries
	// only the actions it knows). Wrapped by *UnknownActionError, which also
	// matches ErrUnsupportedFeature. Reads ignore such actions.
	ErrUnknownAction = errors.New("unknown action")
	// ErrInvalidOptions: Options.Validate failed.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrReadOnly: a write (commit, checkpoint, log cleanup) through a
	// Log opened with Options.ReadOnly.
	ErrReadOnly = errors.New("log opened read-only")
	// ErrInvalidTransaction: a transaction is misused (committed twice, no
	// metadata for a new table, invalid action, ...).
	ErrInvalidTransaction = errors.New("invalid transaction")
)

// CorruptLogError reports a log file that cannot be interpreted. Line is the
// 1-based line number in a JSON file (0 when not applicable); Version is -1
// when the file has no version (e.g. _last_checkpoint).
type CorruptLogError struct {
	Path    string // the log file, relative to the table root
	Version int64
	Line    int
	Err     error // what is wrong with the file
}

// Error implements error.
func (e *CorruptLogError) Error() string {
	var b strings.Builder
	b.WriteString("corrupt log: ")
	b.WriteString(e.Path)
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	if e.Version >= 0 {
		fmt.Fprintf(&b, " (version %d)", e.Version)
	}
	if e.Err != nil {
		b.WriteString(": ")
		b.WriteString(e.Err.Error())
	}
	return b.String()
}

// Unwrap returns the cause.
func (e *CorruptLogError) Unwrap() error { return e.Err }

// Is makes every *CorruptLogError match ErrCorruptLog and storage.ErrCorrupt.
func (e *CorruptLogError) Is(target error) bool {
	return target == ErrCorruptLog || target == storage.ErrCorrupt //nolint:errorlint // identity on sentinels
}

// UnsupportedFeatureError names a protocol version or table feature that this
// package cannot honour for the requested access (read or write).
type UnsupportedFeatureError struct {
	Feature string // feature name, or "readerVersion N" / "writerVersion N"
	Write   bool   // true when the check was for writing
	// Detail names what uses the feature, when that is known: a generated
	// or identity column with its definition ("column y GENERATED ALWAYS
	// AS (x * 2)"), a CHECK constraint lakesink cannot evaluate. "" if not.
	Detail string
}

// Error implements error.
func (e *UnsupportedFeatureError) Error() string {
	mode := "read"
	if e.Write {
		mode = "write"
	}
	msg := fmt.Sprintf("unsupported table feature: cannot %s a table that requires %q", mode, e.Feature)
	if e.Detail != "" {
		msg += " (" + e.Detail + ")"
	}
	return msg
}

// Unwrap returns ErrUnsupportedFeature.
func (e *UnsupportedFeatureError) Unwrap() error { return ErrUnsupportedFeature }

// UnknownActionError names the first action of an unknown type (the JSON key
// of its line) that a snapshot was replayed over, and the commit holding it.
type UnknownActionError struct {
	Action  string // the unknown top-level key, e.g. "futureAction"
	Path    string // the commit file
	Version int64  // the version of that commit
}

// Error implements error.
func (e *UnknownActionError) Error() string {
	return fmt.Sprintf("unknown action: %q in %s (version %d) would be lost by rewriting the log state", e.Action, e.Path, e.Version)
}

// Unwrap returns ErrUnknownAction and ErrUnsupportedFeature.
func (e *UnknownActionError) Unwrap() []error {
	return []error{ErrUnknownAction, ErrUnsupportedFeature}
}

// Conflict kinds, named after Delta's DeltaConcurrentModificationException
// subclasses (delta-io/delta DeltaConcurrentExceptions.scala).
const (
	ConflictProtocolChanged        = "ProtocolChanged"
	ConflictMetadataChanged        = "MetadataChanged"
	ConflictConcurrentAppend       = "ConcurrentAppend"
	ConflictConcurrentDeleteRead   = "ConcurrentDeleteRead"
	ConflictConcurrentDeleteDelete = "ConcurrentDeleteDelete"
	ConflictConcurrentTransaction  = "ConcurrentTransaction"
	ConflictConcurrentDomain       = "ConcurrentDomainMetadata"
	ConflictTableExists            = "TableExists"
)

// ConflictError is a logical commit conflict: a commit that won the race
// between our read version and our commit attempt changed something we read
// or wrote. It wraps ErrConcurrentModification.
type ConflictError struct {
	Kind           string // one of the Conflict* constants
	ReadVersion    int64  // the version our transaction read (-1: new table)
	WinningVersion int64  // the version of the winning commit
	Path           string // the file, appId or domain involved, if any
	Detail         string // what the winning commit changed, in words; "" if Kind says it all
}

// Error implements error.
func (e *ConflictError) Error() string {
	msg := fmt.Sprintf("concurrent modification: %s: commit %d (read version %d)", e.Kind, e.WinningVersion, e.ReadVersion)
	if e.Path != "" {
		msg += " " + e.Path
	}
	if e.Detail != "" {
		msg += ": " + e.Detail
	}
	return msg
}

// Unwrap returns ErrConcurrentModification.
func (e *ConflictError) Unwrap() error { return ErrConcurrentModification }

// commitStateUnknownError matches both ErrCommitStateUnknown and the storage
// cause.
type commitStateUnknownError struct {
	path string
	err  error
}

func (e *commitStateUnknownError) Error() string {
	return fmt.Sprintf("commit state unknown: %s: %v", e.path, e.err)
}
func (e *commitStateUnknownError) Unwrap() []error { return []error{ErrCommitStateUnknown, e.err} }

func asUFE(err error, target **UnsupportedFeatureError) bool { return errors.As(err, target) }

func itoa(n int) string { return fmt.Sprint(n) }
