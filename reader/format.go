package reader

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"strconv"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
)

// Output helpers for the CLI (`lakesink scan --format json|csv|table`,
// `lakesink files --json`): timestamps as RFC 3339, dates as yyyy-mm-dd,
// decimals as strings (exact), binary as base64, NaN and infinities as the
// strings "NaN", "Infinity", "-Infinity" (JSON has no such numbers), a
// variant as its JSON text in a string (schema.Variant.MarshalJSON).

// JSONValue converts a value of type t (nil: infer from the Go value) into
// something encoding/json writes as above: structs become objects keyed by
// field name (json.RawMessage, field order kept), maps with string keys
// objects, other maps arrays of {"key","value"} objects.
func JSONValue(v any, t schema.DataType) any {
	switch x := v.(type) {
	case nil:
		return nil
	case time.Time:
		if t == schema.TypeTimestampNTZ {
			return x.UTC().Format("2006-01-02T15:04:05.999999")
		}
		return x.UTC().Format(time.RFC3339Nano)
	case schema.Date:
		return time.Unix(int64(x)*86400, 0).UTC().Format("2006-01-02")
	case schema.Decimal:
		return decimalString(x)
	case schema.Variant:
		// The variant's JSON text, as a string (a variant null is the text
		// "null", unlike a null column value).
		b, err := x.MarshalJSON()
		if err != nil {
			return nil
		}
		return string(b)
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case float64:
		return floatJSON(x)
	case float32:
		return floatJSON(float64(x))
	case []any:
		if st, ok := t.(*schema.StructType); ok {
			return structJSON(x, st)
		}
		var elem schema.DataType
		if at, ok := t.(*schema.ArrayType); ok {
			elem = at.ElementType
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = JSONValue(e, elem)
		}
		return out
	case []schema.MapEntry:
		var kt, vt schema.DataType
		if mt, ok := t.(*schema.MapType); ok {
			kt, vt = mt.KeyType, mt.ValueType
		}
		allStrings := true
		for _, e := range x {
			if _, ok := e.Key.(string); !ok {
				allStrings = false
			}
		}
		if allStrings {
			var buf bytes.Buffer
			buf.WriteByte('{')
			for i, e := range x {
				if i > 0 {
					buf.WriteByte(',')
				}
				k, _ := marshalNoEscape(e.Key)
				buf.Write(k)
				buf.WriteByte(':')
				val, err := marshalNoEscape(JSONValue(e.Value, vt))
				if err != nil {
					val = []byte("null")
				}
				buf.Write(val)
			}
			buf.WriteByte('}')
			return json.RawMessage(buf.Bytes())
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = map[string]any{"key": JSONValue(e.Key, kt), "value": JSONValue(e.Value, vt)}
		}
		return out
	}
	return v
}

func floatJSON(f float64) any {
	if name, ok := parquetio.NonFiniteName(f); ok {
		return name
	}
	return f
}

func decimalString(d schema.Decimal) string {
	if d.Unscaled == nil {
		return ""
	}
	if d.Scale <= 0 {
		return new(big.Int).Mul(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(-d.Scale)), nil)).String()
	}
	r := new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.FloatString(d.Scale)
}

// structJSON renders a struct value as a JSON object in field order.
func structJSON(vals []any, st *schema.StructType) json.RawMessage {
	var buf bytes.Buffer
	buf.WriteByte('{')
	for i, f := range st.Fields {
		if i > 0 {
			buf.WriteByte(',')
		}
		k, _ := marshalNoEscape(f.Name)
		buf.Write(k)
		buf.WriteByte(':')
		var v any
		if i < len(vals) {
			v = vals[i]
		}
		b, err := marshalNoEscape(JSONValue(v, f.Type))
		if err != nil {
			b = []byte("null")
		}
		buf.Write(b)
	}
	buf.WriteByte('}')
	return buf.Bytes()
}

// MarshalJSON writes the record as one JSON object, columns in schema order
// (see JSONValue): AppendJSON's bytes.
func (r Record) MarshalJSON() ([]byte, error) {
	return r.AppendJSON(nil), nil
}

// FormatValue renders a value as text for CSV and table output: the JSON
// forms above for scalars ("" for null), and compact JSON for nested values.
func FormatValue(v any, t schema.DataType) string {
	j := JSONValue(v, t)
	switch x := j.(type) {
	case nil:
		return ""
	case string:
		return x
	case bool:
		return strconv.FormatBool(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int64, int32, int16, int8:
		b, _ := marshalNoEscape(x)
		return string(b)
	}
	b, err := marshalNoEscape(j)
	if err != nil {
		return ""
	}
	return string(b)
}

// MarshalJSON writes the file with its partition values in the JSON forms
// of JSONValue.
func (f File) MarshalJSON() ([]byte, error) {
	type plain File // without this method
	pv := make(map[string]any, len(f.PartitionValues))
	for k, v := range f.PartitionValues {
		pv[k] = JSONValue(v, nil)
	}
	return marshalNoEscape(struct {
		plain
		PartitionValues map[string]any `json:"partitionValues,omitempty"`
	}{plain(f), pv})
}

// marshalNoEscape is json.Marshal without HTML escaping ("<" stays "<"), as
// every JSON lakesink writes.
func marshalNoEscape(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
