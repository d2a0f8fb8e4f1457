package source

import (
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/schema"
)

// TestParquetChunkRowsByBytes: Options.StreamChunkBytes cuts a streamed
// Parquet chunk to its bytes over the schema's estimated row width (8 a
// fixed-width value, 32 a string, 64 a nested one), never below
// minStreamChunkRows nor above StreamChunkRows; without it (or without a
// schema) StreamChunkRows alone.
func TestParquetChunkRowsByBytes(t *testing.T) {
	fields := func(n int, typ schema.DataType) []schema.StructField {
		var fs []schema.StructField
		for i := range n {
			fs = append(fs, schema.StructField{Name: fmt.Sprintf("c%d", i), Type: typ, Nullable: true})
		}
		return fs
	}
	flights := &schema.StructType{Fields: append(fields(3, schema.TypeLong), fields(2, schema.TypeString)...)} // 88 bytes a row
	wide := &schema.StructType{Fields: fields(100, schema.TypeString)}                                         // 3,200
	nested := &schema.StructType{Fields: fields(1, &schema.ArrayType{ElementType: schema.TypeLong})}           // 64
	for _, c := range []struct {
		name  string
		sch   *schema.StructType
		rows  int
		bytes int64
		want  int
	}{
		{"rows bound", flights, 1 << 17, 16 << 20, 1 << 17},
		{"bytes bound", flights, 1 << 20, 16 << 20, (16 << 20) / 88},
		{"wide schema", wide, 1 << 17, 16 << 20, (16 << 20) / 3200},
		{"at least the minimum", wide, 1 << 17, 1 << 20, minStreamChunkRows},
		{"nested", nested, 1 << 20, 1 << 20, (1 << 20) / 64},
		{"no byte bound", wide, 1 << 17, 0, 1 << 17},
		{"no schema", nil, 1 << 15, 16 << 20, 1 << 15},
		{"rows below the minimum stay", flights, 100, 1 << 10, 100},
	} {
		s := &FileSource{opts: Options{StreamChunkRows: c.rows, StreamChunkBytes: c.bytes}}
		if got := s.parquetChunkRows(c.sch); got != c.want {
			t.Errorf("%s: %d rows, want %d", c.name, got, c.want)
		}
	}
}
