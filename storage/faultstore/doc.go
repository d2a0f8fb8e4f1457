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
// # Named crash points
//
// Every durable step — a write-class call: Put, PutIfAbsent, Writer.Close,
// Delete — has a name, PointOf(op, path), stable across runs and
// versions. Points() lists the steps a Store has seen, each with its
// occurrence index ("commit#0", "data-file#2"), and CrashAt(name, n, mode)
// crashes at the n-th occurrence of a named step: FailBefore (the step is
// not performed) or FailAfter (it is performed, its answer lost), and every
// later write fails, as if the process had died. A crash test records an
// operation's points on a clean run, checks that their names are the set
// it expects (a new or unnamed step fails the test), then crashes at every
// occurrence of every point, before and after, and checks recovery; its
// subtests are named "<point>#<n>/<mode>" so that `go test -run` reaches
// one. docs/crash-points.md lists the points of each operation.
//
//	name                     durable once performed                          written by
//	data-file                one data file (never visible until committed)   table.Write (sink, OPTIMIZE), filesink
//	data-delete              a data file is gone                             VACUUM, filesink.DeleteOrphans, cleanup of a failed write
//	commit                   _delta_log/<v>.json: version v, atomically      txlog (PutIfAbsent only)
//	checkpoint               _delta_log/<v>.checkpoint*.parquet              txlog.Log.Checkpoint (auto or compaction.Checkpoint)
//	checkpoint-sidecar       _delta_log/_sidecars/<file>                     (not written by lakesink)
//	last-checkpoint          _delta_log/_last_checkpoint (a hint)            txlog.Log.Checkpoint
//	checksum                 _delta_log/<v>.crc (best effort, after commit)  txlog (every commit, unless DisableChecksumFile)
//	log-compaction           _delta_log/<a>.<b>.compacted.json               (not written by lakesink)
//	log-cleanup-delete       one expired log file is gone                    txlog.Log.Cleanup (compaction.CleanupLog)
//	conditional-write-probe  probe object under _delta_log (created/deleted) table.CheckConditionalWrites (S3 only)
//	spark-metadata-batch     _spark_metadata/<N>: batch N, atomically        filesink (PutIfAbsent only)
//	spark-metadata-compact   _spark_metadata/<N>.compact                     filesink (batch N, or CompactLog rewrite)
//	spark-metadata-claim     _spark_metadata/.<N>.compact.claim              filesink (streamed compaction)
//	spark-metadata-delete    one expired _spark_metadata file is gone        filesink (DeleteExpiredLog, CompactLog)
//	stream-metadata          metadata (query id)                             stream/checkpoint
//	stream-offsets           offsets/<N>: batch N planned                    stream/checkpoint (PutIfAbsent only)
//	stream-commits           commits/<N>: batch N done                       stream/checkpoint (PutIfAbsent only)
//	stream-sources           sources/<i>/...: a source's own log             stream/checkpoint, stream/kafka
//	stream-log-delete        an old offsets/commits/sources file is gone     stream/checkpoint purge
//	other:<op>               unclassified: a bug in the classifier or a new step that needs a name
//
// A commit, a _spark_metadata batch file or an offsets/commits file written
// with a plain Put is "other:put": those must be created atomically.
//
// Counts reports the calls per operation, and List items and pages, so
// tests can bound how many storage calls an operation makes.
//
// A Call rule runs a function before each matching call (Rule.Func): it
// stands another writer's move between two steps of the code under test,
// or counts the calls of one path. Rule.Err gives a failing rule another
// error class, such as storage.ErrCommitStateUnknown for a timeout whose
// write did not land.
//
// For rules that depend on time or place, Options.Now is the clock of the
// modification times of objects written through the Store, SetModTime
// sets one object's (as os.Chtimes), and Options.URL is the URL the Store
// reports (a file sink's "file:///data/out" on an in-memory store).
//
// Concurrency: a Store is safe for concurrent use; a Store and its Subs
// share rules, counters, crash state and modification times.
// Rule.Probability draws from one generator seeded by Options.Seed, so a
// single-goroutine test is reproducible from its seed (log it).
package faultstore
