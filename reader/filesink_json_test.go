package reader

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

type jsonSinkRow struct {
	ID      int64    `parquet:"id"`
	Score   float64  `parquet:"score"`
	Tags    []string `parquet:"tags"`
	Country string   `parquet:"country"`
}

// TestFileSinkJSONReadThroughLog is issue 14 item 6: a JSON file-sink
// directory that lakesink wrote was read as Parquet and reported corrupt
// (exit 4). Its files are read through _spark_metadata as for Parquet (a
// JSON file the log does not name is not read), with the schema Spark's
// spark.read.json infers (fields sorted by name) plus the path's partition
// columns; plain and gzip-compressed.
func TestFileSinkJSONReadThroughLog(t *testing.T) {
	for _, compression := range []string{"none", "gzip"} {
		t.Run(compression, func(t *testing.T) {
			ctx := context.Background()
			dir := t.TempDir()
			st, err := storage.Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer st.Close()
			opts := filesink.DefaultOptions()
			opts.Format = "json"
			opts.Compression = compression
			opts.PartitionColumns = []string{"country"}
			fs, err := filesink.New(ctx, st, opts)
			if err != nil {
				t.Fatal(err)
			}
			var want []string
			for batch := range 2 {
				var rows []jsonSinkRow
				for i := range 5 {
					id := int64(batch*5 + i)
					r := jsonSinkRow{ID: id, Score: float64(id) + 0.5, Tags: []string{fmt.Sprint("t", id)}, Country: []string{"NL", "FR"}[id%2]}
					rows = append(rows, r)
					want = append(want, fmt.Sprintf("int64(%d) | float64(%g) | [string(t%d)] | string(%s)", id, r.Score, id, r.Country))
				}
				b, err := schema.FromStructs(rows)
				if err != nil {
					t.Fatal(err)
				}
				if _, err := fs.AddBatch(ctx, int64(batch), b); err != nil {
					t.Fatal(err)
				}
			}
			// A data file the log does not name (an aborted batch) is not read.
			if err := os.WriteFile(filepath.Join(dir, "country=NL", "part-99999-orphan.json"), []byte(`{"id":999}`+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			slices.Sort(want)
			snap, err := Open(ctx, dir)
			if err != nil {
				t.Fatal(err)
			}
			defer snap.Close()
			if got := fmt.Sprint(schemaNames(snap.Schema())); got != "[id score tags country]" || snap.Kind() != KindFileSink {
				t.Fatalf("kind %s schema %s, want a file sink with id score tags country", snap.Kind(), got)
			}
			var got []string
			for r, err := range snap.Rows(ctx, ReadOptions{Columns: []string{"id", "score", "tags", "country"}}) {
				if err != nil {
					t.Fatal(err)
				}
				got = append(got, canonRow(r.Values))
			}
			slices.Sort(got)
			if !slices.Equal(got, want) {
				t.Fatalf("rows:\n%v\nwant\n%v", got, want)
			}
			recs, err := readAll(t, snap, ReadOptions{Where: "score > 8 AND country = 'FR'"})
			if err != nil || len(recs) != 1 {
				t.Fatalf("where: %d rows, %v; want 1 (id 9)", len(recs), err)
			}
			if n := assertBatchesMatchRows(t, snap); n != len(want) {
				t.Fatalf("batches: %d rows, want %d", n, len(want))
			}
		})
	}
}

func schemaNames(s *schema.StructType) []string {
	var out []string
	for _, f := range s.Fields {
		out = append(out, f.Name)
	}
	return out
}
