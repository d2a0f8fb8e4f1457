package engines

// Row normalisation and multiset comparison, the Go half of
// py/engine_server.py's norm_table: both sides end as the same JSON text per
// row, so rows compare as strings.

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
)

// normValue is one lakesink Go value (internal/parquetio/types.go) of type t
// in the normalised form of engine_server.py.
func normValue(v any, t schema.DataType) any {
	if v == nil {
		return nil
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch x := v.(type) {
		case string:
			return x
		case bool:
			return x
		case int64:
			return strconv.FormatInt(x, 10)
		case int32:
			return strconv.FormatInt(int64(x), 10)
		case int16:
			return strconv.FormatInt(int64(x), 10)
		case int8:
			return strconv.FormatInt(int64(x), 10)
		case float32:
			return normFloat(float64(x))
		case float64:
			return normFloat(x)
		case []byte:
			return "x:" + hex.EncodeToString(x)
		case schema.Date:
			return strconv.FormatInt(int64(x), 10)
		case time.Time:
			return strconv.FormatInt(x.UnixMicro(), 10)
		case schema.Variant:
			b, err := x.MarshalJSON()
			if err != nil {
				return "bad variant: " + err.Error()
			}
			return canonJSONText(string(b))
		}
	case schema.DecimalType:
		if d, ok := v.(schema.Decimal); ok {
			return d.String()
		}
	case *schema.StructType:
		vals, ok := v.([]any)
		if !ok {
			break
		}
		out := map[string]any{}
		for i, f := range t.Fields {
			out[f.Name] = normValue(vals[i], f.Type)
		}
		return out
	case *schema.ArrayType:
		vals, ok := v.([]any)
		if !ok {
			break
		}
		out := make([]any, len(vals))
		for i, x := range vals {
			out[i] = normValue(x, t.ElementType)
		}
		return out
	case *schema.MapType:
		entries, ok := v.([]schema.MapEntry)
		if !ok {
			break
		}
		out := map[string]any{}
		for _, e := range entries {
			k := normValue(e.Key, t.KeyType)
			ks, ok := k.(string)
			if !ok {
				ks = canon(k)
			}
			out[ks] = normValue(e.Value, t.ValueType)
		}
		return out
	}
	return fmt.Sprintf("unnormalisable %T for %s", v, t.TypeName())
}

func normFloat(f float64) string {
	if math.IsNaN(f) {
		return "NaN"
	}
	return fmt.Sprintf("f:%016x", math.Float64bits(f))
}

// canon is the JSON text of a normalised value (keys sorted, no HTML escapes).
func canon(v any) string {
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return "unencodable: " + err.Error()
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// batchRows are the rows of a lakesink batch, normalised.
func batchRows(b *schema.Batch) []string {
	out := make([]string, 0, len(b.Rows))
	for _, r := range b.Rows {
		m := map[string]any{}
		for i, f := range b.Schema.Fields {
			m[f.Name] = normValue(r[i], f.Type)
		}
		out = append(out, canon(m))
	}
	return out
}

// engineRows are rows an engine answered (already normalised by the server).
func engineRows(rows []map[string]any) []string {
	out := make([]string, 0, len(rows))
	for _, r := range rows {
		out = append(out, canon(r))
	}
	return out
}

// lakesinkRows reads the latest snapshot of url with lakesink's reader.
func lakesinkRows(t *testing.T, url string) []string {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, url)
	if err != nil {
		t.Fatalf("lakesink open %s: %v", url, err)
	}
	defer snap.Close()
	b := &schema.Batch{Schema: snap.Schema()}
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{}) {
		if err != nil {
			t.Fatalf("lakesink read %s: %v", url, err)
		}
		b.Schema = rec.Schema
		b.Rows = append(b.Rows, rec.Values)
	}
	return batchRows(b)
}

// sameRows fails unless got and want are equal as multisets, naming up to 5
// rows missing and 5 unexpected.
func sameRows(t *testing.T, what string, want, got []string) {
	t.Helper()
	if d := rowDiff(want, got); d != "" {
		t.Errorf("%s: %s", what, d)
	}
}

// rowDiff is "" when got and want are equal as multisets, else what differs:
// the counts and up to 5 rows missing and 5 unexpected, one a line.
func rowDiff(want, got []string) string {
	count := map[string]int{}
	for _, r := range want {
		count[r]++
	}
	for _, r := range got {
		count[r]--
	}
	var missing, extra []string
	keys := make([]string, 0, len(count))
	for k := range count {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for n := count[k]; n > 0; n-- {
			missing = append(missing, k)
		}
		for n := count[k]; n < 0; n++ {
			extra = append(extra, k)
		}
	}
	if len(missing) == 0 && len(extra) == 0 {
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d rows, want %d; %d missing, %d unexpected", len(got), len(want), len(missing), len(extra))
	for i, r := range missing {
		if i == 5 {
			break
		}
		b.WriteString("\n    missing:    " + r)
	}
	for i, r := range extra {
		if i == 5 {
			break
		}
		b.WriteString("\n    unexpected: " + r)
	}
	return b.String()
}

// sameSchema fails unless the engine's schema (Spark's or delta-rs's JSON
// schema) has our fields with our types, metadata aside.
func sameSchema(t *testing.T, what string, want *schema.StructType, got any) {
	t.Helper()
	w, err := json.Marshal(want)
	if err != nil {
		t.Fatal(err)
	}
	var wv any
	if err := json.Unmarshal(w, &wv); err != nil {
		t.Fatal(err)
	}
	g, err := json.Marshal(got)
	if err != nil {
		t.Fatal(err)
	}
	var gv any
	if err := json.Unmarshal(g, &gv); err != nil {
		t.Fatal(err)
	}
	if a, b := canon(stripMetadata(wv)), canon(stripMetadata(gv)); a != b {
		t.Errorf("%s: schema\n got  %s\n want %s", what, b, a)
	}
}

func stripMetadata(v any) any {
	switch x := v.(type) {
	case map[string]any:
		out := map[string]any{}
		for k, e := range x {
			if k == "metadata" {
				continue
			}
			out[k] = stripMetadata(e)
		}
		return out
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = stripMetadata(e)
		}
		return out
	}
	return v
}
