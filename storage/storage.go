package storage

import (
	"context"
	"io"
	"iter"
	"time"
)

// Store is the one storage interface every package consumes. Paths are
// slash-separated keys relative to the store's root (a table root, a
// checkpoint directory, ...); they never start with "/" and never contain
// "." or ".." elements (the portable wrapper refuses them with ErrInvalidPath).
//
// Every method takes ctx first and honours its cancellation. Errors wrap one of
// the sentinels in errors.go (ErrNotFound, ErrAlreadyExists, ErrInvalidPath,
// ErrCommitStateUnknown) and name the path, so callers test them with errors.Is.
type Store interface {
	// Read returns the whole object. ErrNotFound if it does not exist.
	Read(ctx context.Context, path string) ([]byte, error)

	// NewRangeReader reads length bytes from offset (length < 0: to the end).
	// The caller closes the reader. ErrNotFound if the object does not exist.
	NewRangeReader(ctx context.Context, path string, offset, length int64) (io.ReadCloser, error)

	// Put writes the whole object, replacing any existing one. The object is
	// visible atomically: readers see the old or the new content, never a part.
	Put(ctx context.Context, path string, data []byte) error

	// NewWriter streams a (large) object, e.g. a Parquet data file. Nothing is
	// visible until Close returns nil; Abort (or a cancelled ctx) discards it.
	// On S3 this is a multipart upload; locally a temp file renamed on Close.
	NewWriter(ctx context.Context, path string) (Writer, error)

	// PutIfAbsent creates the object only if no object exists at path. It is
	// atomic across processes and machines: of N concurrent calls for one
	// path exactly one returns nil, the others ErrAlreadyExists. It is the
	// commit primitive (PROTOCOL.md, "Blob Store Requirements":
	// Atomic File Creation and Mutual Exclusion).
	// If the outcome is not known (timeout, 5xx after send) it returns an
	// error wrapping ErrCommitStateUnknown: the caller must read the object
	// back to learn whether its own write landed.
	PutIfAbsent(ctx context.Context, path string, data []byte) error

	// List yields the objects whose keys start with prefix and sort strictly
	// after startAfter ("" = from the start), in lexical (byte) order, across
	// as many pages as needed. "Directories" are not yielded; keys are full
	// paths relative to the store root. Iteration stops at the first error,
	// which is yielded with a zero FileInfo.
	List(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error]

	// Stat returns the object's size and modification time. ErrNotFound if absent.
	Stat(ctx context.Context, path string) (FileInfo, error)

	// Delete removes the object. Deleting an absent object is not an error.
	Delete(ctx context.Context, path string) error

	// URL is the store's root as a URL (file:///abs/dir, mem://name,
	// s3://bucket/prefix?region=...), without credentials.
	URL() string

	// Sub returns a Store rooted at root/dir (dir is a relative path).
	Sub(dir string) Store

	// Close releases the store's resources.
	Close() error
}

// Writer is a streaming writer returned by Store.NewWriter.
type Writer interface {
	io.Writer
	// Close publishes the object. After an error nothing is visible.
	Close() error
	// Abort discards everything written; nothing becomes visible.
	Abort() error
}

// FileInfo describes one stored object.
type FileInfo struct {
	Path    string    // key relative to the store root, slash-separated
	Size    int64     // bytes
	ModTime time.Time // last modification
}
