package expr

import (
	"testing"

	"github.com/lakesink/lakesink/schema"
)

// statsDomains returns the domain function for a predicate over a file
// with the given stats JSON.
func statsDomains(t *testing.T, p *Predicate, stats string) func(int) Domain {
	t.Helper()
	st, err := ParseStats(stats)
	if err != nil {
		t.Fatal(err)
	}
	return func(i int) Domain {
		c := p.Columns()[i]
		return st.Domain(c.PhysicalPath(), c.Type)
	}
}

func TestMayMatchStats(t *testing.T) {
	const base = `{"numRecords":10,"minValues":{"id":5,"name":"bob","price":1.50,"day":"2020-01-01",` +
		`"ts":"2001-01-01T00:47:00.123Z","col-s":{"col-x":3},"small":1},` +
		`"maxValues":{"id":9,"name":"dave","price":9.99,"day":"2020-12-31",` +
		`"ts":"2001-01-01T00:47:00.123Z","col-s":{"col-x":8},"small":4},` +
		`"nullCount":{"id":0,"name":2,"price":0,"day":0,"ts":0,"col-s":{"col-x":0},"small":0}}`
	cases := []struct {
		name  string
		where string
		stats string
		want  bool
	}{
		{"eq inside", "id = 7", base, true},
		{"eq below min", "id = 4", base, false},
		{"eq above max", "id = 10", base, false},
		{"lt min", "id < 5", base, false},
		{"le min", "id <= 5", base, true},
		{"gt max", "id > 9", base, false},
		{"ge max", "id >= 9", base, true},
		{"ne always possible unless constant", "id != 7", base, true},
		{"ne constant column", "id != 5", `{"numRecords":3,"minValues":{"id":5},"maxValues":{"id":5},"nullCount":{"id":0}}`, false},
		{"ne constant column with nulls still false", "id != 5", `{"numRecords":3,"minValues":{"id":5},"maxValues":{"id":5},"nullCount":{"id":1}}`, false},
		{"not eq constant", "NOT id = 5", `{"numRecords":3,"minValues":{"id":5},"maxValues":{"id":5},"nullCount":{"id":0}}`, false},
		{"in none", "id IN (1, 2, 100)", base, false},
		{"in some", "id IN (1, 6)", base, true},
		{"not in", "id NOT IN (1, 6)", base, true},
		{"and prunes", "id = 7 AND id = 100", base, false},
		{"or keeps", "id = 100 OR id = 7", base, true},
		{"is null with zero nulls", "id IS NULL", base, false},
		{"is null with nulls", "name IS NULL", base, true},
		{"is not null all null", "x IS NOT NULL", `{"numRecords":4,"nullCount":{"x":4}}`, false},
		{"all null compare", "x = 1", `{"numRecords":4,"nullCount":{"x":4}}`, false},
		{"empty file", "x IS NULL", `{"numRecords":0}`, false},
		{"string prefix max", "name = 'dave2'", base, true},
		{"string beyond max", "name = 'dz'", base, false},
		{"string below min", "name < 'bob'", base, false},
		{"decimal", "price > 10", base, false},
		{"decimal inside", "price = 1.5", base, true},
		{"date", "day < DATE '2020-01-01'", base, false},
		{"date inside", "day = '2020-06-01'", base, true},
		{"nested physical name", "s.x > 8", base, false},
		{"nested physical name inside", "s.x = 8", base, true},
		{"short column int literal", "small = 5", base, false},
		// Regressions required by the reader's spec.
		{"no stats at all: kept", "id = 100", ``, true},
		{"stats without the column: kept", "x = 100", base, true},
		{"stats with only numRecords: kept", "id = 100", `{"numRecords":10}`, true},
		{"timestamp sub-ms at max found by equality", "ts = TIMESTAMP '2001-01-01 00:47:00.123456'", base, true},
		{"timestamp sub-ms greater than truncated max", "ts > TIMESTAMP '2001-01-01 00:47:00.1231'", base, true},
		{"timestamp beyond widened max", "ts > TIMESTAMP '2001-01-01 00:47:00.124'", base, false},
		{"timestamp below min", "ts < TIMESTAMP '2001-01-01 00:47:00.123'", base, false},
		{"NaN in double: max ignored", "score > 100", `{"numRecords":3,"minValues":{"score":1.0},"maxValues":{"score":2.0},"nullCount":{"score":0}}`, true},
		{"NaN literal vs numeric max", "score = 'NaN'", `{"numRecords":3,"minValues":{"score":1.0},"maxValues":{"score":2.0},"nullCount":{"score":0}}`, true},
		{"NaN stats strings", "score > 100", `{"numRecords":3,"minValues":{"score":"NaN"},"maxValues":{"score":"NaN"},"nullCount":{"score":0}}`, true},
		{"double min still prunes", "score < 1.0", `{"numRecords":3,"minValues":{"score":1.0},"maxValues":{"score":2.0},"nullCount":{"score":0}}`, false},
		{"wide bounds nullCount ignored", "id IS NULL", `{"numRecords":10,"tightBounds":false,"nullCount":{"id":3}}`, true},
		{"unparsable stat kept", "id = 100", `{"numRecords":10,"minValues":{"id":"abc"},"maxValues":{"id":"def"}}`, true},
		{"null literal never true", "id = NULL", base, false},
		// LIKE prunes on the pattern's literal prefix (name: min "bob", max
		// "dave", a possibly truncated prefix).
		{"like prefix inside", "name LIKE 'c%'", base, true},
		{"like prefix below min", "name LIKE 'a%'", base, false},
		{"like prefix above max", "name LIKE 'e%'", base, false},
		{"like prefix of the min", "name LIKE 'bo_'", base, true},
		{"like prefix continuing the truncated max", "name LIKE 'dave2%'", base, true},
		{"like leading wildcard kept", "name LIKE '%zzz'", base, true},
		{"like escaped wildcard is prefix", `name LIKE 'e\%%'`, base, false},
		{"not like prefix, some rows differ", "name NOT LIKE 'b%'", base, true},
		{"not like prefix, every row matches", "name NOT LIKE 'b%'", `{"numRecords":3,"minValues":{"name":"ba"},"maxValues":{"name":"bz"},"nullCount":{"name":0}}`, false},
		{"like all null", "name LIKE 'a%'", `{"numRecords":3,"nullCount":{"name":3}}`, false},
	}
	sch := testSchema()
	sch.Fields = append(sch.Fields, schema.StructField{Name: "x", Type: schema.TypeLong, Nullable: true})
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseAndBind(tc.where, sch)
			if err != nil {
				t.Fatal(err)
			}
			if got := p.MayMatch(statsDomains(t, p, tc.stats)); got != tc.want {
				t.Fatalf("MayMatch(%s) with %s = %v, want %v", tc.where, tc.stats, got, tc.want)
			}
		})
	}
}

func TestMayMatchPartition(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "p", Type: schema.TypeString, Nullable: true},
		{Name: "n", Type: schema.TypeInteger, Nullable: true},
		{Name: "v", Type: schema.TypeLong, Nullable: true},
	}}
	str := func(s string) *string { return &s }
	cases := []struct {
		name  string
		where string
		p, n  *string
		want  bool
	}{
		{"eq hit", "p = 'a/b'", str("a/b"), str("1"), true},
		{"eq miss", "p = 'x'", str("a/b"), str("1"), false},
		{"null partition eq", "p = 'x'", nil, str("1"), false},
		{"null partition is null", "p IS NULL", nil, str("1"), true},
		{"empty is null", "p IS NULL", str(""), str("1"), true},
		{"int range", "n > 1", str("a"), str("1"), false},
		{"int range hit", "n >= 1", str("a"), str("1"), true},
		{"data column unknown", "v = 3", str("a"), str("1"), true},
		{"mixed and prunes", "v = 3 AND n = 2", str("a"), str("1"), false},
		{"mixed or keeps", "v = 3 OR n = 2", str("a"), str("1"), true},
		{"not null partition", "NOT p = 'x'", nil, str("1"), false},
		{"in", "n IN (2, 3)", str("a"), str("1"), false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			p, err := ParseAndBind(tc.where, sch)
			if err != nil {
				t.Fatal(err)
			}
			vals := map[string]*string{"p": tc.p, "n": tc.n}
			got := p.MayMatch(func(i int) Domain {
				c := p.Columns()[i]
				raw, ok := vals[c.Name()]
				if !ok {
					return UnknownDomain()
				}
				v, err := ParsePartitionValue(raw, c.Type)
				if err != nil {
					t.Fatal(err)
				}
				return ExactDomain(v)
			})
			if got != tc.want {
				t.Fatalf("MayMatch = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestMayMatchSound checks, on random small files, that a file holding a
// row for which the predicate is true is never skipped by its own stats.
func TestMayMatchSound(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{{Name: "a", Type: schema.TypeLong, Nullable: true}}}
	preds := []string{"a = 3", "a != 3", "a < 3", "a <= 3", "a > 3", "a >= 3", "a IS NULL", "a IS NOT NULL",
		"NOT a = 3", "NOT (a < 2 OR a > 4)", "a IN (1, 5)", "a NOT IN (1, 5)", "NOT a IS NULL AND a <= 2"}
	vals := []any{nil, int64(1), int64(2), int64(3), int64(4), int64(5)}
	// Every multiset of up to 3 values.
	var files [][]any
	for _, a := range vals {
		files = append(files, []any{a})
		for _, b := range vals {
			files = append(files, []any{a, b})
			for _, c := range vals {
				files = append(files, []any{a, b, c})
			}
		}
	}
	for _, where := range preds {
		p, err := ParseAndBind(where, sch)
		if err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			d := Domain{NumRecords: int64(len(f))}
			for _, v := range f {
				if v == nil {
					d.NullCount++
					continue
				}
				if d.Min == nil || v.(int64) < d.Min.(int64) {
					d.Min = v
				}
				if d.Max == nil || v.(int64) > d.Max.(int64) {
					d.Max = v
				}
			}
			anyTrue := false
			for _, v := range f {
				if p.EvalRow([]any{v}) == True {
					anyTrue = true
				}
			}
			if anyTrue && !p.MayMatch(func(int) Domain { return d }) {
				t.Fatalf("%s: file %v skipped but has a matching row", where, f)
			}
		}
	}
}
