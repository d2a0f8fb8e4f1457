package parquetio

// Hostile-input tests (issue #9): schemas nested or widened past what Parquet
// can hold, and a batch with 100,000 partitions. Each either succeeds with a
// measured peak heap under a stated bound or fails with ErrSchema naming the
// column; none may panic (parquet-go panics on levels > 255 and on more than
// 65,535 leaf columns, inside the goroutine that writes the file, which no
// recover can catch). Larger sizes run with LAKESINK_BOMB_FULL=1.

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/heaptest"
	"github.com/lakesink/lakesink/schema"
)

func bombFull() bool { return os.Getenv("LAKESINK_BOMB_FULL") == "1" }

const mib = 1 << 20

// nest builds a schema JSON of depth levels around a long leaf: wrap
// returns the opening of one level (the closing is its count of '}' and ']').
func nest(depth int, open, close string) string {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[{"name":"c","nullable":true,"metadata":{},"type":`)
	for range depth {
		b.WriteString(open)
	}
	b.WriteString(`"long"`)
	for range depth {
		b.WriteString(close)
	}
	b.WriteString(`}]}`)
	return b.String()
}

const (
	structOpen  = `{"type":"struct","fields":[{"name":"s","nullable":true,"metadata":{},"type":`
	structReq   = `{"type":"struct","fields":[{"name":"s","nullable":false,"metadata":{},"type":`
	structClose = `}]}`
	arrayNull   = `{"type":"array","containsNull":true,"elementType":`
	arrayReq    = `{"type":"array","containsNull":false,"elementType":`
	mapVal      = `{"type":"map","keyType":"string","valueContainsNull":false,"valueType":`
	oneClose    = `}`
)

// nestValue builds the Go value of one row for a nest schema: levels of a
// struct ([]any{v}), an array ([]any{v}) or a map ([]MapEntry{{"k", v}}).
func nestValue(depth int, kind string) any {
	var v any = int64(7)
	for range depth {
		if kind == "map" {
			v = []schema.MapEntry{{Key: "k", Value: v}}
		} else {
			v = []any{v}
		}
	}
	return v
}

// TestBombDeepSchema: for each nesting shape, the deepest schema Parquet can
// hold is written and read back, one level more is refused by
// ValidateForWrite and WriteFiles with ErrSchema naming the column and the
// limit (before: parquet-go panicked "definition level out of range" in a
// writer goroutine, killing the process), and schemas far deeper are
// refused at parse time without a stack or memory blow-up.
func TestBombDeepSchema(t *testing.T) {
	ctx := context.Background()
	// The column c is one Parquet element; each level under it adds one
	// (a struct field) or two (an array's list/element, a map's
	// key_value/value): the leaf may lie 255 elements deep.
	for _, tc := range []struct {
		name        string
		open, close string
		kind        string
		maxOK       int // deepest writable
	}{
		{"optional structs", structOpen, structClose, "struct", 254},
		{"required structs", structReq, structClose, "struct", 254},
		{"nullable arrays", arrayNull, oneClose, "array", 127},
		{"arrays", arrayReq, oneClose, "array", 127},
		{"maps", mapVal, oneClose, "map", 127},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, depth := range []int{tc.maxOK, tc.maxOK + 1} {
				s, err := schema.ParseSchema([]byte(nest(depth, tc.open, tc.close)))
				if err != nil {
					t.Fatalf("depth %d: parse: %v", depth, err)
				}
				batch := &schema.Batch{Schema: s, Rows: [][]any{{nestValue(depth, tc.kind)}}}
				st := newMemStore()
				files, err := WriteFiles(ctx, st, batch, WriteOptions{})
				if depth == tc.maxOK {
					if err != nil {
						t.Fatalf("depth %d (the limit): %v", depth, err)
					}
					f, err := OpenFile(ctx, st, files[0].Path, files[0].Size)
					if err != nil {
						t.Fatal(err)
					}
					rows, err := f.ReadAll(ctx, s, ReadOptions{})
					if err != nil || len(rows) != 1 || fmt.Sprint(rows[0]) != fmt.Sprint(batch.Rows[0]) {
						t.Fatalf("depth %d read back %v (err %v)", depth, rows, err)
					}
					continue
				}
				if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "lies 256 Parquet levels deep") && !strings.Contains(err.Error(), "lies 257 Parquet levels deep") || !strings.Contains(err.Error(), "column c.") {
					t.Fatalf("depth %d: WriteFiles = %v, want ErrSchema naming column c and its depth", depth, err)
				}
				if verr := schema.ValidateForWrite(s); !errors.Is(verr, schema.ErrSchema) {
					t.Fatalf("depth %d: ValidateForWrite = %v", depth, verr)
				}
				if _, perr := ParquetSchema(s, SchemaOptions{}); !errors.Is(perr, schema.ErrSchema) {
					t.Fatalf("depth %d: ParquetSchema = %v", depth, perr)
				}
				if len(st.keys()) != 0 {
					t.Fatalf("refused write left %d objects", len(st.keys()))
				}
			}
		})
	}

	for _, depth := range []int{schema.MaxSchemaDepth + 1, 3000, 100_000} {
		for _, shape := range []struct{ name, open, close string }{
			{"structs", structOpen, structClose}, {"arrays", arrayNull, oneClose},
		} {
			t.Run(fmt.Sprintf("parse %d %s", depth, shape.name), func(t *testing.T) {
				js := []byte(nest(depth, shape.open, shape.close))
				var err error
				peak := heaptest.Peak(func() { _, err = schema.ParseSchema(js) })
				// encoding/json stops at 10,000 nested JSON values; below
				// that MaxSchemaDepth does. Either way ErrSchema, and the
				// heap stays a small multiple of the input (parsed into
				// map[string]any first): bound 40× the input + 16 MiB.
				if !errors.Is(err, schema.ErrSchema) || !(strings.Contains(err.Error(), "nested deeper than 1000") || strings.Contains(err.Error(), "exceeded max depth")) {
					t.Fatalf("err = %v, want ErrSchema for nesting", err)
				}
				if bound := uint64(40*len(js) + 16*mib); peak > bound {
					t.Errorf("input %d KiB: peak heap %.1f MiB > bound %.1f MiB", len(js)>>10, float64(peak)/mib, float64(bound)/mib)
				}
			})
		}
	}

	t.Run("constructed beyond MaxSchemaDepth", func(t *testing.T) {
		// A schema built in Go (not parsed) 5,000 arrays deep: refused by
		// the cheap walk before any column path is built.
		var typ schema.DataType = schema.TypeLong
		for range 5000 {
			typ = &schema.ArrayType{ElementType: typ}
		}
		s := &schema.StructType{Fields: []schema.StructField{{Name: "c", Type: typ}}}
		var err error
		peak := heaptest.Peak(func() { err = schema.ValidateForWrite(s) })
		if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "nested deeper than 1000") {
			t.Fatalf("err = %v", err)
		}
		if peak > 16*mib {
			t.Errorf("peak heap %.1f MiB > 16 MiB", float64(peak)/mib)
		}
	})
}

// TestBombWideSchema: more leaf columns than a Parquet file can index
// (65,535) is ErrSchema from ValidateForWrite and WriteFiles, not a
// parquet-go panic; exactly the limit writes.
func TestBombWideSchema(t *testing.T) {
	ctx := context.Background()
	wide := func(n int) *schema.StructType {
		// 1,000 structs of leaves, so that the schema is wide but each
		// struct has a modest field list.
		s := &schema.StructType{}
		for g := 0; n > 0; g++ {
			k := min(n, 1000)
			inner := &schema.StructType{Fields: make([]schema.StructField, k)}
			for i := range k {
				inner.Fields[i] = schema.StructField{Name: fmt.Sprintf("f%d", i), Type: schema.TypeInteger, Nullable: true}
			}
			s.Fields = append(s.Fields, schema.StructField{Name: fmt.Sprintf("g%d", g), Type: inner, Nullable: true})
			n -= k
		}
		return s
	}
	s := wide(schema.MaxLeafColumns + 1)
	err := schema.ValidateForWrite(s)
	if !errors.Is(err, schema.ErrSchema) || !strings.Contains(err.Error(), "more than 65535 leaf columns") || !strings.Contains(err.Error(), "column g65.f535") {
		t.Fatalf("65,536 leaves: %v", err)
	}
	st := newMemStore()
	if _, err := WriteFiles(ctx, st, &schema.Batch{Schema: s, Rows: [][]any{make([]any, len(s.Fields))}}, WriteOptions{}); !errors.Is(err, schema.ErrSchema) {
		t.Fatalf("WriteFiles with 65,536 leaves: %v", err)
	}
	if !bombFull() {
		return // writing 65,535 columns takes ~10 s
	}
	s = wide(schema.MaxLeafColumns)
	start := time.Now()
	var files []WrittenFile
	peak := heaptest.Peak(func() {
		files, err = WriteFiles(ctx, st, &schema.Batch{Schema: s, Rows: [][]any{make([]any, len(s.Fields))}}, WriteOptions{})
	})
	if err != nil || len(files) != 1 {
		t.Fatalf("65,535 leaves: %v", err)
	}
	t.Logf("one row of 65,535 leaf columns: %v, peak heap %.1f MiB, file %d KiB", time.Since(start).Round(time.Millisecond), float64(peak)/mib, files[0].Size>>10)
}

// TestBombManyPartitions: one batch whose partition column has 100,000
// distinct values (one row each) becomes 100,000 files. WriteFiles groups
// rows by partition and writes WriteOptions.Workers partitions at once, each
// FileWriter closed before its worker takes the next partition, so the heap
// holds the batch, the groups, the results (one WrittenFile per partition,
// with its stats JSON) and Workers open writers. Bound: 4 KiB per partition
// plus 64 MiB for the writers (measured: ~2.7 KiB per partition at 20,000
// and 100,000, ~100 µs per partition: linear); time is reported (the store
// is in memory).
func TestBombManyPartitions(t *testing.T) {
	n := 5_000 // the bound is per partition; 100,000 with LAKESINK_BOMB_FULL=1
	if bombFull() {
		n = 100_000
	}
	ctx := context.Background()
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "part", Type: schema.TypeString, Nullable: true},
	}}
	rows := make([][]any, n)
	for i := range rows {
		rows[i] = []any{int64(i), fmt.Sprintf("p%06d", i)}
	}
	st := newMemStore()
	var files []WrittenFile
	var err error
	start := time.Now()
	peak := heaptest.Peak(func() {
		files, err = WriteFiles(ctx, st, &schema.Batch{Schema: sch, Rows: rows}, WriteOptions{PartitionColumns: []string{"part"}})
	})
	elapsed := time.Since(start)
	if err != nil {
		t.Fatal(err)
	}
	if len(files) != n || len(st.keys()) != n {
		t.Fatalf("%d files, %d objects, want %d", len(files), len(st.keys()), n)
	}
	var stored int64
	for _, f := range files {
		stored += f.Size
	}
	// The files themselves are in the memory store: subtract them.
	heap := int64(peak) - stored
	t.Logf("%d partitions: %v (%.0f µs/partition), peak heap %.1f MiB minus %.1f MiB of stored files = %.1f MiB (%.0f B/partition)",
		n, elapsed.Round(time.Millisecond), float64(elapsed.Microseconds())/float64(n),
		float64(peak)/mib, float64(stored)/mib, float64(heap)/mib, float64(heap)/float64(n))
	if bound := int64(4096*n + 64*mib); heap > bound {
		t.Errorf("heap %.1f MiB > bound %.1f MiB", float64(heap)/mib, float64(bound)/mib)
	}
}
