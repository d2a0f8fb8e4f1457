package checkpoint

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/storage"
)

const (
	metadataFile = "metadata"
	offsetsDir   = "offsets"
	commitsDir   = "commits"
	sourcesDir   = "sources"
)

// Checkpoint is an open checkpoint directory. It holds no lock: mutual
// exclusion between drivers comes from put-if-absent on every log file.
// Methods may be called from one goroutine at a time.
type Checkpoint struct {
	store   storage.Store
	meta    Metadata
	created bool
}

// Open reads the checkpoint's metadata file, creating it with a new query id
// if it does not exist (put-if-absent: of two drivers starting at once, both
// end up with the same id). want names this run's source and sink (its ID is
// ignored). A recorded non-empty field that differs from a non-empty field of
// want is refused with *MismatchError, unless allowReset, in which case the
// metadata file is rewritten with the new fields and the same query id.
func Open(ctx context.Context, store storage.Store, want Metadata, allowReset bool) (*Checkpoint, error) {
	c := &Checkpoint{store: store}
	data, err := store.Read(ctx, metadataFile)
	switch {
	case errors.Is(err, storage.ErrNotFound):
		m := want
		m.ID = uuid.NewString()
		if err := c.putIfAbsent(ctx, metadataFile, marshalMetadata(m)); err != nil {
			if !errors.Is(err, ErrCheckpointInUse) {
				return nil, err
			}
			// Another driver created it first: use its id (and check it).
			return Open(ctx, store, want, allowReset)
		}
		c.meta, c.created = m, true
		return c, nil
	case err != nil:
		return nil, err // the store names the op and the path
	}
	m, err := ParseMetadata(data)
	if err != nil {
		return nil, &CorruptFileError{Path: metadataFile, Err: err,
			Hint: "the query id is lost; restore metadata from a backup, or start over with a new checkpoint directory"}
	}
	mismatch := func(field, recorded, given string) error {
		if recorded == "" || given == "" || recorded == given {
			return nil
		}
		return &MismatchError{Field: field, Recorded: recorded, Given: given}
	}
	err = errors.Join(mismatch("source", m.Source, want.Source),
		mismatch("sinkKind", m.SinkKind, want.SinkKind),
		mismatch("sink", m.Sink, want.Sink))
	if err != nil && !allowReset {
		return nil, err
	}
	if err != nil {
		// allowReset: keep the query id, record the new source and sink.
		nm := Metadata{ID: m.ID, Source: want.Source, SinkKind: want.SinkKind, Sink: want.Sink}
		if err := store.Put(ctx, metadataFile, marshalMetadata(nm)); err != nil {
			return nil, fmt.Errorf("rewrite %s after reset: %w", metadataFile, err)
		}
		m = nm
	}
	c.meta = m
	return c, nil
}

func marshalMetadata(m Metadata) []byte {
	b, _ := jsonMarshal(m)
	return b
}

// Metadata returns the checkpoint's metadata (the query id in ID).
func (c *Checkpoint) Metadata() Metadata { return c.meta }

// QueryID returns the stable query id.
func (c *Checkpoint) QueryID() string { return c.meta.ID }

// Created reports whether Open created the metadata file.
func (c *Checkpoint) Created() bool { return c.created }

// Store returns the store rooted at the checkpoint directory.
func (c *Checkpoint) Store() storage.Store { return c.store }

// SourceDir returns the store of source i's own log (sources/<i>).
func (c *Checkpoint) SourceDir(i int) storage.Store {
	return c.store.Sub(path.Join(sourcesDir, strconv.Itoa(i)))
}

func offsetsPath(id int64) string { return offsetsDir + "/" + strconv.FormatInt(id, 10) }
func commitsPath(id int64) string { return commitsDir + "/" + strconv.FormatInt(id, 10) }

// putIfAbsent creates p. A lost race is ErrCheckpointInUse; an unknown
// outcome is resolved by reading the object back and comparing it with ours.
func (c *Checkpoint) putIfAbsent(ctx context.Context, p string, data []byte) error {
	err := c.store.PutIfAbsent(ctx, p, data)
	if errors.Is(err, storage.ErrCommitStateUnknown) {
		got, rerr := c.store.Read(ctx, p)
		if rerr == nil && bytes.Equal(got, data) {
			return nil
		}
		if rerr == nil {
			err = storage.ErrAlreadyExists
		}
	}
	if errors.Is(err, storage.ErrAlreadyExists) {
		return fmt.Errorf("%w: %s already exists (another driver wrote it; run one query per checkpoint): %w", ErrCheckpointInUse, p, err)
	}
	if err != nil {
		return fmt.Errorf("write %s: %w", p, err)
	}
	return nil
}

// WriteOffsets creates offsets/N with put-if-absent. Called BEFORE batch N
// runs (MicroBatchExecution.constructNextBatch, "walCommit").
func (c *Checkpoint) WriteOffsets(ctx context.Context, batchID int64, seq OffsetSeq) error {
	data, err := MarshalOffsetSeq(seq)
	if err != nil {
		return err
	}
	return c.putIfAbsent(ctx, offsetsPath(batchID), data)
}

// ReadOffsets reads offsets/N. A missing file wraps storage.ErrNotFound.
func (c *Checkpoint) ReadOffsets(ctx context.Context, batchID int64) (OffsetSeq, error) {
	p := offsetsPath(batchID)
	data, err := c.store.Read(ctx, p)
	if err != nil {
		return OffsetSeq{}, err
	}
	seq, line, err := ParseOffsetSeq(data)
	if err != nil {
		return OffsetSeq{}, &CorruptFileError{Path: p, Line: line, Err: err, Hint: fmt.Sprintf(
			"if %s does not exist, delete %s to plan batch %d again; otherwise restore it from a backup",
			commitsPath(batchID), p, batchID)}
	}
	return seq, nil
}

// WriteCommit creates commits/N with put-if-absent. Called AFTER the sink's
// commit of batch N returned (MicroBatchExecution.runBatch).
func (c *Checkpoint) WriteCommit(ctx context.Context, batchID int64, cm CommitMetadata) error {
	return c.putIfAbsent(ctx, commitsPath(batchID), MarshalCommit(cm))
}

// ReadCommit reads commits/N. A missing file wraps storage.ErrNotFound.
func (c *Checkpoint) ReadCommit(ctx context.Context, batchID int64) (CommitMetadata, error) {
	p := commitsPath(batchID)
	data, err := c.store.Read(ctx, p)
	if err != nil {
		return CommitMetadata{}, err
	}
	cm, line, err := ParseCommit(data)
	if err != nil {
		return CommitMetadata{}, &CorruptFileError{Path: p, Line: line, Err: err, Hint: fmt.Sprintf(
			"delete %s to rerun batch %d; the sink skips it if its commit had landed", p, batchID)}
	}
	return cm, nil
}

// batchIDs lists the batch ids of the files in dir, ascending. Files that are
// not batch files (temp files, Spark's .crc files) are ignored.
func batchIDs(ctx context.Context, store storage.Store, dir string) ([]int64, error) {
	var ids []int64
	for fi, err := range store.List(ctx, dir+"/", "") {
		if err != nil {
			return nil, err
		}
		name := fi.Path[len(dir)+1:]
		if id, compact, ok := batchIDFromName(name); ok && !compact {
			ids = append(ids, id)
		}
	}
	sortInt64s(ids)
	return ids, nil
}

// OffsetBatchIDs lists the batch ids that have an offsets file, ascending.
func (c *Checkpoint) OffsetBatchIDs(ctx context.Context) ([]int64, error) {
	return batchIDs(ctx, c.store, offsetsDir)
}

// CommitBatchIDs lists the batch ids that have a commits file, ascending.
func (c *Checkpoint) CommitBatchIDs(ctx context.Context) ([]int64, error) {
	return batchIDs(ctx, c.store, commitsDir)
}

// LatestOffsets returns the highest batch id with an offsets file and its
// content (HDFSMetadataLog.getLatest: the latest file must be readable; no
// falling back to an older one). ok is false for an empty log.
func (c *Checkpoint) LatestOffsets(ctx context.Context) (batchID int64, seq OffsetSeq, ok bool, err error) {
	ids, err := c.OffsetBatchIDs(ctx)
	if err != nil || len(ids) == 0 {
		return -1, OffsetSeq{}, false, err
	}
	id := ids[len(ids)-1]
	seq, err = c.ReadOffsets(ctx, id)
	if err != nil {
		return -1, OffsetSeq{}, false, err
	}
	return id, seq, true, nil
}

// LatestCommit returns the highest batch id with a commits file. ok is false
// when nothing was committed.
func (c *Checkpoint) LatestCommit(ctx context.Context) (batchID int64, cm CommitMetadata, ok bool, err error) {
	ids, err := c.CommitBatchIDs(ctx)
	if err != nil || len(ids) == 0 {
		return -1, CommitMetadata{}, false, err
	}
	id := ids[len(ids)-1]
	cm, err = c.ReadCommit(ctx, id)
	if err != nil {
		return -1, CommitMetadata{}, false, err
	}
	return id, cm, true, nil
}

// Purge deletes offsets and commits files of batches below before, as
// MicroBatchExecution does to keep minBatchesToRetain batches.
func (c *Checkpoint) Purge(ctx context.Context, before int64) error {
	for _, dir := range []string{offsetsDir, commitsDir} {
		ids, err := batchIDs(ctx, c.store, dir)
		if err != nil {
			return err
		}
		for _, id := range ids {
			if id >= before {
				break
			}
			p := dir + "/" + strconv.FormatInt(id, 10)
			if err := c.store.Delete(ctx, p); err != nil {
				return fmt.Errorf("purge %s: %w", p, err)
			}
		}
	}
	return nil
}
