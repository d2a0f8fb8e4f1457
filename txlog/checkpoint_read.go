package txlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/storage"
)

// SidecarDir is where V2 checkpoints keep their sidecar files (PROTOCOL.md,
// "Sidecar Files").
const SidecarDir = LogDir + "/_sidecars"

// readCheckpoint streams the actions of a complete checkpoint into fn
// (PROTOCOL.md, "Checkpoints"): classic and multi-part Parquet files, and
// V2 UUID-named checkpoints in JSON or Parquet with their sidecars. fn
// must not keep the *Action (it may keep what it points to). The
// adds' partitionValues maps read from Parquet are shared through pvs
// (nil: a new interner). A classic single-file checkpoint is collected
// into seed (non-nil) when it can seed the Log's memo (checkpoint_reuse.go).
func (l *Log) readCheckpoint(ctx context.Context, ref *checkpointRef, pvs *mapInterner, seed *ckptSeed, fn func(*Action) error) error {
	if pvs == nil {
		pvs = newMapInterner()
	}
	if len(ref.files) != 1 || ref.files[0].kind != kindCheckpointClassic {
		seed = nil
	}
	for _, lf := range ref.files {
		var sidecars []*Sidecar
		collect := func(a *Action) error {
			if a.Sidecar != nil {
				sidecars = append(sidecars, a.Sidecar)
				return nil
			}
			if a.CheckpointMetadata != nil {
				return nil
			}
			return fn(a)
		}
		var err error
		if lf.kind == kindCheckpointV2 && lf.format == "json" {
			err = readCommit(ctx, l.store, lf.info.Path, lf.version, l.opts.MaxLineBytes, func(_ int, a *Action) error {
				return collect(a)
			})
		} else {
			err = l.readParquetActions(ctx, lf.info.Path, lf.version, lf.info.Size, pvs, seed, collect)
		}
		if err != nil {
			return err
		}
		for _, sc := range sidecars {
			name, err := resolveSidecar(sc.Path)
			if err != nil {
				return &CorruptLogError{Path: lf.info.Path, Version: lf.version, Err: err}
			}
			if err := l.readParquetActions(ctx, name, lf.version, -1, pvs, nil, fn); err != nil {
				return err
			}
		}
	}
	return nil
}

// readObject reads a whole object; size (when >= 0, from the listing)
// sizes the buffer, so that a large checkpoint is read into one
// allocation rather than a growing series.
func readObject(ctx context.Context, st storage.Store, path string, size int64) ([]byte, error) {
	if size < 0 {
		return st.Read(ctx, path)
	}
	rc, err := st.NewRangeReader(ctx, path, 0, -1)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	buf := bytes.NewBuffer(make([]byte, 0, min(size, 1<<30)+bytes.MinRead))
	if _, err := buf.ReadFrom(rc); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// resolveSidecar maps a sidecar action path (usually a bare file name, else
// a URI ending in _sidecars/<name>) to its storage key.
func resolveSidecar(p string) (string, error) {
	name := baseName(p)
	if name == "" || name == "." || name == "/" || name == ".." {
		return "", fmt.Errorf("invalid sidecar path %q", p)
	}
	return SidecarDir + "/" + name, nil
}

// readParquetActions reads every action row of a checkpoint Parquet file
// of size bytes (< 0: unknown) into fn, which must not keep the *Action
// (the actions it points to it may keep); the adds read column-wise share
// partitionValues maps through pvs (nil: a new interner). With seed
// non-nil, a file that can seed a memo (ckptSeed.seedable) is kept in it,
// with the adds of each add-only row group.
func (l *Log) readParquetActions(ctx context.Context, path string, version, size int64, pvs *mapInterner, seed *ckptSeed, fn func(*Action) error) (err error) {
	if pvs == nil {
		pvs = newMapInterner()
	}
	data, err := readObject(ctx, l.store, path, size)
	if err != nil {
		return err // the store names the op and the path
	}
	corrupt := func(e error) error { return &CorruptLogError{Path: path, Version: version, Err: e} }
	defer func() {
		// parquet-go may panic on malformed input; report it as corruption.
		if r := recover(); r != nil {
			err = corrupt(fmt.Errorf("parquet: %v", r))
		}
	}()
	// Check the frame before parquet-go sizes a buffer from the footer
	// length field: a corrupt length must not allocate gigabytes.
	if len(data) < 12 || string(data[:4]) != "PAR1" || string(data[len(data)-4:]) != "PAR1" {
		return corrupt(errors.New("not a Parquet file (no PAR1 magic at both ends)"))
	}
	if footerLen := int64(binary.LittleEndian.Uint32(data[len(data)-8:])); footerLen > int64(len(data))-12 {
		return corrupt(fmt.Errorf("Parquet footer length %d exceeds the file size %d", footerLen, len(data)))
	}
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		return corrupt(err)
	}
	// Maps are matched by position, not name (conventionalMapNames).
	schema := conventionalMapNames(f.Schema())
	if c, ok := lookupAddColumns(schema); ok {
		var groups *[]ckptGroup
		if schema == f.Schema() && seed.seedable(f, len(data)) {
			seed.file, groups = f, &seed.groups
		}
		var fnErr error
		err := readCheckpointColumns(f, c, pvs, groups, ctx.Err, func(a *Action) error {
			fnErr = fn(a)
			return fnErr
		})
		switch {
		case err == nil:
			return nil
		case fnErr != nil || ctx.Err() != nil:
			return err
		default:
			return corrupt(err)
		}
	}
	return readCkptRows(ctx, ckptRowReader(f, schema), fn, corrupt)
}

// ckptRowReader reads f's rows under schema: f's own, or
// conventionalMapNames of it (same leaf columns, other names).
func ckptRowReader(f *parquet.File, schema *parquet.Schema) *parquet.GenericReader[ckptReadRow] {
	if schema == f.Schema() {
		return parquet.NewGenericReader[ckptReadRow](f)
	}
	rgs := make([]parquet.RowGroup, len(f.RowGroups()))
	for i, rg := range f.RowGroups() {
		rgs[i] = withSchema{rg, schema}
	}
	return parquet.NewGenericRowGroupReader[ckptReadRow](parquet.MultiRowGroup(rgs...))
}

// readCkptRows reads the actions of r row by row (the reader of any
// checkpoint the column-wise path declines) and closes it.
func readCkptRows(ctx context.Context, r *parquet.GenericReader[ckptReadRow], fn func(*Action) error, corrupt func(error) error) error {
	defer r.Close()
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		rows := make([]ckptReadRow, 512)
		n, rerr := r.Read(rows)
		for i := range rows[:n] {
			a, ok := rows[i].toAction()
			if !ok {
				continue
			}
			if err := fn(&a); err != nil {
				return err
			}
		}
		if errors.Is(rerr, io.EOF) {
			return nil
		}
		if rerr != nil {
			return corrupt(rerr)
		}
		if n == 0 {
			return nil
		}
	}
}
