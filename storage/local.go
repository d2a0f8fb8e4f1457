package storage

import (
	"bytes"
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"math/rand/v2"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"

	"gocloud.dev/blob"
	"gocloud.dev/blob/fileblob"
)

// tempPrefix starts the name of every temporary file the local backend
// writes next to its final name. The leading "." hides it from Spark/Hadoop
// listings (which skip names starting with "." or "_"), and List never
// yields it. A crash can strand one; it is harmless and may be deleted.
const tempPrefix = ".lakesink-tmp-"

// isTempName reports whether the base name is one of our temporary files.
func isTempName(base string) bool { return strings.HasPrefix(base, tempPrefix) }

// fileblobAttrsExt is the suffix fileblob reserves for its sidecar files; it
// refuses such keys and hides such files, so we refuse them too.
const fileblobAttrsExt = ".attrs"

// localBackend stores objects as files under dir, key k at dir/k
// (filename). Reads, stats, range reads, deletes and listings go to the
// files themselves, under the names the writes use (gocloud's fileblob,
// opened by bucket with Metadata: MetadataDontWrite, escapes keys into
// other names). Writes are our own: temp file + fsync + rename (Put, NewWriter) or + link
// (PutIfAbsent), because fileblob's IfNotExist is a check-then-rename that
// two processes can both win.
type localBackend struct {
	dir    string // absolute and clean
	noSync bool   // Options.LocalSkipFsync
	// createSlots bounds the deferred writers creating their files at
	// once (createWorkers; newLocalBackend makes it).
	createSlots chan struct{}
	mu          struct {
		sync.Mutex
		b *blob.Bucket
	}
}

func (l *localBackend) bucket(context.Context) (*blob.Bucket, error) {
	l.mu.Lock()
	b := l.mu.b
	l.mu.Unlock()
	if b != nil {
		return b, nil
	}
	// The directory is created by the first write, not here: a store may
	// be opened (and read) before anything exists.
	if _, err := os.Stat(l.dir); errors.Is(err, fs.ErrNotExist) {
		return nil, errNoLocation
	}
	nb, err := fileblob.OpenBucket(l.dir, &fileblob.Options{
		Metadata:  fileblob.MetadataDontWrite,
		NoTempDir: true,
	})
	if err != nil {
		return nil, err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.mu.b != nil {
		_ = nb.Close()
		return l.mu.b, nil
	}
	l.mu.b = nb
	return nb, nil
}

func (l *localBackend) filename(key string) string {
	return filepath.Join(l.dir, filepath.FromSlash(key))
}

func (l *localBackend) checkKey(key string) error {
	if strings.HasSuffix(key, fileblobAttrsExt) {
		return fmt.Errorf("%q ends in %q, reserved on local disk", key, fileblobAttrsExt)
	}
	if isTempName(path.Base(key)) {
		return fmt.Errorf("%q uses the reserved temporary-file prefix %q", key, tempPrefix)
	}
	return nil
}

// createTemp creates a new temporary file in dir for the final name base.
func createTemp(dir, base string) (*os.File, error) {
	if len(base) > 64 {
		base = base[:64]
	}
	var rnd [8]byte
	for range 100 {
		binaryRand(rnd[:])
		name := filepath.Join(dir, tempPrefix+hex.EncodeToString(rnd[:])+"-"+base)
		f, err := openLocal(name, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o666)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		return f, err
	}
	return nil, fmt.Errorf("cannot create a temporary file in %s", dir)
}

func binaryRand(b []byte) {
	for i := range b {
		b[i] = byte(rand.Uint32())
	}
}

// createTempIn is createTemp in dir, creating dir as mkdirAllSync does
// when it is missing: the create is tried first (dir is there for every
// write but a table's first), so a write costs no stat of its directory.
func (l *localBackend) createTempIn(dir, base string) (*os.File, error) {
	f, err := createTemp(dir, base)
	if err == nil || !errors.Is(err, fs.ErrNotExist) {
		return f, err
	}
	if err := l.mkdirAllSync(dir); err != nil {
		return nil, err
	}
	return createTemp(dir, base)
}

// writeTemp writes data to a new fsynced temporary file next to final and
// returns its name.
func (l *localBackend) writeTemp(final string, data []byte) (string, error) {
	f, err := l.createTempIn(filepath.Dir(final), filepath.Base(final))
	if err != nil {
		return "", err
	}
	name := f.Name()
	_, err = f.Write(data)
	if err == nil && !l.noSync {
		err = fsyncFile(f)
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = os.Remove(name)
		return "", err
	}
	return name, nil
}

// fsyncFile fsyncs an open file or directory: every fsync of the local
// backend (a variable for the tests that count them).
var fsyncFile = func(f *os.File) error { return f.Sync() }

// notFound classifies what a local read or stat of key's file met: a
// missing file or parent, a parent that is a file (ENOTDIR) and a
// directory are ErrNotFound, as gocloud's fileblob reports them.
func notFound(err error) error {
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return &classErr{class: ErrNotFound, cause: err}
	}
	return err
}

// stat is Store.Stat on local disk, one stat(2): gocloud's fileblob also
// looks for a .attrs sidecar file (never written here) and opens a
// tracing span, which a writer pays for each commit it reads.
func (l *localBackend) stat(key string) (os.FileInfo, error) {
	fi, err := os.Stat(l.filename(key))
	if err != nil {
		return nil, notFound(err)
	}
	if fi.IsDir() {
		return nil, &classErr{class: ErrNotFound, cause: fmt.Errorf("%s is a directory", key)}
	}
	return fi, nil
}

// read is Store.Read on local disk: open, fstat, one read of the file's
// size, without fileblob's stat and .attrs lookup (see stat).
func (l *localBackend) read(key string) ([]byte, error) {
	f, err := openLocal(l.filename(key), os.O_RDONLY, 0)
	if err != nil {
		return nil, notFound(err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.IsDir() {
		return nil, &classErr{class: ErrNotFound, cause: fmt.Errorf("%s is a directory", key)}
	}
	var buf bytes.Buffer
	buf.Grow(int(fi.Size()) + bytes.MinRead)
	if _, err := buf.ReadFrom(f); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// rangeReader is Store.NewRangeReader on local disk: the file itself,
// opened and positioned at offset, length bytes (the rest of the file when
// length < 0), without fileblob's stat, .attrs lookup and tracing span (see
// stat): the snapshot load reads every commit file this way. An offset at
// or past the end reads nothing, as a file does.
func (l *localBackend) rangeReader(key string, offset, length int64) (io.ReadCloser, error) {
	f, err := openLocal(l.filename(key), os.O_RDONLY, 0)
	if err != nil {
		return nil, notFound(err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, err
	}
	if fi.IsDir() {
		f.Close()
		return nil, &classErr{class: ErrNotFound, cause: fmt.Errorf("%s is a directory", key)}
	}
	n := max(fi.Size()-offset, 0)
	if length >= 0 {
		n = min(n, length)
	}
	return &localRange{Reader: io.NewSectionReader(f, offset, n), f: f}, nil
}

// remove is Store.Delete on local disk: the file the writes, Read, Stat
// and the listing name (l.filename). gocloud's fileblob Delete maps the
// key to a file name by its own escaping: it deleted nothing, and said
// nothing, for a key holding "__0x41__" (a partition value can), and
// refused one that is not UTF-8. A missing file or parent (ENOTDIR) is no error,
// as Delete documents; an empty directory is removed, as fileblob did.
func (l *localBackend) remove(key string) error {
	err := os.Remove(l.filename(key))
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
		return nil
	}
	return err
}

// localRange reads a section of an open file and closes the file.
type localRange struct {
	io.Reader
	f *os.File
}

func (r *localRange) Close() error { return r.f.Close() }

// syncDir fsyncs a directory so that a rename or link in it is durable.
func (l *localBackend) syncDir(dir string) error {
	if l.noSync {
		return nil
	}
	d, err := openLocal(dir, os.O_RDONLY, 0)
	if err != nil {
		return err
	}
	err = fsyncFile(d)
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (l *localBackend) put(ctx context.Context, key string, data []byte) error {
	return l.putSynced(ctx, key, data, true)
}

// putSynced is put, with the directory fsync after the rename only when
// syncDir (PutOptional leaves it to the directory's next fsync).
func (l *localBackend) putSynced(ctx context.Context, key string, data []byte, syncDir bool) error {
	final := l.filename(key)
	tmp, err := l.writeTemp(final, data)
	if err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if err := renameLocal(tmp, final); err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if !syncDir {
		return nil
	}
	return l.syncDir(filepath.Dir(final))
}

// putIfAbsent: temp file, fsync, link to the final name (the link fails with
// EEXIST if any file is there: atomic across processes), remove the temp
// name, fsync the directory.
func (l *localBackend) putIfAbsent(ctx context.Context, key string, data []byte) error {
	final := l.filename(key)
	tmp, err := l.writeTemp(final, data)
	if err != nil {
		return err
	}
	defer func() { _ = os.Remove(tmp) }()
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := os.Link(tmp, final); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return &classErr{class: ErrAlreadyExists, cause: err}
		}
		return err
	}
	if err := l.syncDir(filepath.Dir(final)); err != nil {
		// The object is in place; only its durability is in doubt.
		return &classErr{class: ErrCommitStateUnknown, cause: err}
	}
	return nil
}

func (l *localBackend) newWriter(ctx context.Context, key string) (Writer, error) {
	final := l.filename(key)
	f, err := l.createTempIn(filepath.Dir(final), filepath.Base(final))
	if err != nil {
		return nil, err
	}
	return &localWriter{ctx: ctx, l: l, f: f, final: final}, nil
}

// localWriter writes a temp file and renames it into place on Close. It keeps
// the ctx of NewWriter because the Writer interface has no ctx on Write and
// Close; it is only checked, never stored beyond the writer's life.
type localWriter struct {
	ctx   context.Context //nolint:containedctx // the Writer contract ties the write to NewWriter's ctx
	l     *localBackend
	mu    sync.Mutex
	f     *os.File
	final string
	done  bool
	// deferred (NewDeferredWriter): Close fsyncs neither the file nor its
	// directory; SyncObjects does.
	deferred bool
	// created, when not nil, is closed once the goroutine creating f
	// (newWriterDeferred) is done: f is set, or createErr.
	created   chan struct{}
	createErr error
}

// wait waits for the writer's file to be created (deferred writers) and
// returns the creation's error.
func (w *localWriter) wait() error {
	if w.created == nil {
		return nil
	}
	<-w.created
	return w.createErr
}

func (w *localWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return 0, ErrClosed
	}
	if err := w.wait(); err != nil {
		return 0, err
	}
	if err := w.ctx.Err(); err != nil {
		return 0, err
	}
	return w.f.Write(p)
}

func (w *localWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return ErrClosed
	}
	w.done = true
	if err := w.wait(); err != nil {
		return err
	}
	tmp := w.f.Name()
	err := w.ctx.Err()
	if err == nil && !w.l.noSync && !w.deferred {
		err = fsyncFile(w.f)
	}
	if cerr := w.f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = renameLocal(tmp, w.final)
	}
	if err != nil {
		_ = os.Remove(tmp)
		return err
	}
	if w.deferred {
		return nil
	}
	return w.l.syncDir(filepath.Dir(w.final))
}

func (w *localWriter) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	w.done = true
	if err := w.wait(); err != nil {
		return nil // no file was created
	}
	_ = w.f.Close()
	return os.Remove(w.f.Name())
}

// list walks the directory tree under the prefix once, then filters and
// sorts by key. It does not go through fileblob's listing: fileblob yields
// keys in directory-walk order ("a/b" before "a-b", although "a-b" sorts
// first) and pages by "skip keys <= the last key returned", so a key like
// "a-b" that is walked after the page boundary "a/b" is silently lost; it
// also re-walks the whole tree for every page.
// statEntry is the lstat of a listed entry (a variable for the test that
// counts them).
var statEntry = func(d fs.DirEntry) (fs.FileInfo, error) { return d.Info() }

func (l *localBackend) list(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error] {
	return l.listEntries(ctx, prefix, startAfter, false)
}

// listEntries is list, yielding only the temporary files (isTempName)
// when temps is set, and none of them otherwise.
func (l *localBackend) listEntries(ctx context.Context, prefix, startAfter string, temps bool) iter.Seq2[FileInfo, error] {
	return func(yield func(FileInfo, error) bool) {
		// The entries that match, each stat'ed only when it is yielded: a
		// caller that stops early (is there any commit?) costs one stat,
		// not one per file of a 20,000-file _delta_log. Names are filtered
		// by prefix and startAfter as read (a key is the directory's key
		// plus the name: no path cleaning per entry), and only the matches
		// are sorted.
		type entry struct {
			key string
			d   fs.DirEntry
		}
		var out []entry
		n := 0
		var walk func(dirKey string) error
		walk = func(dirKey string) error {
			f, err := os.Open(filepath.Join(l.dir, filepath.FromSlash(dirKey)))
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
					return nil // the directory vanished or never existed
				}
				return err
			}
			ents, err := f.ReadDir(-1) // unsorted
			f.Close()
			if err != nil {
				if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
					return nil
				}
				return err
			}
			for _, d := range ents {
				if n++; n%256 == 0 {
					if err := ctx.Err(); err != nil {
						return err
					}
				}
				name := d.Name()
				key := dirKey + name
				if d.IsDir() {
					// Skip directories that cannot hold a matching key:
					// outside prefix, or wholly at or before startAfter
					// (every key under dk sorts below a startAfter above dk
					// that does not start with dk).
					dk := key + "/"
					if !strings.HasPrefix(dk, prefix) && !strings.HasPrefix(prefix, dk) {
						continue
					}
					if startAfter > dk && !strings.HasPrefix(startAfter, dk) {
						continue
					}
					if err := walk(dk); err != nil {
						return err
					}
					continue
				}
				if key <= startAfter || !strings.HasPrefix(key, prefix) {
					continue
				}
				if isTempName(name) != temps || strings.HasSuffix(name, fileblobAttrsExt) || !d.Type().IsRegular() {
					continue
				}
				out = append(out, entry{key, d})
			}
			return nil
		}
		root := ""
		if i := strings.LastIndex(prefix, "/"); i >= 0 {
			root = prefix[:i+1]
		}
		if err := walk(root); err != nil {
			yield(FileInfo{}, err)
			return
		}
		sort.Slice(out, func(i, j int) bool { return out[i].key < out[j].key })
		for i, e := range out {
			if i%256 == 0 {
				if err := ctx.Err(); err != nil {
					yield(FileInfo{}, err)
					return
				}
			}
			info, err := statEntry(e.d)
			if errors.Is(err, fs.ErrNotExist) {
				continue // deleted since we walked
			}
			if err != nil {
				yield(FileInfo{}, err)
				return
			}
			if !yield(FileInfo{Path: e.key, Size: info.Size(), ModTime: info.ModTime()}, nil) {
				return
			}
		}
	}
}

func (l *localBackend) url(root string) string {
	p := filepath.ToSlash(l.dir)
	if root != "" {
		p = strings.TrimSuffix(p, "/") + "/" + root[:len(root)-1]
	}
	return (&url.URL{Scheme: "file", Path: p}).String()
}

// statDir is mkdirAllSync's stat of a directory (a variable for the test
// that counts them).
var statDir = os.Stat

// mkdirAllSync creates dir and its missing parents, and fsyncs the parent of
// every directory it created, so that a file fsynced into a new directory
// (the first commit's _delta_log/) survives a crash together with the
// directory entries leading to it.
func (l *localBackend) mkdirAllSync(dir string) error {
	if _, err := statDir(dir); err == nil {
		return nil
	}
	var created []string
	for d := dir; ; {
		if _, err := statDir(d); err == nil {
			break
		}
		created = append(created, d)
		parent := filepath.Dir(d)
		if parent == d {
			break
		}
		d = parent
	}
	if err := os.MkdirAll(dir, 0o777); err != nil {
		return err
	}
	for _, d := range created {
		if err := l.syncDir(filepath.Dir(d)); err != nil {
			return err
		}
	}
	return nil
}

func (l *localBackend) close() error {
	l.mu.Lock()
	b := l.mu.b
	l.mu.b = nil
	l.mu.Unlock()
	if b == nil {
		return nil
	}
	return b.Close()
}

// newLocalBackend is the backend of the objects under dir (absolute and
// clean), fsyncing nothing when noSync.
func newLocalBackend(dir string, noSync bool) *localBackend {
	return &localBackend{dir: dir, noSync: noSync, createSlots: make(chan struct{}, createWorkers)}
}
