package filesink

import (
	"github.com/lakesink/lakesink/storage"

	"errors"
	"fmt"
)

var (
	// ErrCorruptLog: a _spark_metadata file cannot be parsed (bad version
	// line, a line that is not a SinkFileStatus JSON object). Wrapped by
	// *CorruptLogError.
	ErrCorruptLog = storage.MarkCorrupt(errors.New("corrupt _spark_metadata log"))
	// ErrIncompleteLog: the latest log file is empty or truncated, so the
	// batch it names is not treated as committed (Spark: "Incomplete log file").
	ErrIncompleteLog = storage.MarkCorrupt(errors.New("incomplete _spark_metadata log file"))
	// ErrUnsupportedLogVersion: a log file starts with a version line newer
	// than v1 (Spark: "UnsupportedLogVersion: maximum supported log version is v1").
	ErrUnsupportedLogVersion = storage.MarkCorrupt(errors.New("unsupported _spark_metadata log version"))
	// ErrMissingLogFile: a log file that the log needs (a batch after the
	// latest compaction, or the compaction file itself) does not exist.
	ErrMissingLogFile = errors.New("missing _spark_metadata log file")
	// ErrBatchGap: a batch arrived that is not the next one after the latest
	// logged batch.
	ErrBatchGap = errors.New("batch id gap")
	// ErrConcurrentWriter: the log file of a batch was created by someone
	// else: two queries share the output path (Spark:
	// "Multiple streaming queries are concurrently using <path>").
	ErrConcurrentWriter = errors.New("another query writes the same output path")
	// ErrUnsupportedOutputMode: the file sink supports append only
	// (Spark: "Data source ... does not support Complete output mode").
	ErrUnsupportedOutputMode = errors.New("unsupported output mode")
	// ErrPathOutsideRoot: a path named by the log points outside the output
	// directory.
	ErrPathOutsideRoot = storage.MarkCorrupt(errors.New("log path outside the output directory"))
	// ErrInvalidOptions: Options.Validate found one or more violations.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrCorruptDataFile: a JSON data file of the directory cannot be read
	// (a line that is not a JSON object, bad gzip). The message names the
	// file and line.
	ErrCorruptDataFile = errors.New("corrupt JSON data file")
)

// CorruptLogError reports the file and the 1-based line of a log that cannot
// be parsed. It matches ErrCorruptLog with errors.Is.
type CorruptLogError struct {
	Path string // key of the log file, e.g. "_spark_metadata/7.compact"
	Line int    // 1-based; line 1 is the version line
	Err  error  // the parse error
}

// Error implements error.
func (e *CorruptLogError) Error() string {
	return fmt.Sprintf("corrupt _spark_metadata log %s line %d: %v", e.Path, e.Line, e.Err)
}

// Unwrap returns ErrCorruptLog and the underlying parse error.
func (e *CorruptLogError) Unwrap() []error { return []error{ErrCorruptLog, e.Err} }
