package parquetio

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// edgeStrings are strings vectorValues's prefix ordering must get right:
// empty, zero and 0xff bytes, 8-byte prefixes shared, differences past
// byte 8, invalid UTF-8, and strings longer than the 32-character stats
// prefix (multi-byte characters and U+10FFFF among them).
var edgeStrings = []string{"", "\x00", "\x00\x00", "a", "a\x00", "abcdefg", "abcdefgh", "abcdefgh\x00", "abcdefghi", "abcdefgg\xff",
	"\xff", "\xff\xff\xff\xff\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\x00", "\xc3\x28", "\xed\xa0\x80", "\x80",
	strings.Repeat("é", 40), strings.Repeat("é", 40) + "a", strings.Repeat("a", 32) + "\U0010FFFF\U0010FFFF", strings.Repeat("z", 31) + "\U0001F600x",
	strings.Repeat("\U0010FFFF", 70), "SFO", "YAK"}

var edgeDoubles = []float64{math.NaN(), math.Copysign(0, -1), 0, math.Inf(1), math.Inf(-1), math.MaxFloat64, -math.MaxFloat64,
	math.SmallestNonzeroFloat64, 1.5, -2.25}

var edgeLongs = []int64{math.MinInt64, math.MaxInt64, 0, -1, 1, math.MinInt32, math.MaxInt32}

// readbackSchema has every pass-through kind, nullable and required, and a
// string partition column p.
var readbackSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "s", Type: schema.TypeString, Nullable: true},
	{Name: "r", Type: schema.TypeString},
	{Name: "l", Type: schema.TypeLong, Nullable: true},
	{Name: "i", Type: schema.TypeInteger, Nullable: true},
	{Name: "d", Type: schema.TypeDouble, Nullable: true},
	{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
	{Name: "ntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	{Name: "p", Type: schema.TypeString, Nullable: true},
}}

// readbackChunk is n rows of edge values; mode picks the chunk's shape:
// "allnull" (every nullable data column null), "nonull", "mixed".
func readbackChunk(rng *rand.Rand, n int, mode string, micros bool) schema.ColumnChunk {
	c := schema.ColumnChunk{Rows: n, Vectors: make([]schema.Vector, len(readbackSchema.Fields))}
	for j, f := range readbackSchema.Fields {
		k := schema.KindOf(f.Type)
		if micros && isTimestamp(f.Type) {
			k = schema.VecMicros
		}
		c.Vectors[j] = schema.NewVector(k, n)
	}
	str := func() string {
		if rng.IntN(3) == 0 {
			b := make([]byte, rng.IntN(12))
			for i := range b {
				b[i] = []byte{0, 1, 'a', 0x7f, 0x80, 0xff}[rng.IntN(6)]
			}
			return string(b)
		}
		return edgeStrings[rng.IntN(len(edgeStrings))]
	}
	t0 := time.Date(1969, 12, 31, 23, 59, 59, 0, time.UTC)
	for r := range n {
		null := func(j int) bool {
			if mode == "allnull" || (mode == "mixed" && rng.IntN(4) == 0) {
				c.Vectors[j].SetNull(r)
				return true
			}
			return false
		}
		if !null(0) {
			c.Vectors[0].String[r] = str()
		}
		c.Vectors[1].String[r] = str()
		if !null(2) {
			c.Vectors[2].Int64[r] = edgeLongs[rng.IntN(len(edgeLongs))]
		}
		if !null(3) {
			c.Vectors[3].Int64[r] = []int64{math.MinInt32, math.MaxInt32, 0, -1}[rng.IntN(4)]
		}
		if !null(4) {
			c.Vectors[4].Float64[r] = edgeDoubles[rng.IntN(len(edgeDoubles))]
		}
		for _, j := range []int{5, 6} {
			if null(j) {
				continue
			}
			t := t0.Add(time.Duration(rng.Int64N(3e6)-1e6) * time.Microsecond)
			if micros {
				c.Vectors[j].Int64[r] = t.UnixMicro()
			} else {
				c.Vectors[j].Any[r] = t
			}
		}
		if rng.IntN(5) == 0 {
			c.Vectors[7].SetNull(r)
		} else {
			c.Vectors[7].String[r] = []string{"x", "y", "z"}[rng.IntN(3)]
		}
	}
	return c
}

// TestWriteColumnsStatsReadBack: files written from chunks of edge values
// (see edgeStrings, edgeDoubles, edgeLongs; chunk lengths that are not
// multiples of 512, chunks all null; timestamps as time.Time or micros),
// column-wise (vectorValues, with and without the layout mirror) and as
// records, unpartitioned and partitioned, in one file or rolled over many
// with row groups of 777 rows and 4 indexed columns, hold the values
// written, and their statistics are the ones computed value by value
// (colStats.add*) from the files as parquet-go's reader reads them back.
// Fails if a string tying a bound's 8-byte prefix is skipped, a range's
// nulls are not set, or doubles' bounds come from their bits.
func TestWriteColumnsStatsReadBack(t *testing.T) {
	for _, parts := range [][]string{nil, {"p"}} {
		for _, micros := range []bool{false, true} {
			for _, path := range []string{"columns", "columns-nomirror", "rows"} {
				if path == "rows" && micros {
					continue // records hold time.Time
				}
				for _, opts := range []WriteOptions{{RowGroupRows: 3000}, {RowGroupRows: 777, TargetFileSizeBytes: 24 << 10, NumIndexedCols: 4}} {
					opts.PartitionColumns = parts
					t.Run(fmt.Sprint(parts, micros, path, opts.RowGroupRows), func(t *testing.T) { testStatsReadBack(t, opts, micros, path) })
				}
			}
		}
	}
}

// testStatsReadBack writes the chunks through path: "columns"
// (WriteColumns), "columns-nomirror" (the same without the layout mirror),
// "rows" (Write of their records: the row shredder, and a partitioned
// batch shredded ahead, leafStats).
func testStatsReadBack(t *testing.T, opts WriteOptions, micros bool, path string) {
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(21, 22))
	var chunks []schema.ColumnChunk
	for i, n := range []int{1, 511, 513, 1000, 3, 1537, 700, 2, 4099} {
		mode := []string{"mixed", "nonull", "allnull"}[i%3]
		chunks = append(chunks, readbackChunk(rng, n, mode, micros))
	}
	st := newMemStore()
	bw, err := NewBatchWriter(st, readbackSchema, opts)
	if err != nil {
		t.Fatal(err)
	}
	bw.lay.plan.fastLevels = path != "columns-nomirror"
	for i, c := range chunks {
		if path == "rows" {
			err = bw.Write(ctx, vectorRows(readbackSchema, c))
		} else {
			if !bw.columnsFit(c) {
				t.Fatalf("chunk %d does not take the pass-through", i)
			}
			err = bw.WriteColumns(ctx, c)
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	plan := bw.lay.plan
	files, err := bw.Close(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if opts.TargetFileSizeBytes > 0 && len(files) < 8 {
		t.Fatalf("%d files: want the batch rolled over several", len(files))
	}
	checkReadBack(t, st, files, plan, readbackSchema, opts.PartitionColumns, chunks)
}

// checkReadBack reads files (written from chunks of sch, partitioned by
// parts: at most one string column) back with parquet-go's reader and
// checks that each partition holds its rows of chunks in order and that
// each file's statistics are those computed value by value from what is
// read back (colStats.add*, statsJSON).
func checkReadBack(t *testing.T, st *memStore, files []WrittenFile, plan *writePlan, sch *schema.StructType, parts []string, chunks []schema.ColumnChunk) {
	t.Helper()
	// want[key]: the rows of each partition, in order, the data columns'
	// values as parquet stores them (doubles as bits, timestamps as micros).
	want := map[string][][]any{}
	for _, c := range chunks {
		for r := range c.Rows {
			key := "*"
			var row []any
			for j, f := range sch.Fields {
				v := &c.Vectors[j]
				null := v.Null != nil && v.Null[r]
				if slices.Contains(parts, f.Name) {
					key = "<null>"
					if !null {
						key = v.String[r]
					}
					continue
				}
				switch {
				case null:
					row = append(row, nil)
				case v.Kind == schema.VecString:
					row = append(row, v.String[r])
				case v.Kind == schema.VecFloat64:
					row = append(row, math.Float64bits(v.Float64[r]))
				case v.Kind == schema.VecAny:
					x := v.Any[r].(time.Time)
					if f.Type == schema.TypeTimestampNTZ {
						x = ntzWall(x)
					}
					row = append(row, x.UnixMicro())
				default:
					row = append(row, v.Int64[r])
				}
			}
			want[key] = append(want[key], row)
		}
	}
	got := map[string][][]any{}
	for _, wf := range files {
		key := "*"
		for _, p := range parts {
			key = "<null>"
			if v := wf.PartitionValues[p]; v != nil {
				key = *v
			}
		}
		b := readAllBytes(t, st, wf.Path)
		pf, err := parquet.OpenFile(bytes.NewReader(b), int64(len(b)))
		if err != nil {
			t.Fatal(err)
		}
		cols := pf.Schema().Columns()
		stats := make([]colStats, len(plan.stats))
		rd := parquet.NewReader(pf)
		buf := make([]parquet.Row, 100)
		var nrec int64
		for {
			n, err := rd.ReadRows(buf)
			for _, row := range buf[:n] {
				nrec++
				var wr []any
				for _, v := range row {
					name := cols[v.Column()][0]
					i := slices.IndexFunc(plan.fields, func(x *wnode) bool { return x.name == name })
					if i < 0 {
						t.Fatalf("column %q not in the plan", name)
					}
					fn := plan.fields[i]
					cs := &colStats{}
					if fn.stat >= 0 {
						cs = &stats[fn.stat]
					}
					if v.IsNull() {
						cs.nulls++
						wr = append(wr, nil)
						continue
					}
					switch fn.leaf {
					case lkString:
						s := string(v.ByteArray())
						cs.addString(s)
						wr = append(wr, s)
					case lkDouble:
						cs.addFloat(v.Double())
						wr = append(wr, math.Float64bits(v.Double()))
					case lkInt:
						cs.addInt(int64(v.Int32()))
						wr = append(wr, int64(v.Int32()))
					default:
						cs.addInt(v.Int64())
						wr = append(wr, v.Int64())
					}
				}
				got[key] = append(got[key], wr)
			}
			if err != nil {
				break
			}
		}
		rd.Close()
		wantStats, err := statsJSON(plan, stats, nrec)
		if err != nil {
			t.Fatal(err)
		}
		if wf.Stats != wantStats || wf.NumRecords != nrec {
			t.Errorf("%s: stats\n%s\nread back and computed value by value\n%s", wf.Path, wf.Stats, wantStats)
		}
	}
	if len(got) != len(want) {
		t.Fatalf("%d partitions read back, want %d", len(got), len(want))
	}
	for k, w := range want {
		g := got[k]
		if len(g) != len(w) {
			t.Fatalf("partition %s: %d rows read back, want %d", k, len(g), len(w))
		}
		for i := range w {
			if !slices.Equal(g[i], w[i]) {
				t.Fatalf("partition %s, row %d: read back %v, want %v", k, i, g[i], w[i])
			}
		}
	}
}

// TestColumnsReadWriteReadBack: a file of edge values in small pages, read
// column-wise (each page's buffers released before the next,
// colStream.nextPage) as its own types and widened (int -> long, float ->
// double), timestamps as micros, is written column-wise chunk by chunk,
// unpartitioned and partitioned; the files written hold the source's
// values and the statistics computed from them (checkReadBack), and the
// chunks read, kept to the end, still hold the source's values.
func TestColumnsReadWriteReadBack(t *testing.T) {
	type row struct {
		S  *string    `parquet:"s,optional,dict"`
		SP *string    `parquet:"sp,optional,plain"`
		R  string     `parquet:"r,plain"`
		L  *int64     `parquet:"l,optional"`
		I  *int32     `parquet:"i,optional"`
		F  *float32   `parquet:"f,optional"`
		D  *float64   `parquet:"d,optional,plain"`
		Us *time.Time `parquet:"us,optional,timestamp(microsecond)"`
		Ms *time.Time `parquet:"ms,optional,timestamp(millisecond)"`
		P  *string    `parquet:"p,optional"`
	}
	const n = 6000
	rng := rand.New(rand.NewPCG(23, 24))
	src := make([]row, n)
	t0 := time.Date(1969, 12, 31, 23, 59, 0, 0, time.UTC)
	for k := range src {
		r := &src[k]
		r.R = edgeStrings[rng.IntN(len(edgeStrings))]
		if rng.IntN(4) == 0 {
			continue // every optional column null
		}
		s, sp := edgeStrings[rng.IntN(len(edgeStrings))], fmt.Sprintf("%s-%d", edgeStrings[rng.IntN(len(edgeStrings))], k)
		l, i := edgeLongs[rng.IntN(len(edgeLongs))], []int32{math.MinInt32, math.MaxInt32, 0, -1}[rng.IntN(4)]
		f := []float32{float32(math.NaN()), float32(math.Copysign(0, -1)), 0, float32(math.Inf(1)), math.MaxFloat32, -1.5}[rng.IntN(6)]
		d := edgeDoubles[rng.IntN(len(edgeDoubles))]
		us := t0.Add(time.Duration(rng.Int64N(1e8)) * time.Microsecond)
		ms := t0.Add(time.Duration(rng.Int64N(1e5)) * time.Millisecond)
		p := []string{"x", "y", "z"}[rng.IntN(3)]
		r.S, r.SP, r.L, r.I, r.F, r.D, r.Us, r.Ms, r.P = &s, &sp, &l, &i, &f, &d, &us, &ms, &p
		if rng.IntN(3) == 0 {
			r.S, r.D, r.P = nil, nil, nil
		}
	}
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[row](&buf, parquet.PageBufferSize(512))
	for lo := 0; lo < n; lo += 1000 {
		if _, err := w.Write(src[lo:min(lo+1000, n)]); err != nil {
			t.Fatal(err)
		}
	}
	f := closeAndOpen(t, w, &buf, "src.parquet")
	same := &schema.StructType{Fields: []schema.StructField{
		{Name: "s", Type: schema.TypeString, Nullable: true},
		{Name: "sp", Type: schema.TypeString, Nullable: true},
		{Name: "r", Type: schema.TypeString},
		{Name: "l", Type: schema.TypeLong, Nullable: true},
		{Name: "i", Type: schema.TypeInteger, Nullable: true},
		{Name: "d", Type: schema.TypeDouble, Nullable: true},
		{Name: "us", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ms", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "p", Type: schema.TypeString, Nullable: true},
	}}
	widened := &schema.StructType{Fields: slices.Clone(same.Fields)}
	widened.Fields[4].Type = schema.TypeLong                                                                                  // int -> long
	widened.Fields = slices.Insert(widened.Fields, 5, schema.StructField{Name: "f", Type: schema.TypeDouble, Nullable: true}) // float -> double
	for _, sch := range []*schema.StructType{same, widened} {
		// The source's values as the vectors sch's read gives them.
		wantChunk := schema.ColumnChunk{Rows: n, Vectors: make([]schema.Vector, len(sch.Fields))}
		for j, fd := range sch.Fields {
			k := schema.KindOf(fd.Type)
			if isTimestamp(fd.Type) {
				k = schema.VecMicros
			}
			v := schema.NewVector(k, n)
			for r := range src {
				x := &src[r]
				y := map[string]any{"s": deref(x.S), "sp": deref(x.SP), "r": x.R, "l": deref(x.L), "i": deref(x.I),
					"f": deref(x.F), "d": deref(x.D), "us": deref(x.Us), "ms": deref(x.Ms), "p": deref(x.P)}[fd.Name]
				if err := v.Set(r, y); err != nil {
					t.Fatal(err)
				}
			}
			wantChunk.Vectors[j] = v
		}
		for _, parts := range [][]string{nil, {"p"}} {
			t.Run(fmt.Sprint(len(sch.Fields), parts), func(t *testing.T) {
				ctx := context.Background()
				st := newMemStore()
				bw, err := NewBatchWriter(st, sch, WriteOptions{PartitionColumns: parts, RowGroupRows: 2500})
				if err != nil {
					t.Fatal(err)
				}
				var read []schema.ColumnChunk
				for c, err := range f.Columns(ctx, sch, ReadOptions{TimestampMicros: true}, 700) {
					if err != nil {
						t.Fatal(err)
					}
					if !bw.columnsFit(c) {
						t.Fatalf("chunk %d does not take the pass-through", len(read))
					}
					if err := bw.WriteColumns(ctx, c); err != nil {
						t.Fatal(err)
					}
					read = append(read, c)
				}
				plan := bw.lay.plan
				files, err := bw.Close(ctx)
				if err != nil {
					t.Fatal(err)
				}
				checkReadBack(t, st, files, plan, sch, parts, []schema.ColumnChunk{wantChunk})
				r := 0
				for _, c := range read {
					for k := range c.Rows {
						for j, fd := range sch.Fields {
							g, w := c.Vectors[j].Value(k, fd.Type), wantChunk.Vectors[j].Value(r, fd.Type)
							if g, ok := g.(float64); ok && g != g {
								if w, ok := w.(float64); ok && w != w {
									continue
								}
							}
							if !reflect.DeepEqual(g, w) {
								t.Fatalf("row %d, %s: read %v, source %v", r, fd.Name, g, w)
							}
						}
						r++
					}
				}
			})
		}
	}
}

// deref is *p, or nil when p is nil.
func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}
