package main

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/stream/delta"
	"github.com/lakesink/lakesink/stream/ingest"
)

// DeltaFlags are the flags of `lakesink ingest --format delta` (a Delta
// table as the source, Delta's DeltaSource options).
type DeltaFlags struct {
	StartingVersion    int64
	StartingTimestamp  string
	SkipChangeCommits  bool
	MaxBytesPerTrigger string
	Where              string
	Columns            []string
}

// AddFlags registers the flags.
func (d *DeltaFlags) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&d.StartingVersion, "starting-version", -1, "--format delta: start at the commits of this version, without the initial snapshot (Delta's startingVersion; default: the latest snapshot's files, then later commits)")
	f.StringVar(&d.StartingTimestamp, "starting-timestamp", "", "--format delta: start at the first commit at or after this RFC 3339 time (Delta's startingTimestamp)")
	f.BoolVar(&d.SkipChangeCommits, "skip-change-commits", false, "--format delta: skip commits that remove data (DELETE, UPDATE, MERGE, overwrite) instead of failing (Delta's skipChangeCommits)")
	f.StringVar(&d.MaxBytesPerTrigger, "max-bytes-per-trigger", "", "--format delta: soft cap on the bytes of new files per micro-batch (at least one file; Delta's maxBytesPerTrigger)")
	f.StringVar(&d.Where, "where", "", `--format delta: keep only the source rows matching this predicate, e.g. "country = 'NL'"`)
	f.StringSliceVar(&d.Columns, "columns", nil, "--format delta: the source columns to stream, comma-separated (default all)")
}

// misused names a --format delta flag given with another format ("" if none).
func (d *DeltaFlags) misused() string {
	switch {
	case d.StartingVersion != -1:
		return "--starting-version"
	case d.StartingTimestamp != "":
		return "--starting-timestamp"
	case d.SkipChangeCommits:
		return "--skip-change-commits"
	case d.MaxBytesPerTrigger != "":
		return "--max-bytes-per-trigger"
	case d.Where != "":
		return "--where"
	case len(d.Columns) > 0:
		return "--columns"
	}
	return ""
}

// deltaSourceOptions maps the --format delta flags to the source's options.
func deltaSourceOptions(d DeltaFlags) (ingest.DeltaSourceOptions, error) {
	o := ingest.DeltaSourceOptions{StartingVersion: d.StartingVersion, SkipChangeCommits: d.SkipChangeCommits, Where: d.Where, Columns: d.Columns}
	if d.StartingTimestamp != "" {
		ts, err := time.Parse(time.RFC3339Nano, d.StartingTimestamp)
		if err != nil {
			return o, fmt.Errorf("--starting-timestamp %q: want an RFC 3339 time such as 2026-12-01T10:00:00Z", d.StartingTimestamp)
		}
		o.StartingTimestamp = ts
	}
	if d.MaxBytesPerTrigger != "" {
		n, err := parseByteSizeFlag("max-bytes-per-trigger", d.MaxBytesPerTrigger)
		if err != nil {
			return o, err
		}
		o.MaxBytesPerTrigger = n
	}
	return o, nil
}

// deltaSourceHint is a Delta source's change-commit or lost-version error
// with the flag to use added ("" for any other error).
func deltaSourceHint(err error) string {
	switch {
	case errors.Is(err, delta.ErrChangeCommit):
		return err.Error() + "; pass --skip-change-commits to skip such commits (Delta's skipChangeCommits)"
	case errors.Is(err, delta.ErrVersionUnavailable):
		return err.Error() + " (--starting-version with a version still in the log)"
	}
	return ""
}
