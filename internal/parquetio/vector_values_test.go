package parquetio

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// TestPrefix8: prefix8 is the first 8 bytes, zero-padded, big-endian, for
// every length up to 12 and bytes 0x00 and 0xff among them.
func TestPrefix8(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	alphabet := []byte{0, 1, 'a', 'b', 0x7f, 0x80, 0xff}
	for n := range 13 {
		for range 200 {
			b := make([]byte, n)
			for i := range b {
				b[i] = alphabet[rng.IntN(len(alphabet))]
			}
			var pad [8]byte
			copy(pad[:], b)
			if got, want := prefix8(string(b)), binary.BigEndian.Uint64(pad[:]); got != want {
				t.Fatalf("prefix8(%q) = %#x, want %#x", b, got, want)
			}
		}
	}
}

// tieStrings share 8-byte prefixes, end in zero bytes, or differ only
// past 8 bytes: the cases where strRange compares more than prefixes.
var tieStrings = []string{"", "\x00", "a", "a\x00", "a\x00\x00", "ab", "abcdefgh", "abcdefgh\x00", "abcdefghi",
	"abcdefghh", "abcdefg", "abcdefg\x00", "abcdefg\xff", "\xff", "\xff\xff\xff\xff\xff\xff\xff\xff\xff", "ABE", "YAK", "SFO"}

// TestStrRangeMatchesStringOrder: strRange's least and greatest are Go's
// string order's, for random picks of tieStrings and random strings.
func TestStrRangeMatchesStringOrder(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 2000 {
		xs := make([]string, 1+rng.IntN(20))
		for i := range xs {
			if trial%2 == 0 {
				xs[i] = tieStrings[rng.IntN(len(tieStrings))]
			} else {
				b := make([]byte, rng.IntN(11))
				for j := range b {
					b[j] = byte(rng.IntN(3)) // few distinct bytes: many shared prefixes
				}
				xs[i] = string(b)
			}
		}
		var r strRange
		for _, x := range xs {
			r.add(x)
		}
		if lo, hi := slices.Min(xs), slices.Max(xs); r.lo != lo || r.hi != hi || r.k != len(xs) {
			t.Fatalf("%q: strRange %q..%q (%d), want %q..%q", xs, r.lo, r.hi, r.k, lo, hi)
		}
	}
}

// TestVectorValuesMatchesValueByValue: vectorValues gives, for every
// pass-through kind, with and without nulls in the range, rows in order
// and picked (sel), through the layout mirror and without it, the values
// vectorValue gives row by row, and the statistics adding them one by one
// gives (NaN, -0 and 0 among the doubles, tieStrings among the strings).
func TestVectorValuesMatchesValueByValue(t *testing.T) {
	if !levelsMirrorOK() {
		t.Fatal("the parquet.Value layout mirror does not hold (see TestLevelsMirror)")
	}
	rng := rand.New(rand.NewPCG(11, 12))
	const rows = 700
	doubles := []float64{math.NaN(), math.Copysign(0, -1), 0, 1.5, -2, math.Inf(1), rng.NormFloat64()}
	zeros := []float64{math.NaN(), math.Copysign(0, -1), 0} // the first of -0 and 0 is kept
	leaves := []struct {
		leaf    leafKind
		kind    schema.VectorKind
		doubles []float64
	}{{lkString, schema.VecString, nil}, {lkLong, schema.VecInt64, nil}, {lkInt, schema.VecInt64, nil},
		{lkDouble, schema.VecFloat64, doubles}, {lkDouble, schema.VecFloat64, zeros},
		{lkTimestamp, schema.VecMicros, nil}, {lkTimestampNTZ, schema.VecMicros, nil}}
	for _, lf := range leaves {
		for _, nullEvery := range []int{0, 5, 1} {
			v := schema.NewVector(lf.kind, rows)
			for i := range rows {
				switch lf.kind {
				case schema.VecString:
					v.String[i] = tieStrings[rng.IntN(len(tieStrings))]
				case schema.VecFloat64:
					v.Float64[i] = lf.doubles[rng.IntN(len(lf.doubles))]
				default:
					v.Int64[i] = int64(rng.Uint64())
					if lf.leaf == lkInt {
						v.Int64[i] = int64(int32(v.Int64[i]))
					}
				}
				if nullEvery > 0 && i%nullEvery == 0 {
					v.SetNull(i)
				}
			}
			n := &wnode{leaf: lf.leaf, def: 1, col: 2, stat: 0}
			sel := rng.Perm(rows)
			for _, picked := range []bool{false, true} {
				for _, fast := range []bool{true, false} {
					var s []int
					if picked {
						s = sel
					}
					var got, want colStats
					var col []parquet.Value
					for lo := 0; lo < rows; lo += 300 { // ranges of 300, 300, 100
						hi := min(lo+300, rows)
						col = vectorValues(n, &v, s, lo, hi, col, &got, fast)
						if len(col) != hi-lo {
							t.Fatalf("%d values for rows [%d,%d)", len(col), lo, hi)
						}
						for k := range col {
							i := rowAt(s, lo, k)
							w := vectorValue(n, &v, i)
							if g := col[k]; g.Kind() != w.Kind() || g.IsNull() != w.IsNull() || g.DefinitionLevel() != w.DefinitionLevel() ||
								g.RepetitionLevel() != w.RepetitionLevel() || g.Column() != w.Column() || !slices.Equal(g.Bytes(), w.Bytes()) {
								t.Fatalf("leaf %d, null every %d, sel %v, fast %v: row %d is %#v, want %#v", lf.leaf, nullEvery, picked, fast, i, g, w)
							}
							addOne(&want, lf.leaf, &v, i)
						}
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("leaf %d, null every %d, sel %v, fast %v: stats %+v, value by value %+v", lf.leaf, nullEvery, picked, fast, got, want)
					}
					if math.Signbit(got.minF) != math.Signbit(want.minF) || math.Signbit(got.maxF) != math.Signbit(want.maxF) {
						t.Errorf("leaf %d: signs of min/max %v %v, value by value %v %v", lf.leaf, got.minF, got.maxF, want.minF, want.maxF)
					}
				}
			}
		}
	}
}

// addOne adds row i of v, a value of leaf, to st as the row shredder
// (leafColumn) does.
func addOne(st *colStats, leaf leafKind, v *schema.Vector, i int) {
	switch {
	case v.Null != nil && v.Null[i]:
		st.nulls++
	case leaf == lkString:
		st.addString(v.String[i])
	case leaf == lkDouble:
		st.addFloat(v.Float64[i])
	default:
		st.addInt(v.Int64[i])
	}
}

// TestVectorValuesStringTies: a later string whose 8-byte prefix ties the
// least's or greatest's still takes its place when it orders before or
// after it (short strings ending in zero bytes, long ones differing past 8
// bytes), in vectorValues's loop and in strRange.add.
func TestVectorValuesStringTies(t *testing.T) {
	for _, xs := range [][]string{{"b", "\x00", ""}, {"a", "a\x00"}, {"b", "abcdefghi", "abcdefgh"}, {"a", "abcdefgh", "abcdefghi"}} {
		v := schema.NewVector(schema.VecString, len(xs))
		copy(v.String, xs)
		var st colStats
		vectorValues(&wnode{leaf: lkString, def: 1, col: 0}, &v, nil, 0, len(xs), nil, &st, levelsMirrorOK())
		var r strRange
		for _, x := range xs {
			r.add(x)
		}
		lo, hi := slices.Min(xs), slices.Max(xs)
		if st.minS != lo || st.maxS != hi || r.lo != lo || r.hi != hi {
			t.Errorf("%q: vectorValues %q..%q, strRange %q..%q, want %q..%q", xs, st.minS, st.maxS, r.lo, r.hi, lo, hi)
		}
	}
}
