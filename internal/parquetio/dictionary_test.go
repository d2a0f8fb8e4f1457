package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"

	"github.com/lakesink/lakesink/schema"
)

// Issue 22: data files are dictionary-encoded as Spark's parquet-mr writes
// them by default: a low-cardinality column's chunk is RLE_DICTIONARY, and a
// column whose dictionary passes 1 MiB falls back to PLAIN pages for the
// rest of the chunk (here: repeated over the first rows, which keep the
// dictionary, then unique), the values still read back as written.
func TestDataFilesAreDictionaryEncoded(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "unique", Type: schema.TypeString, Nullable: true},
		{Name: "n", Type: schema.TypeLong, Nullable: true},
	}}
	const n = 140_000 // unique: ~1.9 MB of distinct strings after the sample, past the 1 MiB dictionary
	rows := make([][]any, n)
	for i := range rows {
		u := i
		if i < dictionarySampleRows {
			u = i % 16
		}
		rows[i] = []any{[]string{"SFO", "LAX", "JFK", "ORD"}[i%4], fmt.Sprintf("value-%020d", u), int64(i % 100)}
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
	// 140,000 airport codes of 4 values: a few bits each, not 7 bytes.
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

// Issue 22: a column whose values are nearly unique within each partition
// (a timestamp in a table partitioned by airport) is written PLAIN, as
// parquet-mr falls back on the first page when the dictionary does not pay
// (DictionaryValuesWriter.isCompressionSatisfying); the repeated columns
// keep their dictionaries, in every file of a streamed, partitioned batch.
// With a dictionary for every column, the ts chunks would be RLE_DICTIONARY.
func TestNearlyUniqueColumnsArePlain(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "origin", Type: schema.TypeString, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "dest", Type: schema.TypeString, Nullable: true},
		{Name: "delay", Type: schema.TypeLong, Nullable: true},
	}}
	const partitions, n = 20, 20_000
	base := time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{fmt.Sprintf("A%02d", i%partitions), base.Add(time.Duration(i) * time.Minute),
			[]string{"SFO", "LAX", "JFK"}[i%3], int64(i % 50)}
	}
	st := newMemStore()
	bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"origin"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, chunk := range [][][]any{rows[:n/2], rows[n/2:]} {
		if err := bw.Write(ctx, chunk); err != nil {
			t.Fatal(err)
		}
	}
	files, err := bw.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != partitions {
		t.Fatalf("%d files, want %d", len(files), partitions)
	}
	dataSch := &schema.StructType{Fields: sch.Fields[1:]}
	var back int
	for _, wf := range files {
		data, err := st.Read(ctx, wf.Path)
		if err != nil {
			t.Fatal(err)
		}
		pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		for _, rg := range pf.Metadata().RowGroups {
			for col, wantDict := range []bool{false, true, true} { // ts, dest, delay
				md := rg.Columns[col].MetaData
				if got := slices.Contains(md.Encoding, format.RLEDictionary); got != wantDict {
					t.Errorf("%s column %v: encodings %v, dictionary %v, want %v", wf.Path, md.PathInSchema, md.Encoding, got, wantDict)
				}
			}
		}
		f, err := OpenFile(ctx, st, wf.Path, wf.Size)
		if err != nil {
			t.Fatal(err)
		}
		got, err := f.ReadAll(ctx, dataSch, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		origin := *wf.PartitionValues["origin"]
		for _, r := range got {
			i := int(r[0].(time.Time).Sub(base) / time.Minute)
			if want := rows[i][1:]; fmt.Sprintf("A%02d", i%partitions) != origin || !reflect.DeepEqual(r, want) {
				t.Fatalf("%s: row %v, want %v in origin=%s", wf.Path, r, want, origin)
			}
		}
		back += len(got)
	}
	if back != n {
		t.Errorf("%d rows back, want %d", back, n)
	}
}
