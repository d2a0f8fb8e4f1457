package storage

import (
	"context"
	"errors"
	"iter"
	"sync"

	"gocloud.dev/blob"
	"gocloud.dev/gcerrors"
)

// listPageSize is the page size used for paged listings (S3's maximum).
const listPageSize = 1000

// writerOptions are the options of every gocloud write: no content sniffing.
func writerOptions(ifNotExist bool) *blob.WriterOptions {
	return &blob.WriterOptions{
		ContentType: "application/octet-stream",
		IfNotExist:  ifNotExist,
	}
}

// gcPut writes the whole object through gocloud.
func gcPut(ctx context.Context, b *blob.Bucket, key string, data []byte) error {
	return b.WriteAll(ctx, key, data, writerOptions(false))
}

// gcPutIfAbsent writes through gocloud's IfNotExist. It is only used where
// that is atomic (memblob: check-and-store under the bucket's one lock).
func gcPutIfAbsent(ctx context.Context, b *blob.Bucket, key string, data []byte) error {
	err := b.WriteAll(ctx, key, data, writerOptions(true))
	switch gcerrors.Code(err) {
	case gcerrors.FailedPrecondition, gcerrors.AlreadyExists:
		return &classErr{class: ErrAlreadyExists, cause: err}
	}
	return err
}

// gcWriter streams through a gocloud writer. Abort cancels the writer's
// context before closing it, which gocloud documents as the way to discard a
// write (for S3 it aborts the multipart upload).
type gcWriter struct {
	mu     sync.Mutex
	w      *blob.Writer
	cancel context.CancelFunc
	done   bool
}

func gcNewWriter(ctx context.Context, b *blob.Bucket, key string) (Writer, error) {
	wctx, cancel := context.WithCancel(ctx)
	w, err := b.NewWriter(wctx, key, writerOptions(false))
	if err != nil {
		cancel()
		return nil, err
	}
	return &gcWriter{w: w, cancel: cancel}, nil
}

func (w *gcWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return 0, ErrClosed
	}
	return w.w.Write(p)
}

func (w *gcWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return ErrClosed
	}
	w.done = true
	defer w.cancel()
	return w.w.Close()
}

func (w *gcWriter) Abort() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return nil
	}
	w.done = true
	w.cancel()
	err := w.w.Close()
	if err == nil {
		// The write landed although it was cancelled: report it, the
		// caller must not believe the object is absent.
		return errors.New("abort came too late, the object was written")
	}
	return nil
}

// gcListPaged lists through blob.Bucket.ListPage, starting from startAfter as
// the page token. That is correct for drivers whose page token is "the last
// key returned" (memblob, fileblob); not for S3 (see s3.go).
func gcListPaged(ctx context.Context, b *blob.Bucket, prefix, startAfter string) iter.Seq2[FileInfo, error] {
	return func(yield func(FileInfo, error) bool) {
		token := blob.FirstPageToken
		if startAfter != "" {
			token = []byte(startAfter)
		}
		for {
			if err := ctx.Err(); err != nil {
				yield(FileInfo{}, err)
				return
			}
			objs, next, err := b.ListPage(ctx, token, listPageSize, &blob.ListOptions{Prefix: prefix})
			if err != nil {
				yield(FileInfo{}, err)
				return
			}
			for _, o := range objs {
				if o.IsDir || o.Key <= startAfter {
					continue
				}
				if !yield(FileInfo{Path: o.Key, Size: o.Size, ModTime: o.ModTime}, nil) {
					return
				}
			}
			if len(next) == 0 {
				return
			}
			token = next
		}
	}
}
