package expr

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// Values use the Go representation of internal/parquetio (types.go): int8,
// int16, int32, int64, float32, float64, bool, string, []byte,
// schema.Date, time.Time, schema.Decimal; nil is null.

// value is the natural Go value of a literal, before it meets a column:
// integers are int64 (or Decimal beyond int64), decimals Decimal, floats
// float64, dates Date, timestamps time.Time (UTC), strings string.
func (l Literal) value() (any, error) {
	switch l.Kind {
	case LitNull:
		return nil, nil
	case LitString:
		return l.Text, nil
	case LitBool:
		return l.Text == "true", nil
	case LitInteger:
		if v, err := strconv.ParseInt(l.Text, 10, 64); err == nil {
			return v, nil
		}
		return ParseDecimal(l.Text)
	case LitDecimal:
		return ParseDecimal(l.Text)
	case LitFloat:
		v, err := strconv.ParseFloat(l.Text, 64)
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return nil, fmt.Errorf("%w: float %q", ErrValue, l.Text)
		}
		return v, nil
	case LitDate:
		return ParseDate(l.Text)
	case LitTimestamp, LitTimestampNTZ:
		return ParseTimestamp(l.Text)
	}
	return nil, fmt.Errorf("%w: unknown literal kind %d", ErrValue, l.Kind)
}

// ParseDecimal parses a decimal number ([-+]digits[.digits][e[-+]digits])
// into a Decimal whose Scale is the number of fraction digits (never
// negative).
func ParseDecimal(s string) (schema.Decimal, error) {
	bad := func() (schema.Decimal, error) {
		return schema.Decimal{}, fmt.Errorf("%w: decimal %q", ErrValue, s)
	}
	t := s
	neg := false
	if t != "" && (t[0] == '-' || t[0] == '+') {
		neg = t[0] == '-'
		t = t[1:]
	}
	exp := 0
	if i := strings.IndexAny(t, "eE"); i >= 0 {
		e, err := strconv.Atoi(t[i+1:])
		if err != nil || e > 1000 || e < -1000 {
			return bad()
		}
		exp = e
		t = t[:i]
	}
	intPart, frac, _ := strings.Cut(t, ".")
	digits := intPart + frac
	if digits == "" || strings.Trim(digits, "0123456789") != "" {
		return bad()
	}
	scale := len(frac) - exp
	if scale < 0 {
		digits += strings.Repeat("0", -scale)
		scale = 0
	}
	u, ok := new(big.Int).SetString(digits, 10)
	if !ok {
		return bad()
	}
	if neg {
		u.Neg(u)
	}
	return schema.Decimal{Unscaled: u, Scale: scale}, nil
}

// ParseDate parses yyyy-mm-dd into days since the epoch.
func ParseDate(s string) (schema.Date, error) {
	t, err := time.Parse("2006-01-02", strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%w: date %q (want yyyy-mm-dd)", ErrValue, s)
	}
	return schema.Date(t.Unix() / 86400), nil
}

// dateTime is a Date as the time.Time of its midnight UTC.
func dateTime(d schema.Date) time.Time { return time.Unix(int64(d)*86400, 0).UTC() }

var tsLayouts = []string{
	"2006-01-02 15:04:05.999999999Z07:00",
	"2006-01-02T15:04:05.999999999Z07:00",
	"2006-01-02 15:04:05.999999999",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02 15:04:05.999999999 MST",
	"2006-01-02 15:04",
	"2006-01-02T15:04",
	"2006-01-02",
}

// ParseTimestamp parses a timestamp as Spark and Delta write them:
// "yyyy-mm-dd hh:mm:ss[.ffffff]" (PROTOCOL.md, "Partition Value
// Serialization"), with 'T' instead of the space, with an optional zone
// ("Z", "+01:00", " UTC"), or a date alone. Without a zone it is UTC (the
// session time zone lakesink assumes). The result is UTC, truncated to
// microseconds (Delta's precision).
func ParseTimestamp(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	for _, layout := range tsLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC().Truncate(time.Microsecond), nil
		}
	}
	return time.Time{}, fmt.Errorf("%w: timestamp %q (want yyyy-mm-dd hh:mm:ss[.ffffff])", ErrValue, s)
}

// ParsePartitionValue parses a serialized partition value (PROTOCOL.md,
// "Partition Value Serialization") into the Go value of typ. nil and the
// empty string are null ("An empty string for any type translates to a null
// partition value"). Timestamps without a zone are read as UTC; timestamps
// with a "Z" suffix (the UTC-normalised form) are supported.
func ParsePartitionValue(s *string, typ schema.DataType) (any, error) {
	if s == nil || *s == "" {
		return nil, nil
	}
	v := *s
	fail := func(err error) (any, error) {
		return nil, fmt.Errorf("%w: partition value %q as %s: %v", ErrValue, v, typ.TypeName(), err)
	}
	switch t := typ.(type) {
	case schema.DecimalType:
		d, err := ParseDecimal(v)
		if err != nil {
			return fail(err)
		}
		return rescale(d, t.Scale), nil
	case schema.PrimitiveType:
		switch t {
		case schema.TypeString:
			return v, nil
		case schema.TypeBinary:
			return []byte(v), nil
		case schema.TypeBoolean:
			b, err := strconv.ParseBool(strings.ToLower(v))
			if err != nil {
				return fail(err)
			}
			return b, nil
		case schema.TypeLong, schema.TypeInteger, schema.TypeShort, schema.TypeByte:
			bits := map[schema.PrimitiveType]int{schema.TypeLong: 64, schema.TypeInteger: 32, schema.TypeShort: 16, schema.TypeByte: 8}[t]
			n, err := strconv.ParseInt(v, 10, bits)
			if err != nil {
				return fail(err)
			}
			return intOf(n, t), nil
		case schema.TypeFloat, schema.TypeDouble:
			f, err := strconv.ParseFloat(v, 64)
			if err != nil && !errors.Is(err, strconv.ErrRange) {
				return fail(err)
			}
			if t == schema.TypeFloat {
				return float32(f), nil
			}
			return f, nil
		case schema.TypeDate:
			d, err := ParseDate(v)
			if err != nil {
				return fail(err)
			}
			return d, nil
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			ts, err := ParseTimestamp(v)
			if err != nil {
				return fail(err)
			}
			return ts, nil
		}
	}
	return fail(errors.New("not a partitionable type"))
}

func intOf(n int64, t schema.PrimitiveType) any {
	switch t {
	case schema.TypeInteger:
		return int32(n)
	case schema.TypeShort:
		return int16(n)
	case schema.TypeByte:
		return int8(n)
	}
	return n
}

// rescale returns d with the given scale when that loses no digits;
// otherwise d unchanged (comparisons rescale anyway).
func rescale(d schema.Decimal, scale int) schema.Decimal {
	if d.Unscaled == nil || d.Scale == scale {
		return d
	}
	if scale > d.Scale {
		u := new(big.Int).Mul(d.Unscaled, pow10(scale-d.Scale))
		return schema.Decimal{Unscaled: u, Scale: scale}
	}
	q, r := new(big.Int).QuoRem(d.Unscaled, pow10(d.Scale-scale), new(big.Int))
	if r.Sign() != 0 {
		return d
	}
	return schema.Decimal{Unscaled: q, Scale: scale}
}

func pow10(n int) *big.Int { return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil) }

// CompareValues orders two non-null values of compatible types with Spark's
// ordering: numbers across widths and kinds (integers, decimals exactly;
// floats with NaN greater than every other value and equal to itself, -0 ==
// 0), strings and binaries bytewise (unsigned), false < true, dates and
// timestamps in time (a date is its midnight UTC). ok is false when the
// types cannot be compared.
func CompareValues(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		if !ok {
			return 0, false
		}
		return strings.Compare(x, y), true
	case []byte:
		y, ok := b.([]byte)
		if !ok {
			return 0, false
		}
		return bytes.Compare(x, y), true
	case bool:
		y, ok := b.(bool)
		if !ok {
			return 0, false
		}
		return boolInt(x) - boolInt(y), true
	case schema.Date, time.Time:
		tx, okx := timeOf(a)
		ty, oky := timeOf(b)
		if !okx || !oky {
			return 0, false
		}
		return tx.Compare(ty), true
	}
	return compareNumbers(a, b)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func timeOf(v any) (time.Time, bool) {
	switch x := v.(type) {
	case time.Time:
		return x, true
	case schema.Date:
		return dateTime(x), true
	}
	return time.Time{}, false
}

type numKind uint8

const (
	numNone numKind = iota
	numInt
	numDec
	numFloat
)

func numberOf(v any) (i int64, d schema.Decimal, f float64, k numKind) {
	switch x := v.(type) {
	case int64:
		return x, d, 0, numInt
	case int32:
		return int64(x), d, 0, numInt
	case int16:
		return int64(x), d, 0, numInt
	case int8:
		return int64(x), d, 0, numInt
	case int:
		return int64(x), d, 0, numInt
	case schema.Decimal:
		if x.Unscaled == nil {
			return 0, d, 0, numNone
		}
		return 0, x, 0, numDec
	case float64:
		return 0, d, x, numFloat
	case float32:
		return 0, d, float64(x), numFloat
	}
	return 0, d, 0, numNone
}

func compareNumbers(a, b any) (int, bool) {
	ia, da, fa, ka := numberOf(a)
	ib, db, fb, kb := numberOf(b)
	if ka == numNone || kb == numNone {
		return 0, false
	}
	switch {
	case ka == numInt && kb == numInt:
		switch {
		case ia < ib:
			return -1, true
		case ia > ib:
			return 1, true
		}
		return 0, true
	case ka == numFloat || kb == numFloat:
		if ka != numFloat {
			fa = toFloat(ia, da, ka)
		}
		if kb != numFloat {
			fb = toFloat(ib, db, kb)
		}
		return compareFloats(fa, fb), true
	}
	if ka == numInt {
		da = schema.Decimal{Unscaled: big.NewInt(ia)}
	}
	if kb == numInt {
		db = schema.Decimal{Unscaled: big.NewInt(ib)}
	}
	return compareDecimals(da, db), true
}

func toFloat(i int64, d schema.Decimal, k numKind) float64 {
	if k == numInt {
		return float64(i)
	}
	r := new(big.Rat).SetFrac(d.Unscaled, pow10(max(d.Scale, 0)))
	f, _ := r.Float64()
	return f
}

// compareFloats is Spark's total order for doubles: NaN is the largest value
// and equals NaN; -0.0 equals 0.0.
func compareFloats(a, b float64) int {
	an, bn := math.IsNaN(a), math.IsNaN(b)
	switch {
	case an && bn:
		return 0
	case an:
		return 1
	case bn:
		return -1
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

func compareDecimals(a, b schema.Decimal) int {
	s := max(a.Scale, b.Scale)
	x := new(big.Int).Set(a.Unscaled)
	if a.Scale < s {
		x.Mul(x, pow10(s-a.Scale))
	}
	y := new(big.Int).Set(b.Unscaled)
	if b.Scale < s {
		y.Mul(y, pow10(s-b.Scale))
	}
	return x.Cmp(y)
}
