package storage

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"iter"
	"os"
	"path"
)

// IsTempName reports whether base (a file name, no directory) is one of
// the temporary names the local backend writes before a rename or link
// into place: exactly the prefix ".lakesink-tmp-". Other hidden names
// (".part-0.crc", "_SUCCESS", ...) are not.
func IsTempName(base string) bool { return isTempName(base) }

// tempLister is implemented by the stores of this package.
type tempLister interface {
	listTemp(ctx context.Context, prefix string) iter.Seq2[FileInfo, error]
	deleteTemp(ctx context.Context, path string) error
}

// ListTemp yields the temporary files (IsTempName) under prefix that
// writers of st left behind or are still writing, in lexical order of
// their keys (relative to st's root), with their size in bytes and
// modification time; List never yields them. A writer killed between
// writing and renaming strands one for good. Only local stores write such
// files: elsewhere (S3, mem://, a store of another package) it yields
// nothing. Errors are *PathError naming the op "list-temp" and prefix.
func ListTemp(ctx context.Context, st Store, prefix string) iter.Seq2[FileInfo, error] {
	if tl, ok := st.(tempLister); ok {
		return tl.listTemp(ctx, prefix)
	}
	return func(func(FileInfo, error) bool) {}
}

// DeleteTemp deletes the temporary file key (as ListTemp yielded); an
// absent one is no error. A key whose base name is not a temporary name
// is ErrInvalidPath: DeleteTemp never deletes anything else. Errors are
// *PathError naming the op "delete-temp" and key.
func DeleteTemp(ctx context.Context, st Store, key string) error {
	if tl, ok := st.(tempLister); ok {
		return tl.deleteTemp(ctx, key)
	}
	if !IsTempName(path.Base(key)) {
		return notTempErr(key)
	}
	return nil // no temporary files in this store
}

func (s *store) listTemp(ctx context.Context, prefix string) iter.Seq2[FileInfo, error] {
	lb, ok := s.be.(*localBackend)
	if !ok {
		return func(func(FileInfo, error) bool) {}
	}
	return s.list(ctx, "list-temp", prefix, "", func(ctx context.Context, prefix, startAfter string) iter.Seq2[FileInfo, error] {
		return lb.listEntries(ctx, prefix, startAfter, true)
	})
}

func (s *store) deleteTemp(ctx context.Context, p string) error {
	const op = "delete-temp"
	if reason := pathProblem(p, false); reason != nil {
		return &PathError{Op: op, Path: p, Err: ErrInvalidPath, Cause: reason}
	}
	if !isTempName(path.Base(p)) {
		return notTempErr(p)
	}
	if s.closed.Load() {
		return &PathError{Op: op, Path: p, Err: ErrClosed}
	}
	if err := ctx.Err(); err != nil {
		return &PathError{Op: op, Path: p, Err: err}
	}
	lb, ok := s.be.(*localBackend)
	if !ok {
		return nil
	}
	if err := os.Remove(lb.filename(s.root + p)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return wrapErr(op, p, err)
	}
	return nil
}

// notTempErr refuses to delete-temp a key that is not a temporary name.
func notTempErr(key string) error {
	return &PathError{Op: "delete-temp", Path: key, Err: ErrInvalidPath, Cause: fmt.Errorf("not a temporary name (%q...)", tempPrefix)}
}
