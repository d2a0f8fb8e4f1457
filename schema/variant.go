package schema

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Variant is one value of a variant column (PROTOCOL.md "Variant Data Type"),
// decoded from the Parquet variant binary encoding. Value is one of:
//
//	nil                  variant null
//	bool
//	int64                int8, int16, int32 and int64 variants
//	float32, float64
//	Decimal              decimal4, decimal8, decimal16 (exact)
//	string
//	[]byte               binary
//	Date                 date
//	time.Time            timestamp (UTC) and timestamp_ntz (wall clock as UTC)
//	map[string]any       object (values of these same types)
//	[]any                array
//
// Its JSON text (MarshalJSON) is the value as JSON, as Spark's to_json
// writes a variant: objects with keys in order, decimals as exact numbers,
// dates and timestamps as quoted text, binary as base64 text.
type Variant struct {
	Value any
	// NTZ marks Value (a time.Time) as a timestamp_ntz.
	NTZ bool
}

// MarshalJSON writes the variant's JSON text.
func (v Variant) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	if err := writeVariantJSON(&b, v.Value, v.NTZ); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// VariantNTZ wraps a timestamp_ntz inside a variant object or array (the
// NTZ flag of Variant covers only a top-level value).
type VariantNTZ time.Time

func writeVariantJSON(b *bytes.Buffer, v any, ntz bool) error {
	switch x := v.(type) {
	case nil:
		b.WriteString("null")
	case bool:
		b.WriteString(strconv.FormatBool(x))
	case int64:
		b.WriteString(strconv.FormatInt(x, 10))
	case float32:
		writeVariantFloat(b, float64(x), 32)
	case float64:
		writeVariantFloat(b, x, 64)
	case Decimal:
		// Spark's VariantUtil.getDecimal strips trailing zeros; toJson
		// writes toPlainString.
		t := x.String()
		if strings.Contains(t, ".") {
			t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
		}
		b.WriteString(t)
	case string:
		writeJSONString(b, x)
	case []byte:
		writeJSONString(b, base64.StdEncoding.EncodeToString(x))
	case Date:
		writeJSONString(b, time.Unix(int64(x)*86400, 0).UTC().Format("2006-01-02"))
	case time.Time:
		// Spark's VariantUtil.toJson: up to six fraction digits without
		// trailing zeros, the offset +00:00 (UTC) for a timestamp (checked
		// against Spark 4.2 by the generated corpus's spark_variant case).
		if ntz {
			writeJSONString(b, x.UTC().Format("2006-01-02 15:04:05.999999"))
		} else {
			writeJSONString(b, x.UTC().Format("2006-01-02 15:04:05.999999")+"+00:00")
		}
	case VariantNTZ:
		return writeVariantJSON(b, time.Time(x), true)
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		b.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				b.WriteByte(',')
			}
			writeJSONString(b, k)
			b.WriteByte(':')
			if err := writeVariantJSON(b, x[k], false); err != nil {
				return err
			}
		}
		b.WriteByte('}')
	case []any:
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := writeVariantJSON(b, e, false); err != nil {
				return err
			}
		}
		b.WriteByte(']')
	default:
		// Any other Go value: its own JSON (e.g. a UUID as text).
		j, err := json.Marshal(x)
		if err != nil {
			return err
		}
		b.Write(j)
	}
	return nil
}

// writeVariantFloat writes a finite float as a JSON number, NaN and the
// infinities as the quoted names Spark's to_json gives them.
func writeVariantFloat(b *bytes.Buffer, f float64, bits int) {
	switch {
	case math.IsNaN(f):
		b.WriteString(`"NaN"`)
	case math.IsInf(f, 1):
		b.WriteString(`"Infinity"`)
	case math.IsInf(f, -1):
		b.WriteString(`"-Infinity"`)
	default:
		b.WriteString(strconv.FormatFloat(f, 'g', -1, bits))
	}
}

func writeJSONString(b *bytes.Buffer, s string) {
	enc := json.NewEncoder(b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(s) // a string always encodes
	b.Truncate(b.Len() - 1)
}
