package checkpoint

import (
	"github.com/lakesink/lakesink/storage"

	"errors"
	"fmt"
)

var (
	// ErrCorrupt: a checkpoint file is empty, truncated or unparsable.
	// Wrapped by *CorruptFileError, which names the file and a repair hint.
	ErrCorrupt = storage.MarkCorrupt(errors.New("corrupt checkpoint file"))
	// ErrUnsupportedVersion: a log file was written by a newer format version
	// than this reader supports (Spark's MetadataVersionUtil "UnsupportedLogVersion").
	ErrUnsupportedVersion = errors.New("unsupported log version")
	// ErrCheckpointInUse: a put-if-absent of offsets/N, commits/N or a source
	// log file lost: another driver is running on the same checkpoint
	// (Spark: "Concurrent update to the log. Multiple streaming jobs detected").
	ErrCheckpointInUse = errors.New("checkpoint is in use by another query")
	// ErrMismatch: the checkpoint was created for another source or sink.
	// Wrapped by *MismatchError.
	ErrMismatch = errors.New("checkpoint belongs to a different source or sink")
	// ErrMissingBatch: a log file that must exist (a batch between two that
	// exist, or the one a later file refers to) is missing.
	ErrMissingBatch = errors.New("missing log file")
)

// CorruptFileError reports a checkpoint file that cannot be read. Path is
// relative to the checkpoint root; Line is 1-based (0: the file as a whole).
type CorruptFileError struct {
	Path string // relative to the checkpoint root
	Line int    // 1-based; 0: the file as a whole
	Err  error  // what is wrong
	// Hint tells the operator how to repair the checkpoint.
	Hint string
}

// Error implements error.
func (e *CorruptFileError) Error() string {
	msg := "checkpoint: corrupt file " + e.Path
	if e.Line > 0 {
		msg += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	if e.Hint != "" {
		msg += " (" + e.Hint + ")"
	}
	return msg
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *CorruptFileError) Unwrap() []error { return []error{ErrCorrupt, e.Err} }

// MismatchError reports a restart whose source or sink differs from the one
// recorded in the checkpoint's metadata file.
type MismatchError struct {
	Field    string // "source", "sinkKind" or "sink"
	Recorded string // the value in the metadata file
	Given    string // the value of this run
}

// Error implements error.
func (e *MismatchError) Error() string {
	return fmt.Sprintf("metadata records %s %q but this run uses %q; "+
		"a checkpoint must not be reused for another source or sink (use a new checkpoint directory, or allow a reset explicitly)",
		e.Field, e.Recorded, e.Given)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *MismatchError) Unwrap() error { return ErrMismatch }
