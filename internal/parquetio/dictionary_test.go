package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakesink/lakesink/schema"
)

// Issue 22: data files are dictionary-encoded as Spark's parquet-mr writes
// them by default: a low-cardinality column's chunk is RLE_DICTIONARY, and a
// column whose dictionary passes 1 MiB falls back to PLAIN pages for the
// rest of the chunk, the values still read back as written.
func TestDataFilesAreDictionaryEncoded(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "unique", Type: schema.TypeString, Nullable: true},
		{Name: "n", Type: schema.TypeLong, Nullable: true},
	}}
	const n = 100_000 // unique: ~2.5 MB of distinct strings, past the 1 MiB dictionary
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{[]string{"SFO", "LAX", "JFK", "ORD"}[i%4], fmt.Sprintf("value-%020d", i), int64(i % 100)}
	}
	st := newMemStore()
	files, err := WriteFiles(ctx, st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := st.Read(ctx, files[0].Path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	encodings := func(col int) []format.Encoding {
		return pf.Metadata().RowGroups[0].Columns[col].MetaData.Encoding
	}
	hasDict := func(col int) bool {
		for _, e := range encodings(col) {
			if e == format.RLEDictionary {
				return true
			}
		}
		return false
	}
	for _, col := range []int{0, 1, 2} {
		if !hasDict(col) {
			t.Errorf("column %d encodings %v: no RLE_DICTIONARY", col, encodings(col))
		}
	}
	// 100,000 airport codes of 4 values: a few bits each, not 7 bytes.
	if size := pf.Metadata().RowGroups[0].Columns[0].MetaData.TotalCompressedSize; size > 20_000 {
		t.Errorf("origin column chunk is %d bytes", size)
	}
	f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
	if err != nil {
		t.Fatal(err)
	}
	back, err := f.ReadAll(ctx, sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(back, rows) {
		t.Errorf("rows differ after the round trip (%d rows back)", len(back))
	}
}
