package schema

import "errors"

var (
	// ErrSchema: a schema is invalid or cannot be mapped (to Parquet, from JSON).
	ErrSchema = errors.New("invalid schema")
	// ErrRowMismatch: a record does not fit the schema. Wrapped by *RowError.
	ErrRowMismatch = errors.New("record does not fit the schema")
)
