package parquetio

import (
	"math"
	"math/bits"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// dictionarySampleRows bounds the rows of a batch's first write that judge
// whether its columns are dictionary-encoded (choosePlainColumns): at most
// 65,536 rows, about parquet-mr's first page of an 8-byte column (1 MiB,
// parquet.page.size) for a whole partition. The sample is the first write
// alone (encodings are fixed before the first file is created): a columnar
// ingest's first chunk, 32,768 rows, ~143 rows an airport of the 3M flights
// partitioned by origin.
const dictionarySampleRows = 1 << 16

// choosePlainColumns decides, once per batch from the first rows written
// (at most dictionarySampleRows of rows, grouped by partition as groups
// say), which top-level primitive data columns are written PLAIN instead of
// RLE_DICTIONARY, as parquet-mr decides on a column chunk's first page
// (FallbackValuesWriter.getBytes with
// DictionaryValuesWriter.isCompressionSatisfying: keep the dictionary only
// when the encoded indexes plus the dictionary are smaller than the raw
// values; else fall back to PLAIN for the whole chunk). Here each
// partition's sample is that partition's first page, and its dictionary is
// judged at the widest indexes its file's dictionary can reach: dictMax
// bytes, the file's share of the dictionary budget (columnShares; parquet-mr
// falls back to PLAIN past parquet.dictionary.page.size, 1 MiB,
// ParquetProperties.DEFAULT_DICTIONARY_PAGE_SIZE), as a column whose values
// keep coming new grows its dictionary to that cap. (Values new at a
// steady rate ρ, s bytes each, b-bit indexes: the dictionary pays when
// ρ·s + b/8 < s whether or not the file passes the cap, b being the final
// width, the cap's at most; a low-cardinality column, whose dictionary stops
// growing, keeps it at the cap's width too, its ρ being small.) A column
// whose values are nearly unique within a partition (timestamps in a table
// partitioned by airport: 84% of a sampled airport's values new, 16 KiB
// shares) thus gets no dictionary, which would take more bytes than the values, hold a
// hash table per open file and, once past its share, fall back to PLAIN
// after the dictionary pages were written (parquet-go's
// fallbackDictionaryToPlain; 140 of the 229 airports' date chunks). Columns
// the sample leaves dictionary-encoded still fall back past dictMax
// (DictionaryOptions, newFileWriterSized). It returns the data-field
// indexes (plan order) to write PLAIN; nil when every column keeps its
// dictionary.
func (l *layout) choosePlainColumns(rows [][]any, groups []*partGroup, dictMax int64) []int {
	n := min(len(rows), dictionarySampleRows)
	return l.choosePlain(n, groups, dictMax, func(j, fi int) sampleKeys {
		leaf := l.plan.fields[j].leaf
		return func(r int) (uint64, string, sampleKind) { return valueKey(rows[r][fi], leaf) }
	})
}

// choosePlainVectors is choosePlainColumns for the first rows of a
// columnar chunk: the same columns from its vectors, a value boxed only in
// a schema.VecAny vector (boxing the sample's rows, vectorRows, and hashing
// each value's key with a string field for every column were ~20 ms of a
// serial stretch before the first files of the 3M flights were written).
func (l *layout) choosePlainVectors(c schema.ColumnChunk, groups []*partGroup, dictMax int64) []int {
	n := min(c.Rows, dictionarySampleRows)
	return l.choosePlain(n, groups, dictMax, func(j, fi int) sampleKeys {
		if fi >= len(c.Vectors) {
			return func(int) (uint64, string, sampleKind) { return 0, "", sampleNull }
		}
		v, leaf, t := &c.Vectors[fi], l.plan.fields[j].leaf, l.schema.Fields[fi].Type
		absent := func(r int) bool { return r >= v.Len || v.Null != nil && v.Null[r] } // vectorRows's nil
		switch {
		case v.Kind == schema.VecString && t == schema.TypeString:
			return func(r int) (uint64, string, sampleKind) {
				if absent(r) {
					return 0, "", sampleNull
				}
				return 0, v.String[r], sampleString
			}
		case v.Kind == schema.VecInt64 && t == schema.TypeLong, v.Kind == schema.VecMicros && isTimestamp(t):
			// A VecMicros value is a UTC time.Time (ntzWall keeps it): its
			// UnixMicro is the stored value.
			return func(r int) (uint64, string, sampleKind) {
				if absent(r) {
					return 0, "", sampleNull
				}
				return uint64(v.Int64[r]), "", sampleNumber
			}
		case v.Kind == schema.VecFloat64 && t == schema.TypeDouble:
			return func(r int) (uint64, string, sampleKind) {
				if absent(r) {
					return 0, "", sampleNull
				}
				return math.Float64bits(v.Float64[r]), "", sampleNumber
			}
		}
		return func(r int) (uint64, string, sampleKind) {
			if absent(r) {
				return 0, "", sampleNull
			}
			return valueKey(v.Value(r, t), leaf)
		}
	})
}

// sampleKeys gives row r's value of one sampled column as choosePlain
// counts it: its kind, and a number's key u (as valueKey makes it) or a
// string s.
type sampleKeys func(r int) (u uint64, s string, k sampleKind)

// sampleKind is what a sampled row holds.
type sampleKind uint8

const (
	sampleNull   sampleKind = iota // a null
	sampleOther                    // a value of no counted Go type: in the partition's rows, not in the values
	sampleNumber                   // a number, date or time: u
	sampleString                   // a string: s
)

// valueKey is the key of v, a value of a column of leaf kind leaf, as
// choosePlain counts distinct values: a number's bits (a time's micros), a
// string itself.
func valueKey(v any, leaf leafKind) (u uint64, s string, k sampleKind) {
	switch x := v.(type) {
	case nil:
		return 0, "", sampleNull
	case string:
		return 0, x, sampleString
	case int64:
		return uint64(x), "", sampleNumber
	case int32:
		return uint64(x), "", sampleNumber
	case int16:
		return uint64(x), "", sampleNumber
	case int8:
		return uint64(x), "", sampleNumber
	case float64:
		return math.Float64bits(x), "", sampleNumber
	case float32:
		return uint64(math.Float32bits(x)), "", sampleNumber
	case schema.Date:
		return uint64(x), "", sampleNumber
	case time.Time:
		if leaf == lkTimestampNTZ {
			x = ntzWall(x)
		}
		return uint64(x.UnixMicro()), "", sampleNumber
	}
	return 0, "", sampleOther
}

// choosePlain is choosePlainColumns for the first n rows of a batch whose
// data field j (plan order), field fi of the schema, gives its rows' values
// through keys(j, fi), each file's dictionary capped at dictMax bytes.
func (l *layout) choosePlain(n int, groups []*partGroup, dictMax int64, keys func(j, fi int) sampleKeys) []int {
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
	type strKey struct {
		g int32
		s string
	}
	seenNum := map[[2]uint64]struct{}{} // partition, value bits
	seenStr := map[strKey]struct{}{}
	distinct := make([]int, max(len(groups), 1))
	perGroup := make([]int, len(distinct))
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
		key := keys(j, l.dataIdx[j])
		clear(seenNum)
		clear(seenStr)
		clear(distinct)
		clear(perGroup)
		var raw, dict int64
		values := 0
		for r := range n {
			u, str, kind := key(r)
			if kind == sampleNull {
				continue
			}
			g := group[r]
			perGroup[g]++
			if kind == sampleOther {
				continue
			}
			size := int64(width)
			isNew := false
			if kind == sampleString {
				size = int64(len(str)) + 4
				k := strKey{g, str}
				if _, seen := seenStr[k]; !seen {
					seenStr[k] = struct{}{}
					isNew = true
				}
			} else {
				k := [2]uint64{uint64(g), u}
				if _, seen := seenNum[k]; !seen {
					seenNum[k] = struct{}{}
					isNew = true
				}
			}
			raw += size
			values++
			if isNew {
				distinct[g]++
				dict += size
			}
		}
		if values == 0 {
			continue
		}
		// The indexes: each partition's values at the bit width of the
		// largest dictionary its file can hold (dictMax bytes of values of
		// the sample's mean size; RLE/bit-packed, one width byte a page).
		totalDistinct := 0
		for _, d := range distinct {
			totalDistinct += d
		}
		capValues := int64(1)
		if totalDistinct > 0 && dict > 0 {
			capValues = max(dictMax*int64(totalDistinct)/dict, 1)
		}
		var indexBits int64
		for g, d := range distinct {
			if d > 0 {
				indexBits += int64(perGroup[g]) * int64(bits.Len64(uint64(max(capValues, int64(d))-1)))
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
