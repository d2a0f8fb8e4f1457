package parquetio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// TestBatchWriterSyncsItsFilesOnceAtClose: a partitioned batch's files are
// made durable by storage.SyncObjects calls in Close only, each file named
// in one call, after its writer was closed (each file fsynced, renamed and
// its directory fsynced on its own Close were 711 fsyncs in a row for the
// 229 files of the 3M flights by origin); a failed sync fails Close and
// deletes the files.
func TestBatchWriterSyncsItsFilesOnceAtClose(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong},
		{Name: "v", Type: schema.TypeLong},
	}}
	for _, fail := range []bool{false, true} {
		t.Run(fmt.Sprint("fail=", fail), func(t *testing.T) {
			st := newMemStore()
			bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"p"}})
			if err != nil {
				t.Fatal(err)
			}
			var calls [][]string
			var notClosed []string
			var mu sync.Mutex // the calls run at once
			bw.syncObjects = func(ctx context.Context, s storage.Store, paths []string) error {
				stored := st.keys()
				mu.Lock()
				calls = append(calls, slices.Clone(paths))
				for _, p := range paths {
					if !slices.Contains(stored, p) {
						notClosed = append(notClosed, p)
					}
				}
				mu.Unlock()
				if fail {
					return errors.New("disk on fire")
				}
				return storage.SyncObjects(ctx, s, paths)
			}
			for c := range 3 {
				rows := make([][]any, 1000)
				for i := range rows {
					rows[i] = []any{int64(i % 7), int64(c*1000 + i)}
				}
				if err := bw.Write(ctx, rows); err != nil {
					t.Fatal(err)
				}
			}
			if len(calls) != 0 {
				t.Fatalf("synced %d times before Close", len(calls))
			}
			files, err := bw.Close(ctx)
			if len(calls) == 0 {
				t.Fatal("Close did not sync")
			}
			if len(notClosed) != 0 {
				t.Errorf("synced %q before their writers were closed", notClosed)
			}
			if fail {
				if err == nil || len(files) != 0 || len(st.keys()) != 0 {
					t.Fatalf("a failed sync: Close = %d files, %v; store holds %q; want an error and no files", len(files), err, st.keys())
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var want, got []string
			for _, f := range files {
				want = append(want, f.Path)
			}
			for _, c := range calls {
				got = append(got, c...)
			}
			slices.Sort(got)
			slices.Sort(want)
			if len(want) != 7 || !slices.Equal(got, want) {
				t.Errorf("synced %q in %d calls, want the 7 files %q once each", got, len(calls), want)
			}
		})
	}
}

// TestBatchWriterSyncsAfterTheLastClose: Close makes the batch's files
// durable in one storage.SyncObjects call, made when every file is closed
// (the calls, up to 4 at once, took the files as they were closed before:
// their fsyncs held the CPUs the other closes needed).
func TestBatchWriterSyncsAfterTheLastClose(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong},
		{Name: "v", Type: schema.TypeLong},
	}}
	const parts = 64
	st := newMemStore()
	bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"p"}})
	if err != nil {
		t.Fatal(err)
	}
	var calls [][]string
	var storedAtCall []int
	var mu sync.Mutex
	bw.syncObjects = func(ctx context.Context, s storage.Store, paths []string) error {
		n := len(st.keys())
		mu.Lock()
		calls = append(calls, slices.Clone(paths))
		storedAtCall = append(storedAtCall, n)
		mu.Unlock()
		return storage.SyncObjects(ctx, s, paths)
	}
	for c := range 3 {
		rows := make([][]any, 4*parts)
		for i := range rows {
			rows[i] = []any{int64(i % parts), int64(c*len(rows) + i)}
		}
		if err := bw.Write(ctx, rows); err != nil {
			t.Fatal(err)
		}
	}
	files, err := bw.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != parts {
		t.Fatalf("Close returned %d files, want %d", len(files), parts)
	}
	if len(calls) != 1 || len(calls[0]) != parts || storedAtCall[0] != parts {
		t.Errorf("Close synced in %d calls of %v paths, %v files closed at each; want one call of the %d files, all closed",
			len(calls), lens(calls), storedAtCall, parts)
	}
}

func lens(calls [][]string) []int {
	var n []int
	for _, c := range calls {
		n = append(n, len(c))
	}
	return n
}
