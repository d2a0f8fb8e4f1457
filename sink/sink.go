package sink

import (
	"context"

	"github.com/lakesink/lakesink/schema"
)

// Sink is the contract every streaming sink implements (the Delta sink in this
// package, the Spark file sink in package filesink).
//
// AddBatch writes batch batchID. It is idempotent per batchID: a batch that is
// already committed is not written again and returns Result{Skipped: true}
// with a nil error (DeltaSink's "Skipping already complete epoch"). On error
// nothing of the batch is committed; the caller may retry the same batchID
// with the same rows.
type Sink interface {
	// AddBatch writes batch batchID once (see Sink).
	AddBatch(ctx context.Context, batchID int64, batch *schema.Batch) (Result, error)
}

// Result reports what AddBatch did.
type Result struct {
	BatchID int64 `json:"batchId"` // the batch AddBatch was given
	// Skipped: the batch was already committed (batchID <= the committed
	// version for this query); nothing was written.
	Skipped bool `json:"skipped"`
	// Version is the Delta table version of the commit (for a skipped batch,
	// the snapshot version that showed it committed); -1 for the file sink.
	Version  int64 `json:"version"`
	NumFiles int   `json:"numFiles"` // data files written
	NumBytes int64 `json:"numBytes"` // bytes of data files written
	NumRows  int64 `json:"numRows"`  // rows written (0 when skipped)
	// NumInserted, NumUpdated and NumDeleted count the rows an update-mode
	// batch (a merge) inserted, updated and deleted (NumRows is then
	// inserted + updated); NumRemovedFiles the files it rewrote. Zero in the
	// other modes.
	NumInserted     int64 `json:"numInserted,omitempty"`
	NumUpdated      int64 `json:"numUpdated,omitempty"`
	NumDeleted      int64 `json:"numDeleted,omitempty"`
	NumRemovedFiles int   `json:"numRemovedFiles,omitempty"`
}
