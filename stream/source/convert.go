package source

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// fieldError is a conversion error at a (dotted) field path.
type fieldError struct {
	field string
	err   error
}

func (e *fieldError) Error() string { return e.err.Error() }
func (e *fieldError) Unwrap() error { return e.err }

func atField(path string, err error) error {
	var fe *fieldError
	if errors.As(err, &fe) {
		return err
	}
	return &fieldError{field: path, err: err}
}

func joinField(parent, name string) string {
	if parent == "" {
		return name
	}
	return parent + "." + name
}

// converter turns JSON values and CSV strings into the Go values of
// schema.Batch (types.go) for a Delta type.
type converter struct {
	tp timeParser
	// strict: a field not in the schema holding a non-null value is an
	// error (SchemaEvolutionFailOnNewColumns); otherwise it is ignored.
	strict bool
}

var errNull = errors.New("null in a non-nullable field")

// jsonRow converts one JSON object to a row of schema. Fields missing from
// the object are null; a key matches a field exactly, else
// case-insensitively (as the CSV header, the Parquet reader and EvolveSchema
// match names, and as a Spark + Delta write resolves columns with
// spark.sql.caseSensitive=false: an "ID" key is column id, not a new
// column); a key matching no field with a non-null value is an
// unknown-field error when c.strict, else ignored (as Spark's reader does
// with a user-given schema).
func (c *converter) jsonRow(raw json.RawMessage, sch *schema.StructType, path string) ([]any, error) {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(raw, &obj); err != nil || obj == nil {
		return nil, atField(path, fmt.Errorf("want a JSON object, got %s", abbreviate(raw)))
	}
	row := make([]any, len(sch.Fields))
	found := 0
	for i, f := range sch.Fields {
		fp := joinField(path, f.Name)
		v, ok := obj[f.Name]
		if !ok {
			v, ok = foldKey(obj, f.Name)
		}
		if ok {
			found++
		}
		if !ok || isJSONNull(v) {
			if !f.Nullable {
				return nil, atField(fp, errNull)
			}
			continue
		}
		val, err := c.jsonValue(v, f.Type, fp)
		if err != nil {
			return nil, atField(fp, err)
		}
		row[i] = val
	}
	if c.strict && found < len(obj) {
		if name := firstUnknown(obj, sch); name != "" {
			return nil, atField(joinField(path, name), unknownFieldError{})
		}
	}
	return row, nil
}

// foldKey is obj's value for the first (by name) key equal to name under
// case folding.
func foldKey(obj map[string]json.RawMessage, name string) (json.RawMessage, bool) {
	key, found := foldName(obj, name)
	return obj[key], found
}

// firstUnknown returns the first (by name) key of obj with a non-null value
// that jsonRow read into no field of schema, or "".
func firstUnknown(obj map[string]json.RawMessage, sch *schema.StructType) string {
	read := make(map[string]bool, len(sch.Fields))
	for _, f := range sch.Fields {
		if _, ok := obj[f.Name]; ok {
			read[f.Name] = true
		} else if k, ok := foldName(obj, f.Name); ok {
			read[k] = true
		}
	}
	first := ""
	for k, v := range obj {
		if !read[k] && !isJSONNull(v) && (first == "" || k < first) {
			first = k
		}
	}
	return first
}

// foldName is the key foldKey reads.
func foldName(obj map[string]json.RawMessage, name string) (string, bool) {
	key, found := "", false
	for k := range obj {
		if strings.EqualFold(k, name) && (!found || k < key) {
			key, found = k, true
		}
	}
	return key, found
}

func isJSONNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }

func abbreviate(raw []byte) string {
	s := string(bytes.TrimSpace(raw))
	if len(s) > 40 {
		s = s[:37] + "..."
	}
	return s
}

func (c *converter) jsonValue(raw json.RawMessage, t schema.DataType, path string) (any, error) {
	raw = bytes.TrimSpace(raw)
	isString := len(raw) > 0 && raw[0] == '"'
	var str string
	if isString {
		if err := json.Unmarshal(raw, &str); err != nil {
			return nil, err
		}
	}
	switch tt := t.(type) {
	case schema.PrimitiveType:
		switch tt {
		case schema.TypeString:
			if isString {
				return str, nil
			}
			var b bytes.Buffer
			if err := json.Compact(&b, raw); err != nil {
				return nil, err
			}
			return b.String(), nil
		case schema.TypeLong, schema.TypeInteger, schema.TypeShort, schema.TypeByte,
			schema.TypeFloat, schema.TypeDouble, schema.TypeBoolean:
			if isString {
				if tt == schema.TypeFloat || tt == schema.TypeDouble {
					if f, ok := nonNumeric(str); ok {
						return c.stringValue(strconv.FormatFloat(f, 'g', -1, 64), t)
					}
				}
				return nil, fmt.Errorf("want %s, got string %s", tt, abbreviate(raw))
			}
			if tt == schema.TypeBoolean {
				switch string(raw) {
				case "true":
					return true, nil
				case "false":
					return false, nil
				}
				return nil, fmt.Errorf("want boolean, got %s", abbreviate(raw))
			}
			if len(raw) == 0 || !(raw[0] == '-' || raw[0] >= '0' && raw[0] <= '9') {
				return nil, fmt.Errorf("want %s, got %s", tt, abbreviate(raw))
			}
			return c.stringValue(string(raw), t)
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			if !isString {
				// A number is seconds since the epoch (Spark's JSON reader).
				f, err := strconv.ParseFloat(string(raw), 64)
				if err != nil {
					return nil, fmt.Errorf("want timestamp, got %s", abbreviate(raw))
				}
				// Spark's timestamp range is years 1..9999 (stored as int64
				// microseconds): anything outside is an error, never a
				// silently wrapped value.
				if math.IsNaN(f) || f < minTimestampSeconds || f > maxTimestampSeconds {
					return nil, fmt.Errorf("timestamp %s seconds is out of range (years 0001-9999)", abbreviate(raw))
				}
				sec, frac := math.Modf(f)
				return time.Unix(int64(sec), int64(math.Round(frac*1e6))*1000).UTC(), nil
			}
			return c.stringValue(str, t)
		case schema.TypeDate, schema.TypeBinary:
			if !isString {
				return nil, fmt.Errorf("want %s as a string, got %s", tt, abbreviate(raw))
			}
			return c.stringValue(str, t)
		}
		return nil, fmt.Errorf("%w: type %s", ErrFormat, tt)
	case schema.DecimalType:
		if isString {
			return c.stringValue(str, t)
		}
		return c.stringValue(string(raw), t)
	case *schema.StructType:
		return c.jsonRow(raw, tt, path)
	case *schema.ArrayType:
		var elems []json.RawMessage
		if err := json.Unmarshal(raw, &elems); err != nil || (len(raw) > 0 && raw[0] != '[') {
			return nil, fmt.Errorf("want an array, got %s", abbreviate(raw))
		}
		out := make([]any, len(elems))
		for i, e := range elems {
			ep := fmt.Sprintf("%s[%d]", path, i)
			if isJSONNull(e) {
				if !tt.ContainsNull {
					return nil, atField(ep, errNull)
				}
				continue
			}
			v, err := c.jsonValue(e, tt.ElementType, ep)
			if err != nil {
				return nil, atField(ep, err)
			}
			out[i] = v
		}
		return out, nil
	case *schema.MapType:
		entries, err := objectEntries(raw)
		if err != nil {
			return nil, fmt.Errorf("want an object for a map, got %s", abbreviate(raw))
		}
		out := make([]schema.MapEntry, 0, len(entries))
		for _, e := range entries {
			kp := joinField(path, e.key)
			k, err := c.stringValue(e.key, tt.KeyType)
			if err != nil {
				return nil, atField(kp, fmt.Errorf("map key: %w", err))
			}
			var v any
			if isJSONNull(e.value) {
				if !tt.ValueContainsNull {
					return nil, atField(kp, errNull)
				}
			} else if v, err = c.jsonValue(e.value, tt.ValueType, kp); err != nil {
				return nil, atField(kp, err)
			}
			out = append(out, schema.MapEntry{Key: k, Value: v})
		}
		return out, nil
	}
	return nil, fmt.Errorf("%w: type %s", ErrFormat, t.TypeName())
}

type jsonEntry struct {
	key   string
	value json.RawMessage
}

// objectEntries decodes a JSON object keeping its key order.
func objectEntries(raw json.RawMessage) ([]jsonEntry, error) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	tok, err := dec.Token()
	if err != nil || tok != json.Delim('{') {
		return nil, fmt.Errorf("not an object")
	}
	var out []jsonEntry
	for dec.More() {
		kt, err := dec.Token()
		if err != nil {
			return nil, err
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		out = append(out, jsonEntry{key: kt.(string), value: v})
	}
	return out, nil
}

// nonNumeric reads Spark's allowNonNumericNumbers spellings.
func nonNumeric(s string) (float64, bool) {
	switch s {
	case "NaN":
		return math.NaN(), true
	case "Infinity", "+Infinity", "INF", "+INF", "Inf":
		return math.Inf(1), true
	case "-Infinity", "-INF", "-Inf":
		return math.Inf(-1), true
	}
	return 0, false
}

// stringValue converts a text value (a CSV cell, a JSON string or number) to
// type t.
func (c *converter) stringValue(s string, t schema.DataType) (any, error) {
	switch tt := t.(type) {
	case schema.PrimitiveType:
		switch tt {
		case schema.TypeString:
			return s, nil
		case schema.TypeLong, schema.TypeInteger, schema.TypeShort, schema.TypeByte:
			bits := map[schema.PrimitiveType]int{schema.TypeLong: 64, schema.TypeInteger: 32, schema.TypeShort: 16, schema.TypeByte: 8}[tt]
			n, err := strconv.ParseInt(strings.TrimSpace(s), 10, bits)
			if err != nil {
				if errors.Is(err, strconv.ErrRange) {
					return nil, fmt.Errorf("%s out of range for %s", s, tt)
				}
				return nil, fmt.Errorf("want %s, got %q", tt, s)
			}
			switch tt {
			case schema.TypeInteger:
				return int32(n), nil
			case schema.TypeShort:
				return int16(n), nil
			case schema.TypeByte:
				return int8(n), nil
			}
			return n, nil
		case schema.TypeDouble, schema.TypeFloat:
			s = strings.TrimSpace(s)
			f, ok := nonNumeric(s)
			if !ok {
				var err error
				f, err = strconv.ParseFloat(s, 64)
				if err != nil {
					return nil, fmt.Errorf("want %s, got %q", tt, s)
				}
			}
			if tt == schema.TypeFloat {
				return float32(f), nil
			}
			return f, nil
		case schema.TypeBoolean:
			switch {
			case strings.EqualFold(strings.TrimSpace(s), "true"):
				return true, nil
			case strings.EqualFold(strings.TrimSpace(s), "false"):
				return false, nil
			}
			return nil, fmt.Errorf("want boolean, got %q", s)
		case schema.TypeBinary:
			b, err := base64.StdEncoding.DecodeString(s)
			if err != nil {
				return nil, fmt.Errorf("want base64 binary: %w", err)
			}
			return b, nil
		case schema.TypeDate:
			d, err := c.tp.date(s)
			if err != nil {
				return nil, err
			}
			return schema.Date(int32(math.Floor(float64(d.Unix()) / 86400))), nil
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			return c.tp.timestamp(s)
		}
	case schema.DecimalType:
		return parseDecimal(strings.TrimSpace(s), tt)
	}
	return nil, fmt.Errorf("%w: cannot read type %s from text", ErrFormat, t.TypeName())
}

// parseDecimal reads a decimal number into decimal(p,s), rounding half up to
// the scale (as Spark's Decimal.changePrecision) and refusing values with
// more than p digits.
func parseDecimal(s string, t schema.DecimalType) (schema.Decimal, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return schema.Decimal{}, fmt.Errorf("want %s, got %q", t.TypeName(), s)
	}
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(t.Scale)), nil)))
	num, den := scaled.Num(), scaled.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int))
	// Round half away from zero.
	if m.Sign() != 0 {
		twice := new(big.Int).Mul(new(big.Int).Abs(m), big.NewInt(2))
		if twice.Cmp(den) >= 0 {
			if num.Sign() < 0 {
				q.Sub(q, big.NewInt(1))
			} else {
				q.Add(q, big.NewInt(1))
			}
		}
	}
	if digits := len(new(big.Int).Abs(q).String()); q.Sign() != 0 && digits > t.Precision {
		return schema.Decimal{}, fmt.Errorf("%s does not fit %s", s, t.TypeName())
	}
	return schema.Decimal{Unscaled: q, Scale: t.Scale}, nil
}

// The seconds since the epoch of 0001-01-01T00:00:00Z and of
// 9999-12-31T23:59:59.999999Z, Spark's timestamp range.
const (
	minTimestampSeconds = -62135596800
	maxTimestampSeconds = 253402300799.999999
)
