package reader

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// fourFileTable writes ids 0..399 into four data files of 100 rows each,
// and returns the dir and the open snapshot.
func fourFileTable(t *testing.T) (string, *Snapshot) {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	type row struct {
		ID int64 `parquet:"id"`
	}
	for f := range 4 {
		rows := make([]row, 100)
		for i := range rows {
			rows[i] = row{int64(f*100 + i)}
		}
		b, err := schema.FromStructs(rows)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { snap.Close() })
	return dir, snap
}

// TestRowsStopAtAFailedFile: the first data file of the scan cannot be
// read (deleted under the table). No record of a later file comes out
// before the error, and the error comes out even when the caller stops at
// a limit (the consumer must not take a stream closed by a failed reader
// for a finished one), with no reader left running.
func TestRowsStopAtAFailedFile(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	dir, snap := fourFileTable(t)
	files, err := snap.Files(ctx, nil)
	if err != nil || len(files) != 4 {
		t.Fatalf("files %v, %v", files, err)
	}
	if err := os.Remove(filepath.Join(dir, filepath.FromSlash(files[0].Key))); err != nil {
		t.Fatal(err)
	}
	for i := range 300 {
		for _, limit := range []int64{0, 50} {
			n := 0
			var got error
			for _, err := range snap.Rows(ctx, ReadOptions{Workers: 3, Limit: limit}) {
				if err != nil {
					got = err
					break
				}
				n++
			}
			if n != 0 || !errors.Is(got, storage.ErrNotFound) {
				t.Fatalf("run %d, limit %d: %d records before %v; want none, then the missing file", i, limit, n, got)
			}
		}
	}
}

// TestRowsCancelled: a scan whose context is cancelled after its first
// record ends with the cancellation, in order up to it, and leaves no
// reader running.
func TestRowsCancelled(t *testing.T) {
	defer goleak.VerifyNone(t)
	_, snap := fourFileTable(t)
	all, err := readAll(t, snap, ReadOptions{Workers: 1})
	if err != nil || len(all) != 400 {
		t.Fatalf("%d records, %v", len(all), err)
	}
	for _, workers := range []int{1, 2, 4} {
		ctx, cancel := context.WithCancel(context.Background())
		var ids []int64
		var got error
		for r, err := range snap.Rows(ctx, ReadOptions{Workers: workers}) {
			if err != nil {
				got = err
				break
			}
			ids = append(ids, r.Values[0].(int64))
			cancel()
		}
		cancel()
		if !errors.Is(got, context.Canceled) {
			t.Fatalf("workers %d: ended with %v after %d records, want the cancellation", workers, got, len(ids))
		}
		for i, id := range ids {
			if want := all[i].Values[0].(int64); id != want {
				t.Fatalf("workers %d: record %d is id %d, want %d", workers, i, id, want)
			}
		}
	}
}
