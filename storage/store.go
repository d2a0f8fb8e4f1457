package storage

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"strings"
	"sync/atomic"
	"syscall"

	"github.com/aws/smithy-go"
	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// backend is what one kind of location (local disk, memory, S3) supplies to
// the portable wrapper. Keys are full bucket keys (the store's root already
// prepended) and have been validated. Errors are either classified
// (classErr, context errors) or raw gocloud/driver errors; the wrapper
// translates and wraps them with the op and path.
type backend interface {
	// bucket returns the gocloud bucket for reads, stats and deletes. If
	// the location does not exist yet it returns errNoLocation.
	bucket(ctx context.Context) (*blob.Bucket, error)
	put(ctx context.Context, key string, data []byte) error
	putIfAbsent(ctx context.Context, key string, data []byte) error
	newWriter(ctx context.Context, key string) (Writer, error)
	// list yields objects with full keys, strictly after startAfter (a full
	// key or ""), in lexical order.
	list(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error]
	// checkKey refuses keys the backend cannot store (ErrInvalidPath).
	checkKey(key string) error
	// url renders the location rooted at root ("" or "dir/").
	url(root string) string
	close() error
}

// errNoLocation: a local directory that does not exist yet. Reads see
// ErrNotFound, listings see nothing, deletes succeed.
var errNoLocation = errors.New("location does not exist")

// classErr carries a sentinel class and the driver error behind it.
type classErr struct {
	class error
	cause error
}

func (e *classErr) Error() string {
	if e.cause == nil {
		return e.class.Error()
	}
	return e.class.Error() + ": " + e.cause.Error()
}

func (e *classErr) Unwrap() []error {
	if e.cause == nil {
		return []error{e.class}
	}
	return []error{e.class, e.cause}
}

// classify turns a backend error into the PathError's (Err, Cause) pair.
func classify(err error) (class, cause error) {
	var ce *classErr
	switch {
	case errors.As(err, &ce):
		return ce.class, ce.cause
	case errors.Is(err, ErrClosed):
		return ErrClosed, nil
	case errors.Is(err, errNoLocation):
		return ErrNotFound, nil
	case errors.Is(err, context.Canceled):
		return context.Canceled, causeUnless(err, context.Canceled)
	case errors.Is(err, context.DeadlineExceeded):
		return context.DeadlineExceeded, causeUnless(err, context.DeadlineExceeded)
	case isNoSuchBucket(err):
		return ErrNotFound, errNoSuchBucket
	case gcerrors.Code(err) == gcerrors.NotFound, errors.Is(err, syscall.ENOTDIR):
		// ENOTDIR: on local disk "a/b" is looked up where "a" is a file.
		return ErrNotFound, err
	}
	return err, nil
}

// errNoSuchBucket is the cause of an ErrNotFound for a missing bucket (S3's
// NoSuchBucket), which PathError spells out: "list _delta_log/: not found"
// alone reads as an empty table.
var errNoSuchBucket = errors.New("the bucket does not exist")

func isNoSuchBucket(err error) bool {
	var api smithy.APIError
	return errors.As(err, &api) && api.ErrorCode() == "NoSuchBucket"
}

func causeUnless(err, class error) error {
	if err == class { //nolint:errorlint // identity check on purpose
		return nil
	}
	return err
}

func wrapErr(op, path string, err error) error {
	if err == nil {
		return nil
	}
	var pe *PathError
	if errors.As(err, &pe) {
		return err
	}
	class, cause := classify(err)
	return &PathError{Op: op, Path: path, Err: class, Cause: cause}
}

// store is the portable wrapper: it validates paths, prepends the root,
// checks ctx and closed state, and wraps every error with op and path.
type store struct {
	be     backend
	root   string       // "" or "dir/sub/" (always with a trailing slash)
	owner  bool         // Close releases the backend (false for Sub stores)
	closed *atomic.Bool // shared by a store and its Subs
}

func newStore(be backend) *store {
	return &store{be: be, owner: true, closed: new(atomic.Bool)}
}

// begin runs the checks every operation starts with and returns the full key.
func (s *store) begin(ctx context.Context, op, path string) (string, error) {
	if reason := pathProblem(path, false); reason != nil {
		return "", &PathError{Op: op, Path: path, Err: ErrInvalidPath, Cause: reason}
	}
	key := s.root + path
	if err := s.be.checkKey(key); err != nil {
		return "", &PathError{Op: op, Path: path, Err: ErrInvalidPath, Cause: err}
	}
	if s.closed.Load() {
		return "", &PathError{Op: op, Path: path, Err: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return "", &PathError{Op: op, Path: path, Err: err}
	}
	return key, nil
}

func (s *store) Read(ctx context.Context, path string) ([]byte, error) {
	const op = "read"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return nil, err
	}
	if lb, ok := s.be.(*localBackend); ok {
		data, err := lb.read(key)
		if err != nil {
			return nil, wrapErr(op, path, err)
		}
		return data, nil
	}
	b, err := s.be.bucket(ctx)
	if err != nil {
		return nil, wrapErr(op, path, err)
	}
	r, err := b.NewReader(ctx, key, nil)
	if err != nil {
		return nil, wrapErr(op, path, err)
	}
	defer r.Close()
	// One buffer of the object's size (io.ReadAll, as blob.ReadAll, grows
	// one by doubling: up to twice the memory, and the copies).
	var buf bytes.Buffer
	if size := r.Size(); size >= 0 {
		buf.Grow(int(size) + bytes.MinRead)
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, wrapErr(op, path, err)
	}
	return buf.Bytes(), nil
}

func (s *store) NewRangeReader(ctx context.Context, path string, offset, length int64) (io.ReadCloser, error) {
	const op = "read-range"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return nil, err
	}
	if offset < 0 {
		return nil, &PathError{Op: op, Path: path, Err: fmt.Errorf("negative offset %d", offset)}
	}
	if lb, ok := s.be.(*localBackend); ok {
		r, err := lb.rangeReader(key, offset, length)
		if err != nil {
			return nil, wrapErr(op, path, err)
		}
		return &rangeReader{r: r, path: path}, nil
	}
	b, err := s.be.bucket(ctx)
	if err != nil {
		return nil, wrapErr(op, path, err)
	}
	r, err := b.NewRangeReader(ctx, key, offset, length, nil)
	if err != nil {
		if offset > 0 && gcerrors.Code(err) != gcerrors.NotFound && ctx.Err() == nil {
			// S3 answers a range starting at the end with 416; the
			// contract (like a file) is an empty read there.
			if a, aerr := b.Attributes(ctx, key); aerr == nil && offset >= a.Size {
				return io.NopCloser(strings.NewReader("")), nil
			}
		}
		return nil, wrapErr(op, path, err)
	}
	return &rangeReader{r: r, path: path}, nil
}

// rangeReader wraps read errors with the path.
type rangeReader struct {
	r    io.ReadCloser // a *blob.Reader, or a local file's section
	path string
}

func (r *rangeReader) Read(p []byte) (int, error) {
	n, err := r.r.Read(p)
	if err != nil && err != io.EOF { //nolint:errorlint // io.EOF is returned unwrapped by contract
		return n, wrapErr("read-range", r.path, err)
	}
	return n, err
}

func (r *rangeReader) Close() error { return wrapErr("read-range", r.path, r.r.Close()) }

func (s *store) Put(ctx context.Context, path string, data []byte) error {
	const op = "put"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return err
	}
	return wrapErr(op, path, s.be.put(ctx, key, data))
}

func (s *store) PutIfAbsent(ctx context.Context, path string, data []byte) error {
	const op = "put-if-absent"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return err
	}
	return wrapErr(op, path, s.be.putIfAbsent(ctx, key, data))
}

func (s *store) NewWriter(ctx context.Context, path string) (Writer, error) {
	const op = "write"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return nil, err
	}
	w, err := s.be.newWriter(ctx, key)
	if err != nil {
		return nil, wrapErr(op, path, err)
	}
	return &pathWriter{w: w, path: path}, nil
}

// pathWriter wraps a backend writer's errors with the path.
type pathWriter struct {
	w    Writer
	path string
}

func (w *pathWriter) Write(p []byte) (int, error) {
	n, err := w.w.Write(p)
	return n, wrapErr("write", w.path, err)
}

func (w *pathWriter) Close() error { return wrapErr("write", w.path, w.w.Close()) }
func (w *pathWriter) Abort() error { return wrapErr("abort-write", w.path, w.w.Abort()) }

func (s *store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error] {
	return s.list(ctx, "list", prefix, startAfter, s.be.list)
}

// list is List with op naming the errors and the backend listing be.
func (s *store) list(ctx context.Context, op, prefix, startAfter string, be func(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error]) iter.Seq2[FileInfo, error] {
	return func(yield func(FileInfo, error) bool) {
		if reason := pathProblem(prefix, true); reason != nil {
			yield(FileInfo{}, &PathError{Op: op, Path: prefix, Err: ErrInvalidPath, Cause: reason})
			return
		}
		if s.closed.Load() {
			yield(FileInfo{}, &PathError{Op: op, Path: prefix, Err: ErrClosed})
			return
		}
		if err := ctx.Err(); err != nil {
			yield(FileInfo{}, &PathError{Op: op, Path: prefix, Err: err})
			return
		}
		full := s.root + prefix
		after := ""
		if startAfter != "" {
			after = s.root + startAfter
		}
		for fi, err := range be(ctx, full, after) {
			if err != nil {
				if errors.Is(err, errNoLocation) {
					return
				}
				yield(FileInfo{}, wrapErr(op, prefix, err))
				return
			}
			if !strings.HasPrefix(fi.Path, s.root) {
				continue // cannot happen with a prefix that starts with root
			}
			fi.Path = fi.Path[len(s.root):]
			if !yield(fi, nil) {
				return
			}
		}
	}
}

func (s *store) Stat(ctx context.Context, path string) (FileInfo, error) {
	const op = "stat"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return FileInfo{}, err
	}
	if lb, ok := s.be.(*localBackend); ok {
		fi, err := lb.stat(key)
		if err != nil {
			return FileInfo{}, wrapErr(op, path, err)
		}
		return FileInfo{Path: path, Size: fi.Size(), ModTime: fi.ModTime()}, nil
	}
	b, err := s.be.bucket(ctx)
	if err != nil {
		return FileInfo{}, wrapErr(op, path, err)
	}
	a, err := b.Attributes(ctx, key)
	if err != nil {
		return FileInfo{}, wrapErr(op, path, err)
	}
	return FileInfo{Path: path, Size: a.Size, ModTime: a.ModTime}, nil
}

func (s *store) Delete(ctx context.Context, path string) error {
	const op = "delete"
	key, err := s.begin(ctx, op, path)
	if err != nil {
		return err
	}
	if lb, ok := s.be.(*localBackend); ok {
		return wrapErr(op, path, lb.remove(key))
	}
	b, err := s.be.bucket(ctx)
	if errors.Is(err, errNoLocation) {
		return nil
	}
	if err != nil {
		return wrapErr(op, path, err)
	}
	err = b.Delete(ctx, key)
	if err != nil && (gcerrors.Code(err) == gcerrors.NotFound || errors.Is(err, syscall.ENOTDIR)) && ctx.Err() == nil {
		return nil
	}
	return wrapErr(op, path, err)
}

func (s *store) URL() string { return s.be.url(s.root) }

// Sub roots a store at dir; "" (or "/") is the same root. An invalid dir
// gives a store whose every call fails with ErrInvalidPath.
func (s *store) Sub(dir string) Store {
	dir = strings.TrimSuffix(dir, "/")
	if dir == "" {
		return &store{be: s.be, root: s.root, owner: false, closed: s.closed}
	}
	if reason := pathProblem(dir, false); reason != nil {
		return &errStore{err: &PathError{Op: "sub", Path: dir, Err: ErrInvalidPath, Cause: reason}, url: s.URL()}
	}
	return &store{be: s.be, root: s.root + dir + "/", owner: false, closed: s.closed}
}

// Close releases the store. Close on a Sub store is a no-op: the store it
// was derived from owns the shared bucket.
func (s *store) Close() error {
	if !s.owner {
		return nil
	}
	if s.closed.Swap(true) {
		return nil
	}
	if err := s.be.close(); err != nil {
		return &PathError{Op: "close", Path: "", Err: err}
	}
	return nil
}

// errStore is returned by Sub for an invalid directory: every call fails.
type errStore struct {
	err error
	url string
}

func (e *errStore) Read(context.Context, string) ([]byte, error) { return nil, e.err }
func (e *errStore) NewRangeReader(context.Context, string, int64, int64) (io.ReadCloser, error) {
	return nil, e.err
}
func (e *errStore) Put(context.Context, string, []byte) error         { return e.err }
func (e *errStore) NewWriter(context.Context, string) (Writer, error) { return nil, e.err }
func (e *errStore) PutIfAbsent(context.Context, string, []byte) error { return e.err }
func (e *errStore) Stat(context.Context, string) (FileInfo, error)    { return FileInfo{}, e.err }
func (e *errStore) Delete(context.Context, string) error              { return e.err }
func (e *errStore) URL() string                                       { return e.url }
func (e *errStore) Sub(string) Store                                  { return e }
func (e *errStore) Close() error                                      { return nil }
func (e *errStore) List(context.Context, string, string) iter.Seq2[FileInfo, error] {
	return func(yield func(FileInfo, error) bool) { yield(FileInfo{}, e.err) }
}
