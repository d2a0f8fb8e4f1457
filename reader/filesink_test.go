package reader

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

type sinkRow struct {
	ID      int64  `parquet:"id"`
	Name    string `parquet:"name"`
	Country string `parquet:"country"`
	Year    int64  `parquet:"year"`
}

func TestFileSinkDirectory(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	opts := filesink.DefaultOptions()
	opts.PartitionColumns = []string{"country", "year"}
	fs, err := filesink.New(ctx, st, opts)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for batch := range 3 {
		var rows []sinkRow
		for i := range 20 {
			id := int64(batch*20 + i)
			r := sinkRow{ID: id, Name: fmt.Sprint("n", id), Country: []string{"NL", "a b/c", ""}[id%3], Year: 2020 + id%2}
			rows = append(rows, r)
			country := fmt.Sprintf("string(%s)", r.Country)
			if r.Country == "" {
				country = "null" // an empty partition value is written as __HIVE_DEFAULT_PARTITION__
			}
			want = append(want, fmt.Sprintf("int64(%d) | string(n%d) | %s | int64(%d)", id, id, country, r.Year))
		}
		b, err := schema.FromStructs(rows)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := fs.AddBatch(ctx, int64(batch), b); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	for _, url := range []string{dir, filepath.Join(dir, "_spark_metadata"), filepath.Join(dir, "_spark_metadata") + "/"} {
		t.Run(url, func(t *testing.T) {
			snap, err := Open(ctx, url)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if snap.Kind() != KindFileSink || snap.Version() != 2 {
				t.Fatalf("kind %s version %d", snap.Kind(), snap.Version())
			}
			var got []string
			for r, err := range snap.Rows(ctx, ReadOptions{Columns: []string{"id", "name", "country", "year"}}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, canonRow(r.Values))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("got %d rows (first %v), want %d (first %v)", len(got), got[:min(3, len(got))], len(want), want[:3])
			}
			if n := assertBatchesMatchRows(t, snap); n != len(want) { // Parquet files, path partitions
				t.Fatalf("batches: %d rows, want %d", n, len(want))
			}
			// Partition pruning works on path-derived values too.
			pred, err := snap.Predicate("year = 2021 AND country = 'a b/c'")
			if err != nil {
				t.Fatal(err)
			}
			files, err := snap.Files(ctx, pred)
			if err != nil {
				t.Fatal(err)
			}
			all, _ := snap.Files(ctx, nil)
			if len(files) == 0 || len(files) >= len(all) {
				t.Fatalf("pruning kept %d of %d files", len(files), len(all))
			}
			recs, err := readAll(t, snap, ReadOptions{Where: "year = 2021 AND country = 'a b/c'"})
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range recs {
				if c, _ := r.Get("country"); c != "a b/c" {
					t.Fatalf("row %v passed the filter", r.Values)
				}
			}
			if len(recs) != 10 {
				t.Fatalf("%d rows for year = 2021 AND country = 'a b/c', want 10", len(recs))
			}
		})
	}
	if _, err := Open(ctx, dir, AtVersion(1)); err == nil {
		t.Fatal("time travel on a file-sink directory accepted")
	}
}

// TestDeltaWinsOverFileSink: a directory converted to Delta keeps its
// _spark_metadata; the Delta log is what describes it.
func TestDeltaWinsOverFileSink(t *testing.T) {
	ctx := context.Background()
	dir, _ := newEventTable(t)
	st, _ := storage.Open(ctx, dir)
	defer st.Close()
	if err := st.Put(ctx, "_spark_metadata/0", []byte("v1")); err != nil {
		t.Fatal(err)
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	if snap.Kind() != KindDelta {
		t.Fatalf("kind %s", snap.Kind())
	}
}
