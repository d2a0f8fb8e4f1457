package txlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/parquetio"
)

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
		return nil, fmt.Errorf("checkpoint of version %d: %w", snap.version, err)
	}
	if snap.unknownAction != nil {
		return nil, fmt.Errorf("checkpoint of version %d: %w", snap.version, snap.unknownAction)
	}
	// The tombstone retention decides which removes are kept (Delta's
	// Checkpoints reads it with DeltaConfig.fromMetaData, which throws on
	// an invalid value).
	if err := snap.props.Err(PropDeletedFileRetentionDuration, PropCheckpointPolicy); err != nil {
		return nil, fmt.Errorf("checkpoint of version %d: %w", snap.version, err)
	}
	p := CheckpointPath(snap.version)
	codec, err := parquetio.Codec("snappy") // as Spark writes checkpoints
	if err != nil {
		return nil, err
	}
	w, err := l.store.NewWriter(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("write checkpoint %s: %w", p, err)
	}
	cw := &countingWriter{w: w}
	// The writer settings of every lakesink Parquet file
	// (parquetio.SparkWriterOptions: version 1 pages and PLAIN byte arrays,
	// as Spark writes checkpoints; statistics as parquet-mr writes them, so
	// a large schemaString or partition value is stored once).
	sl := parquetio.NewStatsLimitingWriter(cw)
	pw := parquet.NewGenericWriter[ckptRow](sl, parquetio.SparkWriterOptions(codec)...)
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
		return nil, fmt.Errorf("write checkpoint %s: %w", p, err)
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
	minTS := l.opts.Now().Add(-snap.props.DeletedFileRetention).UnixMilli()
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
		return nil, fmt.Errorf("write checkpoint %s: %w", p, err)
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
		return nil, fmt.Errorf("write %s: %w", LastCheckpointPath, err)
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
