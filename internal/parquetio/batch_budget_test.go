package parquetio

import (
	"context"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/schema"
)

// TestOpenFilesShareTheBufferBudget: the open files of a partitioned
// batch flush their row groups early once together they hold more than the
// buffer budget (the largest first), and read back the same rows; one open
// file is bounded by its own row-group size only (with the shared budget
// applied to it too, an unpartitioned streamed batch was cut into row groups
// of the budget's size instead of RowGroupSizeBytes). bound reads each open
// file's buffered bytes as its last write or flush left them (openPart.held).
// The open files of a partitioned batch, given shares of the page budget,
// hold no write buffer between writes (pooledWriter: parquet-go's own held
// 32 KiB per open file from its creation to its Close, 7 MiB for the 229
// airports of the 3M flights), and their files read back whole.
func TestOpenFilesShareTheBufferBudget(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong},
		{Name: "v", Type: schema.TypeLong},
		{Name: "s", Type: schema.TypeString},
	}}
	const budget = 64 << 10
	for _, parts := range []int{1, 8} {
		t.Run(fmt.Sprint(parts, " partitions"), func(t *testing.T) {
			var opts WriteOptions
			if parts > 1 {
				opts.PartitionColumns = []string{"p"}
			}
			st := newMemStore()
			bw, err := NewBatchWriter(st, sch, opts)
			if err != nil {
				t.Fatal(err)
			}
			bw.bufBudget = budget
			if parts > 1 {
				// Page shares below pageBufferSize: the files are among
				// many (pooled write buffers).
				bw.pageBudget = int64(parts*2) * pageBufferSize / 2
			}
			const chunks, chunkRows = 10, 4000
			for c := range chunks {
				rows := make([][]any, chunkRows)
				for i := range rows {
					k := int64(c*chunkRows + i)
					rows[i] = []any{k % int64(parts), k * 7919, fmt.Sprintf("s%d", k)}
				}
				if err := bw.Write(ctx, rows); err != nil {
					t.Fatal(err)
				}
				var held int64
				for _, p := range bw.order {
					if p.fw != nil && parts > 1 && (p.fw.pool == nil || p.fw.pool.buf != nil) {
						t.Fatalf("after chunk %d %q's file holds a write buffer (pooled: %v)", c, p.dir, p.fw.pool != nil)
					}
					if p.fw != nil {
						held += p.fw.bufferedBytes()
						if p.held != p.fw.bufferedBytes() {
							t.Fatalf("after chunk %d %q holds %d bytes, bound would read %d", c, p.dir, p.fw.bufferedBytes(), p.held)
						}
					}
				}
				if parts > 1 && held > budget {
					t.Fatalf("after chunk %d the open files hold %d bytes, budget %d", c, held, budget)
				}
			}
			files, err := bw.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != parts {
				t.Fatalf("%d files, want %d", len(files), parts)
			}
			var total int64
			rowGroups := 0
			for _, wf := range files {
				f, err := OpenFile(ctx, st, wf.Path, wf.Size)
				if err != nil {
					t.Fatal(err)
				}
				rowGroups += f.NumRowGroups()
				rows, err := f.ReadAll(ctx, &schema.StructType{Fields: sch.Fields[1:]}, ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				for _, r := range rows {
					k := r[0].(int64) / 7919
					if r[1] != fmt.Sprintf("s%d", k) || (parts > 1 && *wf.PartitionValues["p"] != fmt.Sprint(k%int64(parts))) {
						t.Fatalf("%s: row %v", wf.Path, r)
					}
				}
				total += int64(len(rows))
			}
			if total != chunks*chunkRows {
				t.Fatalf("%d rows back, want %d", total, chunks*chunkRows)
			}
			switch {
			case parts == 1 && rowGroups != 1:
				t.Errorf("one open file: %d row groups, want 1 (RowGroupSizeBytes bounds it, not the shared budget)", rowGroups)
			case parts > 1 && rowGroups <= parts:
				t.Errorf("%d partitions: %d row groups; want early flushes past the budget", parts, rowGroups)
			}
		})
	}
}
