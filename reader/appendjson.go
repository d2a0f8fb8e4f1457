package reader

import (
	"encoding/base64"
	"math"
	"strconv"
	"time"
	"unicode/utf8"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
)

// AppendJSON appends the record to b as one JSON object (no newline),
// columns in schema order: the bytes MarshalJSON returns (the forms of
// JSONValue written by encoding/json without HTML escaping), built by one
// appender per Go value type instead of encoding/json, so that a scan
// prints millions of rows without a reflection pass or an allocation per
// value. TestAppendJSONEqualsEncodingJSON checks it against MarshalJSON
// for every Delta type.
func (r Record) AppendJSON(b []byte) []byte {
	return appendStructJSON(b, r.Values, r.Schema)
}

// appendStructJSON is structJSON's object: field names as keys, in field
// order, a missing value null.
func appendStructJSON(b []byte, vals []any, st *schema.StructType) []byte {
	b = append(b, '{')
	for i, f := range st.Fields {
		if i > 0 {
			b = append(b, ',')
		}
		b = appendJSONString(b, f.Name)
		b = append(b, ':')
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		b = appendJSONValue(b, v, f.Type)
	}
	return append(b, '}')
}

// appendJSONValue appends what encoding/json writes for JSONValue(v, t);
// its cases follow JSONValue's one by one.
func appendJSONValue(b []byte, v any, t schema.DataType) []byte {
	switch x := v.(type) {
	case nil:
		return append(b, "null"...)
	case string:
		return appendJSONString(b, x)
	case int64:
		return strconv.AppendInt(b, x, 10)
	case int32:
		return strconv.AppendInt(b, int64(x), 10)
	case int16:
		return strconv.AppendInt(b, int64(x), 10)
	case int8:
		return strconv.AppendInt(b, int64(x), 10)
	case bool:
		return strconv.AppendBool(b, x)
	case float64:
		return appendJSONFloat(b, x)
	case float32:
		return appendJSONFloat(b, float64(x)) // JSONValue widens float to float64
	case time.Time:
		// The layouts write only digits, '-', ':', '.', 'T' and 'Z': nothing
		// to escape.
		b = append(b, '"')
		b = appendTimestamp(b, x.UTC(), t == schema.TypeTimestampNTZ)
		return append(b, '"')
	case schema.Date:
		b = append(b, '"')
		b = appendDate(b, time.Unix(int64(x)*86400, 0).UTC())
		return append(b, '"')
	case schema.Decimal:
		return appendJSONString(b, decimalString(x))
	case schema.Variant:
		text, err := x.MarshalJSON()
		if err != nil {
			return append(b, "null"...)
		}
		return appendJSONString(b, string(text))
	case []byte:
		b = append(b, '"')
		b = base64.StdEncoding.AppendEncode(b, x)
		return append(b, '"')
	case []any:
		if st, ok := t.(*schema.StructType); ok {
			return appendStructJSON(b, x, st)
		}
		var elem schema.DataType
		if at, ok := t.(*schema.ArrayType); ok {
			elem = at.ElementType
		}
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendJSONValue(b, e, elem)
		}
		return append(b, ']')
	case []schema.MapEntry:
		var kt, vt schema.DataType
		if mt, ok := t.(*schema.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		allStrings := true
		for _, e := range x {
			if _, ok := e.Key.(string); !ok {
				allStrings = false
				break
			}
		}
		if allStrings {
			b = append(b, '{')
			for i, e := range x {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendJSONString(b, e.Key.(string))
				b = append(b, ':')
				b = appendJSONValue(b, e.Value, vt)
			}
			return append(b, '}')
		}
		// map[string]any{"key": ..., "value": ...}: encoding/json sorts the
		// keys.
		b = append(b, '[')
		for i, e := range x {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"key":`...)
			b = appendJSONValue(b, e.Key, kt)
			b = append(b, `,"value":`...)
			b = appendJSONValue(b, e.Value, vt)
			b = append(b, '}')
		}
		return append(b, ']')
	}
	// Any other Go value: as encoding/json writes it (JSONValue passes it
	// through), null when it cannot.
	enc, err := marshalNoEscape(v)
	if err != nil {
		return append(b, "null"...)
	}
	return append(b, enc...)
}

// appendJSONFloat is encoding/json's float64 encoding (ES6 number to string:
// %f, or %e outside [1e-6, 1e21) with a one-digit exponent kept short), or
// the string NonFiniteName gives for NaN and the infinities.
func appendJSONFloat(b []byte, f float64) []byte {
	if name, ok := parquetio.NonFiniteName(f); ok {
		return appendJSONString(b, name)
	}
	abs := math.Abs(f)
	format := byte('f')
	if abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	b = strconv.AppendFloat(b, f, format, -1, 64)
	if format == 'e' {
		// e-09 -> e-9, as encoding/json does.
		n := len(b)
		if n >= 4 && b[n-4] == 'e' && b[n-3] == '-' && b[n-2] == '0' {
			b[n-2] = b[n-1]
			b = b[:n-1]
		}
	}
	return b
}

// appendJSONString appends s as encoding/json writes a string without HTML
// escaping: '"' and '\\' escaped, control characters as \b \f \n \r \t or
// \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029 as \u2028, \u2029.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '\\', '"':
				b = append(b, '\\', c)
			case '\b':
				b = append(b, '\\', 'b')
			case '\f':
				b = append(b, '\\', 'f')
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}

// appendTimestamp appends t (UTC) as t.AppendFormat does with
// "2006-01-02T15:04:05.999999" (ntz: microseconds) or time.RFC3339Nano:
// written digit by digit for years 0 to 9999, the layout's own code
// otherwise.
func appendTimestamp(b []byte, t time.Time, ntz bool) []byte {
	year := t.Year()
	if year < 0 || year > 9999 {
		if ntz {
			return t.AppendFormat(b, "2006-01-02T15:04:05.999999")
		}
		return t.AppendFormat(b, time.RFC3339Nano)
	}
	b = appendDate(b, t)
	h, m, sec := t.Clock()
	b = append(b, 'T', byte('0'+h/10), byte('0'+h%10), ':', byte('0'+m/10), byte('0'+m%10), ':', byte('0'+sec/10), byte('0'+sec%10))
	frac, digits := t.Nanosecond(), 9
	if ntz {
		frac, digits = frac/1000, 6 // .999999 truncates, as Format does
	}
	if frac != 0 {
		for frac%10 == 0 {
			frac /= 10
			digits--
		}
		b = append(b, '.')
		start := len(b)
		for range digits {
			b = append(b, '0')
		}
		for i := len(b) - 1; i >= start; i-- {
			b[i] = byte('0' + frac%10)
			frac /= 10
		}
	}
	if !ntz {
		b = append(b, 'Z')
	}
	return b
}

// appendDate appends t's date as t.AppendFormat(b, "2006-01-02") does.
func appendDate(b []byte, t time.Time) []byte {
	y, mo, d := t.Date()
	if y < 0 || y > 9999 {
		return t.AppendFormat(b, "2006-01-02")
	}
	return append(b, byte('0'+y/1000), byte('0'+y/100%10), byte('0'+y/10%10), byte('0'+y%10), '-',
		byte('0'+int(mo)/10), byte('0'+int(mo)%10), '-', byte('0'+d/10), byte('0'+d%10))
}
