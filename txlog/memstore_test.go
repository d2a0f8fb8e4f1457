package txlog

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// memStore is the store of this package's tests: a mem:// store of its own
// Opener behind storage/faultstore, which counts the calls (Counts: List,
// ListPages, ...) for the tests that bound I/O, dates writes with now (the
// commit times of time travel are the files' modification times, as in
// Delta), and counts reads per path (a Call rule, readsOf).
type memStore struct {
	*faultstore.Store
	// mem is the mem:// store under the faults: a write to it is another
	// writer's, not counted and not dated by now.
	mem storage.Store
	// now dates the writes through the Store (time.Now unless a test sets
	// it before writing).
	now func() time.Time

	mu    sync.Mutex
	reads map[string]int64 // Read and NewRangeReader calls per path
}

// newMemStore returns a fresh store reporting mem://t.
func newMemStore() *memStore { return newMemStoreURL("") }

// newMemStoreURL returns a fresh store reporting url ("": its own).
func newMemStoreURL(url string) *memStore {
	o, err := storage.NewOpener(storage.DefaultOptions())
	if err != nil {
		panic(err) // the default options are valid
	}
	mem, err := o.Open(context.Background(), "mem://t")
	if err != nil {
		panic(err) // a mem URL always opens
	}
	s := &memStore{mem: mem, now: time.Now, reads: map[string]int64{}}
	opts := faultstore.DefaultOptions()
	opts.URL = url
	opts.Now = func() time.Time { return s.now() }
	if s.Store, err = faultstore.New(mem, opts); err != nil {
		panic(err)
	}
	err = s.Add(faultstore.Rule{Ops: faultstore.OpRead | faultstore.OpRangeRead, Mode: faultstore.Call,
		Func: func(_ faultstore.Op, p string) {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.reads[p]++
		}})
	if err != nil {
		panic(err)
	}
	return s
}

// loadDir copies the _delta_log of a directory into a new memStore that
// reports the directory's file:// URL, keeping the files' modification
// times.
func loadDir(dir string) (*memStore, error) {
	s := newMemStoreURL("file://" + dir)
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if !strings.HasPrefix(filepath.ToSlash(rel), LogDir+"/") {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		key := filepath.ToSlash(rel)
		if err := s.mem.Put(context.Background(), key, b); err != nil {
			return err
		}
		s.SetModTime(key, fi.ModTime())
		return nil
	})
	return s, err
}

// readsOf counts the Read and NewRangeReader calls of the paths pred
// selects since the last resetCounters.
func (s *memStore) readsOf(pred func(string) bool) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	var n int64
	for p, c := range s.reads {
		if pred(p) {
			n += c
		}
	}
	return n
}

// resetCounters zeroes Counts and readsOf.
func (s *memStore) resetCounters() {
	s.ResetCounts()
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.reads)
}

// put stores data at p, dated by now (test setup: not counted).
func (s *memStore) put(p string, data string) { s.putBytes(p, []byte(data)) }

// putBytes is put of a []byte.
func (s *memStore) putBytes(p string, data []byte) {
	if err := s.mem.Put(context.Background(), p, data); err != nil {
		panic(err) // the mem store does not fail a put
	}
	s.SetModTime(p, s.now())
}

// putAt stores data at p with modification time mod.
func (s *memStore) putAt(p string, data []byte, mod time.Time) {
	s.putBytes(p, data)
	s.SetModTime(p, mod)
}

// del deletes p (not counted).
func (s *memStore) del(p string) {
	if err := s.mem.Delete(context.Background(), p); err != nil {
		panic(err)
	}
	s.SetModTime(p, time.Time{})
}

// has reports whether p exists.
func (s *memStore) has(p string) bool {
	_, err := s.mem.Stat(context.Background(), p)
	return err == nil
}

// objects returns every key under prefix with its content.
func (s *memStore) objects(prefix string) map[string][]byte {
	ctx := context.Background()
	out := map[string][]byte{}
	for fi, err := range s.mem.List(ctx, prefix, "") {
		if err != nil {
			panic(err)
		}
		b, err := s.mem.Read(ctx, fi.Path)
		if err != nil {
			panic(err)
		}
		out[fi.Path] = b
	}
	return out
}
