package table_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// columnar is the records of b as a streamed batch whose Columns yield
// them column-wise in chunks of n records and whose Chunks fail: a write
// that succeeds took the columnar pass-through.
func columnar(t *testing.T, b *schema.Batch, n int) *schema.Batch {
	rows := b.Rows
	return &schema.Batch{Schema: b.Schema,
		Chunks: func(yield func([][]any, error) bool) {
			yield(nil, errors.New("the row chunks of a batch written column-wise were read"))
		},
		Columns: func(yield func(schema.ColumnChunk, error) bool) {
			for lo := 0; lo < len(rows); lo += n {
				hi := min(lo+n, len(rows))
				c := schema.ColumnChunk{Rows: hi - lo, Vectors: make([]schema.Vector, len(b.Schema.Fields))}
				for j, f := range b.Schema.Fields {
					c.Vectors[j] = schema.NewVector(schema.KindOf(f.Type), hi-lo)
					for r, row := range rows[lo:hi] {
						if err := c.Vectors[j].Set(r, row[j]); err != nil {
							t.Fatal(err)
						}
					}
				}
				if !yield(c, nil) {
					return
				}
			}
		}}
}

// Issue 22, the columnar pass-through: a streamed batch of the table's
// schema written from its Columns commits the adds (paths aside: stats,
// sizes, records) and data files, byte for byte, that the row path
// (Chunks) commits for the same records.
func TestWriteColumnsPassThroughMatchesRows(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "n", Type: schema.TypeInteger, Nullable: true},
		{Name: "x", Type: schema.TypeDouble, Nullable: true},
		{Name: "city", Type: schema.TypeString, Nullable: true},
		{Name: "at", Type: schema.TypeTimestamp, Nullable: true},
	}}
	b := &schema.Batch{Schema: sch}
	t0 := time.Date(2024, 5, 1, 0, 0, 0, 0, time.UTC)
	for i := range 50_000 {
		row := []any{int64(i), int32(i % 977), float64(i) / 7, []string{"Oslo", "Lima", "Pune"}[i%3], t0.Add(time.Duration(i) * time.Second)}
		if i%11 == 0 {
			row[1], row[2], row[3], row[4] = nil, nil, nil, nil
		}
		b.Rows = append(b.Rows, row)
	}
	opts := table.WriteOptions{TargetFileSizeBytes: 256 << 10}
	byRows, byColumns := open(t), func() *table.Table {
		tb, err := table.Open(ctx, "mem://"+t.Name()+"-columns")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { tb.Close() })
		return tb
	}()
	if _, err := byRows.Write(ctx, streamed(b, 3000, nil), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := byColumns.Write(ctx, columnar(t, b, 3000), opts); err != nil {
		t.Fatal(err)
	}
	adds := func(tb *table.Table) (out []string, data [][]byte) {
		snap, err := tb.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range snap.Files() {
			out = append(out, fmt.Sprintf("size %d stats %s partitionValues %v", a.Size, a.Stats, a.PartitionValues))
			d, err := tb.Store().Read(ctx, a.Path)
			if err != nil {
				t.Fatal(err)
			}
			data = append(data, d)
		}
		return out, data
	}
	ra, rd := adds(byRows)
	ca, cd := adds(byColumns)
	if len(ra) < 2 || len(ra) != len(ca) {
		t.Fatalf("%d adds by rows, %d by columns; want the same, several", len(ra), len(ca))
	}
	for i := range ra {
		if ra[i] != ca[i] {
			t.Errorf("add %d: by columns %s, by rows %s", i, ca[i], ra[i])
		}
		if !bytes.Equal(rd[i], cd[i]) {
			t.Errorf("data file %d differs", i)
		}
	}
}
