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

// ParseByteSize parses a byte count: a plain integer, or a number with a
// binary suffix b, k/kb/kib, m/mb/mib, g/gb/gib, t/tb/tib (case-insensitive;
// Spark's JavaUtils.byteStringAs treats kb as 1024 bytes, as here).
func ParseByteSize(s string) (int64, error) {
	in := strings.ToLower(strings.TrimSpace(s))
	i := 0
	for i < len(in) && (in[i] >= '0' && in[i] <= '9') {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("%w: byte size %q", ErrInvalidOptions, s)
	}
	n, err := strconv.ParseInt(in[:i], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: byte size %q", ErrInvalidOptions, s)
	}
	var mult int64
	switch strings.TrimSpace(in[i:]) {
	case "", "b":
		mult = 1
	case "k", "kb", "kib":
		mult = 1 << 10
	case "m", "mb", "mib":
		mult = 1 << 20
	case "g", "gb", "gib":
		mult = 1 << 30
	case "t", "tb", "tib":
		mult = 1 << 40
	default:
		return 0, fmt.Errorf("%w: byte size %q: unknown unit", ErrInvalidOptions, s)
	}
	if n > (1<<62)/mult {
		return 0, fmt.Errorf("%w: byte size %q overflows", ErrInvalidOptions, s)
	}
	return n * mult, nil
}
