package memstore

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"io/fs"
	"iter"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lakesink/lakesink/storage"
)

type object struct {
	data    []byte
	modTime time.Time
}

type state struct {
	mu      sync.Mutex
	objects map[string]object
	// fail maps a path (relative to the root store) to the error its next
	// write returns; the entry is consumed by the failing call.
	fail map[string]error
	now  func() time.Time
}

// Store is an in-memory storage.Store.
type Store struct {
	st   *state
	root string // "" or "dir/" prefix
	name string
}

var _ storage.Store = (*Store)(nil)

// New returns an empty store named name (its URL is mem://name).
func New(name string) *Store {
	return &Store{st: &state{objects: map[string]object{}, fail: map[string]error{}, now: time.Now}, name: name}
}

// LoadDir copies every regular file under dir into the store, keyed by its
// slash path relative to dir and keeping its modification time.
func LoadDir(name, dir string) (*Store, error) {
	s := New(name)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		s.st.objects[filepath.ToSlash(rel)] = object{data: data, modTime: info.ModTime()}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("memstore: load %s: %w", dir, err)
	}
	return s, nil
}

// SetModTime sets the modification time of an existing object.
func (s *Store) SetModTime(p string, t time.Time) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if o, ok := s.st.objects[s.root+p]; ok {
		o.modTime = t
		s.st.objects[s.root+p] = o
	}
}

// SetClock sets the clock that stamps modification times of new objects.
func (s *Store) SetClock(now func() time.Time) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.now = now
}

// FailNextWrite makes the next Put/PutIfAbsent/Writer.Close of p return err
// without storing anything.
func (s *Store) FailNextWrite(p string, err error) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.fail[s.root+p] = err
}

// Keys returns every key under the store's root, sorted.
func (s *Store) Keys() []string {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	var out []string
	for k := range s.st.objects {
		if strings.HasPrefix(k, s.root) {
			out = append(out, strings.TrimPrefix(k, s.root))
		}
	}
	sort.Strings(out)
	return out
}

func checkPath(p string) error {
	if p == "" || strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %q", storage.ErrInvalidPath, p)
	}
	for _, e := range strings.Split(p, "/") {
		if e == "." || e == ".." || e == "" {
			return fmt.Errorf("%w: %q", storage.ErrInvalidPath, p)
		}
	}
	return nil
}

func (s *Store) Read(ctx context.Context, p string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := checkPath(p); err != nil {
		return nil, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	o, ok := s.st.objects[s.root+p]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", p, storage.ErrNotFound)
	}
	return bytes.Clone(o.data), nil
}

func (s *Store) NewRangeReader(ctx context.Context, p string, offset, length int64) (io.ReadCloser, error) {
	data, err := s.Read(ctx, p)
	if err != nil {
		return nil, err
	}
	if offset > int64(len(data)) {
		offset = int64(len(data))
	}
	data = data[offset:]
	if length >= 0 && length < int64(len(data)) {
		data = data[:length]
	}
	return io.NopCloser(bytes.NewReader(data)), nil
}

func (s *Store) put(ctx context.Context, p string, data []byte, ifAbsent bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := checkPath(p); err != nil {
		return err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if err, ok := s.st.fail[s.root+p]; ok {
		delete(s.st.fail, s.root+p)
		return fmt.Errorf("write %s: %w", p, err)
	}
	if _, ok := s.st.objects[s.root+p]; ok && ifAbsent {
		return fmt.Errorf("put %s: %w", p, storage.ErrAlreadyExists)
	}
	s.st.objects[s.root+p] = object{data: bytes.Clone(data), modTime: s.st.now()}
	return nil
}

func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	return s.put(ctx, p, data, false)
}

func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	return s.put(ctx, p, data, true)
}

type writer struct {
	s   *Store
	ctx context.Context
	p   string
	buf bytes.Buffer
}

func (w *writer) Write(b []byte) (int, error) { return w.buf.Write(b) }
func (w *writer) Close() error                { return w.s.put(w.ctx, w.p, w.buf.Bytes(), false) }
func (w *writer) Abort() error                { return nil }

func (s *Store) NewWriter(ctx context.Context, p string) (storage.Writer, error) {
	if err := checkPath(p); err != nil {
		return nil, err
	}
	return &writer{s: s, ctx: ctx, p: p}, nil
}

func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		if err := ctx.Err(); err != nil {
			yield(storage.FileInfo{}, err)
			return
		}
		s.st.mu.Lock()
		var infos []storage.FileInfo
		for k, o := range s.st.objects {
			if !strings.HasPrefix(k, s.root) {
				continue
			}
			rel := strings.TrimPrefix(k, s.root)
			if strings.HasPrefix(rel, prefix) && rel > startAfter {
				infos = append(infos, storage.FileInfo{Path: rel, Size: int64(len(o.data)), ModTime: o.modTime})
			}
		}
		s.st.mu.Unlock()
		sort.Slice(infos, func(i, j int) bool { return infos[i].Path < infos[j].Path })
		for _, fi := range infos {
			if !yield(fi, nil) {
				return
			}
		}
	}
}

func (s *Store) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	if err := ctx.Err(); err != nil {
		return storage.FileInfo{}, err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	o, ok := s.st.objects[s.root+p]
	if !ok {
		return storage.FileInfo{}, fmt.Errorf("stat %s: %w", p, storage.ErrNotFound)
	}
	return storage.FileInfo{Path: p, Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

func (s *Store) Delete(ctx context.Context, p string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	delete(s.st.objects, s.root+p)
	return nil
}

func (s *Store) URL() string {
	if s.root == "" {
		return "mem://" + s.name
	}
	return "mem://" + s.name + "/" + strings.TrimSuffix(s.root, "/")
}

func (s *Store) Sub(dir string) storage.Store {
	return &Store{st: s.st, root: s.root + path.Clean(dir) + "/", name: s.name}
}

func (s *Store) Close() error { return nil }
