package filesink

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/storage/storagetest"
)

// memStore is the store of this package's tests: a fresh mem:// store
// (storagetest.NewMem) behind a faultstore that reports the URL the test
// names (the file sink's absolute paths depend on it: "file:///out/p0",
// "s3a://bucket/t/part-0") and dates writes with the test's clock (log
// expiry and retention read modification times).
type memStore struct {
	*faultstore.Store
	// beforeRangeRead, if set, runs before every NewRangeReader (a
	// faultstore Call rule, outside the store's lock).
	beforeRangeRead func(path string)
}

// newMemStore returns a fresh memStore reporting url; now dates the
// writes (nil: the mem store's own clock).
func newMemStore(t testing.TB, url string, now func() time.Time) *memStore {
	t.Helper()
	opts := faultstore.DefaultOptions()
	opts.URL, opts.Now = url, now
	fs, err := faultstore.New(storagetest.NewMem(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	m := &memStore{Store: fs}
	err = fs.Add(faultstore.Rule{Ops: faultstore.OpRangeRead, Mode: faultstore.Call, Func: func(_ faultstore.Op, p string) {
		if m.beforeRangeRead != nil {
			m.beforeRangeRead(p)
		}
	}})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// keys returns every key of the store, sorted.
func (m *memStore) keys() []string {
	var out []string
	for fi, err := range m.List(context.Background(), "", "") {
		if err != nil {
			panic(err) // the mem store does not fail a listing
		}
		out = append(out, fi.Path)
	}
	slices.Sort(out)
	return out
}

// putAt stores an object with a given modification time (test setup).
func (m *memStore) putAt(path string, data []byte, mod time.Time) {
	if err := m.Put(context.Background(), path, data); err != nil {
		panic(err) // the mem store does not fail a put
	}
	m.SetModTime(path, mod)
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
