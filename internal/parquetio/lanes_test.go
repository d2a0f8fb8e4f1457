package parquetio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
)

// lanesSchema mixes primitive, nested and nullable fields so that lanes own
// columns of every shape.
var lanesSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: false},
	{Name: "name", Type: schema.TypeString, Nullable: true},
	{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "tags", Type: &schema.ArrayType{ElementType: schema.TypeString, ContainsNull: true}, Nullable: true},
	{Name: "score", Type: schema.TypeDouble, Nullable: true},
	{Name: "point", Type: &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeInteger, Nullable: true}, {Name: "y", Type: schema.TypeInteger, Nullable: true}}}, Nullable: true},
}}

func lanesRows(n int) [][]any {
	rows := make([][]any, n)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		var name, tags, point any
		if i%7 != 0 {
			name = fmt.Sprintf("name-%d", i%97)
		}
		if i%5 != 0 {
			tags = []any{fmt.Sprintf("t%d", i%3), nil}
		}
		if i%11 != 0 {
			point = []any{int32(i), int32(-i)}
		}
		rows[i] = []any{int64(i), name, base.Add(time.Duration(i) * time.Second), tags, float64(i) / 3, point}
	}
	return rows
}

// writeWithLanes writes rows through a FileWriter whose layout has the given
// lanes and returns the file's bytes and stats.
func writeWithLanes(t *testing.T, rows [][]any, lanes [][]int, opts WriteOptions) ([]byte, string) {
	t.Helper()
	ctx := context.Background()
	st := newMemStore()
	fw, err := NewFileWriter(ctx, st, "f.parquet", lanesSchema, opts)
	if err != nil {
		t.Fatal(err)
	}
	fw.lay.lanes = lanes
	if err := fw.Write(ctx, rows); err != nil {
		t.Fatal(err)
	}
	wf, err := fw.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := st.Read(ctx, "f.parquet")
	if err != nil {
		t.Fatal(err)
	}
	return b, wf.Stats
}

// TestLanesWriteTheSameFile: fields written by parallel lanes give the same
// bytes and stats as one lane writing them all, across row-group and page
// boundaries.
func TestLanesWriteTheSameFile(t *testing.T) {
	rows := lanesRows(40_000)
	for _, opts := range []WriteOptions{{}, {RowGroupRows: 7_000}, {RowGroupSizeBytes: 64 << 10}} {
		one, oneStats := writeWithLanes(t, rows, [][]int{{0, 1, 2, 3, 4, 5}}, opts)
		for _, lanes := range [][][]int{
			{{0, 2, 4}, {1, 3, 5}},
			{{3}, {0, 1}, {2, 4, 5}},
			splitLanes(mustPlan(t), 4),
		} {
			got, gotStats := writeWithLanes(t, rows, lanes, opts)
			if !bytes.Equal(got, one) {
				t.Errorf("opts %+v lanes %v: file differs from the one-lane file (%d vs %d bytes)", opts, lanes, len(got), len(one))
			}
			if gotStats != oneStats {
				t.Errorf("lanes %v: stats %s, want %s", lanes, gotStats, oneStats)
			}
		}
	}
	// And the file reads back.
	ctx := context.Background()
	st := newMemStore()
	files, err := WriteFiles(ctx, st, &schema.Batch{Schema: lanesSchema, Rows: rows}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.ReadAll(ctx, lanesSchema, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(back) != len(rows) || back[12345][1] != rows[12345][1] || back[39999][0] != int64(39999) {
		t.Fatalf("read back %d rows; row 12345 = %v", len(back), back[12345])
	}
}

func mustPlan(t *testing.T) *writePlan {
	p, err := compilePlan(lanesSchema, 32, false)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestLanesRowErrorLowestRowThenField: with the fields validated by parallel
// lanes, the error still names the lowest bad row and, in that row, the
// first bad field.
func TestLanesRowErrorLowestRowThenField(t *testing.T) {
	rows := lanesRows(10_000)
	rows[9000][4] = "not a double" // score, a later row
	rows[3000][5] = "not a struct" // point
	rows[3000][1] = int64(3)       // name, same row, earlier field
	lay, err := newLayout(lanesSchema, DefaultWriteOptions())
	if err != nil {
		t.Fatal(err)
	}
	for _, lanes := range [][][]int{{{0, 1, 2, 3, 4, 5}}, {{4, 5}, {0, 1, 2, 3}}, {{5}, {1}, {0, 2, 3, 4}}} {
		lay.lanes = lanes
		err := validateColumns(lay, rows, []int{0, 1, 2, 3, 4, 5})
		var re *schema.RowError
		if !errors.As(err, &re) || re.Row != 3000 || re.Field != "name" {
			t.Errorf("lanes %v: err = %v, want row 3000 field name", lanes, err)
		}
	}
}

func TestSplitLanes(t *testing.T) {
	p := mustPlan(t)
	for n := 1; n <= 8; n++ {
		lanes := splitLanes(p, n)
		if want := min(n, len(p.fields)); len(lanes) != want {
			t.Fatalf("n=%d: %d lanes, want %d", n, len(lanes), want)
		}
		seen := map[int]int{}
		for _, l := range lanes {
			if len(l) == 0 {
				t.Errorf("n=%d: empty lane in %v", n, lanes)
			}
			for _, j := range l {
				seen[j]++
			}
		}
		for j := range p.fields {
			if seen[j] != 1 {
				t.Errorf("n=%d: field %d in %d lanes (%v)", n, j, seen[j], lanes)
			}
		}
	}
}

// TestSplitLanesBalancesFlights: the flights columns (two strings, three
// int64/timestamp) split as {origin, destination} | {date, delay, distance},
// the best split, where the greedy one gives {origin, date, distance} |
// {destination, delay}.
func TestSplitLanesBalancesFlights(t *testing.T) {
	s := &schema.StructType{Fields: []schema.StructField{
		{Name: "date", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "delay", Type: schema.TypeLong, Nullable: true},
		{Name: "distance", Type: schema.TypeLong, Nullable: true},
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "destination", Type: schema.TypeString, Nullable: true},
	}}
	p, err := compilePlan(s, 32, false)
	if err != nil {
		t.Fatal(err)
	}
	got := fmt.Sprint(splitLanes(p, 2))
	if got != "[[0 1 2] [3 4]]" && got != "[[3 4] [0 1 2]]" {
		t.Errorf("lanes %s, want {date, delay, distance} | {origin, destination}", got)
	}
}

func TestPartitionWorkersBoundWideSchemas(t *testing.T) {
	for _, tc := range []struct{ workers, cols, want int }{
		{8, 5, 8}, {8, 1000, 4}, {8, 4096, 1}, {8, 65535, 1}, {2, 10, 2}, {8, 0, 8},
	} {
		if got := partitionWorkers(tc.workers, tc.cols); got != tc.want {
			t.Errorf("partitionWorkers(%d, %d) = %d, want %d", tc.workers, tc.cols, got, tc.want)
		}
	}
}

// TestRowGroupSizeBytesIsKept: one large Write fills row groups up to about
// RowGroupSizeBytes of written (compressed) data, as parquet-mr's
// parquet.block.size counts it, and as 1000-row Writes do (a review read the
// uncompressed TotalByteSize, ~2x, as an overshoot of the lanes change).
func TestRowGroupSizeBytesIsKept(t *testing.T) {
	ctx := context.Background()
	rows := lanesRows(200_000)
	const limit = 1 << 20
	groupSizes := func(write func(fw *FileWriter)) []int64 {
		st := newMemStore()
		fw, err := NewFileWriter(ctx, st, "g.parquet", lanesSchema, WriteOptions{RowGroupSizeBytes: limit})
		if err != nil {
			t.Fatal(err)
		}
		write(fw)
		if _, err := fw.Close(ctx); err != nil {
			t.Fatal(err)
		}
		b, _ := st.Read(ctx, "g.parquet")
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		var out []int64
		for _, rg := range pf.Metadata().RowGroups {
			out = append(out, rg.TotalCompressedSize)
		}
		return out
	}
	one := groupSizes(func(fw *FileWriter) {
		if err := fw.Write(ctx, rows); err != nil {
			t.Fatal(err)
		}
	})
	many := groupSizes(func(fw *FileWriter) {
		for i := 0; i < len(rows); i += 1000 {
			if err := fw.Write(ctx, rows[i:i+1000]); err != nil {
				t.Fatal(err)
			}
		}
	})
	for _, g := range one[:len(one)-1] {
		if g > limit*11/10 {
			t.Fatalf("one Write: row groups of %v bytes at a %d limit", one, limit)
		}
	}
	if len(one) < len(many)*8/10 {
		t.Fatalf("one Write made %d row groups, 1000-row Writes %d: sizing depends on the caller's slices", len(one), len(many))
	}
}

// TestEstimatedSizeIsTheWritersSize: the size a FileWriter keeps between
// segments (FileWriter.size, read instead of asking parquet-go each time)
// is the parquet writer's own Size after every Write, across row-group
// flushes and page flushes, for writes of one row, of part of a chunk and
// of many chunks.
func TestEstimatedSizeIsTheWritersSize(t *testing.T) {
	ctx := context.Background()
	rows := lanesRows(60_000)
	fw, err := NewFileWriter(ctx, newMemStore(), "s.parquet", lanesSchema, WriteOptions{RowGroupSizeBytes: 256 << 10, RowGroupRows: 7_000})
	if err != nil {
		t.Fatal(err)
	}
	grew := 0
	last := int64(0)
	for i, n := 0, 1; i < len(rows); i, n = i+n, n*3 {
		n = min(n, len(rows)-i)
		if err := fw.Write(ctx, rows[i:i+n]); err != nil {
			t.Fatal(err)
		}
		if got, want := fw.EstimatedSize(), fw.pw.Size(); got != want {
			t.Fatalf("after %d rows: EstimatedSize %d, the parquet writer's Size %d", i+n, got, want)
		}
		if fw.EstimatedSize() > last {
			grew++
		}
		last = fw.EstimatedSize()
	}
	if grew < 5 {
		t.Fatalf("the size grew on %d writes only: the test wrote too little", grew)
	}
	if _, err := fw.Close(ctx); err != nil {
		t.Fatal(err)
	}
}
