package storagetest

import (
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// NewLocal returns a store on a fresh t.TempDir() with fsync turned off
// (storage.Options.LocalSkipFsync: atomic but not power-failure durable,
// and an order of magnitude faster), closed when the test ends. Use it in
// other packages' tests; the conformance suite itself runs with fsync on.
func NewLocal(t testing.TB) storage.Store {
	t.Helper()
	opts := storage.DefaultOptions()
	opts.LocalSkipFsync = true
	return open(t, opts, t.TempDir())
}

// NewMem returns a fresh in-memory store of its own Opener (shared with
// nobody), closed when the test ends.
func NewMem(t testing.TB) storage.Store {
	t.Helper()
	return open(t, storage.DefaultOptions(), "mem://test")
}

func open(t testing.TB, opts storage.Options, rawURL string) storage.Store {
	t.Helper()
	o, err := storage.NewOpener(opts)
	if err != nil {
		t.Fatal(err)
	}
	s, err := o.Open(t.Context(), rawURL)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}
