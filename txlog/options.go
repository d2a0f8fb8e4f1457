package txlog

import (
	"errors"
	"fmt"
	"time"
)

// Options configure a Log. The zero value of a field means its default.
type Options struct {
	// MaxLineBytes bounds one JSON line of a commit file. Default
	// DefaultMaxLineBytes (64 MiB).
	MaxLineBytes int
	// CommitAttempts is how many put-if-absent attempts a commit makes
	// (rebasing over winning commits between attempts). Default 15.
	CommitAttempts int
	// CheckpointInterval overrides the table property
	// delta.checkpointInterval (default 10) for automatic checkpoints.
	// 0: use the table property.
	CheckpointInterval int
	// DisableAutoCheckpoint turns off the checkpoint written after a commit
	// whose version is a multiple of the checkpoint interval.
	DisableAutoCheckpoint bool
	// BackgroundCheckpoint writes the automatic checkpoint after Commit
	// has returned, in a goroutine the Log owns, instead of on the
	// committer's path (a checkpoint is O(live files): at 10,000 files it
	// took ~3/4 of a blind append's CPU). At most one runs at a time: a
	// checkpoint due while one is being written is skipped, and the next
	// due one covers its versions. Log.Wait waits for the one in flight,
	// Log.Close too and then writes later ones on the commit path. A crash
	// or exit before it finishes loses only the checkpoint: it is written
	// to a temporary name and renamed (Store.NewWriter), and
	// _last_checkpoint only after it; PROTOCOL.md "Checkpoints" allows a
	// writer to checkpoint any version whose commit is written, and
	// readers find the commits after the newest one.
	BackgroundCheckpoint bool
	// CheckpointRowsPerChunk is the most actions in one row group of a
	// checkpoint: how many the checkpoint writer buffers before handing
	// them to the Parquet writer (memory bound), and the size past which
	// a row group of adds copied from the previous checkpoint is no longer
	// merged with the newer ones (Log.Checkpoint). Default 10,000.
	CheckpointRowsPerChunk int
	// EngineInfo is written as commitInfo.engineInfo. Default "lakesink/dev".
	EngineInfo string
	// ReadConcurrency is how many commit files are read at once during
	// replay. Default 8.
	ReadConcurrency int
	// SkipChecksumValidation turns off the check of a loaded snapshot
	// against its version's _delta_log/N.crc (PROTOCOL.md, "Version
	// Checksum File"). By default a .crc that disagrees with the replayed
	// state is a *CorruptLogError (a truncated or damaged commit); skipping
	// reads what the commit files say.
	SkipChecksumValidation bool
	// DisableChecksumFile turns off writing _delta_log/N.crc after each
	// commit (as Spark's spark.databricks.delta.writeChecksumFile.enabled).
	DisableChecksumFile bool
	// Now is the clock (commit timestamps, tombstone expiry). Default time.Now.
	Now func() time.Time
	// ReadOnly declares a Log that only reads (the reader package opens
	// its logs so): its replay keeps nothing a writer needs, namely the
	// bytes of a loaded checkpoint this package wrote (up to 64 MiB, kept
	// for as long as the Log lives to seed its first checkpoint's row-group
	// reuse), and Transaction.Commit, Checkpoint and Cleanup (but a dry
	// run) fail with ErrReadOnly.
	ReadOnly bool
}

// DefaultOptions returns the defaults documented on each Options field.
func DefaultOptions() Options {
	return Options{
		MaxLineBytes:           DefaultMaxLineBytes,
		CommitAttempts:         15,
		CheckpointRowsPerChunk: 10_000,
		EngineInfo:             "lakesink/dev",
		ReadConcurrency:        8,
		Now:                    time.Now,
	}
}

// withDefaults fills zero fields with defaults.
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	if o.MaxLineBytes == 0 {
		o.MaxLineBytes = d.MaxLineBytes
	}
	if o.CommitAttempts == 0 {
		o.CommitAttempts = d.CommitAttempts
	}
	if o.CheckpointRowsPerChunk == 0 {
		o.CheckpointRowsPerChunk = d.CheckpointRowsPerChunk
	}
	if o.EngineInfo == "" {
		o.EngineInfo = d.EngineInfo
	}
	if o.ReadConcurrency == 0 {
		o.ReadConcurrency = d.ReadConcurrency
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	return o
}

// Validate lists every invalid field.
func (o Options) Validate() error {
	var errs []error
	if o.MaxLineBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: MaxLineBytes %d < 0", ErrInvalidOptions, o.MaxLineBytes))
	}
	if o.CommitAttempts < 0 {
		errs = append(errs, fmt.Errorf("%w: CommitAttempts %d < 0", ErrInvalidOptions, o.CommitAttempts))
	}
	if o.CheckpointInterval < 0 {
		errs = append(errs, fmt.Errorf("%w: CheckpointInterval %d < 0", ErrInvalidOptions, o.CheckpointInterval))
	}
	if o.CheckpointRowsPerChunk < 0 {
		errs = append(errs, fmt.Errorf("%w: CheckpointRowsPerChunk %d < 0", ErrInvalidOptions, o.CheckpointRowsPerChunk))
	}
	if o.ReadConcurrency < 0 {
		errs = append(errs, fmt.Errorf("%w: ReadConcurrency %d < 0", ErrInvalidOptions, o.ReadConcurrency))
	}
	return errors.Join(errs...)
}
