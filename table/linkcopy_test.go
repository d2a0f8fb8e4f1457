package table_test

import (
	"bytes"
	"context"
	"path/filepath"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/internal/testutil/memtest"
	"github.com/lakesink/lakesink/table"
)

// TestWritesToALinkedCopyLeaveTheBase: the commit-rate benchmark writes to
// copies of one table made of hard links (corpus.LinkDir), which holds only
// if no write changes an existing file in place. Appends past a checkpoint
// (a new checkpoint, _last_checkpoint replaced, .crc files) on a linked
// copy leave every file of the base as it was.
func TestWritesToALinkedCopyLeaveTheBase(t *testing.T) {
	ctx := context.Background()
	base := t.TempDir()
	buildAppendTable(t, base, 12) // as the benchmark builds the table it copies
	before := readTree(t, base)
	if _, ok := before["_delta_log/_last_checkpoint"]; !ok {
		t.Fatalf("the base has no checkpoint yet: %d files", len(before))
	}

	cp := filepath.Join(t.TempDir(), "copy")
	corpus.LinkDir(t, base, cp)
	tc, err := table.Open(ctx, cp)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		if _, err := tc.Write(ctx, benchAppendBatch(i), table.WriteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	tc.Close()
	after := readTree(t, cp)
	if string(after["_delta_log/_last_checkpoint"]) == string(before["_delta_log/_last_checkpoint"]) {
		t.Fatal("the copy's _last_checkpoint did not change: the test wrote no new checkpoint")
	}
	for p, data := range readTree(t, base) {
		if !bytes.Equal(data, before[p]) {
			t.Errorf("%s of the base changed by writes to its linked copy", p)
		}
	}
	if got := len(readTree(t, base)); got != len(before) {
		t.Errorf("the base has %d files after the copy's writes, want %d", got, len(before))
	}
}

// readTree maps each regular file below dir (slash-separated, relative) to
// its contents.
func readTree(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	st := memtest.Load(t, dir)
	out := map[string][]byte{}
	for _, k := range memtest.Keys(t, st) {
		data, err := st.Read(context.Background(), k)
		if err != nil {
			t.Fatal(err)
		}
		out[k] = data
	}
	return out
}
