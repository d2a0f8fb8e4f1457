package memtest

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

var seq atomic.Int64

// New opens a fresh, empty mem:// store named after the test.
func New(t testing.TB) storage.Store {
	t.Helper()
	name := strings.NewReplacer("/", "-", "#", "-", " ", "-", "?", "-").Replace(t.Name())
	st, err := storage.Open(context.Background(), fmt.Sprintf("mem://%s-%d", name, seq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st
}

// Load is New holding a copy of every regular file under dir, keyed by its
// slash path relative to dir.
func Load(t testing.TB, dir string) storage.Store {
	t.Helper()
	st := New(t)
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		return st.Put(context.Background(), filepath.ToSlash(rel), data)
	})
	if err != nil {
		t.Fatal(err)
	}
	return st
}

// Local opens a store on a fresh temporary directory and returns it with the
// directory, for tests that set modification times (os.Chtimes).
func Local(t testing.TB) (storage.Store, string) {
	t.Helper()
	dir := t.TempDir()
	st, err := storage.Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	return st, dir
}

// Keys lists every object of st, in lexical order.
func Keys(t testing.TB, st storage.Store) []string {
	t.Helper()
	var ks []string
	for fi, err := range st.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		ks = append(ks, fi.Path)
	}
	return ks
}
