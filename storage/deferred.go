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
	putOptional(ctx context.Context, path string, data []byte) error
}

// PutOptional is st.Put for an optional object, one that every reader does
// without and that is whole when it is there (a version's .crc: PROTOCOL.md
// "Version Checksum File"; Delta's readers and ours read a version without its
// .crc, and ignore one they cannot parse), so that only its content needs
// to be durable before its name appears, not the name itself. On local
// disk the content is written to a temporary file and fsynced, and renamed
// into place, without the fsync of the directory that Put then issues: a
// crash before the directory's next fsync (a commit's, in _delta_log) may
// leave the object missing, never torn; the fsync saved was 1 in 6 of a
// 1-row append's (data file and its directory, commit and _delta_log, .crc
// and _delta_log). Elsewhere (S3, mem://, a store of another package) it is
// st.Put. Errors are those of Store.Put.
func PutOptional(ctx context.Context, st Store, path string, data []byte) error {
	if d, ok := st.(deferrer); ok {
		return d.putOptional(ctx, path, data)
	}
	return st.Put(ctx, path, data)
}

func (s *store) putOptional(ctx context.Context, path string, data []byte) error {
	lb, ok := s.be.(*localBackend)
	if !ok {
		return s.Put(ctx, path, data)
	}
	const op = "put"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return err
	}
	return wrapErr(op, path, lb.putSynced(ctx, key, data, false))
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
// a partitioned batch). On local disk the file (and a missing directory)
// is created in the background, a few writers of a store at once, so that
// the caller goes on while the file system creates it: an error creating
// it is returned by Write and Close (a *PathError naming path, as
// Store.NewWriter's), and Abort of such a writer returns nil. Elsewhere
// (S3, mem://, a store of another package) it is st.NewWriter: the object
// is durable when Close returns. Other errors are those of
// Store.NewWriter.
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

// syncInline is the most fsyncs SyncObjects issues one after the other
// from the caller's goroutine instead of at once from goroutines of its
// own: a small batch's data file and its directories (a 1-row append:
// the file and the table's directory). Each goroutine that issues an
// fsync waits for a thread and a P to run on first: with 4 writers
// appending on 2 CPUs (issue 22's commit-rate benchmark) it started 0.5 to
// 1.7 ms after it was spawned, more than the fsync itself took, and
// SyncObjects took 2.4-4.2 ms against 1.4-1.8 ms in line.
const syncInline = 3

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
	fsyncTarget := func(ctx context.Context, t target) error {
		if err := ctx.Err(); err != nil {
			return &PathError{Op: op, Path: t.path, Err: err}
		}
		err := fsyncPath(t.name)
		if errors.Is(err, fs.ErrNotExist) {
			err = &classErr{class: ErrNotFound, cause: err}
		}
		return wrapErr(op, t.path, err)
	}
	if len(targets) <= syncInline {
		for _, t := range targets {
			if err := fsyncTarget(ctx, t); err != nil {
				return err
			}
		}
		return nil
	}
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(syncWorkers)
	for _, t := range targets {
		eg.Go(func() error { return fsyncTarget(gctx, t) })
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
// the file nor its directory. The temporary file (and its directory) is
// created on a goroutine of the writer's own, at most createWorkers of a
// backend at once, which Write, Close and Abort wait for (a ctx cancelled
// before the creation starts stops it: no file is created): a partitioned
// batch's writer meets each partition mid-batch, and the mkdir and create
// of its file waited on the file system's journal (the 229 airports of
// the 3M flights: 2.6 s of the two writing goroutines' 2.9 s blocked in
// mkdirat and openat on a machine where other processes fsync, the CPUs
// idle meanwhile).
func (l *localBackend) newWriterDeferred(ctx context.Context, key string) (Writer, error) {
	final := l.filename(key)
	w := &localWriter{ctx: ctx, l: l, final: final, deferred: true, created: make(chan struct{})}
	go func() {
		defer close(w.created)
		// A ctx cancelled while the creation waits for its slot, or before
		// it starts, creates nothing: Write and Close return ctx's error,
		// Abort has no file to remove.
		select {
		case l.createSlots <- struct{}{}:
		case <-ctx.Done():
			w.createErr = ctx.Err()
			return
		}
		defer func() { <-l.createSlots }()
		if w.createErr = ctx.Err(); w.createErr != nil {
			return
		}
		w.f, w.createErr = l.createDeferred(final)
	}()
	return w, nil
}

// createWorkers bounds the deferred writers of a local backend creating
// their files at once (each holds a thread while blocked in the kernel):
// as many as the partitioned batch's writing goroutines that created them
// before, so that the file system sees no more concurrent mkdirs and
// creates in a directory (at 8, the 3M flights by origin spent more CPU in
// mkdirat and openat, on a loaded machine).
const createWorkers = 2

// createDeferred creates the temporary file of a deferred writer for
// final, and its directory when missing.
func (l *localBackend) createDeferred(final string) (*os.File, error) {
	dir := filepath.Dir(final)
	// The create is tried first: dir is there for every write to it but
	// the first, which then costs no stat of it.
	f, err := createTemp(dir, filepath.Base(final))
	if !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	// A directory below l.dir whose parent is there (a table's new
	// partition directory) is one mkdir, which also tells that l.dir is
	// there: mkdirAllSync's stat of l.dir and os.MkdirAll's of dir and its
	// parent were 3 stats for each of the 229 airports of the 3M flights.
	// A directory that another writer just made is no error.
	if dir == l.dir {
		err = fs.ErrNotExist
	} else if err = mkdirLocal(dir, 0o777); errors.Is(err, fs.ErrExist) {
		err = nil
	}
	if errors.Is(err, fs.ErrNotExist) {
		if err := l.mkdirAllSync(l.dir); err != nil {
			return nil, err
		}
		err = os.MkdirAll(dir, 0o777)
	}
	if err != nil {
		return nil, err
	}
	return createTemp(dir, filepath.Base(final))
}

// mkdirLocal is createDeferred's mkdir of a new directory (a variable for
// the tests that hold or count them).
var mkdirLocal = os.Mkdir
