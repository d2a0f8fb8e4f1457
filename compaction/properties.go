package compaction

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/txlog"
)

// Table properties read by compaction (PROTOCOL.md, "Table Properties"; Delta's
// DeltaConfigs.scala for the defaults).
const (
	PropTargetFileSize               = "delta.targetFileSize"
	PropDeletedFileRetentionDuration = "delta.deletedFileRetentionDuration"
	PropLogRetentionDuration         = "delta.logRetentionDuration"
	PropCheckpointInterval           = "delta.checkpointInterval"

	// DefaultTargetFileSizeBytes is OPTIMIZE's target when the table sets no
	// delta.targetFileSize (128 MiB).
	DefaultTargetFileSizeBytes int64 = 128 << 20
	// DefaultDeletedFileRetention is delta.deletedFileRetentionDuration's
	// default, "interval 1 week".
	DefaultDeletedFileRetention = txlog.DefaultDeletedFileRetention
	// DefaultLogRetention is delta.logRetentionDuration's default,
	// "interval 30 days".
	DefaultLogRetention = txlog.DefaultLogRetention
	// DefaultCheckpointInterval is delta.checkpointInterval's default (10).
	DefaultCheckpointInterval = 10
)

// TargetFileSize is the table's delta.targetFileSize in bytes, or
// DefaultTargetFileSizeBytes when unset. Delta accepts a plain byte count;
// size suffixes ("128mb") are accepted too, as Spark's byte-string config
// parser does.
func TargetFileSize(md txlog.Metadata) (int64, error) {
	s, ok := md.Configuration[PropTargetFileSize]
	if !ok || strings.TrimSpace(s) == "" {
		return DefaultTargetFileSizeBytes, nil
	}
	n, err := ParseByteSize(s)
	if err != nil || n <= 0 {
		return 0, fmt.Errorf("%w: %s=%q", ErrInvalidProperty, PropTargetFileSize, s)
	}
	return n, nil
}

// DeletedFileRetention is the table's delta.deletedFileRetentionDuration, or
// DefaultDeletedFileRetention when unset.
func DeletedFileRetention(md txlog.Metadata) (time.Duration, error) {
	return durationProp(md, PropDeletedFileRetentionDuration, DefaultDeletedFileRetention)
}

// LogRetention is the table's delta.logRetentionDuration, or
// DefaultLogRetention when unset.
func LogRetention(md txlog.Metadata) (time.Duration, error) {
	return durationProp(md, PropLogRetentionDuration, DefaultLogRetention)
}

// CheckpointInterval is the table's delta.checkpointInterval, or
// DefaultCheckpointInterval when unset or invalid.
func CheckpointInterval(md txlog.Metadata) int64 {
	if s, ok := md.Configuration[PropCheckpointInterval]; ok {
		if n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64); err == nil && n > 0 {
			return n
		}
	}
	return DefaultCheckpointInterval
}

func durationProp(md txlog.Metadata, key string, def time.Duration) (time.Duration, error) {
	s, ok := md.Configuration[key]
	if !ok || strings.TrimSpace(s) == "" {
		return def, nil
	}
	d, err := ParseInterval(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %s=%q: %v", ErrInvalidProperty, key, s, err)
	}
	return d, nil
}

// ParseInterval parses a Delta duration property with txlog.ParseInterval
// (the parser the log itself uses for tombstone and log retention): "interval
// 7 days", "interval 1 week", "168 hours", the "interval" keyword optional.
// A plain Go duration ("168h", the CLI's --retain form) is accepted too.
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

// ParseByteSize parses a byte count with txlog.ParseByteSize (the parser of
// delta.targetFileSize): a plain integer, or a number with a binary suffix b,
// k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib. Errors wrap ErrInvalidOptions.
func ParseByteSize(s string) (int64, error) {
	n, err := txlog.ParseByteSize(s)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return n, nil
}
