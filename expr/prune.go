package expr

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// Domain is what is known about one column's values in one file: either an
// exact value shared by every row (a partition column), or bounds from the
// file's statistics (PROTOCOL.md, "Per-file Statistics"). The zero Domain
// knows nothing; use UnknownDomain.
type Domain struct {
	// Exact: every row of the file has Value (nil: null).
	Exact bool
	Value any
	// Min and Max bound the non-null values (nil: unbounded).
	Min, Max any
	// MaxPrefix: Max may be a truncated string prefix, so values may be
	// greater than Max as long as they start with it.
	MaxPrefix bool
	// MaxWidened: Max is an upper bound that may not be attained (e.g. a
	// millisecond-truncated timestamp widened by 1 ms).
	MaxWidened bool
	// NullCount and NumRecords: -1 when unknown.
	NullCount  int64
	NumRecords int64
}

// UnknownDomain is a column nothing is known about: it never skips a file.
func UnknownDomain() Domain { return Domain{NullCount: -1, NumRecords: -1} }

// ExactDomain is a column whose every row holds v (nil: null).
func ExactDomain(v any) Domain { return Domain{Exact: true, Value: v, NullCount: -1, NumRecords: -1} }

// Outcomes is the set of truth values a predicate may take on some row of a
// file.
type Outcomes uint8

// Outcome bits.
const (
	MayTrue Outcomes = 1 << iota
	MayFalse
	MayUnknown
	allOutcomes = MayTrue | MayFalse | MayUnknown
)

// MayMatch reports whether a file could contain a row for which the
// predicate is true, given what domain(i) tells about Columns()[i]. It is
// conservative: only a file that provably has no matching row returns false.
// A nil predicate matches everything.
func (p *Predicate) MayMatch(domain func(i int) Domain) bool {
	if p == nil {
		return true
	}
	return p.Outcomes(domain)&MayTrue != 0
}

// Outcomes is the set of truth values the predicate may take over the rows
// of a file described by domain (empty: the file has no rows).
func (p *Predicate) Outcomes(domain func(i int) Domain) Outcomes {
	if p == nil {
		return MayTrue
	}
	return outcomes(p.root, domain)
}

func outcomes(n node, domain func(i int) Domain) Outcomes {
	switch n := n.(type) {
	case *andNode:
		a, b := outcomes(n.l, domain), outcomes(n.r, domain)
		if a == 0 || b == 0 {
			return 0
		}
		var o Outcomes
		if a&MayTrue != 0 && b&MayTrue != 0 {
			o |= MayTrue
		}
		if a&MayFalse != 0 || b&MayFalse != 0 {
			o |= MayFalse
		}
		if a&MayUnknown != 0 && b&(MayTrue|MayUnknown) != 0 || b&MayUnknown != 0 && a&(MayTrue|MayUnknown) != 0 {
			o |= MayUnknown
		}
		return o
	case *orNode:
		a, b := outcomes(n.l, domain), outcomes(n.r, domain)
		if a == 0 || b == 0 {
			return 0
		}
		var o Outcomes
		if a&MayTrue != 0 || b&MayTrue != 0 {
			o |= MayTrue
		}
		if a&MayFalse != 0 && b&MayFalse != 0 {
			o |= MayFalse
		}
		if a&MayUnknown != 0 && b&(MayFalse|MayUnknown) != 0 || b&MayUnknown != 0 && a&(MayFalse|MayUnknown) != 0 {
			o |= MayUnknown
		}
		return o
	case *notNode:
		a := outcomes(n.x, domain)
		o := a & MayUnknown
		if a&MayTrue != 0 {
			o |= MayFalse
		}
		if a&MayFalse != 0 {
			o |= MayTrue
		}
		return o
	case *isNullNode:
		t, f := isNullOutcomes(domain(n.col))
		if n.neg {
			t, f = f, t
		}
		return pack(t, f, false)
	case *cmpNode:
		return cmpOutcomes(domain(n.col), n.op, n.lit)
	case *likeNode:
		o := likeOutcomes(domain(n.col), n.m)
		if n.neg {
			o = o&MayUnknown | (o&MayTrue)<<1 | (o&MayFalse)>>1
		}
		return o
	}
	return allOutcomes
}

// likeOutcomes prunes on the pattern's literal prefix P (the text before
// its first wildcard): a matching value starts with P, so a file whose
// values all sort below P, or above every string starting with P, has no
// match. When the pattern is P% and both bounds start with P, every value
// between them starts with P and matches: no row is false.
func likeOutcomes(d Domain, m *likeMatcher) Outcomes {
	if d.empty() {
		return 0
	}
	if d.Exact {
		s, ok := d.Value.(string)
		if !ok {
			if d.Value == nil {
				return MayUnknown
			}
			return allOutcomes
		}
		return pack(m.match(s), !m.match(s), false)
	}
	if d.allNull() {
		return MayUnknown
	}
	mayNull := d.NullCount != 0
	p := m.prefix
	lo, minOK := d.Min.(string)
	hi, maxOK := d.Max.(string)
	t := true
	if minOK && lo > p && !strings.HasPrefix(lo, p) {
		t = false // lo is above every string starting with p
	}
	if maxOK && hi < p && !(d.MaxPrefix && strings.HasPrefix(p, hi)) {
		t = false // every value is below p (a truncated max may go on into p)
	}
	f := !(m.prefixOnly && minOK && maxOK && strings.HasPrefix(lo, p) && strings.HasPrefix(hi, p))
	return pack(t, f, mayNull)
}

func pack(t, f, u bool) Outcomes {
	var o Outcomes
	if t {
		o |= MayTrue
	}
	if f {
		o |= MayFalse
	}
	if u {
		o |= MayUnknown
	}
	return o
}

func (d Domain) empty() bool { return !d.Exact && d.NumRecords == 0 }

func (d Domain) allNull() bool {
	return !d.Exact && d.NullCount >= 0 && d.NumRecords >= 0 && d.NullCount >= d.NumRecords
}

func isNullOutcomes(d Domain) (isNull, notNull bool) {
	switch {
	case d.Exact:
		return d.Value == nil, d.Value != nil
	case d.empty():
		return false, false
	}
	return d.NullCount != 0, !d.allNull()
}

func cmpOutcomes(d Domain, op Op, lit any) Outcomes {
	if d.empty() {
		return 0
	}
	if lit == nil {
		return MayUnknown
	}
	if d.Exact {
		if d.Value == nil {
			return MayUnknown
		}
		c, ok := CompareValues(d.Value, lit)
		if !ok {
			return allOutcomes
		}
		return pack(opHolds(op, c), !opHolds(op, c), false)
	}
	if d.allNull() {
		return MayUnknown
	}
	mayNull := d.NullCount != 0
	less, equal, greater, unequal := d.mayLess(lit), d.mayEqual(lit), d.mayGreater(lit), d.mayUnequal(lit)
	var t, f bool
	switch op {
	case OpEq:
		t, f = equal, unequal
	case OpNe:
		t, f = unequal, equal
	case OpLt:
		t, f = less, equal || greater
	case OpLe:
		t, f = less || equal, greater
	case OpGt:
		t, f = greater, less || equal
	case OpGe:
		t, f = greater || equal, less
	}
	return pack(t, f, mayNull)
}

// cmpOr compares a with b, reporting def when they are not comparable.
func cmpOr(a, b any, def int) int {
	c, ok := CompareValues(a, b)
	if !ok {
		return def
	}
	return c
}

func (d Domain) mayLess(x any) bool { return d.Min == nil || cmpOr(d.Min, x, -1) < 0 }

func (d Domain) mayGreater(x any) bool {
	if d.Max == nil || cmpOr(d.Max, x, 1) > 0 {
		return true
	}
	return d.prefixOf(x)
}

// prefixOf: with a truncated string Max, any x that starts with Max may be
// below the true maximum.
func (d Domain) prefixOf(x any) bool {
	if !d.MaxPrefix {
		return false
	}
	m, ok1 := d.Max.(string)
	s, ok2 := x.(string)
	return ok1 && ok2 && strings.HasPrefix(s, m)
}

func (d Domain) mayEqual(x any) bool {
	return (d.Min == nil || cmpOr(d.Min, x, 0) <= 0) &&
		(d.Max == nil || cmpOr(d.Max, x, 0) >= 0 || d.prefixOf(x))
}

func (d Domain) mayUnequal(x any) bool {
	if d.Min == nil || d.Max == nil || d.MaxPrefix || d.MaxWidened {
		return true
	}
	return cmpOr(d.Min, x, 1) != 0 || cmpOr(d.Max, x, 1) != 0
}

// Stats are a file's statistics (PROTOCOL.md, "Per-file Statistics"): the
// add action's stats JSON. Per-column values mirror the schema, keyed by
// physical column names.
type Stats struct {
	NumRecords  *int64         `json:"numRecords,omitempty"`  // rows in the file (nil: unknown)
	TightBounds *bool          `json:"tightBounds,omitempty"` // false: the bounds may be wider than the live rows (deletion vectors)
	MinValues   map[string]any `json:"minValues,omitempty"`   // per column, the least non-null value
	MaxValues   map[string]any `json:"maxValues,omitempty"`   // per column, the greatest non-null value
	NullCount   map[string]any `json:"nullCount,omitempty"`   // per column, the count of nulls
}

// ParseStats parses an add action's stats string; "" is (nil, nil). Numbers
// are kept as json.Number.
func ParseStats(s string) (*Stats, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	dec.UseNumber()
	var raw struct {
		NumRecords  json.Number    `json:"numRecords"`
		TightBounds *bool          `json:"tightBounds"`
		MinValues   map[string]any `json:"minValues"`
		MaxValues   map[string]any `json:"maxValues"`
		NullCount   map[string]any `json:"nullCount"`
	}
	if err := dec.Decode(&raw); err != nil {
		return nil, fmt.Errorf("%w: stats JSON: %v", ErrValue, err)
	}
	st := &Stats{TightBounds: raw.TightBounds, MinValues: raw.MinValues, MaxValues: raw.MaxValues, NullCount: raw.NullCount}
	if raw.NumRecords != "" {
		n, err := raw.NumRecords.Int64()
		if err != nil {
			return nil, fmt.Errorf("%w: stats numRecords %q", ErrValue, raw.NumRecords)
		}
		st.NumRecords = &n
	}
	return st, nil
}

func lookup(m map[string]any, path []string) (any, bool) {
	var v any = m
	for _, p := range path {
		mm, ok := v.(map[string]any)
		if !ok {
			return nil, false
		}
		v, ok = mm[p]
		if !ok {
			return nil, false
		}
	}
	return v, true
}

// Domain is what the statistics tell about a column at physPath (physical
// names) of type typ. Missing or unparsable statistics leave that bound
// unknown, so the file is never skipped because of them. Delta's caveats:
//   - timestamps are truncated to milliseconds: Max is widened by 1 ms;
//   - strings may be truncated prefixes: Max is treated as a prefix bound;
//   - float and double columns may hold NaN, which is greater than every
//     value in Spark's ordering but absent from Parquet-derived maxima: Max
//     is ignored for them (Min stays a valid lower bound);
//   - with tightBounds=false a nullCount other than 0 or numRecords carries
//     no information.
func (s *Stats) Domain(physPath []string, typ schema.DataType) Domain {
	d := UnknownDomain()
	if s == nil {
		return d
	}
	if s.NumRecords != nil {
		d.NumRecords = *s.NumRecords
	}
	if v, ok := lookup(s.NullCount, physPath); ok {
		if n, ok := v.(json.Number); ok {
			if c, err := n.Int64(); err == nil && c >= 0 {
				d.NullCount = c
			}
		}
	}
	if s.TightBounds != nil && !*s.TightBounds && d.NullCount > 0 && d.NullCount != d.NumRecords {
		d.NullCount = -1
	}
	if v, ok := lookup(s.MinValues, physPath); ok {
		d.Min = statValue(v, typ)
	}
	if v, ok := lookup(s.MaxValues, physPath); ok {
		d.Max = statValue(v, typ)
	}
	switch typ {
	case schema.TypeFloat, schema.TypeDouble:
		d.Max = nil
	case schema.TypeString:
		d.MaxPrefix = d.Max != nil
	case schema.TypeTimestamp, schema.TypeTimestampNTZ:
		if t, ok := d.Max.(time.Time); ok {
			d.Max = t.Add(time.Millisecond)
			d.MaxWidened = true
		}
	case schema.TypeBinary:
		d.Min, d.Max = nil, nil
	}
	if _, nested := typ.(schema.PrimitiveType); !nested {
		if _, dec := typ.(schema.DecimalType); !dec {
			d.Min, d.Max = nil, nil
		}
	}
	return d
}

// statValue converts a JSON statistic to the Go value of typ; nil when it
// does not parse (the bound is then unknown).
func statValue(v any, typ schema.DataType) any {
	switch t := typ.(type) {
	case schema.DecimalType:
		var s string
		switch x := v.(type) {
		case json.Number:
			s = x.String()
		case string:
			s = x
		default:
			return nil
		}
		d, err := ParseDecimal(s)
		if err != nil {
			return nil
		}
		return d
	case schema.PrimitiveType:
		switch t {
		case schema.TypeString:
			if s, ok := v.(string); ok {
				return s
			}
			return nil
		case schema.TypeLong, schema.TypeInteger, schema.TypeShort, schema.TypeByte:
			n, ok := v.(json.Number)
			if !ok {
				return nil
			}
			i, err := n.Int64()
			if err != nil {
				return nil
			}
			return i
		case schema.TypeFloat, schema.TypeDouble:
			switch x := v.(type) {
			case json.Number:
				f, err := strconv.ParseFloat(x.String(), 64)
				if err != nil {
					return nil
				}
				return f
			case string:
				switch strings.ToLower(x) {
				case "nan":
					return math.NaN()
				case "infinity", "+infinity", "inf":
					return math.Inf(1)
				case "-infinity", "-inf":
					return math.Inf(-1)
				}
			}
			return nil
		case schema.TypeBoolean:
			b, ok := v.(bool)
			if !ok {
				return nil
			}
			return b
		case schema.TypeDate:
			s, ok := v.(string)
			if !ok {
				return nil
			}
			d, err := ParseDate(s)
			if err != nil {
				// Some writers put a timestamp-like string for dates.
				ts, err2 := ParseTimestamp(s)
				if err2 != nil {
					return nil
				}
				days := ts.Unix() / 86400
				if ts.Unix() < 0 && ts.Unix()%86400 != 0 {
					days--
				}
				return schema.Date(days)
			}
			return d
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			s, ok := v.(string)
			if !ok {
				return nil
			}
			ts, err := ParseTimestamp(s)
			if err != nil {
				return nil
			}
			return ts
		}
	}
	return nil
}
