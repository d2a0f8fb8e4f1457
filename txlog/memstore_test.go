package txlog

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// memStore is a small in-package stand-in for storage's mem store with
// operation counters (listings, list pages, reads per path) for the tests
// that bound I/O. Check-and-store under one lock.
type memStore struct {
	mu      sync.Mutex
	objs    map[string]memObj
	url     string
	now     func() time.Time
	pageLen int

	lists, pages, reads atomic.Int64
	readPaths           sync.Map // path -> *atomic.Int64
	// putHook, when set, is called before PutIfAbsent stores; a non-nil
	// error is returned instead (after storing, if store is true).
	putHook func(path string) (err error, store bool)
}

type memObj struct {
	data []byte
	mod  time.Time
}

func newMemStore() *memStore {
	return &memStore{objs: map[string]memObj{}, url: "mem://t", now: time.Now, pageLen: 1000}
}

// loadDir copies a directory into a new memStore.
func loadDir(dir string) (*memStore, error) {
	s := newMemStore()
	s.url = "file://" + dir
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !strings.HasPrefix(filepath.ToSlash(rel), LogDir+"/") {
			return nil
		}
		fi, _ := d.Info()
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		s.objs[filepath.ToSlash(rel)] = memObj{data: b, mod: fi.ModTime()}
		return nil
	})
	return s, err
}

func (s *memStore) count(p string) {
	s.reads.Add(1)
	c, _ := s.readPaths.LoadOrStore(p, new(atomic.Int64))
	c.(*atomic.Int64).Add(1)
}

func (s *memStore) readsOf(pred func(string) bool) int64 {
	var n int64
	s.readPaths.Range(func(k, v any) bool {
		if pred(k.(string)) {
			n += v.(*atomic.Int64).Load()
		}
		return true
	})
	return n
}

func (s *memStore) resetCounters() {
	s.lists.Store(0)
	s.pages.Store(0)
	s.reads.Store(0)
	s.readPaths.Clear()
}

func (s *memStore) Read(ctx context.Context, p string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.count(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[p]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", p, storage.ErrNotFound)
	}
	return bytes.Clone(o.data), nil
}

func (s *memStore) NewRangeReader(ctx context.Context, p string, off, n int64) (io.ReadCloser, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.count(p)
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[p]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", p, storage.ErrNotFound)
	}
	d := o.data
	if off > int64(len(d)) {
		off = int64(len(d))
	}
	d = d[off:]
	if n >= 0 && n < int64(len(d)) {
		d = d[:n]
	}
	return io.NopCloser(bytes.NewReader(d)), nil
}

func (s *memStore) Put(ctx context.Context, p string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.objs[p] = memObj{data: bytes.Clone(data), mod: s.now()}
	return nil
}

type memWriter struct {
	s   *memStore
	p   string
	buf bytes.Buffer
}

func (w *memWriter) Write(b []byte) (int, error) { return w.buf.Write(b) }
func (w *memWriter) Close() error                { return w.s.Put(context.Background(), w.p, w.buf.Bytes()) }
func (w *memWriter) Abort() error                { return nil }

func (s *memStore) NewWriter(ctx context.Context, p string) (storage.Writer, error) {
	return &memWriter{s: s, p: p}, nil
}

func (s *memStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var hookErr error
	store := true
	if s.putHook != nil {
		hookErr, store = s.putHook(p)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if hookErr != nil && !store {
		return hookErr
	}
	if _, ok := s.objs[p]; ok {
		return fmt.Errorf("put %s: %w", p, storage.ErrAlreadyExists)
	}
	s.objs[p] = memObj{data: bytes.Clone(data), mod: s.now()}
	return hookErr
}

func (s *memStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		s.lists.Add(1)
		s.mu.Lock()
		var keys []string
		for k := range s.objs {
			if strings.HasPrefix(k, prefix) && k > startAfter {
				keys = append(keys, k)
			}
		}
		sort.Strings(keys)
		infos := make([]storage.FileInfo, len(keys))
		for i, k := range keys {
			infos[i] = storage.FileInfo{Path: k, Size: int64(len(s.objs[k].data)), ModTime: s.objs[k].mod}
		}
		s.mu.Unlock()
		s.pages.Add(1)
		for i, fi := range infos {
			if i > 0 && i%s.pageLen == 0 {
				s.pages.Add(1)
			}
			if !yield(fi, nil) {
				return
			}
		}
	}
}

func (s *memStore) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	o, ok := s.objs[p]
	if !ok {
		return storage.FileInfo{}, fmt.Errorf("stat %s: %w", p, storage.ErrNotFound)
	}
	return storage.FileInfo{Path: p, Size: int64(len(o.data)), ModTime: o.mod}, nil
}

func (s *memStore) Delete(ctx context.Context, p string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.objs, p)
	return nil
}

func (s *memStore) URL() string { return s.url }

// Sub is not used by txlog.
func (s *memStore) Sub(dir string) storage.Store { return nil }

func (s *memStore) Close() error { return nil }

func (s *memStore) put(p string, data string) {
	s.objs[p] = memObj{data: []byte(data), mod: s.now()}
}

func (s *memStore) has(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.objs[p]
	return ok
}
