package source

import (
	"errors"
	"fmt"
)

var (
	// ErrBadRecord: an input record does not fit the schema. Wrapped by
	// *RecordError, which names the file, line and field.
	ErrBadRecord = errors.New("record does not fit the schema")
	// ErrFormat: an unknown or unsupported input format or option.
	ErrFormat = errors.New("unsupported format")
	// ErrInvalidOptions: Options.Validate failed.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrNotStarted: a method was called before Start.
	ErrNotStarted = errors.New("not started")
	// ErrForeignPath: the source log names a file outside this source's
	// directory (the checkpoint was written for another source).
	ErrForeignPath = errors.New("source log names a file outside the source directory")
	// ErrBadOffset: an offset handed to the source is not one of its offsets.
	ErrBadOffset = errors.New("invalid offset")
)

// RecordError reports one record that does not fit the schema: the source
// file (its URL), the 1-based line where the record starts (0 for a Parquet
// file as a whole), the field (dotted path, "" for the record as a whole),
// and the cause.
type RecordError struct {
	File  string // the file's URL
	Line  int    // 1-based line (0: the whole file)
	Field string // the field at fault ("" for the whole record)
	Err   error  // the cause
}

// Error implements error.
func (e *RecordError) Error() string {
	msg := e.File
	if e.Line > 0 {
		msg += fmt.Sprintf(" line %d", e.Line)
	}
	if e.Field != "" {
		msg += " field " + e.Field
	}
	return msg + ": " + e.Err.Error()
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *RecordError) Unwrap() []error { return []error{ErrBadRecord, e.Err} }

// BadRecord is a rejected record handed to FileOptions.OnBadRecord: the row
// is dropped from the batch and the handler decides what to keep of it.
type BadRecord struct {
	Reason string       // the *RecordError's message
	File   string       // the file's URL
	Line   int          // 1-based line (0: the whole file)
	Field  string       // the field at fault ("" for the whole record)
	Raw    string       // the record's text as read (a line for NDJSON and CSV)
	Err    *RecordError // the error, with File, Line and Field
}
