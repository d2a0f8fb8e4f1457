package stream

import (
	"errors"
	"fmt"

	"github.com/lakesink/lakesink/stream/checkpoint"
)

var (
	// ErrInvalidOptions: Options.Validate failed.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrCheckpointInUse: another driver runs on the same checkpoint (a
	// put-if-absent of offsets/N, commits/N or sources/0/N lost).
	ErrCheckpointInUse = checkpoint.ErrCheckpointInUse
	// ErrCheckpointMismatch: the checkpoint was created for another source,
	// sink kind or sink path (a *checkpoint.MismatchError).
	ErrCheckpointMismatch = checkpoint.ErrMismatch
	// ErrCorruptCheckpoint: a checkpoint file is empty, truncated or
	// unparsable (a *checkpoint.CorruptFileError with a repair hint).
	ErrCorruptCheckpoint = checkpoint.ErrCorrupt
	// ErrSourceCount: offsets/N lists another number of sources than the
	// query has.
	ErrSourceCount = errors.New("checkpoint offsets do not match the query's sources")
)

// BatchError wraps a failure of batch BatchID in one stage ("walCommit",
// "getBatch", "addBatch", "commit", ...).
type BatchError struct {
	BatchID int64
	Stage   string
	Err     error
}

// Error implements error.
func (e *BatchError) Error() string {
	return fmt.Sprintf("batch %d: %s: %v", e.BatchID, e.Stage, e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *BatchError) Unwrap() error { return e.Err }
