package table_test

import (
	"context"
	"errors"
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// overwritingS3 pretends to be an S3 store that ignores If-None-Match:
// every PutIfAbsent overwrites, as Put does.
type overwritingS3 struct {
	storage.Store
	puts int
}

func (o *overwritingS3) URL() string { return "s3://bucket/t?region=us-east-1" }
func (o *overwritingS3) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	o.puts++
	return o.Store.Put(ctx, p, data)
}

func TestWriteRefusesStoreWithoutConditionalWrites(t *testing.T) {
	ctx := context.Background()
	mem, err := storage.Open(ctx, "mem://"+t.Name())
	if err != nil {
		t.Fatal(err)
	}
	st := &overwritingS3{Store: mem}
	tb, err := table.OpenStore(st)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Write(ctx, rows(0, 3), table.WriteOptions{})
	if !errors.Is(err, storage.ErrConditionalWriteUnsupported) {
		t.Fatalf("write to a store that overwrites on put-if-absent: %v, want ErrConditionalWriteUnsupported", err)
	}
	for fi, err := range mem.List(ctx, "", "") {
		if err != nil {
			t.Fatal(err)
		}
		t.Fatalf("the refused write left %s behind", fi.Path)
	}
	// The probe ran once and is cached.
	_, _ = tb.Write(ctx, rows(0, 3), table.WriteOptions{})
	if st.puts != 2 {
		t.Fatalf("probe puts = %d, want 2 (probed once, result cached)", st.puts)
	}
	// Single-writer mode opts out explicitly.
	single, _ := table.OpenStore(st, table.WithSingleWriter())
	if _, err := single.Write(ctx, rows(0, 3), table.WriteOptions{}); err != nil {
		t.Fatalf("single-writer write: %v", err)
	}
}
