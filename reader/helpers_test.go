package reader

import (
	"context"
	"encoding/base64"
	"fmt"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/schema"
)

// sharedDir is sub of the project-wide interop test data, ../shared/testdata
// (absent on a clean checkout: tests that need it skip, or fail under
// LAKESINK_REQUIRE_CORPUS=1).
func sharedDir(t testing.TB, sub string) string {
	t.Helper()
	return corpus.Dir(t, corpus.Testdata, sub)
}

func localDir(t testing.TB, sub string) string {
	t.Helper()
	abs, err := filepath.Abs(filepath.Join("testdata", sub))
	if err != nil {
		t.Fatal(err)
	}
	return abs
}

// canon renders a value with its Go type, canonically, so that rows can be
// compared as strings (types included).
func canon(v any) string {
	switch x := v.(type) {
	case nil:
		return "null"
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canon(e)
		}
		return "[" + strings.Join(parts, ",") + "]"
	case []schema.MapEntry:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = canon(e.Key) + "=>" + canon(e.Value)
		}
		slices.Sort(parts) // map order is not significant
		return "map{" + strings.Join(parts, ",") + "}"
	case schema.Decimal:
		if x.Unscaled == nil {
			return "decimal(nil)"
		}
		r := new(big.Rat).SetFrac(x.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(x.Scale)), nil))
		return "decimal(" + r.FloatString(x.Scale) + ")"
	case time.Time:
		return "time(" + x.UTC().Format(time.RFC3339Nano) + ")"
	case []byte:
		return "bytes(" + base64.StdEncoding.EncodeToString(x) + ")"
	case float32:
		return fmt.Sprintf("float32(%v)", x)
	case float64:
		return fmt.Sprintf("float64(%v)", x)
	}
	return fmt.Sprintf("%T(%v)", v, v)
}

func canonRow(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		parts[i] = canon(v)
	}
	return strings.Join(parts, " | ")
}

// readAll collects every record of a Rows read.
func readAll(t testing.TB, s *Snapshot, o ReadOptions) ([]Record, error) {
	t.Helper()
	var out []Record
	for r, err := range s.Rows(context.Background(), o) {
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}
