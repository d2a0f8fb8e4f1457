package parquetio

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"path"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// passThroughSchema has a field of every pass-through leaf kind, nullable
// and required, a low-cardinality string (dictionary-encoded) and a
// unique one.
var passThroughSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "ntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	{Name: "l", Type: schema.TypeLong, Nullable: true},
	{Name: "i", Type: schema.TypeInteger},
	{Name: "d", Type: schema.TypeDouble, Nullable: true},
	{Name: "code", Type: schema.TypeString, Nullable: true},
	{Name: "s", Type: schema.TypeString},
}}

// passThroughChunk is n records from row base on as vectors, some values
// null.
func passThroughChunk(rng *rand.Rand, base, n int) schema.ColumnChunk {
	sch := passThroughSchema
	c := schema.ColumnChunk{Rows: n, Vectors: make([]schema.Vector, len(sch.Fields))}
	for j, f := range sch.Fields {
		c.Vectors[j] = schema.NewVector(schema.KindOf(f.Type), n)
	}
	t0 := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range n {
		k := base + r
		null := func(j int) bool {
			if rng.IntN(17) == 0 {
				c.Vectors[j].SetNull(r)
				return true
			}
			return false
		}
		if !null(0) {
			c.Vectors[0].Any[r] = t0.Add(time.Duration(rng.Int64N(1e6)) * time.Second)
		}
		if !null(1) {
			c.Vectors[1].Any[r] = t0.Add(time.Duration(k) * time.Millisecond).In(time.FixedZone("+05:30", 19800)) // its wall clock is stored
		}
		if !null(2) {
			c.Vectors[2].Int64[r] = rng.Int64N(5000) - 1000
		}
		c.Vectors[3].Int64[r] = int64(int32(rng.Uint32()))
		if !null(4) {
			c.Vectors[4].Float64[r] = rng.NormFloat64() * 1e3
		}
		if !null(5) {
			c.Vectors[5].String[r] = fmt.Sprintf("A%02d", rng.IntN(40))
		}
		c.Vectors[6].String[r] = fmt.Sprintf("row-%d-%x", k, rng.Uint64())
	}
	return c
}

// TestWriteColumnsMatchesRowPath: a streamed batch written column-wise
// (WriteColumns, the pass-through) gives the files the row path (Write of
// the same records) gives, byte for byte, and the same Delta statistics,
// record counts and partition values, across rolled files, bounded row
// groups and chunks of uneven sizes, unpartitioned and partitioned (a
// nullable string: 41 partitions, their files named in the order they are
// opened, which races); every chunk takes the pass-through.
//
// The same with the timestamp columns as schema.VecMicros vectors (the
// values a reader with ReadOptions.TimestampMicros gives).
func TestWriteColumnsMatchesRowPath(t *testing.T) {
	for _, parts := range [][]string{nil, {"code"}} {
		for _, micros := range []bool{false, true} {
			if micros && parts != nil {
				continue // the partition column is a string: the same files as unpartitioned's show
			}
			t.Run(fmt.Sprint("partitioned by ", parts, ", micros ", micros), func(t *testing.T) { testWriteColumnsMatchesRowPath(t, parts, micros) })
		}
	}
}

// microsChunk is c with its timestamp vectors as schema.VecMicros (a
// timestamp_ntz value's wall clock read as UTC).
func microsChunk(sch *schema.StructType, c schema.ColumnChunk) schema.ColumnChunk {
	out := c
	out.Vectors = slices.Clone(c.Vectors)
	for j, f := range sch.Fields {
		if f.Type != schema.TypeTimestamp && f.Type != schema.TypeTimestampNTZ {
			continue
		}
		v := schema.NewVector(schema.VecMicros, c.Rows)
		v.Null = c.Vectors[j].Null
		for r := range c.Rows {
			if x, ok := c.Vectors[j].Any[r].(time.Time); ok {
				if f.Type == schema.TypeTimestampNTZ {
					x = ntzWall(x)
				}
				v.Int64[r] = x.UnixMicro()
			}
		}
		out.Vectors[j] = v
	}
	return out
}

func testWriteColumnsMatchesRowPath(t *testing.T, parts []string, micros bool) {
	ctx := context.Background()
	opts := WriteOptions{RowGroupRows: 10_000, TargetFileSizeBytes: 1 << 20, PartitionColumns: parts,
		FileName: func(i int, ext string) string { return fmt.Sprintf("part-%05d%s.parquet", i, ext) }}
	var chunks []schema.ColumnChunk
	rng := rand.New(rand.NewPCG(1, 2))
	for base := 0; base < 120_000; {
		n := 1 + rng.IntN(9000)
		chunks = append(chunks, passThroughChunk(rng, base, n))
		base += n
	}
	write := func(columns bool) (*memStore, []WrittenFile) {
		st := newMemStore()
		bw, err := NewBatchWriter(st, passThroughSchema, opts)
		if err != nil {
			t.Fatal(err)
		}
		if !bw.WritesColumns() {
			t.Fatal("WritesColumns = false for a batch of primitive fields")
		}
		for i, c := range chunks {
			if columns {
				if micros {
					c = microsChunk(passThroughSchema, c)
				}
				if !bw.columnsFit(c) {
					t.Fatalf("chunk %d does not take the pass-through", i)
				}
				err = bw.WriteColumns(ctx, c)
			} else {
				err = bw.Write(ctx, vectorRows(passThroughSchema, c))
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		files, err := bw.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return st, files
	}
	rowSt, rowFiles := write(false)
	colSt, colFiles := write(true)
	if len(rowFiles) < 2 {
		t.Fatalf("%d files: want the batch rolled over several", len(rowFiles))
	}
	if len(colFiles) != len(rowFiles) {
		t.Fatalf("pass-through wrote %d files, row path %d", len(colFiles), len(rowFiles))
	}
	rowGroups := 0
	for i, rf := range rowFiles {
		cf := colFiles[i]
		if path.Dir(cf.Path) != path.Dir(rf.Path) || cf.NumRecords != rf.NumRecords || cf.Size != rf.Size || cf.Stats != rf.Stats ||
			!reflect.DeepEqual(cf.PartitionValues, rf.PartitionValues) {
			t.Fatalf("file %d: pass-through %+v, row path %+v", i, cf, rf)
		}
		rb, cb := readAllBytes(t, rowSt, rf.Path), readAllBytes(t, colSt, cf.Path)
		if !bytes.Equal(rb, cb) {
			t.Fatalf("%s: pass-through bytes differ from the row path's (%d vs %d bytes)", cf.Path, len(cb), len(rb))
		}
		f, err := OpenFile(ctx, colSt, cf.Path, cf.Size)
		if err != nil {
			t.Fatal(err)
		}
		rowGroups += f.NumRowGroups()
		f.Close()
	}
	if parts == nil && rowGroups <= len(rowFiles) {
		t.Errorf("%d row groups in %d files: want row groups bounded by RowGroupRows", rowGroups, len(rowFiles))
	}
}

func readAllBytes(t *testing.T, st *memStore, path string) []byte {
	t.Helper()
	b, err := st.Read(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestWriteColumnsMisfitTakesRowPath: a chunk the pass-through cannot take
// as is (a null in a required column) fails as the row path fails: the
// same *schema.RowError, its Row counted from the batch's first record.
func TestWriteColumnsMisfitTakesRowPath(t *testing.T) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(3, 4))
	first, bad := passThroughChunk(rng, 0, 100), passThroughChunk(rng, 100, 50)
	bad.Vectors[6].SetNull(7) // "s" is required
	errOf := func(columns bool) error {
		bw, err := NewBatchWriter(newMemStore(), passThroughSchema, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		defer bw.Abort(ctx)
		for _, c := range []schema.ColumnChunk{first, bad} {
			if columns {
				err = bw.WriteColumns(ctx, c)
			} else {
				err = bw.Write(ctx, vectorRows(passThroughSchema, c))
			}
			if err != nil {
				return err
			}
		}
		return nil
	}
	if bw, err := NewBatchWriter(newMemStore(), passThroughSchema, WriteOptions{}); err != nil {
		t.Fatal(err)
	} else if bw.columnsFit(bad) || !bw.columnsFit(first) {
		t.Fatal("columnsFit: want the good chunk taken, the one with a null in a required column not")
	}
	colErr, rowErr := errOf(true), errOf(false)
	var ce, re *schema.RowError
	if !errors.As(colErr, &ce) || !errors.As(rowErr, &re) {
		t.Fatalf("errors: pass-through %v, row path %v; want *schema.RowError both", colErr, rowErr)
	}
	if ce.Row != 107 || ce.Row != re.Row || ce.Field != re.Field || colErr.Error() != rowErr.Error() {
		t.Fatalf("pass-through %v (row %d), row path %v (row %d); want row 107 both", colErr, ce.Row, rowErr, re.Row)
	}
}

// TestPartitionColumnGroupsMatchesRows: a chunk's rows grouped from its
// vectors (a string partition column, some values null or empty) are the
// groups partitionGroups makes of its records (keys, values, rows, order),
// and a chunk of 20,000 rows over 41 values boxes its values only per
// group: ~1,500 allocations (the records of boxed partition values took a
// boxed string a row).
func TestPartitionColumnGroupsMatchesRows(t *testing.T) {
	lay, err := newLayout(passThroughSchema, WriteOptions{PartitionColumns: []string{"code"}}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	const n = 20_000
	c := passThroughChunk(rand.New(rand.NewPCG(3, 4)), 0, n)
	for r := 0; r < n; r += 97 {
		if c.Vectors[5].Null == nil || !c.Vectors[5].Null[r] {
			c.Vectors[5].String[r] = ""
		}
	}
	groups := checkGroupsMatchRecords(t, lay, passThroughSchema, c, 40)
	free := make([][]int, 0, groups)
	for range groups {
		free = append(free, make([]int, 0, n))
	}
	allocs := testing.AllocsPerRun(3, func() {
		f := free
		if _, err := partitionColumnGroups(lay, c, &f); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > n/10 {
		t.Errorf("%.0f allocations to group %d rows into %d partitions: want under one per 10 rows", allocs, n, groups)
	}
}

// TestWriteColumnsMicrosPartition: a schema.VecMicros partition column
// takes the pass-through and gives the row path's files and partition
// values.
func TestWriteColumnsMicrosPartition(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "day", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "l", Type: schema.TypeLong, Nullable: true},
	}}
	const n = 2000
	rows := schema.ColumnChunk{Rows: n, Vectors: []schema.Vector{schema.NewVector(schema.VecAny, n), schema.NewVector(schema.VecInt64, n)}}
	t0 := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	for r := range n {
		if r%7 == 0 {
			rows.Vectors[0].SetNull(r)
		} else {
			rows.Vectors[0].Any[r] = t0.Add(time.Duration(r%4) * 24 * time.Hour)
		}
		rows.Vectors[1].Int64[r] = int64(r)
	}
	write := func(columns bool) (*memStore, []WrittenFile) {
		st := newMemStore()
		bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"day"},
			FileName: func(i int, ext string) string { return fmt.Sprintf("part-%05d%s.parquet", i, ext) }})
		if err != nil {
			t.Fatal(err)
		}
		if columns {
			c := microsChunk(sch, rows)
			if c.Vectors[0].Kind != schema.VecMicros || !bw.columnsFit(c) {
				t.Fatal("a VecMicros partition column does not take the pass-through")
			}
			err = bw.WriteColumns(ctx, c)
		} else {
			err = bw.Write(ctx, vectorRows(sch, rows))
		}
		if err != nil {
			t.Fatal(err)
		}
		files, err := bw.Close(ctx)
		if err != nil {
			t.Fatal(err)
		}
		slices.SortFunc(files, func(a, b WrittenFile) int { return strings.Compare(a.Path, b.Path) })
		return st, files
	}
	rowSt, rowFiles := write(false)
	colSt, colFiles := write(true)
	if len(rowFiles) != 5 || len(colFiles) != len(rowFiles) {
		t.Fatalf("pass-through wrote %d files, row path %d, want 5", len(colFiles), len(rowFiles))
	}
	for i, rf := range rowFiles {
		cf := colFiles[i]
		if path.Dir(cf.Path) != path.Dir(rf.Path) || cf.NumRecords != rf.NumRecords || cf.Stats != rf.Stats ||
			!reflect.DeepEqual(cf.PartitionValues, rf.PartitionValues) {
			t.Fatalf("file %d: pass-through %+v, row path %+v", i, cf, rf)
		}
		if !bytes.Equal(readAllBytes(t, rowSt, rf.Path), readAllBytes(t, colSt, cf.Path)) {
			t.Fatalf("%s: pass-through bytes differ from the row path's", cf.Path)
		}
	}
}

// checkGroupsMatchRecords: partitionColumnGroups groups chunk c (of schema
// sch) as partitionGroups groups its records, into more than minGroups
// groups: the same keys, values and rows, in the same order. It returns
// the number of groups.
func checkGroupsMatchRecords(t *testing.T, lay *layout, sch *schema.StructType, c schema.ColumnChunk, minGroups int) int {
	t.Helper()
	want, err := lay.partitionGroups(&schema.Batch{Schema: sch, Rows: vectorRows(sch, c)}, nil)
	if err != nil {
		t.Fatal(err)
	}
	got, err := partitionColumnGroups(lay, c, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) || len(want) < minGroups {
		t.Fatalf("%d groups from the vectors, %d from the records (want > %d)", len(got), len(want), minGroups)
	}
	for i := range want {
		if got[i].key != want[i].key || !reflect.DeepEqual(got[i].values, want[i].values) || !slices.Equal(got[i].rows, want[i].rows) {
			t.Fatalf("group %d: %q %v (%d rows) from the vectors, %q %v (%d rows) from the records",
				i, got[i].key, got[i].values, len(got[i].rows), want[i].key, want[i].values, len(want[i].rows))
		}
	}
	return len(want)
}

// TestPartitionOrderSort: partitionOrder.sort puts a chunk's rows group by
// group, each group's in their order, renumbers each group's rows to its
// range, carries the nulls of every kind of vector, and reuses its buffers
// for a next, smaller chunk without a row of the last; release drops the
// strings and boxed values.
func TestPartitionOrderSort(t *testing.T) {
	var o partitionOrder
	for _, n := range []int{9, 5} {
		gi := func(r int) int { return (r * 7 % 3) % min(n, 3) }
		groups := []*partGroup{{}, {}, {}}
		for r := range n {
			groups[gi(r)].rows = append(groups[gi(r)].rows, r)
		}
		ints, strs, anys, flts, bools := schema.NewVector(schema.VecInt64, n), schema.NewVector(schema.VecString, n),
			schema.NewVector(schema.VecAny, n), schema.NewVector(schema.VecFloat64, n), schema.NewVector(schema.VecBool, n)
		for r := range n {
			ints.Int64[r], strs.String[r], anys.Any[r], flts.Float64[r], bools.Bool[r] = int64(r), fmt.Sprint(r), r, float64(r), r%2 == 0
			if r%4 == 1 {
				strs.SetNull(r)
			}
		}
		var want []int
		for _, g := range groups {
			want = append(want, g.rows...)
		}
		got := o.sort(groups, []*schema.Vector{&ints, &strs, &anys, &flts, &bools}, n)
		off := 0
		for g, grp := range groups {
			for k, r := range grp.rows {
				if r != off+k {
					t.Fatalf("n=%d: group %d's row %d renumbered %d, want %d", n, g, k, r, off+k)
				}
			}
			off += len(grp.rows)
		}
		for k, r := range want {
			if got[0].Int64[k] != int64(r) || got[1].String[k] != fmt.Sprint(r) || got[2].Any[k] != r ||
				got[3].Float64[k] != float64(r) || got[4].Bool[k] != (r%2 == 0) || got[1].Null[k] != (r%4 == 1) {
				t.Fatalf("n=%d: row %d of the sorted chunk holds %d %q %v %v %v null %v, want row %d's", n, k,
					got[0].Int64[k], got[1].String[k], got[2].Any[k], got[3].Float64[k], got[4].Bool[k], got[1].Null[k], r)
			}
		}
		for _, v := range got {
			if v.Len != n || !complete(v, n) || len(v.Int64)+len(v.String)+len(v.Any)+len(v.Float64)+len(v.Bool) != n {
				t.Fatalf("n=%d: a sorted vector of kind %v holds %d values", n, v.Kind, v.Len)
			}
		}
		if got[0].Null != nil {
			t.Errorf("n=%d: a vector without nulls got %v", n, got[0].Null)
		}
		o.release()
		if got[1].String[0] != "" || got[2].Any[0] != nil {
			t.Errorf("n=%d: release kept %q, %v", n, got[1].String[0], got[2].Any[0])
		}
	}
}
