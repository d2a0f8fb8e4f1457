package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
)

// Staged is an object's content prepared once for PutIfAbsent under one of
// several names, as a committer that loses the race for a version retries
// the same bytes at the next one (Stage). Not safe for concurrent use.
type Staged interface {
	// PutIfAbsent creates path with the staged content, with the contract
	// of Store.PutIfAbsent (ErrAlreadyExists, ErrCommitStateUnknown).
	// path should be in the directory of the path given to Stage; another
	// one is written as Store.PutIfAbsent writes it.
	PutIfAbsent(ctx context.Context, path string) error
	// Close releases what the staging holds (locally, the temporary
	// file; an object already created stays). Idempotent.
	Close() error
}

// stager is implemented by the stores of this package.
type stager interface {
	stage(ctx context.Context, path string, data []byte) (Staged, error)
}

// Stage prepares data for Staged.PutIfAbsent under path or another name
// in its directory. On local disk the content is written to a temporary
// file and fsynced once, and each PutIfAbsent links it to its name (the
// link fails with ErrAlreadyExists if any file is there) and fsyncs the
// directory: a retry under the next name writes and fsyncs no data again.
// Elsewhere (S3, mem://, a store of another package) PutIfAbsent is
// st.PutIfAbsent with data. The caller must not change data while the
// staging is open. Errors are those of Store.PutIfAbsent writing the
// temporary file (*PathError naming path).
func Stage(ctx context.Context, st Store, path string, data []byte) (Staged, error) {
	if s, ok := st.(stager); ok {
		return s.stage(ctx, path, data)
	}
	return &memStaged{st: st, data: data}, nil
}

// memStaged is the staging of a store that cannot do better than a put.
type memStaged struct {
	st   Store
	data []byte
}

func (m *memStaged) PutIfAbsent(ctx context.Context, path string) error {
	return m.st.PutIfAbsent(ctx, path, m.data)
}

func (m *memStaged) Close() error { return nil }

func (s *store) stage(ctx context.Context, path string, data []byte) (Staged, error) {
	const op = "put-if-absent"
	lb, ok := s.be.(*localBackend)
	if !ok {
		return &memStaged{st: s, data: data}, nil
	}
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return nil, err
	}
	final := lb.filename(key)
	tmp, err := lb.writeTemp(final, data)
	if err != nil {
		return nil, wrapErr(op, path, err)
	}
	return &localStaged{s: s, l: lb, dir: filepath.Dir(final), tmp: tmp, data: data}, nil
}

// localStaged is a fsynced temporary file that PutIfAbsent links to its
// final names.
type localStaged struct {
	s    *store
	l    *localBackend
	dir  string // the temporary file's directory
	data []byte // for a name in another directory
	tmp  string // "" once closed
}

func (st *localStaged) PutIfAbsent(ctx context.Context, path string) error {
	const op = "put-if-absent"
	key, err := st.s.begin(ctx, op, path)
	if err != nil {
		return err
	}
	final := st.l.filename(key)
	tmp := st.tmp
	if tmp == "" || filepath.Dir(final) != st.dir {
		return wrapErr(op, path, st.l.putIfAbsent(ctx, key, st.data))
	}
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return wrapErr(op, path, &classErr{class: ErrAlreadyExists, cause: err})
		}
		return wrapErr(op, path, err)
	}
	if err := st.l.syncDir(st.dir); err != nil {
		// The object is in place; only its durability is in doubt.
		return wrapErr(op, path, &classErr{class: ErrCommitStateUnknown, cause: err})
	}
	return nil
}

func (st *localStaged) Close() error {
	tmp := st.tmp
	st.tmp = ""
	if tmp == "" {
		return nil
	}
	if err := os.Remove(tmp); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}
