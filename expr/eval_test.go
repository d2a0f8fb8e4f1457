package expr

import (
	"errors"
	"math"
	"math/big"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
)

func testSchema() *schema.StructType {
	return &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true},
		{Name: "name", Type: schema.TypeString, Nullable: true},
		{Name: "price", Type: schema.DecimalType{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "score", Type: schema.TypeDouble, Nullable: true},
		{Name: "day", Type: schema.TypeDate, Nullable: true},
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "flag", Type: schema.TypeBoolean, Nullable: true},
		{Name: "small", Type: schema.TypeShort, Nullable: true},
		{Name: "s", Type: &schema.StructType{Fields: []schema.StructField{
			{Name: "x", Type: schema.TypeInteger, Nullable: true,
				Metadata: map[string]any{schema.MetaColumnMappingPhysicalName: "col-x"}},
		}}, Nullable: true, Metadata: map[string]any{schema.MetaColumnMappingPhysicalName: "col-s"}},
		{Name: "bin", Type: schema.TypeBinary, Nullable: true},
		{Name: "arr", Type: &schema.ArrayType{ElementType: schema.TypeLong}, Nullable: true},
	}}
}

func dec(s string) schema.Decimal {
	d, err := ParseDecimal(s)
	if err != nil {
		panic(err) // test helper with constant input
	}
	return d
}

func ts(s string) time.Time {
	t, err := ParseTimestamp(s)
	if err != nil {
		panic(err)
	}
	return t
}

// row builds a row of testSchema.
func row(id any, name any, price any, score any, day any, tsv any, flag any, small any, x any) []any {
	var s any
	if x != nil {
		s = []any{x}
	}
	return []any{id, name, price, score, day, tsv, flag, small, s, nil, nil}
}

func TestEvalRow(t *testing.T) {
	r := row(int64(7), "it's", schema.Decimal{Unscaled: big.NewInt(1999), Scale: 2}, math.NaN(),
		schema.Date(11323), ts("2001-01-01 00:47:00.123456"), true, int16(3), int32(5))
	nulls := row(nil, nil, nil, nil, nil, nil, nil, nil, nil)
	cases := []struct {
		name  string
		where string
		row   []any
		want  Truth
	}{
		{"int eq", "id = 7", r, True},
		{"int ne", "id != 7", r, False},
		{"int vs decimal literal", "id < 7.5", r, True},
		{"int vs float literal", "id >= 7e0", r, True},
		{"string escape", "name = 'it''s'", r, True},
		{"string lt", "name < 'j'", r, True},
		{"decimal exact", "price = 19.99", r, True},
		{"decimal other scale", "price = 19.990", r, True},
		{"decimal vs int", "price > 19", r, True},
		{"decimal from string", "price = '19.99'", r, True},
		{"NaN equals NaN", "score = 'NaN'", r, True},
		{"NaN greater than all", "score > 1e308", r, True},
		{"NaN not less", "score < 0", r, False},
		{"date literal", "day = DATE '2001-01-01'", r, True},
		{"date from string", "day >= '2000-12-31'", r, True},
		{"date vs timestamp", "day < TIMESTAMP '2001-01-01 00:00:01'", r, True},
		{"timestamp sub-ms equality", "ts = TIMESTAMP '2001-01-01 00:47:00.123456'", r, True},
		{"timestamp ms-truncated is not equal", "ts = TIMESTAMP '2001-01-01 00:47:00.123'", r, False},
		{"timestamp with zone", "ts = '2001-01-01T01:47:00.123456+01:00'", r, True},
		{"bool", "flag", r, True},
		{"not bool", "NOT flag", r, False},
		{"short vs int literal", "small = 3", r, True},
		{"nested", "s.x = 5", r, True},
		{"nested null struct", "s.x IS NULL", nulls, True},
		{"in hit", "id IN (1, 7)", r, True},
		{"in miss", "id IN (1, 2)", r, False},
		{"in miss with null is unknown", "id IN (1, NULL)", r, Unknown},
		{"in hit with null", "id IN (7, NULL)", r, True},
		{"not in with null is unknown", "id NOT IN (1, NULL)", r, Unknown},
		{"null compare unknown", "id = 7", nulls, Unknown},
		{"not unknown is unknown", "NOT id = 7", nulls, Unknown},
		{"null literal unknown", "id = NULL", r, Unknown},
		{"unknown and false", "id = 1 AND name = 'zz'", nulls, Unknown},
		{"false and unknown", "name = 'zz' AND id = 1", r, False},
		{"unknown or true", "id = 1 OR id IS NULL", nulls, True},
		{"is not null", "name IS NOT NULL", r, True},
		{"between", "id BETWEEN 7 AND 8", r, True},
		{"case insensitive column", "ID = 7", r, True},
	}
	sch := testSchema()
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseAndBind(tc.where, sch)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.EvalRow(tc.row); got != tc.want {
				t.Fatalf("%s on row = %v, want %v", tc.where, got, tc.want)
			}
		})
	}
}

func TestBindErrors(t *testing.T) {
	for _, where := range []string{
		"nope = 1", "id = 'abc'", "name = 1", "flag = 3", "s = 1", "s.nope = 1", "id.x = 1",
		"day = 5", "arr = 1", "price = 'x'",
	} {
		t.Run(where, func(t *testing.T) {
			_, err := ParseAndBind(where, testSchema())
			if !errors.Is(err, ErrBind) {
				t.Fatalf("ParseAndBind(%q) = %v, want ErrBind", where, err)
			}
		})
	}
}

func TestParsePartitionValue(t *testing.T) {
	str := func(s string) *string { return &s }
	cases := []struct {
		name string
		in   *string
		typ  schema.DataType
		want any
	}{
		{"nil is null", nil, schema.TypeLong, nil},
		{"empty is null", str(""), schema.TypeString, nil},
		{"string special", str("a/b %=&:😀"), schema.TypeString, "a/b %=&:😀"},
		{"long", str("-42"), schema.TypeLong, int64(-42)},
		{"int", str("7"), schema.TypeInteger, int32(7)},
		{"short", str("7"), schema.TypeShort, int16(7)},
		{"byte", str("-7"), schema.TypeByte, int8(-7)},
		{"double", str("1.5"), schema.TypeDouble, 1.5},
		{"float", str("1.5"), schema.TypeFloat, float32(1.5)},
		{"bool", str("true"), schema.TypeBoolean, true},
		{"date", str("1970-01-02"), schema.TypeDate, schema.Date(1)},
		{"timestamp", str("1970-01-01 00:00:01"), schema.TypeTimestamp, time.Unix(1, 0).UTC()},
		{"timestamp micros", str("1970-01-01 00:00:00.123456"), schema.TypeTimestampNTZ, time.UnixMicro(123456).UTC()},
		{"timestamp utc suffix", str("1970-01-01T00:00:01.000000Z"), schema.TypeTimestamp, time.Unix(1, 0).UTC()},
		{"binary", str("\u0001\u0002"), schema.TypeBinary, []byte{1, 2}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParsePartitionValue(tc.in, tc.typ)
			if err != nil {
				t.Fatal(err)
			}
			if tc.want == nil {
				if got != nil {
					t.Fatalf("got %v, want null", got)
				}
				return
			}
			c, ok := CompareValues(got, tc.want)
			if !ok || c != 0 {
				t.Fatalf("got %#v, want %#v", got, tc.want)
			}
		})
	}
	d, err := ParsePartitionValue(str("1.5"), schema.DecimalType{Precision: 5, Scale: 2})
	if err != nil {
		t.Fatal(err)
	}
	if dd := d.(schema.Decimal); dd.Scale != 2 || dd.Unscaled.Int64() != 150 {
		t.Fatalf("decimal partition value = %v", dd)
	}
	for _, bad := range []struct {
		v   string
		typ schema.DataType
	}{{"x", schema.TypeLong}, {"300", schema.TypeByte}, {"2020-13-01", schema.TypeDate}, {"maybe", schema.TypeBoolean}} {
		if _, err := ParsePartitionValue(str(bad.v), bad.typ); !errors.Is(err, ErrValue) {
			t.Errorf("ParsePartitionValue(%q, %s) = %v, want ErrValue", bad.v, bad.typ.TypeName(), err)
		}
	}
}

// LIKE follows Spark (StringUtils.escapeLikeRegex): whole-string,
// case-sensitive, % any run (none included), _ one character (a newline
// too), the escape character before %, _ or itself.
func TestEvalLike(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "s", Type: schema.TypeString, Nullable: true}}}
	cases := []struct {
		where string
		value any
		want  Truth
	}{
		{"s LIKE 'SF%'", "SFO", True},
		{"s LIKE 'SF%'", "SF", True},
		{"s LIKE 'SF%'", "sfo", False},
		{"s LIKE 'S_O'", "SFO", True},
		{"s LIKE 'S_O'", "SO", False},
		{"s LIKE 'S_O'", "S\nO", True},
		{"s LIKE '%é%'", "café", True},
		{"s LIKE 'caf_'", "café", True},
		{"s LIKE 'a.c'", "abc", False},
		{"s LIKE 'a*'", "aaa", False},
		{`s LIKE '100\%'`, "100%", True},
		{`s LIKE '100\%'`, "1000", False},
		{`s LIKE 'a\_b'`, "a_b", True},
		{`s LIKE 'a\_b'`, "axb", False},
		{`s LIKE 'a\\b'`, `a\b`, True},
		{"s LIKE 'a!%' ESCAPE '!'", "a%", True},
		{"s LIKE 'a!%' ESCAPE '!'", "ab", False},
		{"s LIKE 'abc'", "abc", True},
		{"s LIKE 'abc'", "abcd", False},
		{"s LIKE ''", "", True},
		{"s LIKE '%'", nil, Unknown},
		{"s NOT LIKE 'SF%'", "SFO", False},
		{"s NOT LIKE 'SF%'", "LAX", True},
		{"s NOT LIKE 'SF%'", nil, Unknown},
	}
	for _, tc := range cases {
		p, err := ParseAndBind(tc.where, sch)
		if err != nil {
			t.Fatalf("%s: %v", tc.where, err)
		}
		if got := p.EvalRow([]any{tc.value}); got != tc.want {
			t.Errorf("%s on %q = %v, want %v", tc.where, tc.value, got, tc.want)
		}
		e, _ := Parse(tc.where)
		if e2, err := Parse(e.String()); err != nil || e2.String() != e.String() {
			t.Errorf("round trip of %s: %q, %v", tc.where, e.String(), err)
		}
	}
	if _, err := ParseAndBind("id LIKE '1%'", testSchema()); !errors.Is(err, ErrBind) || !strings.Contains(err.Error(), "LIKE needs a string column, id is long") {
		t.Errorf("LIKE on a long column: %v", err)
	}
}
