package parquetio

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// BenchmarkVectorValues builds and adds to the statistics the values of a
// 3-letter airport code column and a long column of 64Ki rows, 512 at a
// time, as writeLanePre does for an unpartitioned columnar chunk
// (ns/op per 64Ki values).
func BenchmarkVectorValues(b *testing.B) {
	const rows = 1 << 16
	rng := rand.New(rand.NewPCG(1, 2))
	codes := make([]string, 300)
	for i := range codes {
		codes[i] = fmt.Sprintf("%c%c%c", 'A'+rng.IntN(26), 'A'+rng.IntN(26), 'A'+rng.IntN(26))
	}
	str, long := schema.NewVector(schema.VecString, rows), schema.NewVector(schema.VecInt64, rows)
	for i := range rows {
		str.String[i] = codes[rng.IntN(len(codes))]
		long.Int64[i] = rng.Int64N(3000) - 100
	}
	fast := levelsMirrorOK()
	for _, c := range []struct {
		name string
		n    *wnode
		v    *schema.Vector
	}{
		{"string", &wnode{leaf: lkString, def: 1, col: 3}, &str},
		{"long", &wnode{leaf: lkLong, def: 1, col: 1}, &long},
	} {
		b.Run(c.name, func(b *testing.B) {
			col := make([]parquet.Value, 0, writeChunkRows)
			var st colStats
			for b.Loop() {
				for lo := 0; lo < rows; lo += writeChunkRows {
					col = vectorValues(c.n, c.v, nil, lo, lo+writeChunkRows, col, &st, fast)
				}
			}
		})
	}
}
