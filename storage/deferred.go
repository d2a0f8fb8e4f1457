package storage

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sync/errgroup"
)

// deferrer is implemented by the stores of this package.
type deferrer interface {
	newDeferredWriter(ctx context.Context, path string) (Writer, error)
	syncObjects(ctx context.Context, paths []string) error
}

// NewDeferredWriter is st.NewWriter for an object that is made durable
// later, together with others, by SyncObjects: for data files, which no
// reader sees until a commit names them, written many at a time (a
// partitioned batch's files; PROTOCOL.md, "Delta Log Entries": the commit,
// written after SyncObjects returns, is what publishes them). On local disk
// Close renames the temporary file into place without fsyncing it or its
// directory, and the directories it creates below the store's location are
// not fsynced either: a crash before SyncObjects may leave the object
// missing, empty or torn, and the directories missing. SyncObjects then
// issues the fsyncs of all the objects at once, which the file system
// commits together (one fsync, rename, fsync of the directory per file
// were three journal commits in a row: 700 of them for the 229 files of
// a partitioned batch). Elsewhere (S3, mem://, a store of another
// package) it is st.NewWriter: the object is durable when Close returns.
// Errors are those of Store.NewWriter.
func NewDeferredWriter(ctx context.Context, st Store, path string) (Writer, error) {
	if d, ok := st.(deferrer); ok {
		return d.newDeferredWriter(ctx, path)
	}
	return st.NewWriter(ctx, path)
}

// SyncObjects makes the objects at paths, written by NewDeferredWriter on
// st and closed, durable with the directory entries that lead to them from
// st's location: on local disk it fsyncs every object, every directory
// holding one and every directory between those and the location, at most
// syncWorkers at once; elsewhere it does nothing. Call it before the commit
// that names the objects. Errors are *PathError naming the op "sync" and
// the first path whose fsync failed (an object that was deleted since is
// ErrNotFound).
func SyncObjects(ctx context.Context, st Store, paths []string) error {
	if d, ok := st.(deferrer); ok {
		return d.syncObjects(ctx, paths)
	}
	return nil
}

// syncWorkers bounds the fsyncs SyncObjects has in flight: a few suffice for
// the file system to commit them together.
const syncWorkers = 16

func (s *store) newDeferredWriter(ctx context.Context, path string) (Writer, error) {
	const op = "write"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return nil, err
	}
	lb, ok := s.be.(*localBackend)
	if !ok {
		return s.NewWriter(ctx, path)
	}
	w, err := lb.newWriterDeferred(ctx, key)
	if err != nil {
		return nil, wrapErr(op, path, err)
	}
	return &pathWriter{w: w, path: path}, nil
}

func (s *store) syncObjects(ctx context.Context, paths []string) error {
	const op = "sync"
	lb, ok := s.be.(*localBackend)
	if !ok || lb.noSync {
		return nil
	}
	type target struct{ name, path string } // a file or directory; the path for errors
	var targets []target
	dirs := map[string]bool{}
	for _, p := range paths {
		key, err := s.begin(ctx, op, p)
		if err != nil {
			return err
		}
		final := lb.filename(key)
		targets = append(targets, target{final, p})
		for d := filepath.Dir(final); !dirs[d] && inside(d, lb.dir); d = filepath.Dir(d) {
			dirs[d] = true
			targets = append(targets, target{d, p})
			if d == lb.dir {
				break
			}
		}
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(syncWorkers)
	for _, t := range targets {
		eg.Go(func() error {
			if err := gctx.Err(); err != nil {
				return &PathError{Op: op, Path: t.path, Err: err}
			}
			err := fsyncPath(t.name)
			if errors.Is(err, fs.ErrNotExist) {
				err = &classErr{class: ErrNotFound, cause: err}
			}
			return wrapErr(op, t.path, err)
		})
	}
	return eg.Wait()
}

// inside reports whether the clean path d is dir or below it.
func inside(d, dir string) bool {
	return d == dir || strings.HasPrefix(d, dir+string(filepath.Separator)) || dir == string(filepath.Separator)
}

// fsyncPath fsyncs the file or directory at name.
func fsyncPath(name string) error {
	f, err := openLocal(name, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = fsyncFile(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// newWriterDeferred is newWriter for NewDeferredWriter: the directories it
// creates below l.dir are not fsynced (l.dir itself, and what it needs
// above, is created as mkdirAllSync creates it), and Close neither fsyncs
// the file nor its directory.
func (l *localBackend) newWriterDeferred(ctx context.Context, key string) (Writer, error) {
	final := l.filename(key)
	dir := filepath.Dir(final)
	// The create is tried first: dir is there for every write to it but
	// the first, which then costs no stat of it.
	f, err := createTemp(dir, filepath.Base(final))
	if errors.Is(err, fs.ErrNotExist) {
		if err := l.mkdirAllSync(l.dir); err != nil {
			return nil, err
		}
		if err := os.MkdirAll(dir, 0o777); err != nil {
			return nil, err
		}
		f, err = createTemp(dir, filepath.Base(final))
	}
	if err != nil {
		return nil, err
	}
	return &localWriter{ctx: ctx, l: l, f: f, final: final, deferred: true}, nil
}
