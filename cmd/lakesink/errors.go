package main

import (
	"errors"

	"github.com/lakesink/lakesink/txlog"
)

// isConflict: a commit lost to another writer (exit 3).
func isConflict(err error) bool {
	return errors.Is(err, txlog.ErrConcurrentModification)
}

// isCorrupt: a corrupt log or a table we may not read or write (exit 4).
func isCorrupt(err error) bool {
	return errors.Is(err, txlog.ErrCorruptLog) || errors.Is(err, txlog.ErrUnsupportedFeature) ||
		errors.Is(err, txlog.ErrPathOutsideTable)
}
