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
	// CheckpointRowsPerChunk is how many actions the checkpoint writer
	// buffers before handing them to the Parquet writer (memory bound).
	// Default 10,000.
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
