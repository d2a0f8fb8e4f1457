package compaction

import (
	"fmt"
	"strings"
	"time"

	"github.com/lakesink/lakesink/txlog"
)

// The table properties compaction reads (delta.targetFileSize,
// delta.deletedFileRetentionDuration, delta.logRetentionDuration,
// delta.checkpointInterval, delta.dataSkippingNumIndexedCols) are parsed
// once per snapshot by txlog (txlog.TableProperties,
// txlog.Snapshot.Properties); an invalid value fails the operation that
// reads it with a *txlog.PropertyError naming the key and version.

// ParseInterval parses a duration option (VacuumOptions.RetentionHours'
// text forms, the CLI's --retain): a Delta interval as txlog.ParseInterval
// reads table properties ("interval 7 days", "interval 1 week", "168
// hours", the "interval" keyword optional), or a plain Go duration
// ("168h"). Errors wrap ErrInvalidOptions.
func ParseInterval(s string) (time.Duration, error) {
	if d, err := time.ParseDuration(strings.TrimSpace(s)); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("%w: negative interval %q", ErrInvalidOptions, s)
		}
		return d, nil
	}
	d, err := txlog.ParseInterval(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return d, nil
}

// ParseByteSize parses a byte-count option with txlog.ParseByteSize (the
// parser of delta.targetFileSize): a plain integer, or a number with a
// binary suffix b, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib. Errors wrap
// ErrInvalidOptions.
func ParseByteSize(s string) (int64, error) {
	n, err := txlog.ParseByteSize(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return n, nil
}
