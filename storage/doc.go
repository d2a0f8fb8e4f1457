// Package storage is lakesink's one storage interface: a Store of objects
// under a root (a table directory, a checkpoint directory), opened from a URL
// and implemented on top of gocloud.dev/blob.
//
// # Locations
//
//	storage.Open(ctx, "/data/tables/t1")              // local disk (plain path)
//	storage.Open(ctx, "file:///data/tables/t1")       // local disk
//	storage.Open(ctx, "mem://scratch/t1")             // in-process memory
//	storage.Open(ctx, "s3://bucket/tables/t1?region=us-east-1")
//	storage.Open(ctx, "s3://bucket/t1?region=us-east-1&endpoint=http://127.0.0.1:7070&use_path_style=true")
//
// S3 credentials come from the environment (AWS_ACCESS_KEY_ID, profiles,
// instance roles), never from the URL, and never appear in URL() or in an
// error message. A URL with user info is refused.
//
// "mem://name" buckets live in an Opener: the package-level Open uses one
// process-wide Opener (so the CLI and tests can open the same mem:// URL in two
// places); NewOpener gives an isolated registry.
//
// # Lifecycle
//
//	s, err := storage.Open(ctx, "/data/t1")
//	if err != nil { ... }
//	defer s.Close()
//	log := s.Sub("_delta_log")
//	err = log.PutIfAbsent(ctx, "00000000000000000007.json", commit)
//	switch {
//	case errors.Is(err, storage.ErrAlreadyExists):      // lost the race: rebase
//	case errors.Is(err, storage.ErrCommitStateUnknown): // read version 7 back
//	}
//	for fi, err := range log.List(ctx, "", "00000000000000000006.json") { ... }
//
// # Paths and errors
//
// Paths are slash-separated keys relative to the store root. The portable
// wrapper refuses empty paths, absolute paths, "." / ".." / empty elements,
// backslashes and control characters with ErrInvalidPath, so no path can
// escape the root. Every error is a *PathError naming the operation and the
// path ("read _delta_log/00000000000000000003.json: not found") and
// matches its class with errors.Is: ErrNotFound, ErrAlreadyExists,
// ErrCommitStateUnknown, ErrInvalidPath, ErrClosed, context.Canceled.
//
// # The commit primitive
//
// PutIfAbsent is what makes a Delta commit atomic and exclusive (PROTOCOL.md,
// "Blob Store Requirements": Atomic File Creation, and Mutual Exclusion — two
// clients must not both succeed at creating a particular delta file).
//
//   - local disk: the data is written to a temporary file in the target
//     directory (".lakesink-tmp-*": hidden from List, and ignored by
//     Spark/Hadoop listings because of the leading dot), fsynced, then
//     os.Link'ed to the final name, which fails with EEXIST if any file is
//     there: atomic across processes. The temp name is removed and the
//     directory fsynced. fileblob's IfNotExist is not used: it is a
//     check-then-rename that two processes can both win.
//   - memory: memblob's IfNotExist, which checks and stores under one lock.
//   - S3: PutObject with If-None-Match: * with the SDK's own retries turned
//     off. 412 means ErrAlreadyExists; 409 ConditionalRequestConflict is
//     retried (bounded, with back-off); a 5xx or a timeout is re-sent a
//     bounded number of times and, if the outcome stays ambiguous, surfaces as
//     ErrCommitStateUnknown.
//
// Put and NewWriter are atomic too: local writes go to a temp file renamed
// into place (no fileblob ".attrs" sidecars are ever written, so a table
// directory holds only data files and logs); S3 writes are single or
// multipart uploads that become visible on completion.
//
// NewDeferredWriter writes an object whose durability waits for
// SyncObjects, for data files that only a later commit makes visible: on
// local disk Close renames without any fsync, and SyncObjects fsyncs many
// such files and their directories at once (the file system commits them
// together), before the commit is written; the file itself is created in
// the background (Write and Close report an error creating it). Elsewhere
// both are the plain NewWriter.
//
// Read and Stat on local disk open or stat the file itself (a writer
// reads and stats each commit after its snapshot): fileblob's way costs a
// stat, a lookup of the ".attrs" sidecar and a tracing span per call.
//
// Options.LocalSkipFsync (tests only; storagetest.NewLocal uses it) keeps
// all of this atomic but skips the fsyncs, which cost milliseconds each.
//
// # Listing
//
// List yields keys in byte order, across all pages, strictly after
// startAfter (PROTOCOL.md, "Blob Store Requirements": Partial Listing, in
// lexicographic order starting at a given file name). On S3 startAfter becomes ListObjectsV2's StartAfter; on local
// disk the tree under the prefix is walked once and sorted (fileblob's walk
// order is not key order); memory lists from the start-after key.
//
// # Concurrency
//
// A Store and its Subs are safe for concurrent use. A Writer belongs to one
// goroutine. Close on a Sub is a no-op; closing the store it came from
// closes them all.
//
// Limitations: on local disk a key cannot be both an object and a "directory"
// of other objects ("a" and "a/b"), keys ending in ".attrs" are refused, and
// keys containing fileblob/s3blob's escape pattern "__0x..__" are read back
// unescaped by gocloud (NewRangeReader; Read and Stat use the key as written).
package storage
