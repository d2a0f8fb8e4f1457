package filesink

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// Formats of the data files.
const (
	FormatParquet = "parquet"
	FormatJSON    = "json"
)

// OutputModeAppend is the only output mode a file sink supports.
const OutputModeAppend = "append"

// MaxCompactInterval is the largest CompactInterval accepted. Spark infers
// the interval of an existing log from its .compact files and falls back to
// its default of 10 (spark.sql.streaming.fileSink.log.compactInterval) when
// only one exists (CompactibleFileStreamLog.deriveCompactInterval); a larger
// interval could be misread by a Spark reader with default settings.
const MaxCompactInterval = 10

// Options configures the sink, the log and the readers of this package.
// Fields a function does not use are ignored by it. Start from
// DefaultOptions(); the zero value is not valid.
type Options struct {
	// Format of the data files: "parquet" (default) or "json" (JSON lines).
	Format string
	// Compression codec: for parquet "snappy", "gzip", "zstd", "lz4",
	// "none"; for json "none" or "gzip". Default "": snappy for parquet, none
	// for json, as Spark. It appears in the file name as Spark writes it
	// (part-...-c000.snappy.parquet, .json.gz).
	Compression string
	// PartitionColumns are written as Hive-style directories col=value.
	PartitionColumns []string
	// TargetFileSizeBytes rolls a data file once it reaches this size
	// (default 128 MiB).
	TargetFileSizeBytes int64
	// OutputMode must be "append" (default); Spark's file sink supports
	// neither complete nor update.
	OutputMode string

	// CompactInterval: batch N is a compaction batch when
	// (N+1) % CompactInterval == 0. Default 10, at most MaxCompactInterval.
	// An existing log's interval, inferred from its .compact files as Spark
	// does, takes precedence.
	CompactInterval int
	// Retention is how long a log entry outlives its file's
	// modificationTime (Spark's "retention" sink option, SPARK-27188): at
	// compaction and when reading, an entry is dropped when now -
	// modificationTime > Retention, in milliseconds
	// (FileStreamSinkLog.shouldRetain), so an entry exactly Retention old is
	// kept. nil (default) keeps entries forever (Spark: Long.MaxValue). A
	// value of 0 is not "forever": it drops every entry whose file is older
	// than now, i.e. all of them in practice. A dropped entry's files are no
	// longer listed by readers of the directory (Spark's and lakesink's list
	// through the log), but data files are never deleted by the sink: they
	// become orphans (see Orphans). See ParseRetention and RetentionOf.
	Retention *time.Duration
	// DeleteExpiredLog deletes old log files after each batch (Spark's
	// spark.sql.streaming.fileSink.log.deletion, default true).
	DeleteExpiredLog bool
	// CleanupDelay: only log files older than this are deleted (Spark's
	// spark.sql.streaming.fileSink.log.cleanupDelay, default 10 minutes).
	CleanupDelay time.Duration
	// MinBatchesToRetain: log files of at least this many recent batches are
	// kept (spark.sql.streaming.minBatchesToRetain, default 100).
	MinBatchesToRetain int
	// LegacyDeleteAction honours "action":"delete" lines as Spark up to 3.0
	// did (the path is removed from the listing and from the next compaction
	// file). Default false: Spark 3.1+ ignores the action.
	LegacyDeleteAction bool
	// MaxInMemoryCompactBytes: a compaction file whose estimated size is at
	// most this is built in memory and created with one PutIfAbsent; a larger
	// one is streamed behind a claim (see doc.go, "Compaction"). Default 64 MiB.
	MaxInMemoryCompactBytes int64
	// QueryID identifies the writer in compaction claims. A restarted query
	// with the same QueryID takes over its own stale claim; a different one
	// gets ErrConcurrentWriter. Default "": a random id per Sink.
	QueryID string

	// IgnoreLog makes ListFiles list the data files of the directory instead
	// of reading _spark_metadata (Spark's ignoreMetadata-like escape hatch).
	IgnoreLog bool
	// S3Scheme is the scheme written in log paths for s3:// stores: "s3a"
	// (default) as Spark on Hadoop expects, or "s3", "s3n".
	S3Scheme string
	// BlockSize written in log entries (default 33554432, the local and S3A
	// default block size).
	BlockSize int64
	// BlockReplication written in log entries (default 1).
	BlockReplication int

	// Logger receives warnings (a skipped batch) and info. Default: discard.
	Logger *slog.Logger
	// Now is the clock (log entry times when the store gives none,
	// retention, cleanup delay). Default time.Now.
	Now func() time.Time
}

// DefaultOptions returns the defaults documented on each field.
func DefaultOptions() Options {
	return Options{
		Format:                  FormatParquet,
		TargetFileSizeBytes:     128 << 20,
		OutputMode:              OutputModeAppend,
		CompactInterval:         10,
		DeleteExpiredLog:        true,
		CleanupDelay:            10 * time.Minute,
		MinBatchesToRetain:      100,
		MaxInMemoryCompactBytes: 64 << 20,
		S3Scheme:                "s3a",
		BlockSize:               33554432,
		BlockReplication:        1,
	}
}

// Validate lists every violation, joined, each wrapping ErrInvalidOptions
// (an unsupported output mode also wraps ErrUnsupportedOutputMode).
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	switch o.Format {
	case FormatParquet:
		if err := parquetio.CheckCompression(o.Compression); err != nil {
			bad("compression %q is not supported for parquet", o.Compression)
		}
	case FormatJSON:
		if o.Compression != "" && o.Compression != "gzip" && o.Compression != "none" {
			bad("compression %q is not supported for json (use gzip or none)", o.Compression)
		}
	default:
		bad("format %q: want parquet or json", o.Format)
	}
	if o.OutputMode != OutputModeAppend {
		errs = append(errs, fmt.Errorf("%w: %w: %q (file sinks support append only)",
			ErrInvalidOptions, ErrUnsupportedOutputMode, o.OutputMode))
	}
	if o.TargetFileSizeBytes <= 0 {
		bad("TargetFileSizeBytes %d must be > 0", o.TargetFileSizeBytes)
	}
	if o.CompactInterval < 1 || o.CompactInterval > MaxCompactInterval {
		bad("CompactInterval %d must be in 1..%d", o.CompactInterval, MaxCompactInterval)
	}
	if o.Retention != nil && *o.Retention < 0 {
		bad("Retention %v must be >= 0", *o.Retention)
	}
	if o.CleanupDelay < 0 {
		bad("CleanupDelay %v must be >= 0", o.CleanupDelay)
	}
	if o.MinBatchesToRetain < 1 {
		bad("MinBatchesToRetain %d must be >= 1", o.MinBatchesToRetain)
	}
	if o.MaxInMemoryCompactBytes < 0 {
		bad("MaxInMemoryCompactBytes %d must be >= 0", o.MaxInMemoryCompactBytes)
	}
	switch o.S3Scheme {
	case "s3a", "s3", "s3n":
	default:
		bad("S3Scheme %q: want s3a, s3 or s3n", o.S3Scheme)
	}
	if o.BlockSize <= 0 {
		bad("BlockSize %d must be > 0", o.BlockSize)
	}
	if o.BlockReplication < 1 {
		bad("BlockReplication %d must be >= 1", o.BlockReplication)
	}
	for i, c := range o.PartitionColumns {
		if c == "" {
			bad("PartitionColumns[%d] is empty", i)
		}
	}
	return errors.Join(errs...)
}

// withDefaults returns a copy with the clock and logger filled in.
func (o Options) withDefaults() Options {
	o.PartitionColumns = slices.Clone(o.PartitionColumns)
	if o.Retention != nil {
		o.Retention = RetentionOf(*o.Retention)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// RetentionOf returns d as an Options.Retention value.
func RetentionOf(d time.Duration) *time.Duration { return &d }

// ParseRetention parses Spark's "retention" option: a duration with a unit
// ("12h", "7d", "30m", "90s", "500ms") or a bare number of milliseconds
// (FileStreamSink: Utils.timeStringAsMs). Days ("d") are 24 hours.
func ParseRetention(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return 0, fmt.Errorf("%w: empty retention", ErrInvalidOptions)
	}
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		if n < 0 {
			return 0, fmt.Errorf("%w: negative retention %q", ErrInvalidOptions, s)
		}
		return time.Duration(n) * time.Millisecond, nil
	}
	units := []struct {
		suffix string
		unit   time.Duration
	}{
		{"ms", time.Millisecond}, {"us", time.Microsecond}, {"min", time.Minute},
		{"s", time.Second}, {"m", time.Minute}, {"h", time.Hour}, {"d", 24 * time.Hour},
	}
	for _, u := range units {
		if num, ok := strings.CutSuffix(s, u.suffix); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(num), 10, 64)
			if err != nil || n < 0 {
				return 0, fmt.Errorf("%w: retention %q: want e.g. 12h, 7d or milliseconds", ErrInvalidOptions, s)
			}
			return time.Duration(n) * u.unit, nil
		}
	}
	return 0, fmt.Errorf("%w: retention %q: want e.g. 12h, 7d or milliseconds", ErrInvalidOptions, s)
}
