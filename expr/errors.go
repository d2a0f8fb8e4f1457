package expr

import (
	"errors"
	"fmt"
)

var (
	// ErrSyntax: a predicate string does not parse. Wrapped by *SyntaxError.
	ErrSyntax = errors.New("syntax error")
	// ErrBind: a predicate does not fit the schema (unknown column, a literal
	// of the wrong type for its column, a comparison on a nested type).
	ErrBind = errors.New("predicate does not fit the schema")
	// ErrValue: a serialized value (partition value, statistic) cannot be
	// parsed as its column's type.
	ErrValue = errors.New("invalid value")
)

// SyntaxError is a parse error at a byte offset of the input (0-based).
type SyntaxError struct {
	Pos   int    // byte offset of the offending token
	Input string // the whole input
	Msg   string // what is wrong
}

// Error implements error.
func (e *SyntaxError) Error() string {
	return fmt.Sprintf("syntax error at position %d: %s", e.Pos, e.Msg)
}

// Unwrap makes errors.Is(err, ErrSyntax) true.
func (e *SyntaxError) Unwrap() error { return ErrSyntax }
