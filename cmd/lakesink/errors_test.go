package main

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/txlog"
)

// TestCorruptSentinelsExitFour: each package's corrupt-or-unreadable sentinel
// is marked with storage.ErrCorrupt, so the one check of isCorrupt maps it
// to exit 4 (the list isCorrupt checked one by one before the marker).
func TestCorruptSentinelsExitFour(t *testing.T) {
	for _, target := range []error{
		txlog.ErrCorruptLog, txlog.ErrUnsupportedFeature, txlog.ErrPathOutsideTable,
		filesink.ErrCorruptLog, filesink.ErrUnsupportedLogVersion, filesink.ErrPathOutsideRoot, filesink.ErrIncompleteLog,
		stream.ErrCorruptCheckpoint, parquetio.ErrCorruptFile, parquetio.ErrUnsupported,
		reader.ErrCorruptFile, reader.ErrCorruptDeletionVector,
	} {
		err := fmt.Errorf("read x: %w", target)
		if !isCorrupt(err) {
			t.Errorf("%v: not corrupt (exit 4)", target)
		}
	}
	for _, other := range []error{txlog.ErrConcurrentModification, txlog.ErrTableNotFound, errors.New("x")} {
		if isCorrupt(other) {
			t.Errorf("%v: corrupt, want not", other)
		}
	}
}
