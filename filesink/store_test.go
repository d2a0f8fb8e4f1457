package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// memStore is a test stand-in for storage.Store (storage's own
// implementations are being built in parallel): objects in a map, times from
// an injected clock, and a crash mode that fails every call after the k-th.
type memStore struct {
	mu      *sync.Mutex
	objects map[string]memObject // full key -> object
	root    string               // prefix of this view ("" or "dir/")
	url     string
	now     func() time.Time

	// beforeRangeRead, if set, runs before NewRangeReader (outside the lock).
	beforeRangeRead func(path string)

	calls     *int // storage calls so far (shared by Sub views)
	crashAt   *int // calls numbered >= crashAt fail; -1 = never
	callNames *[]string
}

type memObject struct {
	data    []byte
	modTime time.Time
}

var errCrash = errors.New("memstore: injected crash")

func newMemStore(url string, now func() time.Time) *memStore {
	if now == nil {
		now = time.Now
	}
	calls, crash := 0, -1
	var names []string
	return &memStore{mu: &sync.Mutex{}, objects: map[string]memObject{}, url: url, now: now,
		calls: &calls, crashAt: &crash, callNames: &names}
}

func (m *memStore) op(name, path string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := *m.calls
	*m.calls++
	*m.callNames = append(*m.callNames, name+" "+m.root+path)
	if *m.crashAt >= 0 && n >= *m.crashAt {
		return fmt.Errorf("%s %s: %w", name, path, errCrash)
	}
	return nil
}

func (m *memStore) setCrash(k int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	*m.calls = 0
	*m.callNames = nil
	*m.crashAt = k
}

func (m *memStore) Read(ctx context.Context, path string) ([]byte, error) {
	if err := m.op("Read", path); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[m.root+path]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", path, storage.ErrNotFound)
	}
	return bytes.Clone(o.data), nil
}

func (m *memStore) NewRangeReader(ctx context.Context, path string, offset, length int64) (io.ReadCloser, error) {
	if err := m.op("NewRangeReader", path); err != nil {
		return nil, err
	}
	if m.beforeRangeRead != nil {
		m.beforeRangeRead(path)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[m.root+path]
	if !ok {
		return nil, fmt.Errorf("read %s: %w", path, storage.ErrNotFound)
	}
	d := o.data[min(offset, int64(len(o.data))):]
	if length >= 0 && length < int64(len(d)) {
		d = d[:length]
	}
	return io.NopCloser(bytes.NewReader(d)), nil
}

func (m *memStore) Put(ctx context.Context, path string, data []byte) error {
	if err := m.op("Put", path); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[m.root+path] = memObject{data: bytes.Clone(data), modTime: m.now()}
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
		return errors.New("memstore: writer closed twice")
	}
	w.done = true
	if err := w.m.op("WriterClose", w.path); err != nil {
		return err
	}
	w.m.mu.Lock()
	defer w.m.mu.Unlock()
	w.m.objects[w.m.root+w.path] = memObject{data: bytes.Clone(w.buf.Bytes()), modTime: w.m.now()}
	return nil
}
func (w *memWriter) Abort() error { w.done = true; return nil }

func (m *memStore) NewWriter(ctx context.Context, path string) (storage.Writer, error) {
	if err := m.op("NewWriter", path); err != nil {
		return nil, err
	}
	return &memWriter{m: m, path: path}, nil
}

func (m *memStore) PutIfAbsent(ctx context.Context, path string, data []byte) error {
	if err := m.op("PutIfAbsent", path); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if _, ok := m.objects[m.root+path]; ok {
		return fmt.Errorf("put %s: %w", path, storage.ErrAlreadyExists)
	}
	m.objects[m.root+path] = memObject{data: bytes.Clone(data), modTime: m.now()}
	return nil
}

func (m *memStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		if err := m.op("List", prefix); err != nil {
			yield(storage.FileInfo{}, err)
			return
		}
		m.mu.Lock()
		var out []storage.FileInfo
		for k, o := range m.objects {
			rel, ok := strings.CutPrefix(k, m.root)
			if !ok || !strings.HasPrefix(rel, prefix) || rel <= startAfter {
				continue
			}
			out = append(out, storage.FileInfo{Path: rel, Size: int64(len(o.data)), ModTime: o.modTime})
		}
		m.mu.Unlock()
		slices.SortFunc(out, func(a, b storage.FileInfo) int { return strings.Compare(a.Path, b.Path) })
		for _, fi := range out {
			if !yield(fi, nil) {
				return
			}
		}
	}
}

func (m *memStore) Stat(ctx context.Context, path string) (storage.FileInfo, error) {
	if err := m.op("Stat", path); err != nil {
		return storage.FileInfo{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	o, ok := m.objects[m.root+path]
	if !ok {
		return storage.FileInfo{}, fmt.Errorf("stat %s: %w", path, storage.ErrNotFound)
	}
	return storage.FileInfo{Path: path, Size: int64(len(o.data)), ModTime: o.modTime}, nil
}

func (m *memStore) Delete(ctx context.Context, path string) error {
	if err := m.op("Delete", path); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	delete(m.objects, m.root+path)
	return nil
}

func (m *memStore) URL() string { return m.url }

func (m *memStore) Sub(dir string) storage.Store {
	c := *m
	c.root = m.root + strings.TrimSuffix(dir, "/") + "/"
	c.url = strings.TrimSuffix(m.url, "/") + "/" + strings.TrimSuffix(dir, "/")
	return &c
}

func (m *memStore) Close() error { return nil }

// keys returns every key under the view, sorted.
func (m *memStore) keys() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []string
	for k := range m.objects {
		if rel, ok := strings.CutPrefix(k, m.root); ok {
			out = append(out, rel)
		}
	}
	slices.Sort(out)
	return out
}

// putAt stores an object with a given modification time (test setup).
func (m *memStore) putAt(path string, data []byte, mod time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.objects[m.root+path] = memObject{data: bytes.Clone(data), modTime: mod}
}

// fakeClock is an injected clock.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}
