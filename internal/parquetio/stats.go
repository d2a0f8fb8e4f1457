package parquetio

import (
	"bytes"
	"encoding/json"
	"github.com/lakesink/lakesink/schema"
	"math"
	"math/big"
	"strconv"
	"time"
	"unicode/utf16"
	"unicode/utf8"
)

// Per-file statistics as Delta writes them (PROTOCOL.md, "Per-file
// Statistics"; Delta's StatisticsCollection): numRecords, and for the first
// NumIndexedCols leaf columns minValues/maxValues (numbers, strings, dates,
// timestamps, decimals: not booleans, binary, arrays or maps) and nullCount.

// StatsStringPrefixLength is the number of characters kept of string min/max
// values (Delta's dataSkippingStringPrefixLength default, 32).
const StatsStringPrefixLength = 32

type colStats struct {
	nulls int64
	n     int64 // non-null values
	has   bool  // a min/max value is set
	minI  int64
	maxI  int64
	minF  float64
	maxF  float64
	nan   bool // a NaN was seen
	minS  string
	maxS  string
	minB  *big.Int
	maxB  *big.Int
}

func (c *colStats) addInt(x int64) {
	c.n++
	if !c.has {
		c.minI, c.maxI, c.has = x, x, true
		return
	}
	if x < c.minI {
		c.minI = x
	}
	if x > c.maxI {
		c.maxI = x
	}
}

// addFloat follows Spark's ordering, where NaN is larger than any other
// value: min ignores NaN unless every value is NaN, max is NaN if any is.
func (c *colStats) addFloat(x float64) {
	c.n++
	if math.IsNaN(x) {
		c.nan = true
		return
	}
	if !c.has {
		c.minF, c.maxF, c.has = x, x, true
		return
	}
	if x < c.minF {
		c.minF = x
	}
	if x > c.maxF {
		c.maxF = x
	}
}

func (c *colStats) addString(x string) {
	c.n++
	if !c.has {
		c.minS, c.maxS, c.has = x, x, true
		return
	}
	if x < c.minS {
		c.minS = x
	}
	if x > c.maxS {
		c.maxS = x
	}
}

func (c *colStats) addBig(x *big.Int) {
	c.n++
	if !c.has {
		c.minB, c.maxB, c.has = x, x, true
		return
	}
	if x.Cmp(c.minB) < 0 {
		c.minB = x
	}
	if x.Cmp(c.maxB) > 0 {
		c.maxB = x
	}
}

// ordered is a JSON object that keeps its key order (schema order, as Delta).
type ordered struct {
	keys []string
	vals []any
}

func (o *ordered) add(k string, v any) { o.keys = append(o.keys, k); o.vals = append(o.vals, v) }

func (o *ordered) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, k := range o.keys {
		if i > 0 {
			b.WriteByte(',')
		}
		kb, err := marshalNoEscape(k)
		if err != nil {
			return nil, err
		}
		b.Write(kb)
		b.WriteByte(':')
		vb, err := marshalNoEscape(o.vals[i])
		if err != nil {
			return nil, err
		}
		b.Write(vb)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

func marshalNoEscape(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimRight(b.Bytes(), "\n"), nil
}

// statsJSON renders the stats of one file.
func statsJSON(p *writePlan, st []colStats, numRecords int64) (string, error) {
	top := &ordered{}
	top.add("numRecords", numRecords)
	if len(p.stats) > 0 {
		minV, maxV, nulls := &ordered{}, &ordered{}, &ordered{}
		for _, n := range p.fields {
			statsOf(n, p, st, minV, maxV, nulls)
		}
		top.add("minValues", minV)
		top.add("maxValues", maxV)
		top.add("nullCount", nulls)
	}
	b, err := top.MarshalJSON()
	if err != nil {
		return "", err
	}
	return string(b), nil
}

func statsOf(n *wnode, p *writePlan, st []colStats, minV, maxV, nulls *ordered) {
	if n.kind == nkStruct {
		cmin, cmax, cnull := &ordered{}, &ordered{}, &ordered{}
		for _, c := range n.children {
			statsOf(c, p, st, cmin, cmax, cnull)
		}
		if len(cmin.keys) > 0 {
			minV.add(n.statName, cmin)
		}
		if len(cmax.keys) > 0 {
			maxV.add(n.statName, cmax)
		}
		if len(cnull.keys) > 0 {
			nulls.add(n.statName, cnull)
		}
		return
	}
	if n.stat < 0 {
		return
	}
	spec, c := p.stats[n.stat], &st[n.stat]
	nulls.add(n.statName, c.nulls)
	if !spec.minmax || c.n == 0 {
		return
	}
	lo, hi, ok := minMaxJSON(spec, c)
	if !ok {
		return
	}
	minV.add(n.statName, lo)
	maxV.add(n.statName, hi)
}

const (
	statsTimestampLayout    = "2006-01-02T15:04:05.000Z"
	statsTimestampNTZLayout = "2006-01-02T15:04:05.000"
)

func minMaxJSON(spec statSpec, c *colStats) (lo, hi any, ok bool) {
	switch spec.kind {
	case lkLong, lkInt, lkShort, lkByte:
		if !c.has {
			return nil, nil, false
		}
		return c.minI, c.maxI, true
	case lkFloat, lkDouble:
		bits := 64
		if spec.kind == lkFloat {
			bits = 32
		}
		if !c.has { // only NaN
			return "NaN", "NaN", true
		}
		lo = floatJSON(c.minF, bits)
		if c.nan {
			return lo, "NaN", true
		}
		return lo, floatJSON(c.maxF, bits), true
	case lkString:
		if !c.has {
			return nil, nil, false
		}
		// A bound that is not valid UTF-8 has no faithful JSON form: the
		// encoder (and []rune in the truncation) turns each bad byte into
		// U+FFFD, which sorts below 0xF5..0xFF and above 0x80..0xBF, so
		// "\xff" as maxValues would become "\ufffd" < "\xff" and data
		// skipping would drop a file holding a matching row. Such a column
		// gets no minValues/maxValues (stats are optional per column,
		// PROTOCOL.md "Per-file Statistics"); nullCount stays.
		if !utf8.ValidString(c.minS) || !utf8.ValidString(c.maxS) {
			return nil, nil, false
		}
		mx, ok := truncateMaxString(c.maxS, StatsStringPrefixLength)
		if !ok {
			return nil, nil, false
		}
		return truncateMinString(c.minS, StatsStringPrefixLength), mx, true
	case lkDate:
		return schema.Date(c.minI).String(), schema.Date(c.maxI).String(), c.has
	case lkTimestamp, lkTimestampNTZ:
		layout := statsTimestampLayout
		if spec.kind == lkTimestampNTZ {
			layout = statsTimestampNTZLayout
		}
		// Milliseconds: min truncated down, max rounded up so that the
		// range still covers every value.
		lo := floorDiv(c.minI, 1000)
		hi := floorDiv(c.maxI, 1000)
		if hi*1000 != c.maxI && hi < maxStatsMillis {
			// Rounding up past 9999-12-31T23:59:59.999 would leave Spark's
			// timestamp range; there the max stays truncated, as Delta
			// writes every max, and readers widen it by 1 ms.
			hi++
		}
		return time.UnixMilli(lo).UTC().Format(layout), time.UnixMilli(hi).UTC().Format(layout), c.has
	case lkDec32, lkDec64:
		return json.Number(schema.Decimal{Unscaled: big.NewInt(c.minI), Scale: spec.dec.Scale}.String()),
			json.Number(schema.Decimal{Unscaled: big.NewInt(c.maxI), Scale: spec.dec.Scale}.String()), c.has
	case lkDecFixed:
		if !c.has {
			return nil, nil, false
		}
		return json.Number(schema.Decimal{Unscaled: c.minB, Scale: spec.dec.Scale}.String()),
			json.Number(schema.Decimal{Unscaled: c.maxB, Scale: spec.dec.Scale}.String()), true
	}
	return nil, nil, false
}

// maxStatsMillis is 9999-12-31T23:59:59.999Z, the largest timestamp Spark's
// stats format (yyyy-MM-dd'T'HH:mm:ss.SSS) can express.
const maxStatsMillis = 253402300799999

func floorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// NonFiniteName is how Spark's JSON writer and Java's Double.toString spell
// a float that is not finite: "NaN", "Infinity" or "-Infinity"; ok is false
// for a finite f.
func NonFiniteName(f float64) (name string, ok bool) {
	switch {
	case math.IsNaN(f):
		return "NaN", true
	case math.IsInf(f, 1):
		return "Infinity", true
	case math.IsInf(f, -1):
		return "-Infinity", true
	}
	return "", false
}

// floatJSON renders a float as Spark's JSON writer does: a number, or the
// strings NonFiniteName gives.
func floatJSON(f float64, bits int) any {
	if name, ok := NonFiniteName(f); ok {
		return name
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	return json.Number(s)
}

// Strings are truncated in UTF-16 code units, as the JVM counts them, without
// splitting a surrogate pair (Delta's StatisticsCollection.truncateMinStringAgg
// and truncateMaxStringAgg).

// Only a bounded head of s is converted (a value can be megabytes long;
// converting all of it cost 6 bytes per character).

func truncateMinString(s string, prefix int) string {
	u := utf16.Encode([]rune(headRunes(s, prefix+1)))
	if len(u) <= prefix {
		return s
	}
	n := prefix
	if utf16.IsSurrogate(rune(u[n-1])) && u[n-1] < 0xDC00 { // high surrogate: keep its pair
		n++
	}
	return string(utf16.Decode(u[:n]))
}

// truncateMaxString returns a prefix of s followed by a tie-breaker that sorts
// after every string with that prefix in UTF-8 byte order: U+007F when the
// next character is below it, else U+10FFFF. It gives up (ok=false, no max
// is written) after 2*prefix code units, as Delta does.
func truncateMaxString(s string, prefix int) (string, bool) {
	// 2*prefix+2 runes are at least as many UTF-16 units as the loop below
	// can look at, so a cut head never ends it as if s ended there.
	u := utf16.Encode([]rune(headRunes(s, 2*prefix+2)))
	if len(u) <= prefix {
		return s, true
	}
	cur := len(utf16.Encode([]rune(truncateMinString(s, prefix))))
	limit := 2 * prefix
	for cur <= limit {
		switch {
		case cur >= len(u):
			return s, true
		case cur+1 < len(u) && u[cur] == 0xDBFF && u[cur+1] == 0xDFFF: // U+10FFFF
			cur += 2
		case u[cur] < 0x7F:
			return string(utf16.Decode(u[:cur])) + "\u007f", true
		default:
			return string(utf16.Decode(u[:cur])) + string(rune(utf8.MaxRune)), true
		}
	}
	return "", false
}

// headRunes returns the first n runes of s (all of s when it has fewer).
func headRunes(s string, n int) string {
	i := 0
	for k := range s {
		if i == n {
			return s[:k]
		}
		i++
	}
	return s
}
