package stream

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

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
	BatchID int64  // the batch that failed
	Stage   string // "latestOffset", "walCommit", "getBatch", "addBatch", "commit", ...
	Err     error  // the cause
}

// Error implements error: "batch 3: write to the sink: <Err>", or
// "write to the sink: <Err>" when Err already starts by naming the batch
// (a sink's "batch 3: ..." or "batch 3 to file:///t: ..."), so that the
// message says it once.
func (e *BatchError) Error() string {
	stage, ok := stageWords[e.Stage]
	if !ok {
		stage = e.Stage
	}
	msg := fmt.Sprint(e.Err)
	if b := "batch " + strconv.FormatInt(e.BatchID, 10); strings.HasPrefix(msg, b+":") || strings.HasPrefix(msg, b+" ") {
		return fmt.Sprintf("%s: %s", stage, msg)
	}
	return fmt.Sprintf("batch %d: %s: %s", e.BatchID, stage, msg)
}

// stageWords says what a BatchError's stage was doing, for its message.
var stageWords = map[string]string{
	"latestOffset": "list new input", "walCommit": "write offsets", "getBatch": "read input",
	"addBatch": "write to the sink", "commit": "write commits", "source commit": "record source progress",
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *BatchError) Unwrap() error { return e.Err }
