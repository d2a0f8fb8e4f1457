package source

import (
	"context"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// Source is what the micro-batch driver (package stream) consumes: Spark's
// Source API (Source.scala: getOffset/latestOffset, getBatch, commit) with
// offsets as their serialized JSON text, which the driver stores verbatim in
// offsets/N. The file source is FileSource; Kafka comes later.
//
// A Source is driven by one goroutine at a time.
type Source interface {
	// URL identifies the source; the checkpoint records it, and a restart
	// with another URL is refused.
	URL() string
	// Start binds the source to its own directory inside the checkpoint
	// (sources/<i>) and restores its state from it. Called once per run,
	// before any other method.
	Start(ctx context.Context, dir storage.Store) error
	// PrepareAvailableNow fixes the data an AvailableNow run may read: data
	// arriving later is left for the next run
	// (SupportsTriggerAvailableNow.prepareForTriggerAvailableNow).
	PrepareAvailableNow(ctx context.Context) error
	// LatestOffset plans the end of the next batch: at most limit new units
	// of data after everything already planned. It returns "" if the source
	// has never had data. An offset equal to the last one planned means no
	// new data. (SupportsAdmissionControl.latestOffset)
	LatestOffset(ctx context.Context, limit ReadLimit) (string, error)
	// GetBatch returns the records in (start, end]; start "" means from the
	// beginning. For the same offsets it returns the same records, in the
	// same order, every time: a rerun after a crash reads exactly the data of
	// the first attempt.
	GetBatch(ctx context.Context, start, end string) (*schema.Batch, BatchStats, error)
	// Commit tells the source that data up to end is durably processed.
	Commit(ctx context.Context, end string) error
}

// ReadLimit bounds the data of one batch (Spark's ReadLimit). The zero value
// reads all available data.
type ReadLimit struct {
	// MaxFiles is the most new files in one batch; 0 = no limit
	// (ReadMaxFiles / ReadAllAvailable).
	MaxFiles int
	// MaxBytes is a soft cap on the bytes of the new files of one batch: a
	// file is admitted while the batch is under it, so a batch holds at
	// least one file (Delta's maxBytesPerTrigger, AdmissionLimits); 0 = no
	// limit. Sources without file sizes ignore it.
	MaxBytes int64
}

// BatchStats describes the input of one batch.
type BatchStats struct {
	NumFiles int   // files read
	NumBytes int64 // their bytes
	// NumBadRecords is the number of records handed to OnBadRecord.
	NumBadRecords int
}
