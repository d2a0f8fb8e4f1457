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
	"unicode/utf8"

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

// jsonRow converts one JSON object (a value json.Valid accepts) to a row
// of schema. Fields missing from the object are null; a key matches a field
// exactly, else case-insensitively (as the CSV header, the Parquet reader
// and EvolveSchema match names, and as a Spark + Delta write resolves
// columns with spark.sql.caseSensitive=false: an "ID" key is column id, not
// a new column); of a key given twice the last value counts (as
// encoding/json into a map); a key matching no field with a non-null value
// is an unknown-field error when c.strict, else ignored (as Spark's reader
// does with a user-given schema). scratch, when not nil, is reused for the
// object's members; row, when not nil, is filled (len(sch.Fields) nil
// values) instead of a new one.
func (c *converter) jsonRow(raw []byte, sch *schema.StructType, path string, scratch *[]jsonMember, row []any) ([]any, error) {
	var ms []jsonMember
	if scratch != nil {
		ms = (*scratch)[:0]
	}
	ms, ok := objectMembers(raw, ms)
	if scratch != nil {
		*scratch = ms
	}
	if !ok {
		return nil, atField(path, fmt.Errorf("want a JSON object, got %s", abbreviate(raw)))
	}
	if row == nil {
		row = make([]any, len(sch.Fields))
	}
	return c.membersRow(ms, sch, path, row)
}

// membersRow fills row (one value per field of sch) from the members of a
// JSON object (see jsonRow).
func (c *converter) membersRow(ms []jsonMember, sch *schema.StructType, path string, row []any) ([]any, error) {
	idx := newMemberIndex(ms)
	var readBuf [16]bool
	read := readBuf[:0]
	if len(ms) <= len(readBuf) {
		read = readBuf[:len(ms)]
	} else {
		read = make([]bool, len(ms))
	}
	found := 0
	for i, f := range sch.Fields {
		j := idx.exact(f.Name, i)
		if j < 0 {
			j = idx.fold(f.Name)
		}
		if j >= 0 {
			found++
			read[j] = true
		}
		if j < 0 || isJSONNull(ms[j].val) {
			if !f.Nullable {
				return nil, atField(joinField(path, f.Name), errNull)
			}
			continue
		}
		val, err := c.jsonValue(ms[j].val, f.Type, joinField(path, f.Name))
		if err != nil {
			return nil, atField(joinField(path, f.Name), err)
		}
		row[i] = val
	}
	if c.strict && found < len(ms) {
		if name := idx.firstUnknown(read); name != "" {
			return nil, atField(joinField(path, name), unknownFieldError{})
		}
	}
	return row, nil
}

// jsonMember is one member of a JSON object: its key, unescaped, and its
// value's bytes.
type jsonMember struct {
	key, val []byte
}

// memberIndex finds the members of one object by key. Of a key given twice
// only the last member counts: lookups return its index.
type memberIndex struct {
	ms   []jsonMember
	last map[string]int // for wide objects; nil: linear scans
}

func newMemberIndex(ms []jsonMember) memberIndex {
	idx := memberIndex{ms: ms}
	if len(ms) > 16 {
		idx.last = make(map[string]int, len(ms))
		for j, m := range ms {
			idx.last[string(m.key)] = j
		}
	}
	return idx
}

// lastOf is the index of the last member whose key is key, or -1.
func (x memberIndex) lastOf(key []byte) int {
	if x.last != nil {
		if j, ok := x.last[string(key)]; ok {
			return j
		}
		return -1
	}
	for j := len(x.ms) - 1; j >= 0; j-- {
		if string(x.ms[j].key) == string(key) {
			return j
		}
	}
	return -1
}

// exact is the index of the (last) member keyed name, or -1; hint is where
// it usually is (keys in schema order).
func (x memberIndex) exact(name string, hint int) int {
	if x.last == nil && hint < len(x.ms) && string(x.ms[hint].key) == name {
		// The last one, unless the key comes again later.
		for j := len(x.ms) - 1; j > hint; j-- {
			if string(x.ms[j].key) == name {
				return j
			}
		}
		return hint
	}
	return x.lastOf([]byte(name))
}

// fold is the index of the (last) member whose key is the first (by name)
// key equal to name under case folding, or -1.
func (x memberIndex) fold(name string) int {
	best := -1
	for j, m := range x.ms {
		if bytes.EqualFold(m.key, []byte(name)) && (best < 0 || bytes.Compare(m.key, x.ms[best].key) < 0) {
			best = j
		}
	}
	if best < 0 {
		return -1
	}
	return x.lastOf(x.ms[best].key)
}

// firstUnknown returns the first (by name) key with a non-null value whose
// last member is not marked in read, or "".
func (x memberIndex) firstUnknown(read []bool) string {
	var first []byte
	found := false
	for j, m := range x.ms {
		last := x.lastOf(m.key)
		if last != j || read[j] || isJSONNull(m.val) {
			continue
		}
		if !found || bytes.Compare(m.key, first) < 0 {
			first, found = m.key, true
		}
	}
	return string(first)
}

// objectMembers appends the members of raw, a JSON value json.Valid
// accepted, to ms in input order; ok is false when raw is not an object.
// It only finds where each key and value starts and ends (the value's
// bytes are kept as they are, for jsonValue): validation and every
// unescaping is encoding/json's.
func objectMembers(raw []byte, ms []jsonMember) ([]jsonMember, bool) {
	i := skipJSONSpace(raw, 0)
	if i >= len(raw) || raw[i] != '{' {
		return ms, false
	}
	i++
	for {
		i = skipJSONSpace(raw, i)
		if i >= len(raw) {
			return ms, false // not valid JSON: never from json.Valid input
		}
		switch raw[i] {
		case '}':
			return ms, true
		case ',':
			i = skipJSONSpace(raw, i+1)
		}
		end := jsonValueEnd(raw, i)
		key := raw[i+1 : end-1]
		if !plainJSONString(key) {
			var k string
			if err := json.Unmarshal(raw[i:end], &k); err != nil {
				return ms, false
			}
			key = []byte(k)
		}
		i = skipJSONSpace(raw, end)
		i = skipJSONSpace(raw, i+1) // the ':'
		end = jsonValueEnd(raw, i)
		ms = append(ms, jsonMember{key: key, val: raw[i:end]})
		i = end
	}
}

// plainJSONString reports whether the content of a JSON string (between
// its quotes) reads as itself: no escapes, valid UTF-8 (encoding/json
// replaces invalid bytes with U+FFFD).
func plainJSONString(b []byte) bool {
	for _, c := range b {
		if c == '\\' || c >= utf8.RuneSelf {
			return c != '\\' && utf8.Valid(b)
		}
	}
	return true
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonValueEnd is the index just after the JSON value starting at b[i] (b
// valid JSON).
func jsonValueEnd(b []byte, i int) int {
	switch b[i] {
	case '"':
		return jsonStringEnd(b, i)
	case '{', '[':
		depth := 0
		for i < len(b) {
			switch b[i] {
			case '"':
				i = jsonStringEnd(b, i)
				continue
			case '{', '[':
				depth++
			case '}', ']':
				if depth--; depth == 0 {
					return i + 1
				}
			}
			i++
		}
		return i
	}
	for i < len(b) {
		switch b[i] {
		case ',', '}', ']', ' ', '\t', '\n', '\r':
			return i
		}
		i++
	}
	return i
}

// jsonStringEnd is the index just after the JSON string starting at b[i].
func jsonStringEnd(b []byte, i int) int {
	for j := i + 1; j < len(b); {
		k := bytes.IndexByte(b[j:], '"')
		if k < 0 {
			return len(b)
		}
		j += k
		n := 0
		for p := j - 1; p > i && b[p] == '\\'; p-- {
			n++
		}
		j++
		if n%2 == 0 {
			return j
		}
	}
	return len(b)
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
		if len(raw) >= 2 && plainJSONString(raw[1:len(raw)-1]) {
			str = string(raw[1 : len(raw)-1])
		} else if err := json.Unmarshal(raw, &str); err != nil {
			return nil, err
		}
	}
	switch tt := t.(type) {
	case schema.PrimitiveType:
		if tt == schema.TypeLong && !isString {
			// The common case first; anything else (and every error's
			// words) is stringValue's.
			if n, err := strconv.ParseInt(string(raw), 10, 64); err == nil {
				return n, nil
			}
		}
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
		return c.jsonRow(raw, tt, path, nil, nil)
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
			bits := 64
			switch tt {
			case schema.TypeInteger:
				bits = 32
			case schema.TypeShort:
				bits = 16
			case schema.TypeByte:
				bits = 8
			}
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
