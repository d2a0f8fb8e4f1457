package main

import (
	"encoding/base64"
	"fmt"
	"math"
	"strconv"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// jsonValue converts a value of the Batch representation to a JSON-friendly
// one: timestamps RFC 3339 (UTC; timestamp_ntz without a zone), dates
// YYYY-MM-DD, decimals as strings, binary base64, structs as objects, maps
// with string keys as objects (else a list of {key, value}), NaN/±Inf as
// strings.
func jsonValue(v any, t parquetio.DataType) any {
	if v == nil {
		return nil
	}
	switch x := v.(type) {
	case time.Time:
		if t == parquetio.TypeTimestampNTZ {
			return x.UTC().Format("2006-01-02T15:04:05.999999")
		}
		return x.UTC().Format(time.RFC3339Nano)
	case parquetio.Date:
		return x.String()
	case parquetio.Decimal:
		return x.String()
	case []byte:
		return base64.StdEncoding.EncodeToString(x)
	case float64:
		if math.IsNaN(x) || math.IsInf(x, 0) {
			return strconv.FormatFloat(x, 'g', -1, 64)
		}
		return x
	case float32:
		f := float64(x)
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return strconv.FormatFloat(f, 'g', -1, 32)
		}
		return x
	case []any:
		switch tt := t.(type) {
		case *parquetio.StructType:
			obj := make(map[string]any, len(tt.Fields))
			for i, f := range tt.Fields {
				if i < len(x) {
					obj[f.Name] = jsonValue(x[i], f.Type)
				}
			}
			return obj
		case *parquetio.ArrayType:
			out := make([]any, len(x))
			for i, e := range x {
				out[i] = jsonValue(e, tt.ElementType)
			}
			return out
		}
		return x
	case []parquetio.MapEntry:
		mt, _ := t.(*parquetio.MapType)
		if mt == nil {
			return x
		}
		if mt.KeyType == parquetio.TypeString {
			obj := make(map[string]any, len(x))
			for _, e := range x {
				obj[fmt.Sprint(e.Key)] = jsonValue(e.Value, mt.ValueType)
			}
			return obj
		}
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = map[string]any{"key": jsonValue(e.Key, mt.KeyType), "value": jsonValue(e.Value, mt.ValueType)}
		}
		return out
	}
	return v
}

// textValue renders a value for CSV and table output.
func textValue(v any, t parquetio.DataType) string {
	if v == nil {
		return ""
	}
	switch x := jsonValue(v, t).(type) {
	case string:
		return x
	case map[string]any, []any:
		b, err := marshalNoEscape(x)
		if err != nil {
			return fmt.Sprint(x)
		}
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}
