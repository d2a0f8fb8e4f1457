package parquetio

import (
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"
)

// Partitioned batches are shredded once, in row order, before their rows
// are routed to the partitions' files: each file then copies its rows'
// values out of the chunk's column arrays (a few MiB, cache-resident)
// instead of reading each row's boxed values at scattered addresses, which
// measured about 5x slower per value on the 3M flights by origin.

// preShreddable reports whether every data field of the plan is a
// top-level primitive with a fast path in leafColumn (strings, longs,
// integers, doubles, timestamps with or without time zone): the fields whose shredded values and
// statistics leafStats can recompute from the values alone.
func (p *writePlan) preShreddable() bool {
	if p.repeated {
		return false
	}
	for _, f := range p.fields {
		if f.kind != nkLeaf {
			return false
		}
		switch f.leaf {
		case lkString, lkLong, lkInt, lkDouble, lkTimestamp, lkTimestampNTZ:
		default:
			return false
		}
	}
	return true
}

// preShred shreds the data fields (idx: field j of the plan is row[idx[j]])
// of every row into s.cols, one column array per leaf, the lanes of lay in
// parallel; statistics are left to the files (leafStats).
func (s *shredder) preShred(lay *layout, rows [][]any, idx []int) {
	for c := range s.cols {
		s.cols[c] = s.cols[c][:0]
	}
	lay.eachLane(len(rows), func(k int) {
		for _, j := range lay.lanes[k] {
			s.leafColumn(lay.plan.fields[j], rows, idx[j])
		}
	})
}

// eachLane runs shred(k) for every lane k of lay: in turn for a batch of at
// most writeChunkRows rows or a single lane, else each lane on its own
// goroutine (started and waited for here).
func (lay *layout) eachLane(rows int, shred func(k int)) {
	if len(lay.lanes) == 1 || rows <= writeChunkRows {
		for k := range lay.lanes {
			shred(k)
		}
		return
	}
	var eg errgroup.Group
	for k := range lay.lanes {
		eg.Go(func() error { shred(k); return nil })
	}
	_ = eg.Wait()
}

// leafStats adds the values of leaf column n (shredded by leafColumn) to
// its statistics, as leafColumn would have (addValueStats).
func (s *shredder) leafStats(n *wnode, vals []parquet.Value) {
	if n.stat >= 0 {
		s.stats[n.stat].addValueStats(n.leaf, vals)
	}
}

// statsOf is the statistics of leaf column n, nil when it has none.
func (s *shredder) statsOf(n *wnode) *colStats {
	if n.stat < 0 {
		return nil
	}
	return &s.stats[n.stat]
}

// addValueStats adds vals, values of a leaf of kind leaf (a pre-shreddable
// one, writePlan.preShreddable), to c as adding them one by one would: one
// typed loop per kind finds their least and greatest, then those are added
// (addIntRange, addStringRange, addFloatRange).
func (c *colStats) addValueStats(leaf leafKind, vals []parquet.Value) {
	switch leaf {
	case lkString:
		var r strRange
		for i := range vals {
			v := &vals[i]
			if v.IsNull() {
				c.nulls++
				continue
			}
			b := v.ByteArray()
			r.add(unsafe.String(unsafe.SliceData(b), len(b)))
		}
		c.addStringRange(r)
	case lkLong, lkInt, lkTimestamp, lkTimestampNTZ:
		var least, greatest int64
		k := 0
		for i := range vals {
			v := &vals[i]
			if v.IsNull() {
				c.nulls++
				continue
			}
			x := v.Int64()
			if leaf == lkInt {
				x = int64(v.Int32())
			}
			if k == 0 {
				least, greatest = x, x
			}
			least, greatest = min(least, x), max(greatest, x)
			k++
		}
		c.addIntRange(least, greatest, k)
	case lkDouble:
		var r floatRange
		for i := range vals {
			v := &vals[i]
			if v.IsNull() {
				c.nulls++
				continue
			}
			r.add(v.Double())
		}
		c.addFloatRange(r)
	}
}

// addIntRange adds k values whose least is lo and greatest hi (as addInt
// of each would).
func (c *colStats) addIntRange(lo, hi int64, k int) {
	if k == 0 {
		return
	}
	c.n += int64(k)
	mergeRange(&c.has, &c.minI, &c.maxI, lo, hi)
}

// mergeRange widens [*least, *greatest] to take [lo, hi] in, or sets it
// when *has is false, as adding the values one by one would (an equal
// bound stays the first that came: -0 and 0).
func mergeRange[T int64 | float64 | string](has *bool, least, greatest *T, lo, hi T) {
	if !*has {
		*least, *greatest, *has = lo, hi, true
		return
	}
	if lo < *least {
		*least = lo
	}
	if hi > *greatest {
		*greatest = hi
	}
}

// strRange is the least and greatest of the strings added and how many
// those are. A string's first 8 bytes, as a big-endian number with zero
// bytes past its end (prefix8), order it before the whole string is
// looked at: two strings whose prefixes differ compare as the prefixes do
// (the first byte that differs decides, and a string that ends first is a
// prefix of the other there), so only a tie compares more; comparing every
// flights airport code to the least and greatest as strings was 7.8% of the
// ingest's CPU.
type strRange struct {
	lo, hi   string
	loP, hiP uint64 // prefix8 of lo and hi
	has      bool   // lo and hi are set
	k        int
}

func (r *strRange) add(x string) {
	r.addPrefixed(x, prefix8(x))
	r.k++
}

// addPrefixed is add of x whose prefix8 is p, without counting it: the
// part of add a caller skips for a p strictly between loP and hiP (most
// values), where x changes neither bound.
func (r *strRange) addPrefixed(x string, p uint64) {
	switch {
	case !r.has:
		r.lo, r.hi, r.loP, r.hiP, r.has = x, x, p, p, true
	case p < r.loP || (p == r.loP && lessTied(x, r.lo)):
		r.lo, r.loP = x, p
	case p > r.hiP || (p == r.hiP && lessTied(r.hi, x)):
		r.hi, r.hiP = x, p
	}
}

// prefix8 is the first 8 bytes of x as a big-endian number, zero bytes
// past the end of a shorter x. A shorter x is read in two overlapping
// loads (4 to 7 bytes: its first 4 and its last 4; 1 to 3: its first,
// middle and last byte), each put at its place, so no loop and no read
// past x.
func prefix8(x string) uint64 {
	n := len(x)
	switch {
	case n >= 8:
		return uint64(be32(x))<<32 | uint64(be32(x[4:]))
	case n >= 4:
		return uint64(be32(x))<<32 | uint64(be32(x[n-4:]))<<(64-8*n)
	case n > 0:
		return uint64(x[0])<<56 | uint64(x[n/2])<<(56-8*(n/2)) | uint64(x[n-1])<<(56-8*(n-1))
	}
	return 0
}

// be32 is the first 4 bytes of x (at least 4 long) as a big-endian number.
func be32(x string) uint32 {
	_ = x[3]
	return uint32(x[3]) | uint32(x[2])<<8 | uint32(x[1])<<16 | uint32(x[0])<<24
}

// lessTied is a < b for strings whose prefix8 is equal: when both are at
// most 8 bytes long, the shorter is the other's prefix (it ends in zero
// bytes there).
func lessTied(a, b string) bool {
	if len(a) <= 8 && len(b) <= 8 {
		return len(a) < len(b)
	}
	return a < b
}

// addStringRange adds the strings of r (as addString of each would).
func (c *colStats) addStringRange(r strRange) {
	if r.k == 0 {
		return
	}
	c.n += int64(r.k)
	mergeRange(&c.has, &c.minS, &c.maxS, r.lo, r.hi)
}

// floatRange is the least and greatest of the non-NaN doubles added, with
// addFloat's ordering (NaN apart, the first of equal values kept: -0 and 0
// stay as they came), whether a NaN came, and how many doubles in all.
type floatRange struct {
	lo, hi   float64
	has, nan bool
	k        int
}

func (r *floatRange) add(x float64) {
	r.k++
	switch {
	case x != x: // NaN
		r.nan = true
	case !r.has:
		r.lo, r.hi, r.has = x, x, true
	case x < r.lo:
		r.lo = x
	case x > r.hi:
		r.hi = x
	}
}

// addFloatRange adds the doubles of r (as addFloat of each would).
func (c *colStats) addFloatRange(r floatRange) {
	c.n += int64(r.k)
	c.nan = c.nan || r.nan
	if r.has {
		mergeRange(&c.has, &c.minF, &c.maxF, r.lo, r.hi)
	}
}
