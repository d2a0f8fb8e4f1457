package txlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// DefaultDeletedFileRetention is delta.deletedFileRetentionDuration's
// default (1 week): tombstones older than that are left out of checkpoints
// (PROTOCOL.md, "Add File and Remove File"; Table Properties).
const DefaultDeletedFileRetention = 7 * 24 * time.Hour

// DefaultLogRetention is delta.logRetentionDuration's default (30 days).
const DefaultLogRetention = 30 * 24 * time.Hour

// ParseInterval parses a Delta duration property ("interval 30 days",
// "interval 1 week", "30 days", "168 hours"), in the units of Spark's
// CalendarInterval strings: week, day, hour, minute, second (a decimal
// number of seconds too, "1.5 seconds"), millisecond and microsecond.
func ParseInterval(s string) (time.Duration, error) {
	f := strings.Fields(strings.ToLower(strings.TrimSpace(s)))
	if len(f) > 0 && f[0] == "interval" {
		f = f[1:]
	}
	if len(f) == 0 || len(f)%2 != 0 {
		return 0, fmt.Errorf("txlog: invalid interval %q", s)
	}
	var total time.Duration
	for i := 0; i < len(f); i += 2 {
		unit := strings.TrimSuffix(f[i+1], "s")
		if unit == "second" && strings.Contains(f[i], ".") {
			x, err := strconv.ParseFloat(f[i], 64)
			if err != nil || x < 0 || x > float64(math.MaxInt64/int64(time.Second)) {
				return 0, fmt.Errorf("txlog: invalid interval %q", s)
			}
			total += time.Duration(x * float64(time.Second))
			continue
		}
		n, err := strconv.ParseInt(f[i], 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("txlog: invalid interval %q", s)
		}
		var d time.Duration
		switch unit {
		case "week":
			d = 7 * 24 * time.Hour
		case "day":
			d = 24 * time.Hour
		case "hour":
			d = time.Hour
		case "minute":
			d = time.Minute
		case "second":
			d = time.Second
		case "millisecond":
			d = time.Millisecond
		case "microsecond":
			d = time.Microsecond
		default:
			return 0, fmt.Errorf("txlog: invalid interval unit in %q", s)
		}
		total += time.Duration(n) * d
	}
	return total, nil
}

func durationProp(m Metadata, key string, def time.Duration) time.Duration {
	if s, ok := m.Configuration[key]; ok {
		if d, err := ParseInterval(s); err == nil {
			return d
		}
	}
	return def
}

// Checkpoint writes the classic single-file checkpoint of snap,
// _delta_log/%020d.checkpoint.parquet (PROTOCOL.md, "Checkpoints", V1 spec),
// then updates _last_checkpoint unless it already names a newer version.
// Rows: protocol, metaData, txns, live domains, live adds, then tombstones
// younger than delta.deletedFileRetentionDuration. Rows are streamed to the
// store in chunks of Options.CheckpointRowsPerChunk.
//
// Nothing is written, and the error names the cause, when the checkpoint
// could misstate the table: a protocol this package does not know
// (*UnsupportedFeatureError: reader version > 3, writer version > 7, an
// unknown feature name, a catalog-managed table), or an action of an
// unknown type in the replayed commits (*UnknownActionError), which the
// checkpoint would drop.
func (l *Log) Checkpoint(ctx context.Context, snap *Snapshot) (*LastCheckpoint, error) {
	if snap == nil {
		return nil, fmt.Errorf("%w: checkpoint of a nil snapshot", ErrInvalidTransaction)
	}
	if err := checkCheckpointSupported(snap.protocol); err != nil {
		return nil, fmt.Errorf("txlog: checkpoint of version %d: %w", snap.version, err)
	}
	if snap.unknownAction != nil {
		return nil, fmt.Errorf("txlog: checkpoint of version %d: %w", snap.version, snap.unknownAction)
	}
	p := CheckpointPath(snap.version)
	w, err := l.store.NewWriter(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("txlog: write checkpoint %s: %w", p, err)
	}
	cw := &countingWriter{w: w}
	// Version 1 pages and PLAIN byte arrays, as Spark writes checkpoints:
	// readers before Spark 3.3 cannot decode parquet-go's defaults. The
	// statistics as parquet-mr writes them (parquetio.StatisticsOptions): a
	// large schemaString or partition value is stored once.
	sl := parquetio.NewStatsLimitingWriter(cw)
	pw := parquet.NewGenericWriter[ckptRow](sl, append([]parquet.WriterOption{parquet.Compression(&parquet.Snappy),
		parquet.DataPageVersion(1), parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain)}, parquetio.StatisticsOptions()...)...)
	chunk := make([]ckptRow, 0, l.opts.CheckpointRowsPerChunk)
	var rows, adds int64
	flush := func() error {
		if len(chunk) == 0 {
			return nil
		}
		if _, err := pw.Write(chunk); err != nil {
			return err
		}
		chunk = chunk[:0]
		// one row group per chunk: the writer's buffers stay bounded
		return pw.Flush()
	}
	emit := func(a Action) error {
		chunk = append(chunk, toCkptRow(&a))
		rows++
		if len(chunk) == cap(chunk) {
			return flush()
		}
		return nil
	}
	fail := func(err error) (*LastCheckpoint, error) {
		_ = w.Abort()
		return nil, fmt.Errorf("txlog: write checkpoint %s: %w", p, err)
	}
	proto, md := snap.protocol, snap.metadata
	if err := errors.Join(emit(Action{Protocol: &proto}), emit(Action{MetaData: &md})); err != nil {
		return fail(err)
	}
	for _, t := range snap.TxnActions() {
		if err := emit(Action{Txn: &t}); err != nil {
			return fail(err)
		}
	}
	for _, d := range snap.Domains() {
		if err := emit(Action{DomainMetadata: &d}); err != nil {
			return fail(err)
		}
	}
	for _, a := range snap.Files() {
		adds++
		if err := emit(Action{Add: a}); err != nil {
			return fail(err)
		}
	}
	minTS := l.opts.Now().Add(-durationProp(md, "delta.deletedFileRetentionDuration", DefaultDeletedFileRetention)).UnixMilli()
	for _, r := range snap.Tombstones() {
		if r.DeletionTimestamp != nil && *r.DeletionTimestamp < minTS {
			continue
		}
		if err := emit(Action{Remove: r}); err != nil {
			return fail(err)
		}
	}
	if err := flush(); err != nil {
		return fail(err)
	}
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := sl.Finish(pw); err != nil {
		return fail(err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("txlog: write checkpoint %s: %w", p, err)
	}
	lc := &LastCheckpoint{Version: snap.version, Size: rows, SizeInBytes: ptr(cw.n), NumOfAddFiles: ptr(adds)}
	if old, err := l.LastCheckpointHint(ctx); err == nil && old != nil && old.Version > snap.version {
		return lc, nil
	}
	b, err := json.Marshal(lc)
	if err != nil {
		return nil, err
	}
	if err := l.store.Put(ctx, LastCheckpointPath, b); err != nil {
		return nil, fmt.Errorf("txlog: write %s: %w", LastCheckpointPath, err)
	}
	return lc, nil
}

type countingWriter struct {
	w interface{ Write([]byte) (int, error) }
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	return n, err
}
