package parquetio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// TestBatchWriterSyncsItsFilesOnceAtClose: a partitioned batch's files are
// made durable together by one storage.SyncObjects call in Close, naming
// every file once, after every file was closed (each file fsynced, renamed
// and its directory fsynced on its own Close were 711 fsyncs in a row for
// the 229 files of the 3M flights by origin); a failed sync fails Close and
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
			var openAtSync int64
			bw.syncObjects = func(ctx context.Context, s storage.Store, paths []string) error {
				calls = append(calls, slices.Clone(paths))
				openAtSync = st.openWriters()
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
			if len(calls) != 1 {
				t.Fatalf("Close synced %d times, want once", len(calls))
			}
			if openAtSync != 0 {
				t.Errorf("%d files still open at the sync", openAtSync)
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
			var want []string
			for _, f := range files {
				want = append(want, f.Path)
			}
			if len(want) != 7 || !slices.Equal(calls[0], want) {
				t.Errorf("synced %q, want the 7 files %q", calls[0], want)
			}
		})
	}
}
