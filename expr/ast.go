package expr

import (
	"strings"
)

// Expr is a parsed predicate (unbound: column names are not yet resolved
// against a schema). Implementations: *And, *Or, *Not, *Compare, *In,
// *IsNull. Bind resolves it against a schema into a *Predicate.
type Expr interface {
	// String renders the expression in the syntax Parse accepts.
	String() string
	isExpr()
}

// Op is a comparison operator.
type Op uint8

// Comparison operators.
const (
	OpEq Op = iota // =
	OpNe           // != or <>
	OpLt           // <
	OpLe           // <=
	OpGt           // >
	OpGe           // >=
)

// String is the operator as the predicate syntax writes it (=, <>, <, <=, >, >=).
func (o Op) String() string {
	switch o {
	case OpEq:
		return "="
	case OpNe:
		return "!="
	case OpLt:
		return "<"
	case OpLe:
		return "<="
	case OpGt:
		return ">"
	case OpGe:
		return ">="
	}
	return "?"
}

// flip is the operator with its operands swapped: lit < col ⇔ col > lit.
func (o Op) flip() Op {
	switch o {
	case OpLt:
		return OpGt
	case OpLe:
		return OpGe
	case OpGt:
		return OpLt
	case OpGe:
		return OpLe
	}
	return o
}

// Column is a column reference: the path of field names from the top of the
// schema (a.b.c is ["a","b","c"]), in logical (user-facing) names.
type Column struct {
	Path []string // field names from the top of the schema
}

// String is the expression in the predicate syntax Parse reads.
func (c Column) String() string {
	parts := make([]string, len(c.Path))
	for i, p := range c.Path {
		if isPlainIdent(p) {
			parts[i] = p
		} else {
			parts[i] = "`" + strings.ReplaceAll(p, "`", "``") + "`"
		}
	}
	return strings.Join(parts, ".")
}

// LitKind is the syntactic kind of a literal.
type LitKind uint8

// Literal kinds.
const (
	LitNull LitKind = iota
	LitString
	LitInteger // digits, optional sign
	LitDecimal // digits with a fraction, no exponent
	LitFloat   // with an exponent
	LitBool
	LitDate         // DATE '...'
	LitTimestamp    // TIMESTAMP '...'
	LitTimestampNTZ // TIMESTAMP_NTZ '...'
)

// Literal is a literal as written; its Go value is fixed by Bind from the
// column it is compared with.
type Literal struct {
	Kind LitKind // the literal's syntactic kind
	Text string  // the string's content, the number's digits, "true"/"false"
}

// String is the expression in the predicate syntax Parse reads.
func (l Literal) String() string {
	switch l.Kind {
	case LitNull:
		return "NULL"
	case LitString:
		return quote(l.Text)
	case LitDate:
		return "DATE " + quote(l.Text)
	case LitTimestamp:
		return "TIMESTAMP " + quote(l.Text)
	case LitTimestampNTZ:
		return "TIMESTAMP_NTZ " + quote(l.Text)
	}
	return l.Text
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// And is L AND R.
type And struct{ L, R Expr }

// Or is L OR R.
type Or struct{ L, R Expr }

// Not is NOT X.
type Not struct{ X Expr }

// Compare is Col Op Lit (a literal on the left is normalised to the right).
type Compare struct {
	Col Column
	Op  Op
	Lit Literal
}

// In is Col IN (List...), or Col NOT IN (...) when Negated.
type In struct {
	Col     Column
	List    []Literal
	Negated bool
}

// Like is Col LIKE Pattern, or Col NOT LIKE Pattern when Negated, with
// Spark SQL's semantics (Spark's StringUtils.escapeLikeRegex): the pattern
// matches the whole string, case-sensitively; % matches any run of
// characters (none included), _ exactly one; Escape (0: backslash) before %,
// _ or itself makes it literal, before any other character it is an error.
// A null value or pattern gives null.
type Like struct {
	Col     Column
	Pattern string
	Escape  rune
	Negated bool
}

func (e *Like) escape() rune {
	if e.Escape == 0 {
		return '\\'
	}
	return e.Escape
}

// IsNull is Col IS NULL, or Col IS NOT NULL when Negated.
type IsNull struct {
	Col     Column
	Negated bool
}

func (*And) isExpr()     {}
func (*Or) isExpr()      {}
func (*Not) isExpr()     {}
func (*Compare) isExpr() {}
func (*In) isExpr()      {}
func (*IsNull) isExpr()  {}
func (*Like) isExpr()    {}

// String is the expression in the predicate syntax Parse reads.
func (e *And) String() string { return "(" + e.L.String() + " AND " + e.R.String() + ")" }

// String is the expression in the predicate syntax Parse reads.
func (e *Or) String() string { return "(" + e.L.String() + " OR " + e.R.String() + ")" }

// String is the expression in the predicate syntax Parse reads.
func (e *Not) String() string { return "(NOT " + e.X.String() + ")" }

// String is the expression in the predicate syntax Parse reads.
func (e *Compare) String() string { return e.Col.String() + " " + e.Op.String() + " " + e.Lit.String() }

// String is the expression in the predicate syntax Parse reads.
func (e *In) String() string {
	parts := make([]string, len(e.List))
	for i, l := range e.List {
		parts[i] = l.String()
	}
	not := ""
	if e.Negated {
		not = "NOT "
	}
	return e.Col.String() + " " + not + "IN (" + strings.Join(parts, ", ") + ")"
}

// String is the expression in the predicate syntax Parse reads.
func (e *Like) String() string {
	not := ""
	if e.Negated {
		not = "NOT "
	}
	s := e.Col.String() + " " + not + "LIKE " + quote(e.Pattern)
	if e.Escape != 0 && e.Escape != '\\' {
		s += " ESCAPE " + quote(string(e.Escape))
	}
	return s
}

// String is the expression in the predicate syntax Parse reads.
func (e *IsNull) String() string {
	if e.Negated {
		return e.Col.String() + " IS NOT NULL"
	}
	return e.Col.String() + " IS NULL"
}

// Columns lists the columns an expression refers to, in order of first
// appearance, without duplicates.
func Columns(e Expr) []Column {
	var out []Column
	seen := map[string]bool{}
	add := func(c Column) {
		k := strings.Join(c.Path, "\x00")
		if !seen[k] {
			seen[k] = true
			out = append(out, c)
		}
	}
	var walk func(Expr)
	walk = func(e Expr) {
		switch e := e.(type) {
		case *And:
			walk(e.L)
			walk(e.R)
		case *Or:
			walk(e.L)
			walk(e.R)
		case *Not:
			walk(e.X)
		case *Compare:
			add(e.Col)
		case *In:
			add(e.Col)
		case *IsNull:
			add(e.Col)
		case *Like:
			add(e.Col)
		}
	}
	if e != nil {
		walk(e)
	}
	return out
}
