package table

import "errors"

var (
	// ErrSchemaMismatch: a batch's schema does not fit the table's (a column
	// of another type, a new non-nullable column, or a new column without
	// WriteOptions.MergeSchema). The message names the column.
	ErrSchemaMismatch = errors.New("batch schema does not match the table")
	// ErrInvalidOptions: CreateOptions or WriteOptions are invalid.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrUnsupportedMode: a write mode the table writer does not implement.
	ErrUnsupportedMode = errors.New("unsupported write mode")
	// ErrTxnMismatch: a write's WriteOptions.Txns continued from a txn
	// version the table no longer has (*TxnMismatchError).
	ErrTxnMismatch = errors.New("txn version mismatch")
	// ErrConstraintViolation: a row breaks a CHECK constraint of the table
	// (*ConstraintViolationError); nothing is committed.
	ErrConstraintViolation = errors.New("CHECK constraint violated")
)
