package reader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"go.uber.org/goleak"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// idTable writes n rows (id 0..n-1, a string) into one data file with row
// groups of about rowGroupBytes, and returns the dir and the file.
func idTable(t *testing.T, n int, rowGroupBytes int64) (string, File) {
	t.Helper()
	ctx := context.Background()
	type row struct {
		ID   int64  `parquet:"id"`
		Name string `parquet:"name"`
	}
	rows := make([]row, n)
	for i := range rows {
		rows[i] = row{int64(i), fmt.Sprint("name-", i%97)}
	}
	b, err := schema.FromStructs(rows)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Write(ctx, b, table.WriteOptions{RowGroupSizeBytes: rowGroupBytes}); err != nil {
		t.Fatal(err)
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	files, err := snap.Files(ctx, nil)
	if err != nil || len(files) != 1 {
		t.Fatalf("files %v, %v", files, err)
	}
	return dir, files[0]
}

func rowGroups(t *testing.T, dir string, f File) int {
	t.Helper()
	snap, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	pf, err := parquetio.OpenFile(context.Background(), snap.Store(), f.Key, f.Size)
	if err != nil {
		t.Fatal(err)
	}
	defer pf.Close()
	return pf.NumRowGroups()
}

// TestRowsChunkLargeRowGroup: a 20,000-row row group reaches the consumer in
// chunks of at most chunkMaxRows records, never as one slice of the whole
// row group (which is what made `lakesink scan` of a 3M-row file take
// 1.5 GiB).
func TestRowsChunkLargeRowGroup(t *testing.T) {
	ctx := context.Background()
	dir, f := idTable(t, 20000, 0)
	if n := rowGroups(t, dir, f); n != 1 {
		t.Fatalf("%d row groups, want 1", n)
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	p, err := snap.plan(ctx, DefaultReadOptions())
	if err != nil {
		t.Fatal(err)
	}
	var chunks []int
	next := int64(0)
	err = p.readFile(ctx, &p.files[0], func(recs []Record) bool {
		chunks = append(chunks, len(recs))
		for _, r := range recs {
			if r.Values[0].(int64) != next {
				t.Fatalf("id %v, want %d", r.Values[0], next)
			}
			next++
		}
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	if next != 20000 || slices.Max(chunks) > chunkMaxRows || len(chunks) < 3 {
		t.Fatalf("%d rows in chunks %v, want 20000 in chunks of at most %d", next, chunks, chunkMaxRows)
	}
}

// TestRowsRowGroupsInParallel: the row groups of one file read by several
// workers (clones of the file) come out in file order, with a deletion
// vector's row indexes counted across row groups, with a predicate, a
// projection and a limit, and no goroutine left behind.
func TestRowsRowGroupsInParallel(t *testing.T) {
	defer goleak.VerifyNone(t)
	ctx := context.Background()
	const n = 6000
	dir, f := idTable(t, n, 2048)
	if rg := rowGroups(t, dir, f); rg < 8 {
		t.Fatalf("%d row groups, want several", rg)
	}
	// Delete every 7th row and the last but one.
	var deleted []uint64
	for i := uint64(0); i < n; i += 7 {
		deleted = append(deleted, i)
	}
	deleted = append(deleted, n-2)
	data := serializeDV(t, deleted...)
	size := len(data)
	for len(data)%4 != 0 {
		data = append(data, 0)
	}
	protocol := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}`
	remove := fmt.Sprintf(`{"remove":{"path":%q,"deletionTimestamp":1,"dataChange":true}}`, f.Path)
	add := fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{},"size":%d,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":%d}",`+
		`"deletionVector":{"storageType":"i","pathOrInlineDv":%q,"sizeInBytes":%d,"cardinality":%d}}}`, f.Path, f.Size, n, z85Encode(data), size, len(deleted))
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 1)), []byte(protocol+"\n"+remove+"\n"+add+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var want []int64
	for i := int64(0); i < n; i++ {
		if i%7 != 0 && i != n-2 {
			want = append(want, i)
		}
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	ids := func(o ReadOptions) []int64 {
		t.Helper()
		recs, err := readAll(t, snap, o)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]int64, len(recs))
		for i, r := range recs {
			out[i] = r.Values[0].(int64)
		}
		return out
	}
	for _, workers := range []int{1, 2, 4} {
		if got := ids(ReadOptions{Workers: workers}); !slices.Equal(got, want) {
			t.Fatalf("workers %d: %d ids, want %d (first %v)", workers, len(got), len(want), got[:min(10, len(got))])
		}
		got := ids(ReadOptions{Workers: workers, Columns: []string{"id"}, Where: "id >= 3000 AND name <> 'name-5'"})
		var wantWhere []int64
		for _, id := range want {
			if id >= 3000 && id%97 != 5 {
				wantWhere = append(wantWhere, id)
			}
		}
		if !slices.Equal(got, wantWhere) {
			t.Fatalf("workers %d, where: %d ids, want %d", workers, len(got), len(wantWhere))
		}
		if got := ids(ReadOptions{Workers: workers, Limit: 1000}); !slices.Equal(got, want[:1000]) {
			t.Fatalf("workers %d, limit: %d ids", workers, len(got))
		}
	}
}
