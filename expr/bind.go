package expr

import (
	"fmt"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
)

// BoundColumn is a column of a predicate resolved against a schema.
type BoundColumn struct {
	// Path is the logical field path, spelled as in the schema.
	Path []string
	// Index is the field index at each level of Path (Index[0] in the top
	// struct, Index[1] in that field's struct, ...).
	Index []int
	// Fields are the schema fields along Path (the last one is the column).
	Fields []schema.StructField
	// Type is the column's type.
	Type schema.DataType
}

// Name is the dotted logical path.
func (c *BoundColumn) Name() string { return strings.Join(c.Path, ".") }

// PhysicalPath is the path of physical names (column mapping; PROTOCOL.md,
// "Column Mapping"): each level's delta.columnMapping.physicalName, or its
// logical name when the field has none. Statistics are keyed by it.
func (c *BoundColumn) PhysicalPath() []string {
	out := make([]string, len(c.Fields))
	for i, f := range c.Fields {
		out[i] = f.PhysicalName()
	}
	return out
}

// Predicate is an expression bound to a schema: columns resolved, literals
// converted to their columns' types. It is immutable and safe for
// concurrent use.
type Predicate struct {
	expr Expr
	root node
	cols []*BoundColumn
}

// Expr is the expression the predicate was bound from.
func (p *Predicate) Expr() Expr { return p.expr }

// String renders the predicate.
func (p *Predicate) String() string { return p.expr.String() }

// Columns are the columns the predicate reads.
func (p *Predicate) Columns() []*BoundColumn { return p.cols }

// node is a bound expression.
type node interface{ isNode() }

type andNode struct{ l, r node }
type orNode struct{ l, r node }
type notNode struct{ x node }

// cmpNode is col op lit; lit nil is a NULL literal.
type cmpNode struct {
	col int
	op  Op
	lit any
}

// likeNode is col [NOT] LIKE pattern.
type likeNode struct {
	col int
	m   *likeMatcher
	neg bool
}

type isNullNode struct {
	col int
	neg bool
}

func (*andNode) isNode()    {}
func (*orNode) isNode()     {}
func (*notNode) isNode()    {}
func (*cmpNode) isNode()    {}
func (*isNullNode) isNode() {}
func (*likeNode) isNode()   {}

// Bind resolves e against schema. Column names match exactly, or else
// case-insensitively when that is unambiguous (Spark's default). Errors wrap
// ErrBind and name the column.
func Bind(e Expr, sch *schema.StructType) (*Predicate, error) {
	b := &binder{schema: sch, index: map[string]int{}}
	root, err := b.bind(e)
	if err != nil {
		return nil, err
	}
	return &Predicate{expr: e, root: root, cols: b.cols}, nil
}

// ParseAndBind is Parse followed by Bind.
func ParseAndBind(s string, sch *schema.StructType) (*Predicate, error) {
	e, err := Parse(s)
	if err != nil {
		return nil, err
	}
	return Bind(e, sch)
}

type binder struct {
	schema *schema.StructType
	cols   []*BoundColumn
	index  map[string]int
}

func (b *binder) bind(e Expr) (node, error) {
	switch e := e.(type) {
	case *And:
		l, err := b.bind(e.L)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(e.R)
		if err != nil {
			return nil, err
		}
		return &andNode{l, r}, nil
	case *Or:
		l, err := b.bind(e.L)
		if err != nil {
			return nil, err
		}
		r, err := b.bind(e.R)
		if err != nil {
			return nil, err
		}
		return &orNode{l, r}, nil
	case *Not:
		x, err := b.bind(e.X)
		if err != nil {
			return nil, err
		}
		return &notNode{x}, nil
	case *IsNull:
		c, err := b.column(e.Col)
		if err != nil {
			return nil, err
		}
		return &isNullNode{col: c, neg: e.Negated}, nil
	case *Compare:
		c, err := b.column(e.Col)
		if err != nil {
			return nil, err
		}
		v, err := b.literal(c, e.Lit)
		if err != nil {
			return nil, err
		}
		return &cmpNode{col: c, op: e.Op, lit: v}, nil
	case *In:
		c, err := b.column(e.Col)
		if err != nil {
			return nil, err
		}
		// x IN (a, b) is x = a OR x = b, with SQL's null semantics.
		var n node
		for _, l := range e.List {
			v, err := b.literal(c, l)
			if err != nil {
				return nil, err
			}
			var eq node = &cmpNode{col: c, op: OpEq, lit: v}
			if n == nil {
				n = eq
			} else {
				n = &orNode{n, eq}
			}
		}
		if e.Negated {
			n = &notNode{n}
		}
		return n, nil
	case *Like:
		c, err := b.column(e.Col)
		if err != nil {
			return nil, err
		}
		if t := b.cols[c].Type; t != schema.TypeString {
			return nil, fmt.Errorf("%w: %s: LIKE needs a string column, %s is %s", ErrBind, e, b.cols[c].Name(), t.TypeName())
		}
		m, err := compileLike(e.Pattern, e.escape())
		if err != nil {
			return nil, fmt.Errorf("%w: %s: %v", ErrBind, e, err)
		}
		return &likeNode{col: c, m: m, neg: e.Negated}, nil
	case nil:
		return nil, fmt.Errorf("%w: nil expression", ErrBind)
	}
	return nil, fmt.Errorf("%w: unknown expression %T", ErrBind, e)
}

func (b *binder) column(c Column) (int, error) {
	bc, err := ResolveColumn(b.schema, c)
	if err != nil {
		return 0, err
	}
	key := strings.Join(bc.Path, "\x00")
	if i, ok := b.index[key]; ok {
		return i, nil
	}
	b.cols = append(b.cols, bc)
	b.index[key] = len(b.cols) - 1
	return len(b.cols) - 1, nil
}

// ResolveColumn finds a (possibly nested) column in schema. Errors wrap
// ErrBind.
func ResolveColumn(sch *schema.StructType, c Column) (*BoundColumn, error) {
	if len(c.Path) == 0 {
		return nil, fmt.Errorf("%w: empty column name", ErrBind)
	}
	bc := &BoundColumn{}
	st := sch
	for depth, name := range c.Path {
		if st == nil {
			return nil, fmt.Errorf("%w: column %s: %s is not a struct", ErrBind, c, strings.Join(c.Path[:depth], "."))
		}
		idx := -1
		for i, f := range st.Fields {
			if f.Name == name {
				idx = i
				break
			}
		}
		if idx < 0 {
			for i, f := range st.Fields {
				if strings.EqualFold(f.Name, name) {
					if idx >= 0 {
						return nil, fmt.Errorf("%w: column %s is ambiguous (%s, %s)", ErrBind, c, st.Fields[idx].Name, f.Name)
					}
					idx = i
				}
			}
		}
		if idx < 0 {
			return nil, fmt.Errorf("%w: no column %s in the schema", ErrBind, c)
		}
		f := st.Fields[idx]
		bc.Path = append(bc.Path, f.Name)
		bc.Index = append(bc.Index, idx)
		bc.Fields = append(bc.Fields, f)
		bc.Type = f.Type
		st, _ = f.Type.(*schema.StructType)
	}
	return bc, nil
}

// literal converts a literal to the Go value it is compared with, for the
// column's type. A string literal against a non-string column is cast to
// that type (Spark's implicit cast).
func (b *binder) literal(col int, l Literal) (any, error) {
	c := b.cols[col]
	if l.Kind == LitNull {
		return nil, nil
	}
	bad := func(why string) (any, error) {
		return nil, fmt.Errorf("%w: column %s of type %s compared with %s: %s", ErrBind, c.Name(), c.Type.TypeName(), l, why)
	}
	switch t := c.Type.(type) {
	case schema.DecimalType:
		if l.Kind == LitString {
			v, err := ParseDecimal(strings.TrimSpace(l.Text))
			if err != nil {
				return bad("not a number")
			}
			return v, nil
		}
		if !isNumeric(l.Kind) {
			return bad("not a number")
		}
		return l.value()
	case schema.PrimitiveType:
		switch t {
		case schema.TypeString:
			if l.Kind != LitString {
				return bad("want a 'string'")
			}
			return l.Text, nil
		case schema.TypeBinary:
			if l.Kind != LitString {
				return bad("want a 'string'")
			}
			return []byte(l.Text), nil
		case schema.TypeBoolean:
			switch l.Kind {
			case LitBool:
				return l.value()
			case LitString:
				switch strings.ToLower(strings.TrimSpace(l.Text)) {
				case "true":
					return true, nil
				case "false":
					return false, nil
				}
			}
			return bad("want TRUE or FALSE")
		case schema.TypeLong, schema.TypeInteger, schema.TypeShort, schema.TypeByte,
			schema.TypeFloat, schema.TypeDouble:
			if l.Kind == LitString {
				s := strings.TrimSpace(l.Text)
				k := numberKind(s)
				if t == schema.TypeFloat || t == schema.TypeDouble {
					switch strings.ToLower(s) {
					case "nan", "infinity", "+infinity", "-infinity", "inf", "-inf":
						k = LitFloat
					}
				}
				v, err := Literal{Kind: k, Text: s}.value()
				if err != nil {
					return bad("not a number")
				}
				return v, nil
			}
			if !isNumeric(l.Kind) {
				return bad("not a number")
			}
			return l.value()
		case schema.TypeDate, schema.TypeTimestamp, schema.TypeTimestampNTZ:
			var v any
			var err error
			switch l.Kind {
			case LitDate:
				v, err = l.value()
			case LitTimestamp, LitTimestampNTZ:
				v, err = l.value()
			case LitString:
				if t == schema.TypeDate {
					v, err = ParseDate(l.Text)
				} else {
					v, err = ParseTimestamp(l.Text)
				}
			default:
				return bad("want DATE '...' or TIMESTAMP '...'")
			}
			if err != nil {
				return bad(err.Error())
			}
			if ts, ok := v.(time.Time); ok && t == schema.TypeDate {
				return ts, nil // compared as timestamps (date → midnight UTC)
			}
			return v, nil
		}
	}
	return bad("comparisons on " + c.Type.TypeName() + " columns are not supported (only IS NULL)")
}

func isNumeric(k LitKind) bool { return k == LitInteger || k == LitDecimal || k == LitFloat }

// ReadsColumnsOutside reports whether predicate (the syntax Parse accepts)
// refers to a top-level column that sch lacks, such as a change feed's op
// column that the input has and the table does not. A nil sch, an empty
// predicate or one that does not parse give false: binding the predicate
// later reports its error.
func ReadsColumnsOutside(predicate string, sch *schema.StructType) bool {
	if sch == nil || predicate == "" {
		return false
	}
	e, err := Parse(predicate)
	if err != nil {
		return false
	}
	for _, c := range Columns(e) {
		if len(c.Path) > 0 && sch.FieldIndex(c.Path[0]) < 0 {
			return true
		}
	}
	return false
}
