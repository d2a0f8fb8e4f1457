// Package storagetest is the conformance suite every storage.Store
// implementation passes: local disk, memory and S3 run the same tests.
//
//	func TestLocal(t *testing.T) {
//		storagetest.Run(t, func(t *testing.T) storage.Store {
//			s, err := storage.Open(t.Context(), t.TempDir())
//			if err != nil {
//				t.Fatal(err)
//			}
//			t.Cleanup(func() { s.Close() })
//			return s
//		})
//	}
//
// newStore must return an empty store for every call. RunConfig tunes
// sizes (racers, rounds, object counts) for slow backends.
//
// What it checks: read/put/overwrite/stat/delete, ErrNotFound and
// ErrInvalidPath with their messages, List order (byte order, including keys
// that a directory walk would misorder), startAfter, early stop, pagination
// past 1000 objects, range reads, NewWriter visibility, Abort and ctx
// cancellation, ctx cancellation of every method, PutIfAbsent semantics and
// N concurrent PutIfAbsent calls with exactly one winner per key, and Sub.
//
// Concurrency: the subtests run sequentially; the race test runs
// goroutines that it waits for.
package storagetest
