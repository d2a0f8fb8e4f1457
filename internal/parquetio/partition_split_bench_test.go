package parquetio

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// dictChunk is n rows of (code string, l long) whose codes are drawn from
// k 3-letter values cut from one allocation, as the columnar reader hands
// out a dictionary page's strings (cutStrings).
func dictChunk(n, k int) schema.ColumnChunk {
	var sb strings.Builder
	for i := range k {
		fmt.Fprintf(&sb, "%c%c%c", 'A'+i/26/26%26, 'A'+i/26%26, 'A'+i%26)
	}
	all := sb.String()
	dict := make([]string, k)
	for i := range dict {
		dict[i] = all[3*i : 3*i+3]
	}
	rng := rand.New(rand.NewPCG(1, 2))
	c := schema.ColumnChunk{Rows: n, Vectors: []schema.Vector{schema.NewVector(schema.VecString, n), schema.NewVector(schema.VecInt64, n)}}
	for r := range n {
		c.Vectors[0].String[r] = dict[rng.IntN(k)]
		c.Vectors[1].Int64[r] = int64(r)
	}
	return c
}

var dictChunkSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "code", Type: schema.TypeString, Nullable: true},
	{Name: "l", Type: schema.TypeLong, Nullable: true},
}}

// BenchmarkPartitionColumnGroups: grouping a chunk of 128Ki rows by a
// string column of 229 dictionary values (the 3M flights by origin).
func BenchmarkPartitionColumnGroups(b *testing.B) {
	lay, err := newLayout(dictChunkSchema, WriteOptions{PartitionColumns: []string{"code"}}.withDefaults())
	if err != nil {
		b.Fatal(err)
	}
	c := dictChunk(1<<17, 229)
	var free [][]int
	for b.Loop() {
		groups, err := partitionColumnGroups(lay, c, &free)
		if err != nil {
			b.Fatal(err)
		}
		for _, g := range groups {
			free = append(free, g.rows[:0])
		}
	}
}

// TestPartitionColumnGroupsSharedStrings: rows whose strings share a
// dictionary's bytes, rows holding copies of the same values, empty strings
// and nulls, in one chunk, are grouped as partitionGroups groups their
// records (partitionGroupsOf's address cache neither splits a value's rows
// nor merges two values').
func TestPartitionColumnGroupsSharedStrings(t *testing.T) {
	lay, err := newLayout(dictChunkSchema, WriteOptions{PartitionColumns: []string{"code"}}.withDefaults())
	if err != nil {
		t.Fatal(err)
	}
	const n = 30_000
	c := dictChunk(n, 229)
	rng := rand.New(rand.NewPCG(5, 6))
	for r := range n {
		switch rng.IntN(10) {
		case 0:
			c.Vectors[0].String[r] = strings.Clone(c.Vectors[0].String[r])
		case 1:
			c.Vectors[0].String[r] = c.Vectors[0].String[r][:rng.IntN(3)] // a prefix shares the bytes, not the length
		case 2:
			c.Vectors[0].SetNull(r)
		}
	}
	checkGroupsMatchRecords(t, lay, dictChunkSchema, c, 229)
}

// TestChoosePlainVectorsMatchesRows: the columns choosePlainVectors writes
// PLAIN from a chunk's vectors are those choosePlainColumns picks from its
// records (vectorRows), partitioned or not, for chunks shorter and longer
// than the sample, and some columns go each way.
func TestChoosePlainVectorsMatchesRows(t *testing.T) {
	for _, part := range [][]string{nil, {"code"}} {
		lay, err := newLayout(passThroughSchema, WriteOptions{PartitionColumns: part}.withDefaults())
		if err != nil {
			t.Fatal(err)
		}
		for _, n := range []int{1, 500, dictionarySampleRows + 3000} {
			c := passThroughChunk(rand.New(rand.NewPCG(uint64(n), 9)), 0, n)
			// ts as the Parquet reader gives it (schema.VecMicros); ntz
			// stays time.Time values (the boxed path); l takes 5 values
			// (a dictionary in every partition) in the first half of the
			// sample, so that it stays dictionary-encoded only without
			// partitions.
			ts := schema.Vector{Kind: schema.VecMicros, Len: n, Null: c.Vectors[0].Null, Int64: make([]int64, n)}
			for r := range n {
				if x, ok := c.Vectors[0].Any[r].(time.Time); ok {
					ts.Int64[r] = x.UnixMicro()
				}
				if r < n/2 {
					c.Vectors[2].Int64[r] %= 5
				}
			}
			c.Vectors[0] = ts
			groups := []*partGroup{{values: map[string]*string{}}}
			if len(part) > 0 {
				if groups, err = partitionColumnGroups(lay, c, nil); err != nil {
					t.Fatal(err)
				}
			}
			want := lay.choosePlainColumns(vectorRows(passThroughSchema, c), groups, minDictionaryBytes)
			got := lay.choosePlainVectors(c, groups, minDictionaryBytes)
			if !slices.Equal(got, want) {
				t.Errorf("partition by %q, %d rows: PLAIN columns %v from the vectors, %v from the records", part, n, got, want)
			}
			if n > 1000 && (len(want) == 0 || len(want) == len(lay.plan.fields)) {
				t.Errorf("partition by %q, %d rows: PLAIN columns %v of %d: want some, not all", part, n, want, len(lay.plan.fields))
			}
		}
	}
}
