package sink

import (
	"errors"
	"fmt"
	"strings"
)

var (
	// ErrUnsupportedOutputMode: an output mode the sink does not implement
	// (Delta refuses "update": "Data source ... does not support Update output mode").
	ErrUnsupportedOutputMode = errors.New("unsupported output mode")
	// ErrInvalidOptions: Options.Validate failed.
	ErrInvalidOptions = errors.New("invalid options")
)

// BatchError is a failed batch: it names the table and the batch. Err is the
// cause (a *schema.RowError names the row and field; a *txlog.ConflictError
// a lost commit).
type BatchError struct {
	Table   string // the table URL
	BatchID int64  // the batch that failed
	Err     error  // the cause
}

// Error implements error: "batch 3 to file:///t: <Err>", without the
// table when Err already names it ("batch 3: write file:///t: ..."), so
// that the message says each once.
func (e *BatchError) Error() string {
	msg := fmt.Sprint(e.Err)
	if e.Table == "" || strings.Contains(msg, e.Table) {
		return fmt.Sprintf("batch %d: %s", e.BatchID, msg)
	}
	return fmt.Sprintf("batch %d to %s: %s", e.BatchID, e.Table, msg)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *BatchError) Unwrap() error { return e.Err }
