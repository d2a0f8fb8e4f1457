package main

import (
	"errors"

	"github.com/spf13/cobra"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/txlog"
)

// isConflict: another writer won (exit 3): a lost commit, a second query on
// the same checkpoint, a concurrent writer on a file-sink log.
func isConflict(err error) bool {
	return errors.Is(err, txlog.ErrConcurrentModification) || errors.Is(err, stream.ErrCheckpointInUse) ||
		errors.Is(err, filesink.ErrConcurrentWriter)
}

// isCorrupt: a corrupt log, checkpoint or data file, or a table we may not
// read or write (exit 4). Every package marks such errors with
// storage.ErrCorrupt (txlog.ErrCorruptLog, filesink.ErrCorruptLog, ...).
func isCorrupt(err error) bool { return errors.Is(err, storage.ErrCorrupt) }

// hintError prints msg, the CLI's wording of err (flag names instead of
// option names, what to do next), and keeps err for errors.Is and errors.As.
type hintError struct {
	err error
	msg string
}

func (e *hintError) Error() string { return e.msg }
func (e *hintError) Unwrap() error { return e.err }

// checksumHint adds what to do to a version checksum mismatch (exit 4 stays:
// the hint keeps the error for errors.Is).
func checksumHint(err error) error {
	var mm *txlog.ChecksumMismatchError
	if errors.As(err, &mm) {
		return &hintError{err, err.Error() + "; the commit files disagree with the version checksum written after them " +
			"(a truncated or damaged commit); to read what the commit files say, pass --skip-checksum"}
	}
	return err
}

// notATableCommands are the verbs whose first argument must be an existing
// table; readFileSink marks those that also read a file-sink directory.
var notATableCommands = map[string]struct{ readFileSink bool }{
	"describe": {true}, "scan": {true}, "files": {true},
	"history": {}, "compact": {}, "vacuum": {}, "checkpoint": {}, "cleanup-log": {},
}

// withNotATable words "the path is not a table" the same way in every verb
// of notATableCommands: "not a table: URL has no Delta log ..." (the
// libraries' errors say it in their own words, with the URL once or twice).
// The error is kept for errors.Is (txlog.ErrTableNotFound,
// reader.ErrNotATable).
func withNotATable(root *cobra.Command) {
	for _, c := range root.Commands() {
		how, ok := notATableCommands[c.Name()]
		if !ok || c.RunE == nil {
			continue
		}
		run := c.RunE
		c.RunE = func(cmd *cobra.Command, args []string) error {
			err := run(cmd, args)
			if err == nil || len(args) == 0 || !errors.Is(err, txlog.ErrTableNotFound) && !errors.Is(err, reader.ErrNotATable) {
				return err
			}
			return &hintError{err, notATableMessage(args[0], how.readFileSink)}
		}
	}
}

// notATableMessage is the one wording of a path that is not a table.
func notATableMessage(url string, readFileSink bool) string {
	msg := "not a table: " + url + " has no Delta log (_delta_log/ with a commit)"
	if readFileSink {
		msg += " nor a file-sink log (_spark_metadata/)"
	}
	return msg
}
