package schema

import "fmt"

// RowError reports a record of a batch that does not fit the schema. It
// matches ErrRowMismatch with errors.Is, and Err with errors.Is/As too.
type RowError struct {
	Row   int    // 0-based index of the record in the batch
	Field string // dotted path of the offending value ("" for the record itself)
	Err   error  // what is wrong
}

// Error implements error.
func (e *RowError) Error() string {
	if e.Field == "" {
		return fmt.Sprintf("row %d: %v", e.Row, e.Err)
	}
	return fmt.Sprintf("row %d, field %s: %v", e.Row, e.Field, e.Err)
}

// Unwrap returns ErrRowMismatch and the cause.
func (e *RowError) Unwrap() []error { return []error{ErrRowMismatch, e.Err} }
