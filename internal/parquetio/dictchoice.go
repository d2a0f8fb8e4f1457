package parquetio

import (
	"math"
	"math/bits"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// dictionarySampleRows is how many rows of a batch's first write judge
// whether its columns are dictionary-encoded (choosePlainColumns): 65,536
// rows, about parquet-mr's first page of an 8-byte column (1 MiB,
// parquet.page.size) for a whole partition.
const dictionarySampleRows = 1 << 16

// choosePlainColumns decides, once per batch from the first rows written
// (at most dictionarySampleRows of rows, grouped by partition as groups
// say), which top-level primitive data columns are written PLAIN instead of
// RLE_DICTIONARY, as parquet-mr decides on a column chunk's first page
// (FallbackValuesWriter.getBytes with
// DictionaryValuesWriter.isCompressionSatisfying: keep the dictionary only
// when the encoded indexes plus the dictionary are smaller than the raw
// values; else fall back to PLAIN for the whole chunk). Here each
// partition's sample is that partition's first page: a column whose values
// are nearly unique within a partition (timestamps in a table partitioned
// by airport) gets no dictionary, which would take more bytes than the
// values and hold a hash table per open file. Columns the sample leaves
// dictionary-encoded still fall back past 1 MiB of dictionary
// (DictionaryOptions). It returns the data-field indexes (plan order) to
// write PLAIN; nil when every column keeps its dictionary.
func (l *layout) choosePlainColumns(rows [][]any, groups []*partGroup) []int {
	n := min(len(rows), dictionarySampleRows)
	if n == 0 {
		return nil
	}
	// The sample's rows by partition: group[r] for r < n.
	group := make([]int32, n)
	if len(l.partIdx) > 0 {
		for gi, g := range groups {
			for _, r := range g.rows {
				if r < n {
					group[r] = int32(gi)
				}
			}
		}
	}
	type dkey struct {
		g int32
		u uint64
		s string
	}
	seen := map[dkey]struct{}{}
	distinct := make([]int, max(len(groups), 1))
	var plain []int
	for j, f := range l.plan.fields {
		if f.kind != nkLeaf {
			continue
		}
		width := 0 // bytes of a PLAIN value; 0: a string (length + 4)
		switch f.leaf {
		case lkString:
		case lkLong, lkDouble, lkTimestamp, lkTimestampNTZ:
			width = 8
		case lkInt, lkShort, lkByte, lkFloat, lkDate:
			width = 4
		default: // booleans (never dictionary-encoded), binaries, decimals
			continue
		}
		fi := l.dataIdx[j]
		clear(seen)
		clear(distinct)
		var raw, dict int64
		values := 0
		for r, row := range rows[:n] {
			v := row[fi]
			if v == nil {
				continue
			}
			k := dkey{g: group[r]}
			size := int64(width)
			switch x := v.(type) {
			case string:
				k.s, size = x, int64(len(x))+4
			case int64:
				k.u = uint64(x)
			case int32:
				k.u = uint64(x)
			case int16:
				k.u = uint64(x)
			case int8:
				k.u = uint64(x)
			case float64:
				k.u = math.Float64bits(x)
			case float32:
				k.u = uint64(math.Float32bits(x))
			case schema.Date:
				k.u = uint64(x)
			case time.Time:
				if f.leaf == lkTimestampNTZ {
					x = ntzWall(x)
				}
				k.u = uint64(x.UnixMicro())
			default:
				continue
			}
			raw += size
			values++
			if _, ok := seen[k]; !ok {
				seen[k] = struct{}{}
				distinct[k.g]++
				dict += size
			}
		}
		if values == 0 {
			continue
		}
		// The indexes: each partition's values at the bit width of its
		// dictionary (RLE/bit-packed, one width byte a page).
		var indexBits int64
		perGroup := make([]int, len(distinct))
		for r, row := range rows[:n] {
			if row[fi] != nil {
				perGroup[group[r]]++
			}
		}
		for g, d := range distinct {
			if d > 0 {
				indexBits += int64(perGroup[g]) * int64(bits.Len(uint(d-1)))
			}
		}
		if dict+indexBits/8 >= raw {
			plain = append(plain, j)
		}
	}
	return plain
}

// withPlainColumns returns the layout's Parquet schema with the top-level
// data fields plain (plan indexes) encoded PLAIN (a column's own encoding
// comes before the writer's defaults, DictionaryOptions).
func (l *layout) withPlainColumns(plain []int) *parquet.Schema {
	fields := l.pschema.Fields()
	g := &groupNode{fields: make([]parquet.Field, len(fields))}
	copy(g.fields, fields)
	for _, j := range plain {
		f := fields[j]
		g.fields[j] = &namedField{Node: parquet.Encoded(f, &parquet.Plain), name: f.Name()}
	}
	return parquet.NewSchema(sparkRootName, g)
}
