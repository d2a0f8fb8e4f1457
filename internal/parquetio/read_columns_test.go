package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
)

// columnRows reads every row group with RowGroupColumns and turns the
// vectors back into rows (Vector.Value), checking the chunk sizes and that
// typed columns come in typed vectors.
func columnRows(t *testing.T, f *File, want *schema.StructType, opts ReadOptions, max int) [][]any {
	t.Helper()
	var all [][]any
	for rg := range f.NumRowGroups() {
		got := 0
		for c, err := range f.RowGroupColumns(context.Background(), rg, want, opts, max) {
			if err != nil {
				t.Fatal(err)
			}
			vecs := c.Vectors
			if len(vecs) != len(want.Fields) {
				t.Fatalf("%d vectors for %d fields", len(vecs), len(want.Fields))
			}
			n := c.Rows
			if n == 0 || (max > 0 && n > max) {
				t.Fatalf("chunk of %d rows (max %d)", n, max)
			}
			for j, v := range vecs {
				if v.Kind != KindOf(want.Fields[j].Type) || v.Len != n || (v.Null != nil && len(v.Null) != n) {
					t.Fatalf("field %s: vector kind %d, %d values (%d nulls slots), want kind %d, %d values", want.Fields[j].Name, v.Kind, v.Len, len(v.Null), KindOf(want.Fields[j].Type), n)
				}
			}
			for r := range n {
				row := make([]any, len(vecs))
				for j := range vecs {
					row[j] = vecs[j].Value(r, want.Fields[j].Type)
				}
				all = append(all, row)
			}
			got += n
		}
		if int64(got) != f.RowGroupNumRows(rg) {
			t.Fatalf("row group %d: %d rows, want %d", rg, got, f.RowGroupNumRows(rg))
		}
	}
	return all
}

// TestRowGroupColumnsMatchRows: the columnar read gives the values of the
// row read, for every type (typed page paths, dictionary and plain pages,
// nulls, nested columns in VecAny), at chunk sizes that cut pages, with
// projections and missing columns.
func TestRowGroupColumnsMatchRows(t *testing.T) {
	const n = 10_007
	rows := chunkRows(n)
	sch := fullSchema()
	for _, c := range []struct {
		name string
		opts WriteOptions
	}{
		{"one row group", WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30}},
		{"several row groups", WriteOptions{RowGroupRows: 3000, TargetFileSizeBytes: 1 << 30}},
		{"zstd", WriteOptions{RowGroupSizeBytes: 1 << 30, TargetFileSizeBytes: 1 << 30, Compression: "zstd"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := writeChunkFile(t, rows, c.opts)
			all, err := f.ReadAll(context.Background(), sch, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, all, rows, sch)
			for _, max := range []int{1, 7, 1000, 4096, 0} {
				t.Run(fmt.Sprintf("max %d", max), func(t *testing.T) {
					assertRows(t, columnRows(t, f, sch, ReadOptions{}, max), all, sch)
				})
			}
			// Projection: reordered, a nested field, absent columns of a
			// typed and of an untyped kind.
			want := &schema.StructType{Fields: []schema.StructField{
				sch.Fields[18], sch.Fields[1], {Name: "absent_long", Type: schema.TypeLong, Nullable: true},
				sch.Fields[0], {Name: "absent_array", Type: &schema.ArrayType{ElementType: schema.TypeLong}, Nullable: true},
			}}
			exp, err := f.ReadAll(context.Background(), want, ReadOptions{})
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, columnRows(t, f, want, ReadOptions{}, 333), exp, want)
		})
	}
}

// TestRowGroupColumnsFixtures: engine-written files (Spark via DAT) read
// the same in columns as in rows.
func TestRowGroupColumnsFixtures(t *testing.T) {
	for _, name := range []string{"all_primitive_types", "nested_types"} {
		sch, _ := logInfo(t, "testdata/dat/"+name+".json")
		f := openFixture(t, "testdata/dat/"+name+".parquet")
		all, err := f.ReadAll(context.Background(), sch, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		assertRows(t, columnRows(t, f, sch, ReadOptions{}, 2), all, sch)
	}
}

// TestRowGroupColumnsSmallPages: chunks and pages cut each other at every
// offset; optional and required columns, dictionary and plain pages, and
// type widening (int -> long, int and float -> double).
func TestRowGroupColumnsSmallPages(t *testing.T) {
	type row struct {
		L   *int64   `parquet:"l,optional"`
		LP  *int64   `parquet:"lp,optional,plain"`
		R   int64    `parquet:"r"`
		I   *int32   `parquet:"i,optional,dict"`
		D   *float64 `parquet:"d,optional"`
		F   *float32 `parquet:"f,optional"`
		S   *string  `parquet:"s,optional,dict"`
		SP  *string  `parquet:"sp,optional,plain"`
		RS  string   `parquet:"rs"`
		Bol *bool    `parquet:"bo,optional"`
	}
	const n = 5000
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(256))
	for i := range n {
		r := row{R: int64(i), RS: fmt.Sprint("r", i%37)}
		if i%3 != 0 {
			l, i32, d, f, s, b := int64(i*7), int32(i%50), float64(i)/4, float32(i)/8, fmt.Sprint("s", i%23), i%2 == 0
			r.L, r.LP, r.I, r.D, r.F, r.S, r.SP, r.Bol = &l, &l, &i32, &d, &f, &s, &s, &b
		}
		if _, err := w.Write([]row{r}); err != nil {
			t.Fatal(err)
		}
	}
	f := closeAndOpen(t, w, &buf, "p.parquet")
	if pages := f.pf.Metadata().RowGroups[0].Columns[0].MetaData.NumValues; pages != n {
		t.Fatalf("%d values", pages)
	}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "l", Type: schema.TypeLong, Nullable: true},
		{Name: "lp", Type: schema.TypeLong, Nullable: true},
		{Name: "r", Type: schema.TypeLong},
		{Name: "i", Type: schema.TypeInteger, Nullable: true},
		{Name: "d", Type: schema.TypeDouble, Nullable: true},
		{Name: "f", Type: schema.TypeFloat, Nullable: true},
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "sp", Type: schema.TypeString, Nullable: true},
		{Name: "rs", Type: schema.TypeString},
		{Name: "bo", Type: schema.TypeBoolean, Nullable: true},
	}}
	// Type widening: int -> long, int -> double, float -> double.
	widened := &schema.StructType{Fields: []schema.StructField{
		{Name: "i", Type: schema.TypeLong, Nullable: true},
		{Name: "d", Type: schema.TypeDouble, Nullable: true},
		{Name: "f", Type: schema.TypeDouble, Nullable: true},
	}}
	wideInt := &schema.StructType{Fields: []schema.StructField{{Name: "i", Type: schema.TypeDouble, Nullable: true}}}
	all, err := f.ReadAll(context.Background(), sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != n || all[1][0] != int64(7) || all[0][0] != nil || all[4][6] != "s4" {
		t.Fatalf("rows read: %d, %v, %v", len(all), all[0], all[4])
	}
	for _, want := range []*schema.StructType{sch, widened, wideInt} {
		all, err := f.ReadAll(context.Background(), want, ReadOptions{})
		if err != nil {
			t.Fatal(err)
		}
		for _, max := range []int{1, 5, 97, 0} {
			assertRows(t, columnRows(t, f, want, ReadOptions{}, max), all, want)
		}
	}
}

// TestRowGroupColumnsTimestampMicros: with ReadOptions.TimestampMicros, a
// timestamp stored as INT64 micros or millis comes as a VecMicros vector
// whose values are the row read's, nulls and values before 1970 included;
// nanos and DATE days widened to timestamp_ntz stay VecAny; without the
// option every timestamp is VecAny.
func TestRowGroupColumnsTimestampMicros(t *testing.T) {
	type row struct {
		Us *time.Time `parquet:"us,optional,timestamp(microsecond)"`
		Ms *time.Time `parquet:"ms,optional,timestamp(millisecond)"`
		Ns *time.Time `parquet:"ns,optional,timestamp(nanosecond)"`
		D  *time.Time `parquet:"d,optional,date"`
		R  time.Time  `parquet:"r,timestamp(microsecond)"`
	}
	const n = 3000
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(512))
	t0 := time.Date(1969, 12, 31, 23, 0, 0, 0, time.UTC) // negative micros too
	for i := range n {
		ts := t0.Add(time.Duration(i) * 1_234_567_891 * time.Nanosecond)
		r := row{R: ts.Truncate(time.Microsecond)}
		if i%5 != 0 {
			us, ms, day := ts.Truncate(time.Microsecond), ts.Truncate(time.Millisecond), ts.Truncate(24*time.Hour)
			r.Us, r.Ms, r.Ns, r.D = &us, &ms, &ts, &day
		}
		if _, err := w.Write([]row{r}); err != nil {
			t.Fatal(err)
		}
	}
	f := closeAndOpen(t, w, &buf, "ts.parquet")
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "us", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ms", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "ns", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "d", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "r", Type: schema.TypeTimestamp},
	}}
	all, err := f.ReadAll(context.Background(), sch, ReadOptions{})
	if err != nil {
		t.Fatal(err)
	}
	for _, micros := range []bool{false, true} {
		kinds := []VectorKind{VecAny, VecAny, VecAny, VecAny, VecAny}
		if micros {
			kinds = []VectorKind{VecMicros, VecMicros, VecAny, VecAny, VecMicros}
		}
		for _, max := range []int{1, 77, 0} {
			r := 0
			for c, err := range f.Columns(context.Background(), sch, ReadOptions{TimestampMicros: micros}, max) {
				if err != nil {
					t.Fatal(err)
				}
				for j, v := range c.Vectors {
					if v.Kind != kinds[j] {
						t.Fatalf("micros %v: field %s: kind %d, want %d", micros, sch.Fields[j].Name, v.Kind, kinds[j])
					}
				}
				for k := range c.Rows {
					for j := range c.Vectors {
						got, want := c.Vectors[j].Value(k, sch.Fields[j].Type), all[r+k][j]
						if got != want && !(got != nil && want != nil && got.(time.Time).Equal(want.(time.Time))) {
							t.Fatalf("micros %v, max %d: row %d, field %s: %v, want %v", micros, max, r+k, sch.Fields[j].Name, got, want)
						}
					}
				}
				r += c.Rows
			}
			if r != n {
				t.Fatalf("%d rows, want %d", r, n)
			}
		}
	}
}

// TestColumnsReusePageBuffers: reading a column of many pages returns each
// page's buffers to parquet-go's pools before the next (colStream.nextPage),
// so the bytes allocated are about the vectors' (8 a long) and the file's,
// not those plus every decoded page's; TestRowGroupColumnsSmallPages keeps each chunk's
// strings to its end, so a value left pointing into a reused page fails it.
func TestColumnsReusePageBuffers(t *testing.T) {
	type row struct {
		L int64 `parquet:"l,plain"`
	}
	const n = 1 << 20
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(8<<10))
	rows := make([]row, n)
	for i := range rows {
		rows[i].L = int64(i) * 7919
	}
	if _, err := w.Write(rows); err != nil {
		t.Fatal(err)
	}
	f := closeAndOpen(t, w, &buf, "p.parquet")
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "l", Type: schema.TypeLong}}}
	read := func() (sum int64) {
		for c, err := range f.Columns(context.Background(), sch, ReadOptions{}, 4096) {
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range c.Vectors[0].Int64[:c.Rows] {
				sum += x
			}
		}
		return sum
	}
	want := int64(n) * (n - 1) / 2 * 7919
	if got := read(); got != want {
		t.Fatalf("sum %d, want %d", got, want)
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	read()
	runtime.ReadMemStats(&after)
	// The vectors, the row group's column chunk read at once (prefetch),
	// and a quarter of the vectors for the rest; every page's own buffers
	// would be another 8 bytes a long. Under the race detector sync.Pool
	// drops a quarter of the buffers put back, so about a quarter of the
	// pages' buffers are allocated anew: half the vectors for the rest
	// (19.5 MB measured; 26.0 MB without the release).
	vectors, file := uint64(n*8), uint64(buf.Len())
	rest := vectors / 4
	if raceEnabled {
		rest = vectors / 2
	}
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > vectors+file+rest {
		t.Errorf("reading %d longs in %d-byte pages allocated %d bytes, want at most %d (vectors) + %d (file) + %d", n, 8<<10, alloc, vectors, file, rest)
	}
}

// closeAndOpen closes w, which wrote into buf, and opens buf's bytes as the
// file name of a memStore.
func closeAndOpen(t *testing.T, w interface{ Close() error }, buf *bytes.Buffer, name string) *File {
	t.Helper()
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	if err := st.Put(context.Background(), name, buf.Bytes()); err != nil {
		t.Fatal(err)
	}
	f, err := OpenFile(context.Background(), st, name, int64(buf.Len()))
	if err != nil {
		t.Fatal(err)
	}
	return f
}
