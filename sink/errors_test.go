package sink_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/txlog"
)

// TestBatchErrorNamesTheTableOnce: the batch and the table are each said
// once, whether or not the cause already names the table; errors.Is still
// reaches the cause.
func TestBatchErrorNamesTheTableOnce(t *testing.T) {
	const url = "file:///data/t"
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{txlog.ErrTableNotFound, "batch 3 to file:///data/t: table not found"},
		{fmt.Errorf("write %s: %w", url, txlog.ErrTableNotFound), "batch 3: write file:///data/t: table not found"},
	} {
		err := &sink.BatchError{Table: url, BatchID: 3, Err: tc.cause}
		if err.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", err.Error(), tc.want)
		}
		if !errors.Is(err, txlog.ErrTableNotFound) {
			t.Errorf("%v does not match its cause", err)
		}
	}
}
