package txlog

import (
	"context"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestCheckpointStoresAHugeValueOnce (issue 14 item 5, through the
// checkpoint writer): a 1 MB metaData description was stored up to 7 times
// in the checkpoint (data, page header and column chunk statistics); now
// the checkpoint is the value plus a few KB, and it reads back intact.
func TestCheckpointStoresAHugeValueOnce(t *testing.T) {
	ctx := context.Background()
	const size = 1 << 20
	rng := rand.New(rand.NewPCG(7, 7))
	var b strings.Builder
	for range size {
		b.WriteByte(byte('a' + rng.IntN(26)))
	}
	desc := b.String()
	st := newMemStore()
	l := newTestLog(t, st, Options{DisableAutoCheckpoint: true})
	tx := l.Begin(nil)
	p := NewTableProtocol(testSchema)
	tx.Add(Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "tbl", Description: desc, Format: Format{Provider: "parquet"}, SchemaString: testSchema}})
	if _, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil {
		t.Fatal(err)
	}
	snap, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	lc, err := l.Checkpoint(ctx, snap)
	if err != nil {
		t.Fatal(err)
	}
	if lc.SizeInBytes == nil {
		t.Fatal("no sizeInBytes")
	}
	if limit := int64(size + 16<<10); *lc.SizeInBytes > limit {
		t.Fatalf("checkpoint of %d bytes, want at most %d (the value plus 16 KiB)", *lc.SizeInBytes, limit)
	}
	// Read it back from the checkpoint alone.
	if err := st.Delete(ctx, CommitPath(0)); err != nil {
		t.Fatal(err)
	}
	l2 := newTestLog(t, st, Options{})
	got, err := l2.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.Metadata().Description != desc {
		t.Fatal("the description did not read back intact from the checkpoint")
	}
}
