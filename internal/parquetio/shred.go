package parquetio

import (
	"errors"
	"fmt"
	"math/big"
	"time"
	"unsafe"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
)

// This file turns Batch values into parquet.Row values (record shredding with
// repetition and definition levels, Dremel style) after validating them
// against the schema. One code path serves every writer.

type leafKind uint8

const (
	lkString leafKind = iota
	lkLong
	lkInt
	lkShort
	lkByte
	lkFloat
	lkDouble
	lkBool
	lkBinary
	lkDate
	lkTimestamp
	lkTimestampNTZ
	lkDec32
	lkDec64
	lkDecFixed
)

type nodeKind uint8

const (
	nkLeaf nodeKind = iota
	nkStruct
	nkList
	nkMap
)

// wnode is a compiled schema node for writing.
type wnode struct {
	name     string // logical name (error paths)
	statName string // name in stats JSON: the physical name with column mapping
	kind     nodeKind
	leaf     leafKind
	typ      schema.DataType
	optional bool
	def      int // definition level when this node is present (non-null)
	rep      int // list/map: repetition level of its entries
	col      int // leaf: column index
	firstCol int
	endCol   int
	children []*wnode
	dec      schema.DecimalType
	decWidth int
	stat     int   // index of the stats collector of this node, -1 none
	statsIn  []int // stats collectors of this subtree (for nulls of a parent)
}

// writePlan is the compiled data schema.
type writePlan struct {
	fields   []*wnode
	numCols  int
	repeated bool // any list/map: values must be regrouped by column
	// fastLevels: set levels through the parquet.Value layout mirror
	// (levels.go), verified when the plan is compiled.
	fastLevels bool
	stats      []statSpec
}

type statSpec struct {
	path   []string
	kind   leafKind
	dec    schema.DecimalType
	minmax bool // false: nullCount only (binary, boolean, arrays, maps)
}

// compilePlan compiles the data schema s. numIndexed leaf columns (in
// depth-first order, arrays and maps counting as one) get statistics; -1 = all.
func compilePlan(s *schema.StructType, numIndexed int, physical bool) (*writePlan, error) {
	p := &writePlan{fastLevels: levelsMirrorOK()}
	col := 0
	budget := numIndexed
	var build func(t schema.DataType, name, statName string, optional bool, def, rep int, path []string, inRepeated bool) (*wnode, error)
	build = func(t schema.DataType, name, statName string, optional bool, def, rep int, path []string, inRepeated bool) (*wnode, error) {
		n := &wnode{name: name, statName: statName, typ: t, optional: optional, firstCol: col, stat: -1}
		if optional {
			def++
		}
		if def > parquet.MaxDefinitionLevel || rep > parquet.MaxRepetitionLevel {
			return nil, fmt.Errorf("%w: column %s is nested too deeply for Parquet (definition level %d, repetition level %d; at most %d)", schema.ErrSchema, joinPathSlice(path), def, rep, parquet.MaxDefinitionLevel)
		}
		n.def = def
		addStat := func(spec statSpec) {
			if inRepeated || budget == 0 {
				return
			}
			if budget > 0 {
				budget--
			}
			spec.path = append([]string(nil), path...)
			n.stat = len(p.stats)
			p.stats = append(p.stats, spec)
		}
		switch t := t.(type) {
		case schema.PrimitiveType:
			n.kind = nkLeaf
			minmax := true
			switch t {
			case schema.TypeString:
				n.leaf = lkString
			case schema.TypeLong:
				n.leaf = lkLong
			case schema.TypeInteger:
				n.leaf = lkInt
			case schema.TypeShort:
				n.leaf = lkShort
			case schema.TypeByte:
				n.leaf = lkByte
			case schema.TypeFloat:
				n.leaf = lkFloat
			case schema.TypeDouble:
				n.leaf = lkDouble
			case schema.TypeBoolean:
				n.leaf, minmax = lkBool, false
			case schema.TypeBinary:
				n.leaf, minmax = lkBinary, false
			case schema.TypeDate:
				n.leaf = lkDate
			case schema.TypeTimestamp:
				n.leaf = lkTimestamp
			case schema.TypeTimestampNTZ:
				n.leaf = lkTimestampNTZ
			default:
				return nil, fmt.Errorf("%w: column %s: cannot write type %s", schema.ErrSchema, joinPathSlice(path), string(t))
			}
			n.col = col
			col++
			addStat(statSpec{kind: n.leaf, minmax: minmax})
		case schema.DecimalType:
			n.kind = nkLeaf
			n.dec = t
			switch {
			case t.Precision <= 9:
				n.leaf = lkDec32
			case t.Precision <= 18:
				n.leaf = lkDec64
			default:
				n.leaf = lkDecFixed
				n.decWidth = decimalBytes(t.Precision)
			}
			n.col = col
			col++
			addStat(statSpec{kind: n.leaf, dec: t, minmax: true})
		case *schema.StructType:
			n.kind = nkStruct
			for _, f := range t.Fields {
				c, err := build(f.Type, f.Name, fieldStatName(f, physical), f.Nullable, def, rep, append(path, f.Name), inRepeated)
				if err != nil {
					return nil, err
				}
				n.children = append(n.children, c)
			}
		case *schema.ArrayType:
			p.repeated = true
			n.kind = nkList
			addStat(statSpec{minmax: false})
			n.rep = rep + 1
			e, err := build(t.ElementType, "element", "element", t.ContainsNull, def+1, rep+1, append(path, "element"), true)
			if err != nil {
				return nil, err
			}
			n.children = []*wnode{e}
		case *schema.MapType:
			p.repeated = true
			n.kind = nkMap
			addStat(statSpec{minmax: false})
			n.rep = rep + 1
			k, err := build(t.KeyType, "key", "key", false, def+1, rep+1, append(path, "key"), true)
			if err != nil {
				return nil, err
			}
			v, err := build(t.ValueType, "value", "value", t.ValueContainsNull, def+1, rep+1, append(path, "value"), true)
			if err != nil {
				return nil, err
			}
			n.children = []*wnode{k, v}
		default:
			return nil, fmt.Errorf("%w: column %s: unknown type %T", schema.ErrSchema, joinPathSlice(path), t)
		}
		n.endCol = col
		if n.stat >= 0 {
			n.statsIn = append(n.statsIn, n.stat)
		}
		for _, c := range n.children {
			n.statsIn = append(n.statsIn, c.statsIn...)
		}
		return n, nil
	}
	for _, f := range s.Fields {
		n, err := build(f.Type, f.Name, fieldStatName(f, physical), f.Nullable, 0, 0, []string{f.Name}, false)
		if err != nil {
			return nil, err
		}
		p.fields = append(p.fields, n)
	}
	if col > parquet.MaxColumnIndex+1 {
		return nil, fmt.Errorf("%w: %d leaf columns; a Parquet file written here holds at most %d", schema.ErrSchema, col, parquet.MaxColumnIndex+1)
	}
	p.numCols = col
	return p, nil
}

func fieldStatName(f schema.StructField, physical bool) string {
	if physical {
		return f.PhysicalName()
	}
	return f.Name
}

func joinPathSlice(p []string) string {
	s := ""
	for i, x := range p {
		if i > 0 {
			s += "."
		}
		s += x
	}
	return s
}

// fieldErr is a validation failure with the path built while unwinding.
type fieldErr struct {
	path []string // innermost first
	err  error
}

func (e *fieldErr) at(name string) *fieldErr {
	e.path = append(e.path, name)
	return e
}

func (e *fieldErr) dotted() string {
	s := ""
	for i := len(e.path) - 1; i >= 0; i-- {
		if s != "" {
			s += "."
		}
		s += e.path[i]
	}
	return s
}

var (
	errNull      = errors.New("null value in a non-nullable field")
	errNullKey   = errors.New("null map key")
	errPrecision = errors.New("decimal value exceeds the column's precision")
)

func wrongType(v any, n *wnode) *fieldErr {
	return &fieldErr{err: fmt.Errorf("value %v of Go type %T does not fit type %s", v, v, schema.FormatType(n.typ))}
}

// validate checks one value against its node.
func validate(v any, n *wnode) *fieldErr {
	if v == nil {
		if !n.optional {
			return &fieldErr{err: errNull}
		}
		return nil
	}
	switch n.kind {
	case nkLeaf:
		ok := false
		switch n.leaf {
		case lkString:
			_, ok = v.(string)
		case lkLong:
			_, ok = v.(int64)
		case lkInt:
			_, ok = v.(int32)
		case lkShort:
			_, ok = v.(int16)
		case lkByte:
			_, ok = v.(int8)
		case lkFloat:
			_, ok = v.(float32)
		case lkDouble:
			_, ok = v.(float64)
		case lkBool:
			_, ok = v.(bool)
		case lkBinary:
			_, ok = v.([]byte)
		case lkDate:
			_, ok = v.(schema.Date)
		case lkTimestamp, lkTimestampNTZ:
			_, ok = v.(time.Time)
		case lkDec32, lkDec64, lkDecFixed:
			d, isDec := v.(schema.Decimal)
			if !isDec || d.Unscaled == nil {
				return wrongType(v, n)
			}
			u, err := rescale(d, n.dec.Scale)
			if err != nil {
				return &fieldErr{err: err}
			}
			if u.CmpAbs(pow10(n.dec.Precision)) >= 0 {
				return &fieldErr{err: fmt.Errorf("%w: %s does not fit %s", errPrecision, d, n.dec.TypeName())}
			}
			return nil
		}
		if !ok {
			return wrongType(v, n)
		}
	case nkStruct:
		vals, ok := v.([]any)
		if !ok {
			return wrongType(v, n)
		}
		if len(vals) != len(n.children) {
			return &fieldErr{err: fmt.Errorf("struct value has %d fields, type has %d", len(vals), len(n.children))}
		}
		for i, c := range n.children {
			if e := validate(vals[i], c); e != nil {
				return e.at(c.name)
			}
		}
	case nkList:
		vals, ok := v.([]any)
		if !ok {
			return wrongType(v, n)
		}
		e := n.children[0]
		for i, x := range vals {
			if fe := validate(x, e); fe != nil {
				return fe.at(fmt.Sprintf("[%d]", i))
			}
		}
	case nkMap:
		entries, ok := v.([]schema.MapEntry)
		if !ok {
			return wrongType(v, n)
		}
		k, val := n.children[0], n.children[1]
		for i, en := range entries {
			if en.Key == nil {
				return (&fieldErr{err: errNullKey}).at(fmt.Sprintf("[%d]", i))
			}
			if fe := validate(en.Key, k); fe != nil {
				return fe.at("key").at(fmt.Sprintf("[%d]", i))
			}
			if fe := validate(en.Value, val); fe != nil {
				return fe.at("value").at(fmt.Sprintf("[%d]", i))
			}
		}
	}
	return nil
}

// rescale returns d's unscaled value at the given scale (d.Unscaled itself when
// the scales match); it fails when digits would be lost.
func rescale(d schema.Decimal, scale int) (*big.Int, error) {
	if d.Scale == scale {
		return d.Unscaled, nil
	}
	if d.Scale < scale {
		return new(big.Int).Mul(d.Unscaled, pow10(scale-d.Scale)), nil
	}
	q, r := new(big.Int).QuoRem(d.Unscaled, pow10(d.Scale-scale), new(big.Int))
	if r.Sign() != 0 {
		return nil, fmt.Errorf("%w: %s has more than %d fractional digits", errPrecision, d, scale)
	}
	return q, nil
}

// shredder appends the parquet values of records to per-column buffers,
// which are handed to the column writers whole rows at a time.
type shredder struct {
	plan  *writePlan
	stats []colStats
	cols  [][]parquet.Value
}

func newShredder(p *writePlan) *shredder {
	return &shredder{plan: p, stats: make([]colStats, len(p.stats)), cols: make([][]parquet.Value, p.numCols)}
}

func (s *shredder) emit(col int, v parquet.Value) {
	s.cols[col] = append(s.cols[col], v)
}

// records appends validated records; field j of the plan is rows[r][idx[j]],
// and only the plan fields listed in fields are shredded (a lane's share; see
// layout.lanes). Top-level primitive columns go through tight per-column
// loops; nested ones through the recursive shredder. Fields own disjoint
// columns and stats, so lanes with disjoint fields may call records on one
// shredder at the same time.
func (s *shredder) records(rows [][]any, idx []int, fields []int) {
	for _, j := range fields {
		n := s.plan.fields[j]
		fi := idx[j]
		if n.kind == nkLeaf && s.leafColumn(n, rows, fi) {
			continue
		}
		for _, row := range rows {
			s.value(row[fi], n, 0, 0)
		}
	}
}

// leafColumn shreds a top-level primitive column; false if it has no fast
// path (the caller then uses value).
func (s *shredder) leafColumn(n *wnode, rows [][]any, fi int) bool {
	c := n.col
	col := s.cols[c]
	var st *colStats
	if n.stat >= 0 {
		st = &s.stats[n.stat]
	} else {
		st = &colStats{} // discarded
	}
	null := parquet.Value{}
	d := n.def
	start := len(col)
	switch n.leaf {
	case lkString:
		for _, row := range rows {
			v := row[fi]
			if v == nil {
				col = append(col, null)
				st.nulls++
				continue
			}
			x := v.(string)
			col = append(col, parquet.ByteArrayValue(stringBytes(x)))
			st.addString(x)
		}
	case lkLong:
		for _, row := range rows {
			v := row[fi]
			if v == nil {
				col = append(col, null)
				st.nulls++
				continue
			}
			x := v.(int64)
			col = append(col, parquet.Int64Value(x))
			st.addInt(x)
		}
	case lkInt:
		for _, row := range rows {
			v := row[fi]
			if v == nil {
				col = append(col, null)
				st.nulls++
				continue
			}
			x := v.(int32)
			col = append(col, parquet.Int32Value(x))
			st.addInt(int64(x))
		}
	case lkDouble:
		for _, row := range rows {
			v := row[fi]
			if v == nil {
				col = append(col, null)
				st.nulls++
				continue
			}
			x := v.(float64)
			col = append(col, parquet.DoubleValue(x))
			st.addFloat(x)
		}
	case lkTimestamp:
		for _, row := range rows {
			v := row[fi]
			if v == nil {
				col = append(col, null)
				st.nulls++
				continue
			}
			x := v.(time.Time).UnixMicro()
			col = append(col, parquet.Int64Value(x))
			st.addInt(x)
		}
	case lkTimestampNTZ:
		for _, row := range rows {
			v := row[fi]
			if v == nil {
				col = append(col, null)
				st.nulls++
				continue
			}
			x := ntzWall(v.(time.Time)).UnixMicro()
			col = append(col, parquet.Int64Value(x))
			st.addInt(x)
		}
	default:
		return false
	}
	if d > 0 {
		setLevels(col[start:], d, c, s.plan.fastLevels)
	}
	s.cols[c] = col
	return true
}

func (s *shredder) nulls(n *wnode, rl, dl int) {
	for _, st := range n.statsIn {
		s.stats[st].nulls++
	}
	for c := n.firstCol; c < n.endCol; c++ {
		s.emit(c, withLevels(parquet.Value{}, rl, dl, c, s.plan.fastLevels))
	}
}

func stringBytes(x string) []byte { return unsafe.Slice(unsafe.StringData(x), len(x)) }

func (s *shredder) value(v any, n *wnode, rl, dl int) {
	if v == nil {
		s.nulls(n, rl, dl)
		return
	}
	d := n.def
	switch n.kind {
	case nkLeaf:
		var pv parquet.Value
		var st *colStats
		if n.stat >= 0 {
			st = &s.stats[n.stat]
		}
		switch n.leaf {
		case lkString:
			x := v.(string)
			pv = parquet.ByteArrayValue(stringBytes(x))
			if st != nil {
				st.addString(x)
			}
		case lkLong:
			x := v.(int64)
			pv = parquet.Int64Value(x)
			if st != nil {
				st.addInt(x)
			}
		case lkInt:
			x := v.(int32)
			pv = parquet.Int32Value(x)
			if st != nil {
				st.addInt(int64(x))
			}
		case lkShort:
			x := v.(int16)
			pv = parquet.Int32Value(int32(x))
			if st != nil {
				st.addInt(int64(x))
			}
		case lkByte:
			x := v.(int8)
			pv = parquet.Int32Value(int32(x))
			if st != nil {
				st.addInt(int64(x))
			}
		case lkFloat:
			x := v.(float32)
			pv = parquet.FloatValue(x)
			if st != nil {
				st.addFloat(float64(x))
			}
		case lkDouble:
			x := v.(float64)
			pv = parquet.DoubleValue(x)
			if st != nil {
				st.addFloat(x)
			}
		case lkBool:
			pv = parquet.BooleanValue(v.(bool))
			if st != nil {
				st.n++
			}
		case lkBinary:
			pv = parquet.ByteArrayValue(v.([]byte))
			if st != nil {
				st.n++
			}
		case lkDate:
			x := v.(schema.Date)
			pv = parquet.Int32Value(int32(x))
			if st != nil {
				st.addInt(int64(x))
			}
		case lkTimestamp:
			x := v.(time.Time).UnixMicro()
			pv = parquet.Int64Value(x)
			if st != nil {
				st.addInt(x)
			}
		case lkTimestampNTZ:
			x := ntzWall(v.(time.Time)).UnixMicro()
			pv = parquet.Int64Value(x)
			if st != nil {
				st.addInt(x)
			}
		case lkDec32, lkDec64, lkDecFixed:
			u, _ := rescale(v.(schema.Decimal), n.dec.Scale) // validated
			switch n.leaf {
			case lkDec32:
				pv = parquet.Int32Value(int32(u.Int64()))
				if st != nil {
					st.addInt(u.Int64())
				}
			case lkDec64:
				pv = parquet.Int64Value(u.Int64())
				if st != nil {
					st.addInt(u.Int64())
				}
			default:
				pv = parquet.FixedLenByteArrayValue(twosComplement(u, n.decWidth))
				if st != nil {
					st.addBig(u)
				}
			}
		}
		s.emit(n.col, withLevels(pv, rl, d, n.col, s.plan.fastLevels))
	case nkStruct:
		vals := v.([]any)
		for i, c := range n.children {
			s.value(vals[i], c, rl, d)
		}
	case nkList:
		if n.stat >= 0 {
			s.stats[n.stat].n++
		}
		vals := v.([]any)
		if len(vals) == 0 {
			for c := n.firstCol; c < n.endCol; c++ {
				s.emit(c, withLevels(parquet.Value{}, rl, d, c, s.plan.fastLevels))
			}
			return
		}
		e := n.children[0]
		r := rl
		for _, x := range vals {
			s.value(x, e, r, d+1)
			r = n.rep
		}
	case nkMap:
		if n.stat >= 0 {
			s.stats[n.stat].n++
		}
		entries := v.([]schema.MapEntry)
		if len(entries) == 0 {
			for c := n.firstCol; c < n.endCol; c++ {
				s.emit(c, withLevels(parquet.Value{}, rl, d, c, s.plan.fastLevels))
			}
			return
		}
		k, val := n.children[0], n.children[1]
		r := rl
		for _, en := range entries {
			s.value(en.Key, k, r, d+1)
			s.value(en.Value, val, r, d+1)
			r = n.rep
		}
	}
}

// twosComplement renders x big-endian in width bytes, two's complement.
func twosComplement(x *big.Int, width int) []byte {
	b := make([]byte, width)
	if x.Sign() >= 0 {
		x.FillBytes(b)
		return b
	}
	// 2^(8*width) + x
	m := new(big.Int).Lsh(big.NewInt(1), uint(8*width))
	m.Add(m, x)
	m.FillBytes(b)
	return b
}
