package expr

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The predicate language (the --where strings of the CLI), a small subset of
// Spark SQL boolean expressions:
//
//	expr     := or
//	or       := and { OR and }
//	and      := not { AND not }
//	not      := NOT not | atom
//	atom     := '(' expr ')'
//	          | operand cmpop operand                 (one column, one literal)
//	          | column [NOT] IN '(' literal {, literal} ')'
//	          | column [NOT] BETWEEN literal AND literal
//	          | column [NOT] LIKE 'pattern' [ESCAPE 'c']  (Spark's LIKE: % any run, _ one character)
//	          | column IS [NOT] NULL
//	          | column                                (a boolean column: column = true)
//	cmpop    := = | == | != | <> | < | <= | > | >=
//	column   := name { '.' name }     name: identifier or `back quoted` (`` escapes `)
//	literal  := 'string' ('' escapes ') | "string" | [-|+] number | TRUE | FALSE | NULL
//	          | DATE 'yyyy-mm-dd' | TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.ffffff][zone]'
//	          | TIMESTAMP_NTZ '...'
//
// Keywords are case-insensitive. A string compared with a non-string column
// is cast to the column's type, as Spark does implicitly (d = '2020-01-01').

// maxDepth bounds nesting so that hostile input cannot exhaust the stack.
const maxDepth = 200

type tokKind uint8

const (
	tEOF tokKind = iota
	tIdent
	tQuoted // `name`
	tString
	tNumber
	tOp     // comparison operator
	tLParen // (
	tRParen // )
	tComma
	tDot
	tMinus
	tPlus
)

type token struct {
	kind tokKind
	text string // identifier/name/string content/number/operator
	pos  int
}

func lex(in string) ([]token, error) {
	var toks []token
	i := 0
	for i < len(in) {
		r, size := utf8.DecodeRuneInString(in[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			return nil, &SyntaxError{Pos: i, Input: in, Msg: "invalid UTF-8"}
		case unicode.IsSpace(r):
			i += size
		case r == '(':
			toks = append(toks, token{tLParen, "(", i})
			i++
		case r == ')':
			toks = append(toks, token{tRParen, ")", i})
			i++
		case r == ',':
			toks = append(toks, token{tComma, ",", i})
			i++
		case r == '-':
			toks = append(toks, token{tMinus, "-", i})
			i++
		case r == '+':
			toks = append(toks, token{tPlus, "+", i})
			i++
		case r == '.' && !(i+1 < len(in) && isDigit(in[i+1])):
			toks = append(toks, token{tDot, ".", i})
			i++
		case r == '=' || r == '<' || r == '>' || r == '!':
			op, n := "", 1
			if i+1 < len(in) {
				two := in[i : i+2]
				switch two {
				case "==", "!=", "<>", "<=", ">=":
					op, n = two, 2
				}
			}
			if op == "" {
				if r == '!' {
					return nil, &SyntaxError{Pos: i, Input: in, Msg: "unexpected '!' (did you mean != ?)"}
				}
				op = string(r)
			}
			toks = append(toks, token{tOp, op, i})
			i += n
		case r == '\'' || r == '"':
			s, n, err := lexQuoted(in, i, byte(r))
			if err != nil {
				return nil, err
			}
			toks = append(toks, token{tString, s, i})
			i += n
		case r == '`':
			s, n, err := lexQuoted(in, i, '`')
			if err != nil {
				return nil, err
			}
			if s == "" {
				return nil, &SyntaxError{Pos: i, Input: in, Msg: "empty quoted column name"}
			}
			toks = append(toks, token{tQuoted, s, i})
			i += n
		case isDigit(byte(r)) || r == '.':
			n := lexNumber(in[i:])
			if n == 0 {
				return nil, &SyntaxError{Pos: i, Input: in, Msg: "malformed number"}
			}
			// A number directly followed by a letter (12abc) is an error.
			if i+n < len(in) {
				if r2, _ := utf8.DecodeRuneInString(in[i+n:]); isIdentRune(r2) {
					return nil, &SyntaxError{Pos: i, Input: in, Msg: fmt.Sprintf("malformed number %q", in[i:i+n+1])}
				}
			}
			toks = append(toks, token{tNumber, in[i : i+n], i})
			i += n
		case isIdentStart(r):
			j := i
			for j < len(in) {
				r2, s2 := utf8.DecodeRuneInString(in[j:])
				if !isIdentRune(r2) {
					break
				}
				j += s2
			}
			toks = append(toks, token{tIdent, in[i:j], i})
			i = j
		default:
			return nil, &SyntaxError{Pos: i, Input: in, Msg: fmt.Sprintf("unexpected character %q", r)}
		}
	}
	toks = append(toks, token{tEOF, "", len(in)})
	return toks, nil
}

func isDigit(b byte) bool      { return b >= '0' && b <= '9' }
func isIdentStart(r rune) bool { return r == '_' || unicode.IsLetter(r) }
func isIdentRune(r rune) bool  { return r == '_' || unicode.IsLetter(r) || unicode.IsDigit(r) }
func isPlainIdent(s string) bool {
	if s == "" || isKeyword(s) {
		return false
	}
	for i, r := range s {
		if i == 0 && !isIdentStart(r) || !isIdentRune(r) {
			return false
		}
	}
	return true
}

// lexQuoted reads a quoted token starting at in[start] == q; a doubled quote
// inside stands for one quote. It returns the content and the bytes consumed.
func lexQuoted(in string, start int, q byte) (string, int, error) {
	var b strings.Builder
	i := start + 1
	for {
		j := strings.IndexByte(in[i:], q)
		if j < 0 {
			return "", 0, &SyntaxError{Pos: start, Input: in, Msg: "unterminated quoted text"}
		}
		b.WriteString(in[i : i+j])
		i += j + 1
		if i < len(in) && in[i] == q {
			b.WriteByte(q)
			i++
			continue
		}
		return b.String(), i - start, nil
	}
}

// lexNumber returns the length of the number at the start of s: digits,
// optional fraction, optional exponent. 0 if none.
func lexNumber(s string) int {
	i, digits := 0, 0
	for i < len(s) && isDigit(s[i]) {
		i++
		digits++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && isDigit(s[i]) {
			i++
			digits++
		}
	}
	if digits == 0 {
		return 0
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		k := j
		for k < len(s) && isDigit(s[k]) {
			k++
		}
		if k > j {
			i = k
		}
	}
	return i
}

var keywords = map[string]bool{
	"AND": true, "OR": true, "NOT": true, "IN": true, "IS": true, "NULL": true,
	"TRUE": true, "FALSE": true, "BETWEEN": true,
}

func isKeyword(s string) bool { return keywords[strings.ToUpper(s)] }

type parser struct {
	in    string
	toks  []token
	i     int
	depth int
}

// Parse parses a predicate string. Errors are *SyntaxError (errors.Is
// ErrSyntax) naming the byte position.
func Parse(s string) (Expr, error) {
	toks, err := lex(s)
	if err != nil {
		return nil, err
	}
	p := &parser{in: s, toks: toks}
	if p.peek().kind == tEOF {
		return nil, p.errf(p.peek(), "empty predicate")
	}
	e, err := p.parseOr()
	if err != nil {
		return nil, err
	}
	if t := p.peek(); t.kind != tEOF {
		return nil, p.errf(t, "unexpected %s after the end of the expression", describe(t))
	}
	return e, nil
}

func (p *parser) peek() token { return p.toks[p.i] }
func (p *parser) next() token {
	t := p.toks[p.i]
	if t.kind != tEOF {
		p.i++
	}
	return t
}

func (p *parser) errf(t token, format string, args ...any) error {
	return &SyntaxError{Pos: t.pos, Input: p.in, Msg: fmt.Sprintf(format, args...)}
}

func describe(t token) string {
	switch t.kind {
	case tEOF:
		return "end of input"
	case tString:
		return "string " + quote(t.text)
	case tQuoted:
		return "`" + t.text + "`"
	}
	return fmt.Sprintf("%q", t.text)
}

func (p *parser) isKW(kw string) bool {
	t := p.peek()
	return t.kind == tIdent && strings.EqualFold(t.text, kw)
}

func (p *parser) enter() error {
	p.depth++
	if p.depth > maxDepth {
		return p.errf(p.peek(), "expression nested deeper than %d levels", maxDepth)
	}
	return nil
}

func (p *parser) parseOr() (Expr, error) {
	if err := p.enter(); err != nil {
		return nil, err
	}
	defer func() { p.depth-- }()
	l, err := p.parseAnd()
	if err != nil {
		return nil, err
	}
	for p.isKW("OR") {
		p.next()
		r, err := p.parseAnd()
		if err != nil {
			return nil, err
		}
		l = &Or{L: l, R: r}
	}
	return l, nil
}

func (p *parser) parseAnd() (Expr, error) {
	l, err := p.parseNot()
	if err != nil {
		return nil, err
	}
	for p.isKW("AND") {
		p.next()
		r, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		l = &And{L: l, R: r}
	}
	return l, nil
}

func (p *parser) parseNot() (Expr, error) {
	if p.isKW("NOT") {
		if err := p.enter(); err != nil {
			return nil, err
		}
		defer func() { p.depth-- }()
		p.next()
		x, err := p.parseNot()
		if err != nil {
			return nil, err
		}
		return &Not{X: x}, nil
	}
	return p.parseAtom()
}

// operand is a column or a literal.
type operand struct {
	col   *Column
	lit   *Literal
	start token
}

func (p *parser) parseAtom() (Expr, error) {
	t := p.peek()
	if t.kind == tLParen {
		p.next()
		e, err := p.parseOr()
		if err != nil {
			return nil, err
		}
		if c := p.next(); c.kind != tRParen {
			return nil, p.errf(c, "expected ')' to close '(' at position %d, found %s", t.pos, describe(c))
		}
		return e, nil
	}
	left, err := p.parseOperand()
	if err != nil {
		return nil, err
	}
	switch {
	case p.peek().kind == tOp:
		opTok := p.next()
		right, err := p.parseOperand()
		if err != nil {
			return nil, err
		}
		op := parseOp(opTok.text)
		switch {
		case left.col != nil && right.lit != nil:
			return &Compare{Col: *left.col, Op: op, Lit: *right.lit}, nil
		case left.lit != nil && right.col != nil:
			return &Compare{Col: *right.col, Op: op.flip(), Lit: *left.lit}, nil
		case left.col != nil:
			return nil, p.errf(right.start, "comparing two columns is not supported (compare a column with a literal)")
		default:
			return nil, p.errf(left.start, "comparison needs a column on one side")
		}
	case p.isKW("IS"):
		if left.col == nil {
			return nil, p.errf(p.peek(), "IS NULL needs a column on its left")
		}
		p.next()
		neg := false
		if p.isKW("NOT") {
			p.next()
			neg = true
		}
		if !p.isKW("NULL") {
			return nil, p.errf(p.peek(), "expected NULL after IS, found %s", describe(p.peek()))
		}
		p.next()
		return &IsNull{Col: *left.col, Negated: neg}, nil
	case p.isKW("IN") || p.isKW("BETWEEN") || p.isKW("LIKE") || p.isKW("NOT"):
		if left.col == nil {
			return nil, p.errf(p.peek(), "%s needs a column on its left", strings.ToUpper(p.peek().text))
		}
		neg := false
		if p.isKW("NOT") {
			p.next()
			neg = true
		}
		switch {
		case p.isKW("IN"):
			p.next()
			return p.parseInList(*left.col, neg)
		case p.isKW("LIKE"):
			p.next()
			return p.parseLike(*left.col, neg)
		case p.isKW("BETWEEN"):
			p.next()
			lo, err := p.parseLiteral()
			if err != nil {
				return nil, err
			}
			if !p.isKW("AND") {
				return nil, p.errf(p.peek(), "expected AND in BETWEEN, found %s", describe(p.peek()))
			}
			p.next()
			hi, err := p.parseLiteral()
			if err != nil {
				return nil, err
			}
			var e Expr = &And{L: &Compare{Col: *left.col, Op: OpGe, Lit: lo}, R: &Compare{Col: *left.col, Op: OpLe, Lit: hi}}
			if neg {
				e = &Not{X: e}
			}
			return e, nil
		default:
			return nil, p.errf(p.peek(), "expected IN, BETWEEN or LIKE after NOT, found %s", describe(p.peek()))
		}
	default:
		if left.col != nil {
			// A bare boolean column.
			return &Compare{Col: *left.col, Op: OpEq, Lit: Literal{Kind: LitBool, Text: "true"}}, nil
		}
		return nil, p.errf(p.peek(), "expected a comparison after %s, found %s", left.lit.String(), describe(p.peek()))
	}
}

func parseOp(s string) Op {
	switch s {
	case "=", "==":
		return OpEq
	case "!=", "<>":
		return OpNe
	case "<":
		return OpLt
	case "<=":
		return OpLe
	case ">":
		return OpGt
	}
	return OpGe
}

func (p *parser) parseInList(col Column, neg bool) (Expr, error) {
	if t := p.next(); t.kind != tLParen {
		return nil, p.errf(t, "expected '(' after IN, found %s", describe(t))
	}
	var list []Literal
	for {
		l, err := p.parseLiteral()
		if err != nil {
			return nil, err
		}
		list = append(list, l)
		t := p.next()
		if t.kind == tRParen {
			break
		}
		if t.kind != tComma {
			return nil, p.errf(t, "expected ',' or ')' in IN list, found %s", describe(t))
		}
	}
	return &In{Col: col, List: list, Negated: neg}, nil
}

// parseLike parses the rest of col [NOT] LIKE 'pattern' [ESCAPE 'c'].
func (p *parser) parseLike(col Column, neg bool) (Expr, error) {
	t := p.next()
	if t.kind != tString {
		return nil, p.errf(t, "expected a 'pattern' string after LIKE, found %s", describe(t))
	}
	e := &Like{Col: col, Pattern: t.text, Negated: neg}
	if p.isKW("ESCAPE") {
		p.next()
		et := p.next()
		if et.kind != tString || utf8.RuneCountInString(et.text) != 1 {
			return nil, p.errf(et, "expected a one-character string after ESCAPE, found %s", describe(et))
		}
		e.Escape, _ = utf8.DecodeRuneInString(et.text)
	}
	if _, err := compileLike(e.Pattern, e.escape()); err != nil {
		return nil, p.errf(t, "%v", err)
	}
	return e, nil
}

func (p *parser) parseLiteral() (Literal, error) {
	t := p.peek()
	o, err := p.parseOperand()
	if err != nil {
		return Literal{}, err
	}
	if o.lit == nil {
		return Literal{}, p.errf(t, "expected a literal, found column %s", o.col.String())
	}
	return *o.lit, nil
}

func (p *parser) parseOperand() (operand, error) {
	t := p.peek()
	switch t.kind {
	case tString:
		p.next()
		return operand{lit: &Literal{Kind: LitString, Text: t.text}, start: t}, nil
	case tNumber, tMinus, tPlus:
		sign := ""
		if t.kind != tNumber {
			p.next()
			if t.kind == tMinus {
				sign = "-"
			}
			if p.peek().kind != tNumber {
				return operand{}, p.errf(p.peek(), "expected a number after %q", t.text)
			}
		}
		n := p.next()
		return operand{lit: &Literal{Kind: numberKind(n.text), Text: sign + n.text}, start: t}, nil
	case tIdent:
		up := strings.ToUpper(t.text)
		switch up {
		case "NULL":
			p.next()
			return operand{lit: &Literal{Kind: LitNull}, start: t}, nil
		case "TRUE", "FALSE":
			p.next()
			return operand{lit: &Literal{Kind: LitBool, Text: strings.ToLower(up)}, start: t}, nil
		case "DATE", "TIMESTAMP", "TIMESTAMP_NTZ":
			if p.toks[p.i+1].kind == tString {
				p.next()
				s := p.next()
				kind := map[string]LitKind{"DATE": LitDate, "TIMESTAMP": LitTimestamp, "TIMESTAMP_NTZ": LitTimestampNTZ}[up]
				l := Literal{Kind: kind, Text: s.text}
				if _, err := l.value(); err != nil {
					return operand{}, p.errf(s, "%v", err)
				}
				return operand{lit: &l, start: t}, nil
			}
		}
		if keywords[up] {
			return operand{}, p.errf(t, "unexpected keyword %s (quote a column of that name with backquotes)", up)
		}
		return p.parseColumn()
	case tQuoted:
		return p.parseColumn()
	}
	return operand{}, p.errf(t, "expected a column or a literal, found %s", describe(t))
}

func numberKind(s string) LitKind {
	switch {
	case strings.ContainsAny(s, "eE"):
		return LitFloat
	case strings.Contains(s, "."):
		return LitDecimal
	}
	return LitInteger
}

func (p *parser) parseColumn() (operand, error) {
	start := p.peek()
	var path []string
	for {
		t := p.next()
		if t.kind != tIdent && t.kind != tQuoted {
			return operand{}, p.errf(t, "expected a column name, found %s", describe(t))
		}
		path = append(path, t.text)
		if p.peek().kind != tDot {
			break
		}
		p.next()
	}
	return operand{col: &Column{Path: path}, start: start}, nil
}
