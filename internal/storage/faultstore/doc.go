// Package faultstore wraps any storage.Store and injects faults, for crash
// and error-path tests (house style "Crash tests"; the model is pebble's
// vfs/errorfs).
//
// Rules compose: each selects calls by operation kind (Rule.Ops), path glob
// (Rule.Path, path.Match plus "dir/**"), the n-th matching call (Rule.Nth)
// and a seeded probability (Rule.Probability), and then fails before the
// operation (FailBefore), performs it and loses the answer (FailAfter — for
// PutIfAbsent the error matches storage.ErrCommitStateUnknown), or adds
// latency (Delay). Every injected error matches ErrInjected.
//
// Crash mode (CrashAfterWrites(k)) lets the first k writes (Put,
// PutIfAbsent, Writer.Close, Delete) through and fails every later one, as
// if the process died after the k-th durable step. A crash test runs the
// operation for k = 0, 1, 2, … until it completes, and after each crash
// reopens the real store and checks that the state is the one before or
// after the operation:
//
//	base := ... // a storage.Store holding the table before the operation
//	for k := 0; ; k++ {
//		fs, _ := faultstore.New(base, faultstore.DefaultOptions())
//		fs.CrashAfterWrites(k)
//		err := compactTable(ctx, fs) // the operation under test
//		if err == nil {
//			break // completed with k writes: every crash point was covered
//		}
//		if !errors.Is(err, faultstore.ErrInjected) {
//			t.Fatalf("k=%d: %v", k, err)
//		}
//		// "Reopen": read base directly, without the faults.
//		assertBeforeOrAfter(t, base)
//		// A Delta commit is either absent or complete; no uncommitted
//		// file is visible to a reader.
//	}
//
// Counts reports the calls per operation, and List items and pages, so
// tests can bound how many storage calls an operation makes.
//
// Concurrency: a Store is safe for concurrent use; a Store and its Subs
// share rules, counters and crash state. Rule.Probability draws from one
// generator seeded by Options.Seed, so a single-goroutine test is
// reproducible from its seed (log it).
package faultstore
