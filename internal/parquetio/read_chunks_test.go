package parquetio

import (
	"context"
	"errors"
	"fmt"
	"github.com/lakesink/lakesink/schema"
	"math"
	"testing"
)

// chunkRows is fullRows repeated n times with a distinct id in "l" and no NaN
// (NaN != NaN would defeat the comparison).
func chunkRows(n int) [][]any {
	base := fullRows()
	rows := make([][]any, n)
	for i := range rows {
		r := append([]any(nil), base[i%len(base)]...)
		r[1] = int64(i)
		if f, ok := r[6].(float64); ok && math.IsNaN(f) {
			r[6] = float64(i)
		}
		rows[i] = r
	}
	return rows
}

func writeChunkFile(t *testing.T, rows [][]any, opts WriteOptions) *File {
	t.Helper()
	ctx := context.Background()
	st := newMemStore()
	files, err := WriteFiles(ctx, st, &schema.Batch{Schema: fullSchema(), Rows: rows}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != 1 {
		t.Fatalf("%d files", len(files))
	}
	f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// collect reads every chunk, checking each has at most max rows and only the
// last chunk of a row group is short.
func collect(t *testing.T, f *File, want *schema.StructType, opts ReadOptions, max int) ([][]any, int) {
	t.Helper()
	var all [][]any
	chunks := 0
	for rows, err := range f.Chunks(context.Background(), want, opts, max) {
		if err != nil {
			t.Fatal(err)
		}
		if len(rows) == 0 || (max > 0 && len(rows) > max) {
			t.Fatalf("chunk %d has %d rows (max %d)", chunks, len(rows), max)
		}
		chunks++
		all = append(all, rows...)
	}
	return all, chunks
}

func assertRows(t *testing.T, got, want [][]any, names *schema.StructType) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("%d rows, want %d", len(got), len(want))
	}
	for i := range want {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("row %d has %d fields, want %d", i, len(got[i]), len(want[i]))
		}
		for j := range want[i] {
			if !valuesEqual(got[i][j], want[i][j]) {
				t.Fatalf("row %d %s: got %#v want %#v", i, names.Fields[j].Name, got[i][j], want[i][j])
			}
		}
	}
}

func TestRowGroupChunksAllTypes(t *testing.T) {
	const n = 10_007
	rows := chunkRows(n)
	sch := fullSchema()
	cases := []struct {
		name      string
		opts      WriteOptions
		rowGroups int
	}{
		{"one big row group", WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30}, 1},
		{"several row groups", WriteOptions{RowGroupRows: 3000, TargetFileSizeBytes: 1 << 30}, 4},
		{"zstd", WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30, Compression: "zstd"}, 1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := writeChunkFile(t, rows, c.opts)
			if f.NumRowGroups() != c.rowGroups {
				t.Fatalf("%d row groups, want %d", f.NumRowGroups(), c.rowGroups)
			}
			all, err := f.ReadAll(context.Background(), sch, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, all, rows, sch)
			for _, max := range []int{1, 7, 1000, 4096, n + 5, 0} {
				t.Run(fmt.Sprintf("max %d", max), func(t *testing.T) {
					got, chunks := collect(t, f, sch, ReadOptions{}, max)
					assertRows(t, got, all, sch)
					// Reused chunk slices: the rows kept from earlier chunks
					// are intact.
					reused, _ := collect(t, f, sch, ReadOptions{ReuseChunkRows: true}, max)
					assertRows(t, reused, all, sch)
					wantChunks := 0
					for i := range f.NumRowGroups() {
						rg := int(f.pf.RowGroups()[i].NumRows())
						if max <= 0 {
							wantChunks++
						} else {
							wantChunks += (rg + max - 1) / max
						}
					}
					if chunks != wantChunks {
						t.Errorf("%d chunks, want %d", chunks, wantChunks)
					}
				})
			}
		})
	}
}

// TestRowGroupChunksReuse: with ReuseChunkRows every chunk of a row group
// comes in the same [][]any (one allocation per row group, not per chunk).
func TestRowGroupChunksReuse(t *testing.T) {
	f := writeChunkFile(t, chunkRows(3000), WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30})
	for _, reuse := range []bool{false, true} {
		var firsts []*[]any
		for rows, err := range f.RowGroupChunks(context.Background(), 0, fullSchema(), ReadOptions{ReuseChunkRows: reuse}, 1000) {
			if err != nil {
				t.Fatal(err)
			}
			firsts = append(firsts, &rows[0])
		}
		same := firsts[0] == firsts[1] && firsts[1] == firsts[2]
		if len(firsts) != 3 || same != reuse {
			t.Fatalf("reuse %v: %d chunks, same slice %v", reuse, len(firsts), same)
		}
	}
}

func TestRowGroupChunksProjectionAndMissing(t *testing.T) {
	rows := chunkRows(5000)
	f := writeChunkFile(t, rows, WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30})
	full := fullSchema()
	// Reordered nested and flat fields plus columns the file lacks.
	idx := []int{18, 1, 17, -1, 0, 15, -1}
	want := &schema.StructType{}
	for k, i := range idx {
		if i < 0 {
			want.Fields = append(want.Fields, schema.StructField{Name: fmt.Sprintf("absent%d", k), Type: &schema.ArrayType{ElementType: schema.TypeLong, ContainsNull: true}, Nullable: true})
			continue
		}
		want.Fields = append(want.Fields, full.Fields[i])
	}
	exp := make([][]any, len(rows))
	for r := range rows {
		exp[r] = make([]any, len(idx))
		for k, i := range idx {
			if i >= 0 {
				exp[r][k] = rows[r][i]
			}
		}
	}
	for _, max := range []int{1000, 333, 0} {
		got, _ := collect(t, f, want, ReadOptions{}, max)
		assertRows(t, got, exp, want)
	}
	// Only missing columns: every value null, chunking still by row count.
	none := &schema.StructType{Fields: []schema.StructField{{Name: "nope", Type: schema.TypeLong, Nullable: true}}}
	got, chunks := collect(t, f, none, ReadOptions{}, 1000)
	if len(got) != len(rows) || chunks != 5 {
		t.Fatalf("%d rows in %d chunks", len(got), chunks)
	}
	for i, r := range got {
		if r[0] != nil {
			t.Fatalf("row %d = %v", i, r)
		}
	}
}

func TestRowGroupChunksNestedFixture(t *testing.T) {
	sch, _ := logInfo(t, "testdata/dat/nested_types.json")
	f := openFixture(t, "testdata/dat/nested_types.parquet")
	all, err := f.ReadAll(context.Background(), sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, max := range []int{1, 2, 3} {
		got, _ := collect(t, f, sch, ReadOptions{}, max)
		assertRows(t, got, all, sch)
	}
}

func TestRowGroupChunksEarlyStopAndErrors(t *testing.T) {
	ctx := context.Background()
	rows := chunkRows(3000)
	f := writeChunkFile(t, rows, WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30})
	sch := fullSchema()
	// Stopping early releases the row group; the File reads again afterwards.
	for got, err := range f.RowGroupChunks(ctx, 0, sch, ReadOptions{}, 100) {
		if err != nil {
			t.Fatal(err)
		}
		assertRows(t, got, rows[:100], sch)
		break
	}
	again, err := f.ReadRowGroup(ctx, 0, sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, again, rows, sch)
	// Out-of-range row group and cancelled context are errors.
	for _, err := range f.RowGroupChunks(ctx, 1, sch, ReadOptions{}, 100) {
		if err == nil {
			t.Fatal("row group 1 of 1: no error")
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	var gotErr error
	for _, err := range f.RowGroupChunks(cctx, 0, sch, ReadOptions{}, 100) {
		gotErr = err
	}
	if !errors.Is(gotErr, context.Canceled) {
		t.Fatalf("cancelled: err = %v", gotErr)
	}
}

func TestChunkRows(t *testing.T) {
	f := writeChunkFile(t, chunkRows(4000), WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30})
	size := f.pf.Metadata().RowGroups[0].TotalByteSize
	cases := []struct {
		name   string
		budget int64
		want   func(int) bool
	}{
		{"whole row group", size, func(n int) bool { return n == 4000 }},
		{"more than the row group", 10 * size, func(n int) bool { return n == 4000 }},
		{"a quarter", size / 4, func(n int) bool { return n >= 990 && n <= 1010 }},
		{"tiny budget still one row", 1, func(n int) bool { return n == 1 }},
		{"no budget: whole row group", 0, func(n int) bool { return n == 4000 }},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if n := f.ChunkRows(0, c.budget); !c.want(n) {
				t.Errorf("ChunkRows(0, %d) = %d (row group %d bytes)", c.budget, n, size)
			}
		})
	}
}
