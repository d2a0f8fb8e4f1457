package expr

// Truth is a three-valued SQL truth value.
type Truth uint8

// Truth values.
const (
	False Truth = iota
	True
	Unknown // SQL NULL: a row for which the predicate is unknown is dropped
)

// String is "false", "true" or "unknown".
func (t Truth) String() string {
	switch t {
	case False:
		return "false"
	case True:
		return "true"
	}
	return "unknown"
}

func and3(a, b Truth) Truth {
	switch {
	case a == False || b == False:
		return False
	case a == True && b == True:
		return True
	}
	return Unknown
}

func or3(a, b Truth) Truth {
	switch {
	case a == True || b == True:
		return True
	case a == False && b == False:
		return False
	}
	return Unknown
}

func not3(a Truth) Truth {
	switch a {
	case True:
		return False
	case False:
		return True
	}
	return Unknown
}

// Eval evaluates the predicate with SQL three-valued logic; value(i) is the
// value of Columns()[i] (nil for null). A nil predicate is True.
func (p *Predicate) Eval(value func(i int) any) Truth {
	if p == nil {
		return True
	}
	return eval(p.root, value)
}

// Matches reports whether a row is kept: Eval is True (unknown drops the row).
func (p *Predicate) Matches(value func(i int) any) bool { return p.Eval(value) == True }

// EvalRow evaluates the predicate on a row laid out like the schema it was
// bound to (row[j] is field j; struct values are []any). Columns missing
// from the row (short slices) are null.
func (p *Predicate) EvalRow(row []any) Truth {
	if p == nil {
		return True
	}
	return eval(p.root, func(i int) any { return ValueAt(row, p.cols[i].Index) })
}

// ValueAt follows an index path through struct values ([]any); nil when a
// level is null or missing.
func ValueAt(row []any, index []int) any {
	var v any = row
	for _, i := range index {
		s, ok := v.([]any)
		if !ok || i >= len(s) {
			return nil
		}
		v = s[i]
	}
	return v
}

func eval(n node, value func(i int) any) Truth {
	switch n := n.(type) {
	case *andNode:
		l := eval(n.l, value)
		if l == False {
			return False
		}
		return and3(l, eval(n.r, value))
	case *orNode:
		l := eval(n.l, value)
		if l == True {
			return True
		}
		return or3(l, eval(n.r, value))
	case *notNode:
		return not3(eval(n.x, value))
	case *isNullNode:
		isNull := value(n.col) == nil
		if isNull != n.neg {
			return True
		}
		return False
	case *likeNode:
		s, ok := value(n.col).(string)
		if !ok {
			return Unknown
		}
		if n.m.match(s) != n.neg {
			return True
		}
		return False
	case *cmpNode:
		v := value(n.col)
		if v == nil || n.lit == nil {
			return Unknown
		}
		c, ok := CompareValues(v, n.lit)
		if !ok {
			return Unknown
		}
		if opHolds(n.op, c) {
			return True
		}
		return False
	}
	return Unknown
}

func opHolds(op Op, c int) bool {
	switch op {
	case OpEq:
		return c == 0
	case OpNe:
		return c != 0
	case OpLt:
		return c < 0
	case OpLe:
		return c <= 0
	case OpGt:
		return c > 0
	case OpGe:
		return c >= 0
	}
	return false
}
