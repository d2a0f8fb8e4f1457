package parquetio

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// memStore is the real in-memory store (storage.Open of a fresh mem:// URL)
// behind a fault store without rules, whose counters tell the tests how many
// writers are still open.
type memStore struct{ *faultstore.Store }

var memStores atomic.Int64

// newMemStore opens a fresh, empty mem:// store.
func newMemStore() *memStore {
	st, err := storage.Open(context.Background(), fmt.Sprintf("mem://parquetio-test-%d", memStores.Add(1)))
	if err != nil {
		panic(err) // a mem:// URL of this form always opens
	}
	fs, err := faultstore.New(st, faultstore.DefaultOptions())
	if err != nil {
		panic(err)
	}
	return &memStore{fs}
}

// keys lists every object of the store, in lexical order.
func (m *memStore) keys() []string {
	var ks []string
	for fi, err := range m.Store.List(context.Background(), "", "") {
		if err != nil {
			panic(err)
		}
		ks = append(ks, fi.Path)
	}
	return ks
}

// openWriters counts the writers neither closed nor aborted.
func (m *memStore) openWriters() int64 {
	c := m.Counts()
	return c.NewWriter - c.WriterClose - c.WriterAbort
}
