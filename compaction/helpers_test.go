package compaction

import (
	"context"
	"fmt"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

var memSeq atomic.Int64

// flightsSchema is the flights-shaped schema of the tests and the benchmark:
// timestamp, long, long, string, string.
func flightsSchema() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "id", Type: schema.TypeLong, Nullable: false},
		{Name: "delay", Type: schema.TypeLong, Nullable: true},
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "destination", Type: schema.TypeString, Nullable: true},
	}}
}

var origins = []string{"SFO", "JFK", "LAX"}

// flightsRows makes n rows with ids from first; origins cycle.
func flightsRows(first int64, n int, originsOf []string) [][]any {
	rows := make([][]any, n)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	for i := range rows {
		id := first + int64(i)
		var delay any = id % 97
		if id%13 == 0 {
			delay = nil
		}
		rows[i] = []any{base.Add(time.Duration(id) * time.Minute), id, delay, originsOf[int(id)%len(originsOf)], fmt.Sprintf("D%03d", id%211)}
	}
	return rows
}

// newTable creates a flights table in a fresh in-memory store.
func newTable(t testing.TB, partCols []string, props map[string]string, opts ...table.Option) (*table.Table, storage.Store) {
	t.Helper()
	ctx := context.Background()
	st, err := storage.Open(ctx, fmt.Sprintf("mem://compaction-%d/t", memSeq.Add(1)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	opts = append([]table.Option{table.WithLogOptions(txlog.Options{DisableAutoCheckpoint: true})}, opts...)
	tb, err := table.OpenStore(st, opts...)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tb.Write(ctx, &schema.Batch{Schema: flightsSchema()}, table.WriteOptions{PartitionColumns: partCols, Properties: props})
	if err != nil {
		t.Fatal(err)
	}
	return tb, st
}

// appendRows appends rows in one commit.
func appendRows(t testing.TB, tb *table.Table, rows [][]any) int64 {
	t.Helper()
	res, err := tb.Write(context.Background(), &schema.Batch{Schema: flightsSchema(), Rows: rows}, table.WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	return res.Version
}

// readSnapshot reads every row of snap with parquetio's reader, partition
// columns filled from partitionValues, laid out like the table schema.
func readSnapshot(ctx context.Context, store storage.Store, snap *txlog.Snapshot) ([][]any, error) {
	md := snap.Metadata()
	sch, err := md.Schema()
	if err != nil {
		return nil, err
	}
	data := dataColumns(sch, md.PartitionColumns)
	var out [][]any
	for _, a := range snap.Files() {
		key, err := snap.FileKey(a.Path)
		if err != nil {
			return nil, err
		}
		f, err := parquetio.OpenFile(ctx, store, key, a.Size)
		if err != nil {
			return nil, fmt.Errorf("version %d: %w", snap.Version(), err)
		}
		rows, err := f.ReadAll(ctx, data, parquetio.ReadOptions{})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("version %d: %w", snap.Version(), err)
		}
		for _, r := range rows {
			full := make([]any, len(sch.Fields))
			j := 0
			for i, fld := range sch.Fields {
				if slices.Contains(md.PartitionColumns, fld.Name) {
					v, err := parquetio.ParsePartitionValue(a.PartitionValues[fld.Name], fld.Type)
					if err != nil {
						return nil, err
					}
					full[i] = v
				} else {
					full[i] = r[j]
					j++
				}
			}
			out = append(out, full)
		}
	}
	return out, nil
}

// rowKey renders a row canonically (time in UTC) for set comparisons.
func rowKey(r []any) string {
	s := ""
	for _, v := range r {
		if tm, ok := v.(time.Time); ok {
			v = tm.UTC().Format(time.RFC3339Nano)
		}
		s += fmt.Sprintf("%T:%v|", v, v)
	}
	return s
}

// rowSet maps canonical rows to their multiplicity.
func rowSet(rows [][]any) map[string]int {
	m := map[string]int{}
	for _, r := range rows {
		m[rowKey(r)]++
	}
	return m
}

func equalRowSets(a, b map[string]int) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
