package parquetio

import (
	"errors"
	"fmt"

	"github.com/lakesink/lakesink/storage"
)

var (
	// ErrCorruptFile: a Parquet file cannot be read.
	ErrCorruptFile = storage.MarkCorrupt(errors.New("corrupt or unreadable Parquet file"))
	// ErrUnsupported: a Parquet physical/logical type or encoding we cannot read.
	ErrUnsupported = storage.MarkCorrupt(errors.New("unsupported"))
	// ErrOptions: invalid WriteOptions.
	ErrOptions = errors.New("invalid options")
	// ErrPartitionPath: a directory is not a Hive-style partition path.
	ErrPartitionPath = errors.New("invalid partition path")
)

// ColumnError names the file and the top-level column a read failed on.
// Error: "PATH: column NAME: cause".
type ColumnError struct {
	Path   string // the file's path in its store
	Column string
	Err    error
}

func (e *ColumnError) Error() string {
	return fmt.Sprintf("%s: column %s: %v", e.Path, e.Column, e.Err)
}

func (e *ColumnError) Unwrap() error { return e.Err }

// TypeMismatchError: a column of the file holds another type than the
// one the caller asked for (a string column read as long). It unwraps to
// ErrUnsupported: in a table's data file it is corruption; a source of
// input (stream/source) reports it as a bad record instead.
type TypeMismatchError struct {
	FileType string // e.g. "string (BYTE_ARRAY)"
	Want     string // e.g. "long"
}

func (e *TypeMismatchError) Error() string {
	return fmt.Sprintf("the file has %s, the schema wants %s", e.FileType, e.Want)
}

func (e *TypeMismatchError) Unwrap() error { return ErrUnsupported }
