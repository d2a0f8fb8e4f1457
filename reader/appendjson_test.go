package reader

import (
	"context"
	"encoding/json"
	"math"
	"math/big"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"pgregory.net/rapid"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// oldRecordJSON is how `lakesink scan` printed a record before AppendJSON:
// JSONValue's forms written by encoding/json (structJSON).
func oldRecordJSON(r Record) string { return string(structJSON(r.Values, r.Schema)) }

// allTypesSchema has a column of every Delta type the writer writes, nested
// ones included.
func allTypesSchema() *schema.StructType {
	inner := &schema.StructType{Fields: []schema.StructField{
		{Name: "z", Type: schema.TypeLong, Nullable: true},
		{Name: "a \"quoted\" <name>", Type: schema.TypeString, Nullable: true},
		{Name: "d", Type: schema.TypeDate, Nullable: true},
	}}
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "bool", Type: schema.TypeBoolean, Nullable: true},
		{Name: "byte", Type: schema.TypeByte, Nullable: true},
		{Name: "short", Type: schema.TypeShort, Nullable: true},
		{Name: "int", Type: schema.TypeInteger, Nullable: true},
		{Name: "long", Type: schema.TypeLong, Nullable: true},
		{Name: "float", Type: schema.TypeFloat, Nullable: true},
		{Name: "double", Type: schema.TypeDouble, Nullable: true},
		{Name: "dec9", Type: schema.DecimalType{Precision: 9, Scale: 2}, Nullable: true},
		{Name: "dec18", Type: schema.DecimalType{Precision: 18, Scale: 0}, Nullable: true},
		{Name: "dec38", Type: schema.DecimalType{Precision: 38, Scale: 10}, Nullable: true},
		{Name: "string", Type: schema.TypeString, Nullable: true},
		{Name: "binary", Type: schema.TypeBinary, Nullable: true},
		{Name: "date", Type: schema.TypeDate, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ntz", Type: schema.TypeTimestampNTZ, Nullable: true},
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.TypeDouble, ContainsNull: true}, Nullable: true},
		{Name: "arr_ts", Type: &schema.ArrayType{ElementType: schema.TypeTimestampNTZ, ContainsNull: true}, Nullable: true},
		{Name: "map_s", Type: &schema.MapType{KeyType: schema.TypeString, ValueType: schema.TypeBinary, ValueContainsNull: true}, Nullable: true},
		{Name: "map_i", Type: &schema.MapType{KeyType: schema.TypeInteger, ValueType: schema.TypeString, ValueContainsNull: true}, Nullable: true},
		{Name: "struct", Type: inner, Nullable: true},
		{Name: "arr_struct", Type: &schema.ArrayType{ElementType: inner, ContainsNull: true}, Nullable: true},
		{Name: "ünï \u2028 name", Type: schema.TypeString, Nullable: true},
	}}
}

// nastyStrings are strings encoding/json escapes in every way it does.
var nastyStrings = []string{"", "plain", `quote " and \ backslash`, "<html> & 'amp'", "ctl \x00\x01\x1f\x7f \b\f\n\r\t",
	"bad utf8 \xff\xfe end", "seps \u2028 \u2029", "ünïcödé ✓ 𝄞", "\xe2\x80", strings.Repeat("long ", 100)}

// allTypesRow is row i of a seeded generator: nulls, edge values and random
// ones, per column.
func allTypesRow(r *rand.Rand, i int) []any {
	pick := func(n int) int { return r.IntN(n) }
	null := func() bool { return pick(7) == 0 }
	floats := []float64{0, math.Copysign(0, -1), 1, -1.5, 1e-7, 1e21, 1e20, 123456789.125, math.MaxFloat64, math.SmallestNonzeroFloat64,
		math.NaN(), math.Inf(1), math.Inf(-1), 0.1, 1.0 / 3}
	f64 := func() any {
		if pick(2) == 0 {
			return floats[pick(len(floats))]
		}
		return (r.Float64() - 0.5) * math.Pow(10, float64(pick(40)-20))
	}
	str := func() any {
		if pick(2) == 0 {
			return nastyStrings[pick(len(nastyStrings))]
		}
		b := make([]byte, pick(20))
		for j := range b {
			b[j] = byte(r.IntN(256))
		}
		return string(b)
	}
	dec := func(prec, scale int) any {
		digits := make([]byte, 1+pick(prec))
		for j := range digits {
			digits[j] = byte('0' + pick(10))
		}
		u, _ := new(big.Int).SetString(string(digits), 10)
		if pick(2) == 0 {
			u.Neg(u)
		}
		return schema.Decimal{Unscaled: u, Scale: scale}
	}
	ts := func() any {
		// Whole microseconds between years 1 and 9999; some on whole seconds.
		us := r.Int64N(253402300799_000000+62135596800_000000) - 62135596800_000000
		if pick(3) == 0 {
			us -= us % 1_000_000
		}
		return time.UnixMicro(us).UTC()
	}
	date := func() any { return schema.Date(r.IntN(2932897) - 719162) }
	inner := func() any {
		if null() {
			return nil
		}
		return []any{int64(pick(1000) - 500), str(), date()}
	}
	vals := []any{
		pick(2) == 0, int8(r.IntN(256) - 128), int16(r.IntN(65536) - 32768), int32(r.Uint32()), int64(r.Uint64()),
		float32(f64().(float64)), f64(),
		dec(9, 2), dec(18, 0), dec(38, 10),
		str(), []byte(str().(string)), date(), ts(), ts(),
		[]any{f64(), nil, f64()}, []any{ts()},
		[]schema.MapEntry{{Key: str(), Value: []byte("v")}, {Key: "k2", Value: nil}},
		[]schema.MapEntry{{Key: int32(pick(100)), Value: str()}},
		inner(), []any{inner(), inner()}, str(),
	}
	if i%5 == 1 {
		vals[15], vals[16], vals[17], vals[18], vals[20] = []any{}, []any{}, []schema.MapEntry{}, []schema.MapEntry{}, []any{}
	}
	for j := range vals {
		if null() {
			vals[j] = nil
		}
	}
	return vals
}

// TestAppendJSONEqualsEncodingJSON writes a table with a column of every
// Delta type the writer writes (edge values: nulls, NaN and infinities, -0,
// tiny and huge floats, float32, every string escape, invalid UTF-8, years
// 1 to 9999, 38-digit decimals, empty and null collections, nested structs)
// and checks that every record read back prints the same bytes with
// AppendJSON (what scan prints) as with encoding/json over JSONValue (what
// it printed before).
func TestAppendJSONEqualsEncodingJSON(t *testing.T) {
	ctx := context.Background()
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	r := rand.New(rand.NewPCG(seed, 22))
	sch := allTypesSchema()
	b := &schema.Batch{Schema: sch}
	const n = 400
	for i := range n {
		b.Rows = append(b.Rows, allTypesRow(r, i))
	}
	dir := t.TempDir()
	tb, err := table.Create(ctx, dir, table.CreateOptions{Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tb.Write(ctx, b, table.WriteOptions{RowGroupSizeBytes: 4096}); err != nil {
		t.Fatal(err)
	}
	tb.Close()
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	got := 0
	for rec, err := range snap.Rows(ctx, ReadOptions{}) {
		if err != nil {
			t.Fatal(err)
		}
		got++
		if a, o := string(rec.AppendJSON(nil)), oldRecordJSON(rec); a != o {
			t.Fatalf("record %d:\nAppendJSON   %s\nencoding/json %s", got, a, o)
		}
		// What scan ran before: an Encoder without HTML escaping.
		if m, err := marshalNoEscape(rec); err != nil || string(m) != oldRecordJSON(rec) {
			t.Fatalf("record %d: Encoder %s, %v", got, m, err)
		}
	}
	if got != n {
		t.Fatalf("%d records, want %d", got, n)
	}
}

// TestAppendJSONValues covers the Go values a table read yields that the
// writer cannot write (variants, values of an untyped read) and anything
// else JSONValue passes through to encoding/json.
func TestAppendJSONValues(t *testing.T) {
	ts := time.Date(2024, 2, 29, 23, 59, 59, 120000000, time.UTC)
	cases := []struct {
		v any
		t schema.DataType
	}{
		{schema.Variant{Value: map[string]any{"b": []any{int64(1), "x\"<"}, "a": nil}}, schema.TypeVariant},
		{schema.Variant{Value: nil}, schema.TypeVariant},
		{schema.Variant{Value: ts, NTZ: true}, schema.TypeVariant},
		{schema.Variant{Value: schema.Decimal{Unscaled: big.NewInt(-12345), Scale: 3}}, schema.TypeVariant},
		{schema.Variant{Value: make(chan int)}, schema.TypeVariant}, // MarshalJSON fails: null
		{ts, nil},
		{ts, schema.TypeTimestampNTZ},
		{[]any{ts, nil}, nil},
		{[]any{int64(1), "a"}, &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeLong}, {Name: "y", Type: schema.TypeString}, {Name: "missing", Type: schema.TypeLong}}}},
		{[]any(nil), &schema.StructType{Fields: []schema.StructField{{Name: "x", Type: schema.TypeLong}}}},
		{[]any(nil), nil},
		{[]schema.MapEntry{{Key: int64(1), Value: schema.Date(3)}, {Key: nil, Value: nil}}, nil},
		{[]schema.MapEntry{{Key: "k", Value: float32(0.1)}}, nil},
		{schema.Decimal{}, nil},
		{schema.Decimal{Unscaled: big.NewInt(5), Scale: -2}, nil},
		{int(7), nil},
		{uint64(math.MaxUint64), nil},
		{map[string]any{"b": 1, "a": "<"}, nil},
		{make(chan int), nil}, // encoding/json fails: null
		{json.RawMessage(`{"x": 1}`), nil},
	}
	for i, c := range cases {
		sch := &schema.StructType{Fields: []schema.StructField{{Name: "v", Type: c.t}}}
		rec := Record{Schema: sch, Values: []any{c.v}}
		if a, o := string(rec.AppendJSON(nil)), oldRecordJSON(rec); a != o {
			t.Errorf("case %d (%T): AppendJSON %s, encoding/json %s", i, c.v, a, o)
		}
	}
}

// TestAppendJSONStringsAndFloats: any string, float64, float32, timestamp
// and date is written as encoding/json over JSONValue writes it (rapid:
// random bytes, runes, bits, instants).
func TestAppendJSONStringsAndFloats(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		special := rapid.SampledFrom([]string{"\u2028", "\u2029", `"`, `\`, "<", ">", "&", "\x00", "\x1f", "\x7f", "\xff", "\xe2\x80", "\t"})
		s := strings.Join(rapid.SliceOf(rapid.OneOf(rapid.String(), special)).Draw(t, "parts"), "")
		raw := string(rapid.SliceOf(rapid.Byte()).Draw(t, "raw"))
		for _, x := range []string{s, raw} {
			want, err := marshalNoEscape(x)
			if err != nil {
				t.Fatal(err)
			}
			if got := appendJSONString(nil, x); string(got) != string(want) {
				t.Fatalf("string %q: AppendJSON %s, encoding/json %s", x, got, want)
			}
		}
		vals := []any{
			math.Float64frombits(rapid.Uint64().Draw(t, "bits64")),
			math.Float32frombits(rapid.Uint32().Draw(t, "bits32")),
			rapid.Float64().Draw(t, "f64"),
			rapid.Float32().Draw(t, "f32"),
		}
		// Timestamps and dates anywhere in time.Time's range (digit by digit
		// for years 0 to 9999, time's layout code outside).
		sec := rapid.OneOf(rapid.Int64Range(-62167219200, 253402300799), rapid.Int64()).Draw(t, "sec")
		nsec := rapid.OneOf(rapid.Int64Range(0, 999999999), rapid.SampledFrom([]int64{0, 1000, 120000000, 999999000, 1})).Draw(t, "nsec")
		ts := time.Unix(sec, nsec).UTC()
		for _, typ := range []schema.DataType{schema.TypeTimestamp, schema.TypeTimestampNTZ} {
			rec := Record{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "t", Type: typ}}}, Values: []any{ts}}
			if a, o := string(rec.AppendJSON(nil)), oldRecordJSON(rec); a != o {
				t.Fatalf("%s %v: AppendJSON %s, encoding/json %s", schema.FormatType(typ), ts, a, o)
			}
		}
		day := schema.Date(rapid.OneOf(rapid.Int32Range(-719528, 2932896), rapid.Int32()).Draw(t, "day"))
		rec := Record{Schema: &schema.StructType{Fields: []schema.StructField{{Name: "d", Type: schema.TypeDate}}}, Values: []any{day}}
		if a, o := string(rec.AppendJSON(nil)), oldRecordJSON(rec); a != o {
			t.Fatalf("date %d: AppendJSON %s, encoding/json %s", day, a, o)
		}
		sch := &schema.StructType{Fields: []schema.StructField{{Name: "f", Type: schema.TypeDouble}}}
		for _, v := range vals {
			rec := Record{Schema: sch, Values: []any{v}}
			if a, o := string(rec.AppendJSON(nil)), oldRecordJSON(rec); a != o {
				t.Fatalf("%T %v: AppendJSON %s, encoding/json %s", v, v, a, o)
			}
		}
	})
}

// TestAppendJSONCorpusTables reads every Delta table of the local and shared
// test corpora (engine-written: variants, column mapping, deletion
// vectors...) and checks every record's AppendJSON against encoding/json.
func TestAppendJSONCorpusTables(t *testing.T) {
	ctx := context.Background()
	roots := []string{localDir(t, "")}
	if p, err := corpus.Find(corpus.Testdata, ""); err == nil {
		roots = append(roots, p)
	}
	var tables []string
	for _, root := range roots {
		filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err == nil && d.IsDir() && d.Name() == "_delta_log" {
				tables = append(tables, filepath.Dir(p))
				return filepath.SkipDir
			}
			return nil
		})
	}
	if len(tables) == 0 {
		t.Fatal("no Delta tables under reader/testdata")
	}
	checked := 0
	for _, dir := range tables {
		snap, err := Open(ctx, dir)
		if err != nil {
			continue // unreadable or refused tables are the conformance tests' business
		}
		n := 0
		for rec, err := range snap.Rows(ctx, ReadOptions{Limit: 2000}) {
			if err != nil {
				break
			}
			n++
			if a, o := string(rec.AppendJSON(nil)), oldRecordJSON(rec); a != o {
				t.Errorf("%s record %d:\nAppendJSON    %s\nencoding/json %s", dir, n, a, o)
				break
			}
		}
		snap.Close()
		if n > 0 {
			checked++
		}
	}
	t.Logf("%d of %d tables compared", checked, len(tables))
	if checked == 0 {
		t.Fatal("no table could be read")
	}
}
