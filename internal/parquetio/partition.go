package parquetio

import (
	"errors"
	"fmt"
	"github.com/lakesink/lakesink/schema"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// HiveDefaultPartition is the directory value Spark and Hive use for a null
// (or empty string) partition value (ExternalCatalogUtils.DEFAULT_PARTITION_NAME).
const HiveDefaultPartition = "__HIVE_DEFAULT_PARTITION__"

// PartitionKV is one "column=value" element of a partition directory, unescaped.
// Value is nil for HiveDefaultPartition.
type PartitionKV = schema.PartitionValue

// needsEscape is Spark's ExternalCatalogUtils.charToEscape on non-Windows
// hosts: ASCII 0x01-0x1F, " # % ' * / : = ? \ 0x7F { [ ] ^.
func needsEscape(c byte) bool {
	switch {
	case c >= 0x01 && c <= 0x1F, c == 0x7F:
		return true
	}
	switch c {
	case '"', '#', '%', '\'', '*', '/', ':', '=', '?', '\\', '{', '[', ']', '^':
		return true
	}
	return false
}

const hexDigits = "0123456789ABCDEF"

// EscapePathName escapes a partition column name or value for a directory
// name exactly as Spark's ExternalCatalogUtils.escapePathName: every
// character of charToEscape becomes %XX (upper-case hex); all other
// characters, including spaces and non-ASCII, are kept.
func EscapePathName(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscape(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	var b strings.Builder
	b.Grow(len(s) + 2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscape(c) {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xF])
		} else {
			b.WriteByte(c)
		}
	}
	return b.String()
}

// UnescapePathName reverses EscapePathName as Spark's unescapePathName does:
// "%XX" with two hex digits becomes the character U+00XX; any other "%" is
// kept literally.
func UnescapePathName(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '%' && i+2 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				b.WriteRune(rune(v))
				i += 2
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}

// PartitionPath builds the Hive-style directory of a partition, e.g.
// "date=2024-01-01/origin=SFO", from partition values already serialized per
// PROTOCOL.md "Partition Value Serialization". Names and values are escaped
// with EscapePathName; a nil or empty value becomes __HIVE_DEFAULT_PARTITION__
// (Spark's ExternalCatalogUtils.getPartitionPathString). Returns "" for no
// columns.
func PartitionPath(cols []string, values map[string]*string) string {
	var b strings.Builder
	for i, c := range cols {
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(EscapePathName(c))
		b.WriteByte('=')
		v := values[c]
		if v == nil || *v == "" {
			b.WriteString(HiveDefaultPartition)
		} else {
			b.WriteString(escapeTrailingDots(EscapePathName(*v)))
		}
	}
	return b.String()
}

// escapeTrailingDots escapes the dots that end a value ending in "..", so
// that no directory name ends in ".." and no key holds "../": object-store
// layers treat "../" as a traversal (gocloud's fileblob rewrites it), which
// would make the file unreadable. Readers unescape %2E like any %XX (Spark's
// unescapePathName), and Delta readers take values from partitionValues.
func escapeTrailingDots(s string) string {
	if !strings.HasSuffix(s, "..") {
		return s
	}
	t := strings.TrimRight(s, ".")
	return t + strings.Repeat("%2E", len(s)-len(t))
}

// ParsePartitionPath parses "a=1/b=x%2Fy" (a file's directory, optionally
// followed by nothing else) into its unescaped column/value pairs, in order.
// __HIVE_DEFAULT_PARTITION__ yields a nil value. Elements that are not
// "name=value" make it fail with ErrPartitionPath. It never panics.
func ParsePartitionPath(dir string) ([]PartitionKV, error) {
	dir = strings.Trim(dir, "/")
	if dir == "" {
		return nil, nil
	}
	parts := strings.Split(dir, "/")
	out := make([]PartitionKV, 0, len(parts))
	for _, p := range parts {
		name, val, ok := strings.Cut(p, "=")
		if !ok || name == "" {
			return nil, fmt.Errorf("%w: %q: element %q is not column=value", ErrPartitionPath, dir, p)
		}
		kv := PartitionKV{Column: UnescapePathName(name)}
		if val != HiveDefaultPartition {
			v := UnescapePathName(val)
			kv.Value = &v
		}
		out = append(out, kv)
	}
	return out, nil
}

// Timestamp layouts for partition values (PROTOCOL.md, "Partition Value
// Serialization": {year}-{month}-{day} {hour}:{minute}:{second}.{microsecond}).
const (
	partitionTimestampLayout = "2006-01-02 15:04:05.000000"
	dateLayout               = "2006-01-02"
)

// SerializePartitionValue renders a Batch value of type t as a Delta
// partition value string (PROTOCOL.md, "Partition Value Serialization"):
// numbers in decimal, booleans true/false, dates 2001-01-31, timestamps
// "2001-01-31 10:00:00.123456" in UTC (timestamp_ntz: its wall clock),
// decimals plain, strings verbatim, binary as its bytes. nil (and the empty
// string, which Spark stores as null) yields nil. Errors wrap ErrRowMismatch.
func SerializePartitionValue(v any, t schema.DataType) (*string, error) {
	if v == nil {
		return nil, nil
	}
	var s string
	bad := func() (*string, error) {
		return nil, fmt.Errorf("%w: partition value %v (%T) is not a %s", schema.ErrRowMismatch, v, v, schema.FormatType(t))
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.TypeString:
			x, ok := v.(string)
			if !ok {
				return bad()
			}
			s = x
		case schema.TypeLong:
			x, ok := v.(int64)
			if !ok {
				return bad()
			}
			s = strconv.FormatInt(x, 10)
		case schema.TypeInteger:
			x, ok := v.(int32)
			if !ok {
				return bad()
			}
			s = strconv.FormatInt(int64(x), 10)
		case schema.TypeShort:
			x, ok := v.(int16)
			if !ok {
				return bad()
			}
			s = strconv.FormatInt(int64(x), 10)
		case schema.TypeByte:
			x, ok := v.(int8)
			if !ok {
				return bad()
			}
			s = strconv.FormatInt(int64(x), 10)
		case schema.TypeFloat:
			x, ok := v.(float32)
			if !ok {
				return bad()
			}
			s = formatJavaFloat(float64(x), 32)
		case schema.TypeDouble:
			x, ok := v.(float64)
			if !ok {
				return bad()
			}
			s = formatJavaFloat(x, 64)
		case schema.TypeBoolean:
			x, ok := v.(bool)
			if !ok {
				return bad()
			}
			s = strconv.FormatBool(x)
		case schema.TypeBinary:
			x, ok := v.([]byte)
			if !ok {
				return bad()
			}
			s = string(x)
		case schema.TypeDate:
			x, ok := v.(schema.Date)
			if !ok {
				return bad()
			}
			s = x.String()
		case schema.TypeTimestamp:
			x, ok := v.(time.Time)
			if !ok {
				return bad()
			}
			s = x.UTC().Format(partitionTimestampLayout)
		case schema.TypeTimestampNTZ:
			x, ok := v.(time.Time)
			if !ok {
				return bad()
			}
			s = ntzWall(x).Format(partitionTimestampLayout)
		default:
			return bad()
		}
	case schema.DecimalType:
		x, ok := v.(schema.Decimal)
		if !ok || x.Unscaled == nil {
			return bad()
		}
		s = x.String()
	default:
		return nil, fmt.Errorf("%w: %s cannot be a partition column type", schema.ErrSchema, schema.FormatType(t))
	}
	if s == "" {
		return nil, nil
	}
	return &s, nil
}

// formatJavaFloat renders like Java's Float/Double.toString for ordinary
// magnitudes ("1.0", "0.5", "NaN", "Infinity").
func formatJavaFloat(f float64, bits int) string {
	if name, ok := NonFiniteName(f); ok {
		return name
	}
	s := strconv.FormatFloat(f, 'g', -1, bits)
	if !strings.ContainsAny(s, ".eEn") {
		s += ".0"
	}
	return s
}

// ParsePartitionValue parses a Delta partition value string into the Batch
// value of type t; nil (and "" for non-string types) yields nil. Timestamps
// accept "2001-01-31 10:00:00[.ffffff]" (UTC) and RFC 3339 forms. Errors wrap
// ErrRowMismatch.
func ParsePartitionValue(s *string, t schema.DataType) (any, error) {
	if s == nil {
		return nil, nil
	}
	v := *s
	if v == "" {
		if t == schema.TypeString {
			return nil, nil
		}
		return nil, nil
	}
	bad := func(err error) (any, error) {
		return nil, fmt.Errorf("%w: partition value %q is not a %s: %v", schema.ErrRowMismatch, v, schema.FormatType(t), err)
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.TypeString:
			return v, nil
		case schema.TypeBinary:
			return []byte(v), nil
		case schema.TypeLong:
			x, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return bad(err)
			}
			return x, nil
		case schema.TypeInteger:
			x, err := strconv.ParseInt(v, 10, 32)
			if err != nil {
				return bad(err)
			}
			return int32(x), nil
		case schema.TypeShort:
			x, err := strconv.ParseInt(v, 10, 16)
			if err != nil {
				return bad(err)
			}
			return int16(x), nil
		case schema.TypeByte:
			x, err := strconv.ParseInt(v, 10, 8)
			if err != nil {
				return bad(err)
			}
			return int8(x), nil
		case schema.TypeFloat:
			x, err := parseJavaFloat(v, 32)
			if err != nil {
				return bad(err)
			}
			return float32(x), nil
		case schema.TypeDouble:
			x, err := parseJavaFloat(v, 64)
			if err != nil {
				return bad(err)
			}
			return x, nil
		case schema.TypeBoolean:
			switch strings.ToLower(v) {
			case "true":
				return true, nil
			case "false":
				return false, nil
			}
			return bad(errors.New("want true or false"))
		case schema.TypeDate:
			d, err := schema.ParseDate(v)
			if err != nil {
				return bad(err)
			}
			return d, nil
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			ts, err := parsePartitionTimestamp(v)
			if err != nil {
				return bad(err)
			}
			return ts, nil
		}
	case schema.DecimalType:
		d, err := schema.ParseDecimal(v, t.Scale)
		if err != nil {
			return bad(err)
		}
		return d, nil
	}
	return nil, fmt.Errorf("%w: %s cannot be a partition column type", schema.ErrSchema, schema.FormatType(t))
}

func parseJavaFloat(v string, bits int) (float64, error) {
	switch v {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		return math.Inf(1), nil
	case "-Infinity":
		return math.Inf(-1), nil
	}
	return strconv.ParseFloat(v, bits)
}

func parsePartitionTimestamp(v string) (time.Time, error) {
	for _, layout := range []string{
		"2006-01-02 15:04:05.999999999",
		"2006-01-02T15:04:05.999999999Z07:00",
		"2006-01-02 15:04:05.999999999Z07:00",
		"2006-01-02T15:04:05.999999999",
		"2006-01-02 15:04",
		"2006-01-02",
	} {
		if ts, err := time.Parse(layout, v); err == nil {
			return ts.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("unrecognised timestamp %q", v)
}

var pow10Cache = func() [39]*big.Int {
	var p [39]*big.Int
	p[0] = big.NewInt(1)
	for i := 1; i < len(p); i++ {
		p[i] = new(big.Int).Mul(p[i-1], big.NewInt(10))
	}
	return p
}()

// pow10 returns 10^n (a shared value for n <= 38: never modify it).
func pow10(n int) *big.Int {
	if n >= 0 && n < len(pow10Cache) {
		return pow10Cache[n]
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// ntzWall returns t's wall clock as a UTC time (timestamp_ntz semantics).
func ntzWall(t time.Time) time.Time {
	if t.Location() == time.UTC {
		return t
	}
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC)
}
