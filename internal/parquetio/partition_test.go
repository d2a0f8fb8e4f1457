package parquetio

import (
	"errors"
	"github.com/lakesink/lakesink/schema"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func sp(s string) *string { return &s }

func TestEscapePathName(t *testing.T) {
	// Expected values follow Spark's ExternalCatalogUtils.escapePathName on a
	// non-Windows host.
	cases := []struct{ name, in, want string }{
		{"plain", "SFO", "SFO"},
		{"slash", "a/b", "a%2Fb"},
		{"percent", "100%", "100%25"},
		{"space kept", "New York", "New York"},
		{"equals", "k=v", "k%3Dv"},
		{"colon", "10:00:00", "10%3A00%3A00"},
		{"emoji kept", "🛫 → ✈", "🛫 → ✈"},
		{"default partition name is not special", HiveDefaultPartition, HiveDefaultPartition},
		{"control chars", "a\x01\n\x1f\x7fb", "a%01%0A%1F%7Fb"},
		{"all specials", `"#%'*/:=?\{[]^`, "%22%23%25%27%2A%2F%3A%3D%3F%5C%7B%5B%5D%5E"},
		{"not escaped", "}|<>~!@$&()+,;`", "}|<>~!@$&()+,;`"},
		{"timestamp", "2001-01-31 10:00:00.123456", "2001-01-31 10%3A00%3A00.123456"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := EscapePathName(c.in)
			if got != c.want {
				t.Fatalf("EscapePathName(%q) = %q, want %q", c.in, got, c.want)
			}
			if back := UnescapePathName(got); back != c.in {
				t.Fatalf("UnescapePathName(%q) = %q, want %q", got, back, c.in)
			}
		})
	}
}

func TestPartitionPath(t *testing.T) {
	cases := []struct {
		name   string
		cols   []string
		values map[string]*string
		want   string
	}{
		{"none", nil, nil, ""},
		{"one", []string{"origin"}, map[string]*string{"origin": sp("SFO")}, "origin=SFO"},
		{"null", []string{"a"}, map[string]*string{"a": nil}, "a=__HIVE_DEFAULT_PARTITION__"},
		{"empty string", []string{"a"}, map[string]*string{"a": sp("")}, "a=__HIVE_DEFAULT_PARTITION__"},
		{"escaped name and value", []string{"c=1", "b"}, map[string]*string{"c=1": sp("x/y"), "b": sp("%")}, "c%3D1=x%2Fy/b=%25"},
		{"literal default name", []string{"a"}, map[string]*string{"a": sp(HiveDefaultPartition)}, "a=__HIVE_DEFAULT_PARTITION__"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := PartitionPath(c.cols, c.values); got != c.want {
				t.Fatalf("got %q want %q", got, c.want)
			}
		})
	}
}

func TestParsePartitionPath(t *testing.T) {
	cases := []struct {
		name    string
		in      string
		want    []PartitionKV
		wantErr bool
	}{
		{"empty", "", nil, false},
		{"one", "origin=SFO", []PartitionKV{{Column: "origin", Value: sp("SFO")}}, false},
		{"two with trailing slash", "a=1/b=x%2Fy/", []PartitionKV{{Column: "a", Value: sp("1")}, {Column: "b", Value: sp("x/y")}}, false},
		{"null", "a=__HIVE_DEFAULT_PARTITION__", []PartitionKV{{Column: "a", Value: nil}}, false},
		{"value with equals", "a=b=c", []PartitionKV{{Column: "a", Value: sp("b=c")}}, false},
		{"empty value", "a=", []PartitionKV{{Column: "a", Value: sp("")}}, false},
		{"bad percent kept", "a=%zz%", []PartitionKV{{Column: "a", Value: sp("%zz%")}}, false},
		{"emoji", "e=🛫", []PartitionKV{{Column: "e", Value: sp("🛫")}}, false},
		{"no equals", "a=1/file", nil, true},
		{"empty name", "=1", nil, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := ParsePartitionPath(c.in)
			if c.wantErr {
				if !errors.Is(err, ErrPartitionPath) {
					t.Fatalf("err = %v, want ErrPartitionPath", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.want) {
				t.Fatalf("got %v want %v", got, c.want)
			}
		})
	}
}

func FuzzParsePartitionPath(f *testing.F) {
	for _, s := range []string{
		"", "a=1", "a=1/b=2", "a=__HIVE_DEFAULT_PARTITION__", "a=%2F%3A", "a=%", "a=%2", "a=%ZZ",
		"=", "/", "//", "a=b=c/d=", "c%3D1=x%2Fy", "e=🛫", "x=\x00\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, dir string) {
		kvs, err := ParsePartitionPath(dir)
		if err != nil {
			return
		}
		// Re-escaping what we parsed and parsing again is stable.
		cols := make([]string, len(kvs))
		vals := map[string]*string{}
		dup := false
		for i, kv := range kvs {
			cols[i] = kv.Column
			if _, ok := vals[kv.Column]; ok {
				dup = true
			}
			vals[kv.Column] = kv.Value
		}
		if dup || !utf8.ValidString(dir) {
			return
		}
		again, err := ParsePartitionPath(PartitionPath(cols, vals))
		if err != nil {
			t.Fatalf("re-parse of %q: %v", PartitionPath(cols, vals), err)
		}
		for i := range kvs {
			a, b := kvs[i].Value, again[i].Value
			if a != nil && *a == "" {
				a = nil // "" is written as the default partition
			}
			if again[i].Column != kvs[i].Column || (a == nil) != (b == nil) || (a != nil && *a != *b) {
				t.Fatalf("%q: %v then %v", dir, kvs, again)
			}
		}
	})
}

func TestPartitionValueRoundTrip(t *testing.T) {
	ts := time.Date(2001, 1, 31, 10, 0, 0, 123456000, time.UTC)
	cases := []struct {
		name string
		v    any
		t    schema.DataType
		want string
	}{
		{"string", "a b/c", schema.TypeString, "a b/c"},
		{"long", int64(-42), schema.TypeLong, "-42"},
		{"integer", int32(7), schema.TypeInteger, "7"},
		{"short", int16(-3), schema.TypeShort, "-3"},
		{"byte", int8(5), schema.TypeByte, "5"},
		{"double", 1.5, schema.TypeDouble, "1.5"},
		{"double integral", 2.0, schema.TypeDouble, "2.0"},
		{"float", float32(0.1), schema.TypeFloat, "0.1"},
		{"double NaN", math.NaN(), schema.TypeDouble, "NaN"},
		{"bool", true, schema.TypeBoolean, "true"},
		{"date", schema.Date(11353), schema.TypeDate, "2001-01-31"},
		{"timestamp", ts, schema.TypeTimestamp, "2001-01-31 10:00:00.123456"},
		{"timestamp from other zone", ts.In(time.FixedZone("X", 3600)), schema.TypeTimestamp, "2001-01-31 10:00:00.123456"},
		{"timestamp_ntz wall clock", time.Date(2001, 1, 31, 10, 0, 0, 0, time.FixedZone("X", 3600)), schema.TypeTimestampNTZ, "2001-01-31 10:00:00.000000"},
		{"decimal", schema.Decimal{Unscaled: big.NewInt(-1234), Scale: 3}, schema.DecimalType{Precision: 10, Scale: 3}, "-1.234"},
		{"decimal small", schema.Decimal{Unscaled: big.NewInt(5), Scale: 3}, schema.DecimalType{Precision: 10, Scale: 3}, "0.005"},
		{"binary", []byte("ab"), schema.TypeBinary, "ab"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s, err := SerializePartitionValue(c.v, c.t)
			if err != nil {
				t.Fatal(err)
			}
			if s == nil || *s != c.want {
				t.Fatalf("serialized %v, want %q", s, c.want)
			}
			back, err := ParsePartitionValue(s, c.t)
			if err != nil {
				t.Fatal(err)
			}
			want := c.v
			if c.t == schema.TypeTimestampNTZ {
				want = ntzWall(c.v.(time.Time))
			}
			if f, ok := want.(float64); ok && math.IsNaN(f) {
				if !math.IsNaN(back.(float64)) {
					t.Fatalf("parsed %v", back)
				}
				return
			}
			if !valuesEqual(back, want) {
				t.Fatalf("parsed %#v, want %#v", back, want)
			}
		})
	}
	for _, v := range []any{nil, "", []byte{}} {
		typ := schema.DataType(schema.TypeString)
		if _, ok := v.([]byte); ok {
			typ = schema.TypeBinary
		}
		if s, err := SerializePartitionValue(v, typ); err != nil || s != nil {
			t.Errorf("SerializePartitionValue(%#v) = %v, %v; want nil (null)", v, s, err)
		}
	}
	if _, err := SerializePartitionValue(int32(1), schema.TypeLong); !errors.Is(err, schema.ErrRowMismatch) {
		t.Errorf("wrong type err = %v", err)
	}
	for _, in := range []string{"2001-01-31 10:00:00", "2001-01-31T10:00:00.000000Z", "2001-01-31T11:00:00+01:00"} {
		v, err := ParsePartitionValue(sp(in), schema.TypeTimestamp)
		if err != nil || !v.(time.Time).Equal(time.Date(2001, 1, 31, 10, 0, 0, 0, time.UTC)) {
			t.Errorf("ParsePartitionValue(%q) = %v, %v", in, v, err)
		}
	}
	if _, err := ParsePartitionValue(sp("x"), schema.TypeLong); !errors.Is(err, schema.ErrRowMismatch) || !strings.Contains(err.Error(), `"x"`) {
		t.Errorf("bad long err = %v", err)
	}
}
