package expr

import (
	"errors"

	"github.com/lakesink/lakesink/schema"
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	cases := []struct {
		name, in, want string
	}{
		{"eq", "a = 1", "a = 1"},
		{"double eq", "a == 1", "a = 1"},
		{"ne bang", "a != 'x'", "a != 'x'"},
		{"ne sql", "a <> 'x'", "a != 'x'"},
		{"lt", "a<1.5", "a < 1.5"},
		{"le", "a <= -3", "a <= -3"},
		{"gt float", "a > 1e3", "a > 1e3"},
		{"ge", "a >= +2", "a >= 2"},
		{"literal on left flips", "1 < a", "a > 1"},
		{"and or precedence", "a = 1 OR b = 2 AND c = 3", "(a = 1 OR (b = 2 AND c = 3))"},
		{"parens", "(a = 1 OR b = 2) AND c = 3", "((a = 1 OR b = 2) AND c = 3)"},
		{"not", "NOT a = 1", "(NOT a = 1)"},
		{"not not", "not not a = 1", "(NOT (NOT a = 1))"},
		{"in", "a IN (1, 2, NULL)", "a IN (1, 2, NULL)"},
		{"not in", "a NOT IN ('x')", "a NOT IN ('x')"},
		{"is null", "a IS NULL", "a IS NULL"},
		{"is not null", "a is not null", "a IS NOT NULL"},
		{"between", "a BETWEEN 1 AND 5", "(a >= 1 AND a <= 5)"},
		{"not between", "a NOT BETWEEN 1 AND 5", "(NOT (a >= 1 AND a <= 5))"},
		{"string escape", "a = 'it''s'", "a = 'it''s'"},
		{"double quoted string", `a = "x"`, "a = 'x'"},
		{"bools", "a = TRUE OR b = false", "(a = true OR b = false)"},
		{"bare boolean column", "flag AND NOT other", "(flag = true AND (NOT other = true))"},
		{"date", "d >= DATE '2001-01-01'", "d >= DATE '2001-01-01'"},
		{"timestamp", "ts = TIMESTAMP '2001-01-01 00:47:00'", "ts = TIMESTAMP '2001-01-01 00:47:00'"},
		{"timestamp_ntz", "ts = timestamp_ntz '2001-01-01 00:47:00.123456'", "ts = TIMESTAMP_NTZ '2001-01-01 00:47:00.123456'"},
		{"nested", "a.b.c = 1", "a.b.c = 1"},
		{"backquoted", "`my col`.`x``y` = 1", "`my col`.`x``y` = 1"},
		{"backquoted keyword", "`and` = 1", "`and` = 1"},
		{"column named date", "date = '2020-01-01'", "date = '2020-01-01'"},
		{"unicode ident", "größe > 3", "größe > 3"},
		{"null literal", "a = NULL", "a = NULL"},
		{"decimal leading dot", "a = .5", "a = .5"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e, err := Parse(tc.in)
			if err != nil {
				t.Fatalf("Parse(%q): %v", tc.in, err)
			}
			if got := e.String(); got != tc.want && got != "("+tc.want+")" {
				t.Fatalf("Parse(%q) = %s, want %s", tc.in, got, tc.want)
			}
			// Round trip: the rendering parses to the same rendering.
			e2, err := Parse(e.String())
			if err != nil {
				t.Fatalf("reparse %q: %v", e.String(), err)
			}
			if e2.String() != e.String() {
				t.Fatalf("round trip %q -> %q", e.String(), e2.String())
			}
		})
	}
}

func TestParseErrors(t *testing.T) {
	cases := []struct {
		name, in string
		pos      int
		msg      string
	}{
		{"empty", "", 0, "empty"},
		{"missing literal", "a = ", 4, "expected a column or a literal"},
		{"two columns", "a = b", 4, "two columns"},
		{"two literals", "1 = 2", 0, "column on one side"},
		{"unterminated string", "a = 'abc", 4, "unterminated"},
		{"unclosed paren", "(a = 1", 6, "expected ')'"},
		{"trailing", "a = 1 b", 6, "unexpected"},
		{"bad char", "a = 1 ; drop", 6, "unexpected character"},
		{"bang alone", "a ! 1", 2, "!"},
		{"in without paren", "a IN 1", 5, "expected '('"},
		{"in bad sep", "a IN (1 2)", 8, "expected ',' or ')'"},
		{"is without null", "a IS 3", 5, "expected NULL"},
		{"bad date", "d = DATE '2001-13-01'", 9, "date"},
		{"bad timestamp", "t = TIMESTAMP 'noon'", 14, "timestamp"},
		{"keyword as column", "AND = 1", 0, "keyword"},
		{"number glued to letters", "a = 12abc", 4, "malformed number"},
		{"minus without number", "a = -x", 5, "expected a number"},
		{"and dangling", "a = 1 AND", 9, "expected a column"},
		{"not then garbage", "a NOT = 'x'", 6, "expected IN, BETWEEN or LIKE"},
		{"like without a pattern", "a LIKE 3", 7, "expected a 'pattern' string after LIKE"},
		{"like escape before a letter", `a LIKE 'x\y'`, 7, "may only precede %, _ or itself"},
		{"like ending with escape", `a LIKE 'x\'`, 7, "ends with the escape character"},
		{"like escape of two characters", "a LIKE 'x' ESCAPE 'ab'", 18, "one-character string after ESCAPE"},
		{"empty backquote", "`` = 1", 0, "empty quoted"},
		{"deep nesting", strings.Repeat("(", 500) + "a = 1" + strings.Repeat(")", 500), 200, "nested deeper"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse(tc.in)
			if err == nil {
				t.Fatalf("Parse(%q) succeeded, want error", tc.in)
			}
			if !errors.Is(err, ErrSyntax) {
				t.Fatalf("error %v is not ErrSyntax", err)
			}
			var se *SyntaxError
			if !errors.As(err, &se) {
				t.Fatalf("error %T is not *SyntaxError", err)
			}
			if se.Pos != tc.pos {
				t.Errorf("position = %d, want %d (%v)", se.Pos, tc.pos, err)
			}
			if !strings.Contains(err.Error(), tc.msg) {
				t.Errorf("error %q does not mention %q", err, tc.msg)
			}
			if !strings.Contains(err.Error(), "position") {
				t.Errorf("error %q does not name the position", err)
			}
		})
	}
}

func TestColumns(t *testing.T) {
	e, err := Parse("a = 1 AND (b.c IS NULL OR a IN (2, 3)) AND NOT `d` > 4")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, c := range Columns(e) {
		got = append(got, c.String())
	}
	if strings.Join(got, ",") != "a,b.c,d" {
		t.Fatalf("Columns = %v", got)
	}
}

func FuzzParse(f *testing.F) {
	for _, s := range []string{
		"a = 1", "a.b IN (1, 'x', NULL) OR NOT c IS NOT NULL", "`x``y` <> DATE '2020-01-01'",
		"((a>1e5))", "t BETWEEN TIMESTAMP '2001-01-01 00:47:00' AND '2002-01-01'", "a = 'it''s'",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e, err := Parse(s)
		if err != nil {
			var se *SyntaxError
			if !errors.As(err, &se) || se.Pos < 0 || se.Pos > len(s) {
				t.Fatalf("Parse(%q): bad error %v", s, err)
			}
			return
		}
		// A parsed expression renders to text that parses to the same text.
		r := e.String()
		e2, err := Parse(r)
		if err != nil {
			t.Fatalf("Parse(%q) ok, but its rendering %q fails: %v", s, r, err)
		}
		if e2.String() != r {
			t.Fatalf("rendering not stable: %q -> %q", r, e2.String())
		}
		// Binding and the three evaluations never panic.
		p, err := Bind(e, testSchema())
		if err != nil {
			return
		}
		p.EvalRow(make([]any, 11))
		p.EvalRow(row(int64(1), "a", dec("1.5"), 2.0, schema.Date(3), ts("2001-01-01 00:00:00"), true, int16(1), int32(2)))
		p.MayMatch(func(int) Domain { return UnknownDomain() })
		p.MayMatch(func(int) Domain { return ExactDomain(nil) })
		p.MayMatch(func(int) Domain { return Domain{Min: int64(1), Max: "z", NullCount: 0, NumRecords: 1} })
	})
}
