package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"iter"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// memStore is a minimal in-memory storage.Store for this package's tests
// (internal/storage's own implementations are another package's work).
type memStore struct {
	mu      sync.Mutex
	objects map[string][]byte
	mod     map[string]time.Time
	writers int // open writers
	ranges  int // NewRangeReader calls
}

func newMemStore() *memStore {
	return &memStore{objects: map[string][]byte{}, mod: map[string]time.Time{}}
}

func (m *memStore) Read(_ context.Context, path string) ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[path]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", path, storage.ErrNotFound)
	}
	return bytes.Clone(b), nil
}

func (m *memStore) NewRangeReader(_ context.Context, path string, off, n int64) (io.ReadCloser, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ranges++
	b, ok := m.objects[path]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", path, storage.ErrNotFound)
	}
	if off > int64(len(b)) {
		off = int64(len(b))
	}
	end := int64(len(b))
	if n >= 0 && off+n < end {
		end = off + n
	}
	return io.NopCloser(bytes.NewReader(b[off:end])), nil
}

func (m *memStore) Put(_ context.Context, path string, data []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[path] = bytes.Clone(data)
	m.mod[path] = time.Now()
	return nil
}

type memWriter struct {
	m    *memStore
	path string
	buf  bytes.Buffer
	done bool
}

func (w *memWriter) Write(p []byte) (int, error) { return w.buf.Write(p) }
func (w *memWriter) Close() error {
	if w.done {
		return nil
	}
	w.done = true
	w.m.mu.Lock()
	w.m.writers--
	w.m.mu.Unlock()
	return w.m.Put(context.Background(), w.path, w.buf.Bytes())
}
func (w *memWriter) Abort() error {
	if !w.done {
		w.done = true
		w.m.mu.Lock()
		w.m.writers--
		w.m.mu.Unlock()
	}
	return nil
}

func (m *memStore) NewWriter(_ context.Context, path string) (storage.Writer, error) {
	m.mu.Lock()
	m.writers++
	m.mu.Unlock()
	return &memWriter{m: m, path: path}, nil
}

func (m *memStore) PutIfAbsent(ctx context.Context, path string, data []byte) error {
	m.mu.Lock()
	if _, ok := m.objects[path]; ok {
		m.mu.Unlock()
		return fmt.Errorf("put %s: %w", path, storage.ErrAlreadyExists)
	}
	m.mu.Unlock()
	return m.Put(ctx, path, data)
}

func (m *memStore) List(_ context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	m.mu.Lock()
	var keys []string
	for k := range m.objects {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	infos := make([]storage.FileInfo, len(keys))
	for i, k := range keys {
		infos[i] = storage.FileInfo{Path: k, Size: int64(len(m.objects[k])), ModTime: m.mod[k]}
	}
	m.mu.Unlock()
	return func(yield func(storage.FileInfo, error) bool) {
		for _, fi := range infos {
			if !yield(fi, nil) {
				return
			}
		}
	}
}

func (m *memStore) Stat(_ context.Context, path string) (storage.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	b, ok := m.objects[path]
	if !ok {
		return storage.FileInfo{}, fmt.Errorf("stat %s: %w", path, storage.ErrNotFound)
	}
	return storage.FileInfo{Path: path, Size: int64(len(b)), ModTime: m.mod[path]}, nil
}

func (m *memStore) Delete(_ context.Context, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, path)
	return nil
}

func (m *memStore) URL() string              { return "mem://test" }
func (m *memStore) Sub(string) storage.Store { return m }
func (m *memStore) Close() error             { return nil }

func (m *memStore) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var ks []string
	for k := range m.objects {
		ks = append(ks, k)
	}
	sort.Strings(ks)
	return ks
}
