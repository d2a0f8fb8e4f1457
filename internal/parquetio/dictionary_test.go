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
		for _, rg := range writtenRowGroups(ctx, t, st, wf.Path) {
			for col, wantDict := range []bool{false, true, true} { // ts, dest, delay
				checkDictionary(t, wf.Path, rg.Columns[col].MetaData, wantDict)
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

// Issue 22: in a partitioned batch whose first write gives each partition a
// few rows (the 3M flights by airport: ~143 of a 32,768-row chunk), a column
// with 6 new values in 7 in each partition is judged at the index width its
// file's dictionary can reach (2,048 8-byte values in a 16 KiB share: 11
// bits) and written PLAIN, while a 5-value column keeps its dictionary; no
// column chunk writes dictionary pages and then falls back to PLAIN. Judged
// at the sample's dictionary (~120 values: 7 bits), u kept its dictionary,
// which passed its share in every file and fell back (dictionary pages, then
// PLAIN ones), for rows and for column chunks alike.
func TestPartitionedDictionaryJudgedAtItsCap(t *testing.T) {
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeLong, Nullable: true},
		{Name: "u", Type: schema.TypeLong, Nullable: true},
		{Name: "c", Type: schema.TypeLong, Nullable: true},
	}}
	const parts, perWrite, writes = 40, 140, 40 // 5,600 rows a file: 4,800 values of u
	value := func(k int) (p, u, c int64) {
		part, i := k%parts, k/parts
		return int64(part), int64((i-i/7)*parts + part), int64(i % 5)
	}
	for _, columnar := range []bool{false, true} {
		t.Run(fmt.Sprintf("columnar=%v", columnar), func(t *testing.T) {
			st := newMemStore()
			bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: []string{"p"}})
			if err != nil {
				t.Fatal(err)
			}
			// Every file's shares: 16 KiB of dictionary, 8 KiB pages.
			bw.dictBudget, bw.pageBudget = minDictionaryBytes, minPageBytes
			for w := range writes {
				n := parts * perWrite
				if columnar {
					c := schema.ColumnChunk{Rows: n, Vectors: make([]schema.Vector, 3)}
					for j := range c.Vectors {
						c.Vectors[j] = schema.Vector{Kind: schema.VecInt64, Len: n, Int64: make([]int64, n)}
					}
					for r := range n {
						c.Vectors[0].Int64[r], c.Vectors[1].Int64[r], c.Vectors[2].Int64[r] = value(w*n + r)
					}
					err = bw.WriteColumns(ctx, c)
				} else {
					rows := make([][]any, n)
					for r := range rows {
						p, u, c := value(w*n + r)
						rows[r] = []any{p, u, c}
					}
					err = bw.Write(ctx, rows)
				}
				if err != nil {
					t.Fatal(err)
				}
			}
			files, err := bw.Close(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(files) != parts {
				t.Fatalf("%d files, want %d", len(files), parts)
			}
			var chunks, fellBack int
			for _, wf := range files {
				for _, rg := range writtenRowGroups(ctx, t, st, wf.Path) {
					for col, wantDict := range []bool{false, true} { // u, c
						md := rg.Columns[col].MetaData
						chunks++
						var dictPages, plainPages int
						for _, es := range md.EncodingStats {
							if es.PageType == format.DataPage && es.Encoding == format.RLEDictionary {
								dictPages += int(es.Count)
							}
							if es.PageType == format.DataPage && es.Encoding == format.Plain {
								plainPages += int(es.Count)
							}
						}
						if dictPages > 0 && plainPages > 0 {
							fellBack++
						}
						checkDictionary(t, wf.Path, md, wantDict)
					}
				}
				f, err := OpenFile(ctx, st, wf.Path, wf.Size)
				if err != nil {
					t.Fatal(err)
				}
				got, err := f.ReadAll(ctx, &schema.StructType{Fields: sch.Fields[1:]}, ReadOptions{})
				if err != nil {
					t.Fatal(err)
				}
				if len(got) != perWrite*writes {
					t.Fatalf("%s: %d rows back, want %d", wf.Path, len(got), perWrite*writes)
				}
				part := *wf.PartitionValues["p"]
				for i, r := range got {
					var p int64
					fmt.Sscan(part, &p)
					_, u, c := value(i*parts + int(p))
					if r[0] != u || r[1] != c {
						t.Fatalf("%s row %d: %v, want [%d %d]", wf.Path, i, r, u, c)
					}
				}
			}
			if fellBack != 0 {
				t.Errorf("%d of %d column chunks wrote dictionary pages and then fell back to PLAIN, want 0", fellBack, chunks)
			}
		})
	}
}

// writtenRowGroups is the footer's row groups of the file at path in st.
func writtenRowGroups(ctx context.Context, t *testing.T, st *memStore, path string) []format.RowGroup {
	t.Helper()
	data, err := st.Read(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	pf, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	return pf.Metadata().RowGroups
}

// checkDictionary fails t unless the column chunk md of the file at path
// has a dictionary-encoded page exactly when wantDict.
func checkDictionary(t *testing.T, path string, md format.ColumnMetaData, wantDict bool) {
	t.Helper()
	if got := slices.Contains(md.Encoding, format.RLEDictionary); got != wantDict {
		t.Errorf("%s column %v: encodings %v, dictionary %v, want %v", path, md.PathInSchema, md.Encoding, got, wantDict)
	}
}
