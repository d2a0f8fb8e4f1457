package reader

import (
	"github.com/lakesink/lakesink/storage"

	"errors"

	"github.com/lakesink/lakesink/txlog"
)

var (
	// ErrNotATable: the URL holds neither a Delta log (_delta_log with a
	// commit) nor a file-sink log (_spark_metadata with a batch).
	ErrNotATable = errors.New("not a Delta table or file-sink directory")
	// ErrUnknownColumn: a projected column is not in the schema.
	ErrUnknownColumn = errors.New("unknown column")
	// ErrOption: an option is invalid or does not apply (time travel on a
	// file-sink directory, negative version, ...).
	ErrOption = errors.New("invalid option")
	// ErrCorruptDeletionVector: a deletion vector cannot be read, or fails
	// its magic number, checksum, size or cardinality check (PROTOCOL.md,
	// "Deletion Vector Format").
	ErrCorruptDeletionVector = storage.MarkCorrupt(errors.New("corrupt deletion vector"))
	// ErrCorruptFile: a data file does not match the log (bad partition
	// value, unparsable statistics, path outside the table).
	ErrCorruptFile = storage.MarkCorrupt(errors.New("data file does not match the log"))
	// ErrTypeMapping: a record cannot be stored in a Go struct field
	// (Rows[T]).
	ErrTypeMapping = errors.New("cannot map column into Go type")

	// ErrUnsupportedFeature is txlog.ErrUnsupportedFeature: the table needs
	// a reader feature lakesink does not implement. The error is a
	// *txlog.UnsupportedFeatureError naming the feature.
	ErrUnsupportedFeature = txlog.ErrUnsupportedFeature

	// ErrCommitNotFound: a commit file that Snapshot.ReadCommit was asked
	// for does not exist (not yet written, or removed by log cleanup).
	ErrCommitNotFound = errors.New("commit not found")
)
