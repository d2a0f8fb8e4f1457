package storage

import (
	"context"
	"iter"
	"net/url"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/blob/memblob"
)

// memRegistry holds the named in-memory buckets of one Opener, so that
// opening "mem://name" twice yields the same objects.
type memRegistry struct {
	mu struct {
		sync.Mutex
		buckets map[string]*blob.Bucket
	}
}

func (r *memRegistry) get(name string) *blob.Bucket {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.mu.buckets == nil {
		r.mu.buckets = make(map[string]*blob.Bucket)
	}
	b, ok := r.mu.buckets[name]
	if !ok {
		b = memblob.OpenBucket(nil)
		r.mu.buckets[name] = b
	}
	return b
}

// memBackend is a memblob bucket shared by every store opened on its name.
// Closing a store does not drop the bucket: it lives as long as the Opener.
type memBackend struct {
	name string
	b    *blob.Bucket
}

func (m *memBackend) bucket(context.Context) (*blob.Bucket, error) { return m.b, nil }

func (m *memBackend) put(ctx context.Context, key string, data []byte) error {
	return gcPut(ctx, m.b, key, data)
}

// putIfAbsent relies on memblob checking and storing under its one lock.
func (m *memBackend) putIfAbsent(ctx context.Context, key string, data []byte) error {
	return gcPutIfAbsent(ctx, m.b, key, data)
}

func (m *memBackend) newWriter(ctx context.Context, key string) (Writer, error) {
	return gcNewWriter(ctx, m.b, key)
}

func (m *memBackend) list(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error] {
	return gcListPaged(ctx, m.b, prefix, startAfter)
}

func (m *memBackend) checkKey(string) error { return nil }

func (m *memBackend) url(root string) string {
	u := url.URL{Scheme: "mem", Host: m.name}
	if root != "" {
		u.Path = "/" + root[:len(root)-1]
	}
	return u.String()
}

func (m *memBackend) close() error { return nil }
