package tests

import (
	"context"
	"errors"
	"io"
	"iter"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// latencyStore adds a random latency to a fraction of the calls of a store
// and counts them. faultstore's Delay rules add a fixed latency and do not
// count; the soak wants a spread (uniform in (0, max]) and a number to print.
type latencyStore struct {
	inner storage.Store
	st    *latencyState
}

type latencyState struct {
	p       float64
	max     time.Duration
	delayed atomic.Int64
	mu      sync.Mutex
	rng     *rand.Rand
}

var _ storage.Store = (*latencyStore)(nil)

func newLatencyStore(inner storage.Store, seed uint64, p float64, max time.Duration) *latencyStore {
	return &latencyStore{inner: inner, st: &latencyState{p: p, max: max, rng: rand.New(rand.NewPCG(seed, seed^0x5bd1e995))}}
}

// pause sleeps (honouring ctx) when the coin says so.
func (s *latencyStore) pause(ctx context.Context) {
	s.st.mu.Lock()
	hit := s.st.rng.Float64() < s.st.p
	d := time.Duration(s.st.rng.Int64N(int64(s.st.max))) + 1
	s.st.mu.Unlock()
	if !hit {
		return
	}
	s.st.delayed.Add(1)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (s *latencyStore) Read(ctx context.Context, p string) ([]byte, error) {
	s.pause(ctx)
	return s.inner.Read(ctx, p)
}

func (s *latencyStore) NewRangeReader(ctx context.Context, p string, off, n int64) (io.ReadCloser, error) {
	s.pause(ctx)
	return s.inner.NewRangeReader(ctx, p, off, n)
}

func (s *latencyStore) Put(ctx context.Context, p string, data []byte) error {
	s.pause(ctx)
	return s.inner.Put(ctx, p, data)
}

func (s *latencyStore) NewWriter(ctx context.Context, p string) (storage.Writer, error) {
	s.pause(ctx)
	return s.inner.NewWriter(ctx, p)
}

func (s *latencyStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	s.pause(ctx)
	return s.inner.PutIfAbsent(ctx, p, data)
}

func (s *latencyStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		s.pause(ctx)
		for fi, err := range s.inner.List(ctx, prefix, startAfter) {
			if !yield(fi, err) {
				return
			}
		}
	}
}

func (s *latencyStore) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	s.pause(ctx)
	return s.inner.Stat(ctx, p)
}

func (s *latencyStore) Delete(ctx context.Context, p string) error {
	s.pause(ctx)
	return s.inner.Delete(ctx, p)
}

func (s *latencyStore) URL() string { return s.inner.URL() }

func (s *latencyStore) Sub(dir string) storage.Store {
	return &latencyStore{inner: s.inner.Sub(dir), st: s.st}
}

func (s *latencyStore) Close() error { return s.inner.Close() }

// readRetryStore models the storage client's own retries of idempotent
// reads (the AWS SDK's standard retryer re-sends a GET, HEAD or LIST after
// a 5xx, up to 3 attempts): Read, NewRangeReader and Stat are re-sent up to
// resends times after an injected fault, and a List whose first page failed
// is re-listed as often. Writes are never re-sent (a lost PutIfAbsent answer
// must be resolved by reading back, as the S3 store does with the SDK
// retries turned off). A List that fails after it has yielded items is not
// retried: the caller sees the error.
type readRetryStore struct {
	inner   storage.Store
	resends int
	retried *atomic.Int64
}

var _ storage.Store = (*readRetryStore)(nil)

func retryable(err error) bool { return err != nil && errors.Is(err, faultstore.ErrInjected) }

// do runs fn, re-sending it after an injected fault.
func (s *readRetryStore) do(fn func() error) error {
	err := fn()
	for i := 0; i < s.resends && retryable(err); i++ {
		s.retried.Add(1)
		err = fn()
	}
	return err
}

func (s *readRetryStore) Read(ctx context.Context, p string) (b []byte, err error) {
	err = s.do(func() error { b, err = s.inner.Read(ctx, p); return err })
	return b, err
}

func (s *readRetryStore) NewRangeReader(ctx context.Context, p string, off, n int64) (r io.ReadCloser, err error) {
	err = s.do(func() error { r, err = s.inner.NewRangeReader(ctx, p, off, n); return err })
	return r, err
}

func (s *readRetryStore) Stat(ctx context.Context, p string) (fi storage.FileInfo, err error) {
	err = s.do(func() error { fi, err = s.inner.Stat(ctx, p); return err })
	return fi, err
}

func (s *readRetryStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		for attempt := 0; ; attempt++ {
			n := 0
			for fi, err := range s.inner.List(ctx, prefix, startAfter) {
				if err != nil && n == 0 && attempt < s.resends && retryable(err) {
					s.retried.Add(1)
					break
				}
				n++
				if !yield(fi, err) || err != nil {
					return
				}
			}
			if n > 0 || attempt >= s.resends {
				return
			}
		}
	}
}

func (s *readRetryStore) Put(ctx context.Context, p string, data []byte) error {
	return s.inner.Put(ctx, p, data)
}

func (s *readRetryStore) NewWriter(ctx context.Context, p string) (storage.Writer, error) {
	return s.inner.NewWriter(ctx, p)
}

func (s *readRetryStore) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	return s.inner.PutIfAbsent(ctx, p, data)
}

func (s *readRetryStore) Delete(ctx context.Context, p string) error { return s.inner.Delete(ctx, p) }
func (s *readRetryStore) URL() string                                { return s.inner.URL() }
func (s *readRetryStore) Sub(dir string) storage.Store {
	return &readRetryStore{inner: s.inner.Sub(dir), resends: s.resends, retried: s.retried}
}
func (s *readRetryStore) Close() error { return s.inner.Close() }
