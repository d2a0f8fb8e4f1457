package txlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sync"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// Checkpoint writes the classic single-file checkpoint of snap,
// _delta_log/%020d.checkpoint.parquet (PROTOCOL.md, "Checkpoints", V1 spec),
// then updates _last_checkpoint unless it already names a newer version.
// Rows: protocol, metaData, txns, live domains, live adds, then tombstones
// younger than delta.deletedFileRetentionDuration. Rows are streamed to the
// store in row groups of at most Options.CheckpointRowsPerChunk rows: one of
// the protocol, metaData, txns and domains, then groups of adds only, then
// the tombstones. Groups of adds of the last checkpoint this Log wrote whose
// adds are all still live and unchanged in snap are copied from it without
// re-encoding (checkpoint_reuse.go); the file is the same table state
// either way.
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
	if l.opts.ReadOnly {
		return nil, fmt.Errorf("checkpoint of version %d: %w", snap.version, ErrReadOnly)
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
	files := snap.Files()
	proto, md := snap.protocol, snap.metadata
	memo := l.ckptMemo.get()
	plan := planCkptReuse(memo, proto, md, files, l.opts.CheckpointRowsPerChunk)
	w, err := l.store.NewWriter(ctx, p)
	if err != nil {
		return nil, fmt.Errorf("write checkpoint %s: %w", p, err)
	}
	cw := &countingWriter{w: w, keep: &bytes.Buffer{}, max: l.ckptMemo.maxBytes}
	if memo != nil {
		// The next checkpoint is about the size of the last one: one
		// allocation instead of the doublings that could hold twice the
		// cap while the old memo is still kept.
		cw.keep.Grow(int(min(memo.file.Size()+memo.file.Size()/8, cw.max)))
	}
	fw, err := l.ckptWriter.take(cw, l.opts.CheckpointRowsPerChunk)
	if err != nil {
		_ = w.Abort()
		return nil, err
	}
	emit := func(a Action) error { return fw.add(&a) }
	fail := func(err error) (*LastCheckpoint, error) {
		_ = w.Abort()
		return nil, fmt.Errorf("write checkpoint %s: %w", p, err)
	}
	// Row groups: the table's state, the adds, the tombstones (each group
	// of adds only, so that the next checkpoint can copy it:
	// checkpoint_reuse.go).
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
	if err := fw.flush(); err != nil {
		return fail(err)
	}
	for _, g := range plan.reuse {
		if err := fw.copyGroup(memo.file.RowGroups()[g], memo.groups[g]); err != nil {
			// A memo that cannot be copied would fail every later
			// checkpoint the same way: the next one is a full rewrite.
			l.ckptMemo.clear(memo)
			return fail(err)
		}
	}
	for _, a := range plan.fresh {
		if err := emit(Action{Add: a}); err != nil {
			return fail(err)
		}
	}
	if err := fw.flush(); err != nil {
		return fail(err)
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
	if err := ctx.Err(); err != nil {
		return fail(err)
	}
	if err := fw.finish(); err != nil {
		return fail(err)
	}
	// The file is written: the writer holds nothing of it any more (a
	// writer that failed is dropped, whatever state it was left in).
	groups, encoded, encodedAdds, rows := fw.groups, fw.encoded, fw.encodedAdds, fw.rows
	l.ckptWriter.put(fw)
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("write checkpoint %s: %w", p, err)
	}
	if cw.keep != nil {
		l.ckptMemo.set(newCkptMemo(snap.version, proto, md, cw.keep.Bytes(), groups, encoded, encodedAdds))
	} else {
		// The table outgrew ckptMemoMaxBytes: the older, smaller memo is
		// not kept either (its groups would be copied, and its bytes held,
		// for as long as some of its adds stay live).
		l.ckptMemo.clear(memo)
	}
	adds := int64(len(files))
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

// ckptFileWriter writes the rows of a V1 checkpoint file: each action is
// shredded column-wise (checkpoint_shred.go) into the column writers of a
// GenericWriter[ckptRow], in batches of ckptBatchRows within each chunk of
// rowsPerChunk rows, one row group per chunk (the writer's buffers stay
// bounded), as GenericWriter.Write of each chunk would cut them.
type ckptFileWriter struct {
	sl        *parquetio.StatsLimitingWriter
	pw        *parquet.GenericWriter[ckptRow]
	cws       []*parquet.ColumnWriter
	shred     *ckptShredder
	perChunk  int
	chunkRows int
	rows      int64
	// groups are the row groups written so far (checkpoint_reuse.go), cur
	// the adds of the one being written (nil after a row of another kind).
	groups               []ckptGroup
	cur                  []*Add
	curMix               bool
	encoded, encodedAdds int64 // rows (adds) shredded; the others were copied
}

func newCkptFileWriter(w io.Writer, rowsPerChunk int) (*ckptFileWriter, error) {
	codec, err := parquetio.Codec("snappy") // as Spark writes checkpoints
	if err != nil {
		return nil, err
	}
	// The writer settings of every lakesink Parquet file
	// (parquetio.SparkWriterOptions: version 1 pages and PLAIN byte arrays,
	// as Spark writes checkpoints; statistics as parquet-mr writes them, so
	// a large schemaString or partition value is stored once).
	sl := parquetio.NewStatsLimitingWriter(w)
	pw := parquet.NewGenericWriter[ckptRow](sl, parquetio.SparkWriterOptions(codec)...)
	return &ckptFileWriter{sl: sl, pw: pw, cws: pw.ColumnWriters(), shred: newCkptShredder(), perChunk: rowsPerChunk}, nil
}

// reset makes f a writer of a new file to w, as newCkptFileWriter(w,
// rowsPerChunk) but keeping the parquet writer's column writers and their
// buffers (GenericWriter.Reset). f must have finished its last file; the
// groups of that file stay with whoever took them.
func (f *ckptFileWriter) reset(w io.Writer, rowsPerChunk int) {
	// parquet-go v0.32.0's Writer.Reset clears the PathInSchema of the
	// last file's column chunks in place, which share their arrays with
	// the column writers' (and a copied chunk's with its source file's):
	// the next file would name every column "" (parquet-go issue #602).
	// The last file's metadata (the array Reset walks) lets go of them
	// first.
	if v := f.pw.File(); v != nil {
		if md := v.Metadata(); md != nil {
			for i := range md.RowGroups {
				for j := range md.RowGroups[i].Columns {
					m := &md.RowGroups[i].Columns[j].MetaData
					m.PathInSchema, m.KeyValueMetadata = nil, nil
				}
			}
		}
	}
	f.sl.Reset(w)
	f.pw.Reset(f.sl)
	*f = ckptFileWriter{sl: f.sl, pw: f.pw, cws: f.cws, shred: f.shred, perChunk: rowsPerChunk}
}

// ckptWriterSlot keeps a Log's checkpoint file writer between
// checkpoints: building a GenericWriter[ckptRow] (its column writers, the
// reflection of ckptRow's schema, their buffers) is a large part of a
// checkpoint that copies most of its row groups. A checkpoint takes the
// kept writer (a concurrent one, finding the slot empty, makes its own)
// and gives it back once its file is finished.
type ckptWriterSlot struct {
	mu sync.Mutex
	fw *ckptFileWriter
	// made counts the writers newCkptFileWriter made for this slot (for
	// the tests).
	made int
}

// take returns the kept writer reset to write to w, or a new one.
func (s *ckptWriterSlot) take(w io.Writer, rowsPerChunk int) (*ckptFileWriter, error) {
	s.mu.Lock()
	fw := s.fw
	s.fw = nil
	if fw == nil {
		s.made++
	}
	s.mu.Unlock()
	if fw == nil {
		return newCkptFileWriter(w, rowsPerChunk)
	}
	fw.reset(w, rowsPerChunk)
	return fw, nil
}

// put keeps fw, which finished its file, for the next checkpoint (not
// the store writer it wrote to).
func (s *ckptWriterSlot) put(fw *ckptFileWriter) {
	fw.sl.Reset(nil)
	s.mu.Lock()
	s.fw = fw
	s.mu.Unlock()
}

// add writes a as the next row.
func (f *ckptFileWriter) add(a *Action) error {
	f.shred.row(a)
	if a.Add != nil {
		f.encodedAdds++
	}
	if a.Add != nil && !f.curMix {
		f.cur = append(f.cur, a.Add)
	} else {
		f.curMix, f.cur = true, nil
	}
	f.rows++
	f.encoded++
	f.chunkRows++
	if f.chunkRows == f.perChunk {
		return f.flush()
	}
	if f.shred.rows == ckptBatchRows {
		return f.shred.write(f.cws)
	}
	return nil
}

// flush ends the chunk's row group.
func (f *ckptFileWriter) flush() error {
	if f.chunkRows == 0 {
		return nil
	}
	if err := f.shred.write(f.cws); err != nil {
		return err
	}
	f.chunkRows = 0
	g := ckptGroup{adds: f.cur}
	if f.curMix {
		g.adds = nil
	}
	f.groups = append(f.groups, g)
	f.cur, f.curMix = nil, false
	return f.pw.Flush()
}

// copyGroup ends the row group being written and writes rg, a row group of
// a checkpoint this package wrote whose rows are g's adds, verbatim as the
// next one.
func (f *ckptFileWriter) copyGroup(rg parquet.RowGroup, g ckptGroup) error {
	if err := f.flush(); err != nil {
		return err
	}
	n, err := f.pw.WriteRowGroup(rg)
	if err != nil {
		return err
	}
	if n != int64(len(g.adds)) {
		return fmt.Errorf("copied row group of %d rows, want %d", n, len(g.adds))
	}
	f.rows += n
	f.groups = append(f.groups, g)
	return nil
}

// finish ends the last row group and writes the file's tail.
func (f *ckptFileWriter) finish() error {
	if err := f.flush(); err != nil {
		return err
	}
	return f.sl.Finish(f.pw)
}

// countingWriter counts the bytes written to w and keeps a copy of them
// in keep until they pass max bytes (keep nil then).
type countingWriter struct {
	w    interface{ Write([]byte) (int, error) }
	n    int64
	keep *bytes.Buffer
	max  int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	c.n += int64(n)
	if c.keep != nil {
		if c.n > c.max {
			c.keep = nil
		} else {
			c.keep.Write(b[:n])
		}
	}
	return n, err
}
