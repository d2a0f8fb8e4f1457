package parquetio

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// TestBatchWriterFailedSyncOnDisk: on local disk (real fsyncs), a sync
// wave that fails (not necessarily the first: the one naming partition
// p=3's file) or a context cancelled while the files are being synced
// fails Close with an error that wraps the cause, leaves no file in the
// table directory (data or temporary), and a second Close fails without
// returning files.
func TestBatchWriterFailedSyncOnDisk(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong},
		{Name: "v", Type: schema.TypeLong},
	}}
	errDisk := errors.New("disk on fire")
	for _, tc := range []struct {
		name string
		want error
	}{{"failed wave", errDisk}, {"cancelled", context.Canceled}} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			st, err := storage.Open(context.Background(), dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"p"}})
			if err != nil {
				t.Fatal(err)
			}
			bw.syncObjects = func(sctx context.Context, s storage.Store, paths []string) error {
				if slices.ContainsFunc(paths, func(p string) bool { return strings.HasPrefix(p, "p=3/") }) {
					if tc.want == errDisk {
						return errDisk
					}
					cancel()
				}
				return storage.SyncObjects(sctx, s, paths)
			}
			rows := make([][]any, 7000)
			for i := range rows {
				rows[i] = []any{int64(i % 7), int64(i)}
			}
			if err := bw.Write(ctx, rows); err != nil {
				t.Fatal(err)
			}
			files, err := bw.Close(ctx)
			if !errors.Is(err, tc.want) || len(files) != 0 {
				t.Fatalf("Close = %d files, %v; want no files and %v", len(files), err, tc.want)
			}
			var left []string
			if err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
				if err == nil && !d.IsDir() {
					left = append(left, p)
				}
				return err
			}); err != nil {
				t.Fatal(err)
			}
			if len(left) != 0 {
				t.Errorf("files left after the failed Close: %q", left)
			}
			if files, err := bw.Close(context.Background()); err == nil || len(files) != 0 {
				t.Errorf("second Close = %d files, %v; want an error", len(files), err)
			}
		})
	}
}
