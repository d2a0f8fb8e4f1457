package stream

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/txlog"
)

// TestBatchErrorNamesTheBatchOnce: a cause that already starts by naming
// the batch (a sink's BatchError, a file sink's "batch 3: ...") is not
// prefixed with it again; another batch's number ("batch 30") is.
func TestBatchErrorNamesTheBatchOnce(t *testing.T) {
	for _, tc := range []struct {
		cause error
		want  string
	}{
		{txlog.ErrTableNotFound, "batch 3: write to the sink: table not found"},
		{&sink.BatchError{Table: "file:///t", BatchID: 3, Err: txlog.ErrTableNotFound}, "write to the sink: batch 3 to file:///t: table not found"},
		{fmt.Errorf("batch 3: %w", txlog.ErrTableNotFound), "write to the sink: batch 3: table not found"},
		{fmt.Errorf("batch 30: %w", txlog.ErrTableNotFound), "batch 3: write to the sink: batch 30: table not found"},
	} {
		err := &BatchError{BatchID: 3, Stage: "addBatch", Err: tc.cause}
		if err.Error() != tc.want {
			t.Errorf("Error() = %q, want %q", err.Error(), tc.want)
		}
		if !errors.Is(err, txlog.ErrTableNotFound) {
			t.Errorf("%v does not match its cause", err)
		}
	}
}
