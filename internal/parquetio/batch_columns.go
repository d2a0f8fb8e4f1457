package parquetio

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"
	"unsafe"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/schema"
)

// The columnar pass-through: a streamed batch whose source gives typed
// columns (schema.Batch.Columns, e.g. a Parquet file of the table's schema)
// is written from its vectors straight into the column writers, with no
// boxed value per row: each data column's vector becomes the column's
// parquet.Values (the pre-shredded columns of a partitioned write,
// preshred.go), whose statistics leafStats adds up as the row path's
// leafColumn does, written in the same 512-row pieces, segments and row
// groups; a partitioned batch's rows go to their partitions' files as the
// row path's pre-shredded ones do. The files are those the row path writes
// for the same records.

// WritesColumns reports whether WriteColumns takes the batch's chunks
// column-wise: a batch whose data fields are all top-level primitives with
// a pre-shredded path (strings, longs, integers, doubles, timestamps with or
// without time zone; partition columns of any type). Otherwise the caller
// writes rows.
func (w *BatchWriter) WritesColumns() bool {
	return w.lay.plan.preShreddable()
}

// WriteColumns writes the records of c (Vectors[j] holds field j of the
// writer's schema) as Write would write them as rows: same validation, same
// files and statistics. A chunk whose vectors do not hold their field's
// type as the pass-through needs it (a kind that differs, a null in a
// required column, a timestamp column value that is not a time.Time) is
// written through Write's row path instead, which reports a record that
// does not fit as Write does. A timestamp or timestamp_ntz column may also
// come as a schema.VecMicros vector (its values written as they are).
// Only when WritesColumns.
func (w *BatchWriter) WriteColumns(ctx context.Context, c schema.ColumnChunk) error {
	if w.closed || w.failed {
		return errors.New("batch writer is closed or failed")
	}
	if !w.WritesColumns() {
		return fmt.Errorf("%w: a batch with a nested or non-primitive data column cannot be written column-wise", ErrOptions)
	}
	if !w.columnsFit(c) {
		return w.Write(ctx, vectorRows(w.lay.schema, c))
	}
	err := w.writeColumns(ctx, c)
	if err != nil {
		w.failed = true
		var re *schema.RowError
		if errors.As(err, &re) {
			re.Row += w.rows
		}
	}
	w.rows += c.Rows
	return err
}

// columnsFit reports whether every vector of c can be shredded as is.
func (w *BatchWriter) columnsFit(c schema.ColumnChunk) bool {
	lay := w.lay
	if len(c.Vectors) != len(lay.schema.Fields) {
		return false
	}
	for _, fi := range lay.partIdx {
		v := &c.Vectors[fi]
		if t := lay.schema.Fields[fi].Type; (v.Kind != schema.KindOf(t) && (v.Kind != schema.VecMicros || !isTimestamp(t))) || !complete(v, c.Rows) {
			return false
		}
	}
	for j, n := range lay.plan.fields {
		v := &c.Vectors[lay.dataIdx[j]]
		if !complete(v, c.Rows) {
			return false
		}
		want := schema.VecAny
		switch n.leaf {
		case lkString:
			want = schema.VecString
		case lkLong, lkInt:
			want = schema.VecInt64
		case lkDouble:
			want = schema.VecFloat64
		case lkTimestamp, lkTimestampNTZ:
			if v.Kind == schema.VecMicros {
				want = schema.VecMicros
			}
		}
		if v.Kind != want {
			return false
		}
		if v.Null != nil && !n.optional {
			for _, null := range v.Null {
				if null {
					return false
				}
			}
		}
		if want == schema.VecAny {
			for i, x := range v.Any {
				if x == nil {
					if !n.optional && (v.Null == nil || !v.Null[i]) {
						return false
					}
					continue
				}
				if _, ok := x.(time.Time); !ok {
					return false
				}
			}
		}
	}
	return true
}

// complete reports whether v holds n values: Len and the slice of its kind
// (and Null, when not nil) that long.
func complete(v *schema.Vector, n int) bool {
	l := 0
	switch v.Kind {
	case schema.VecInt64, schema.VecMicros:
		l = len(v.Int64)
	case schema.VecFloat64:
		l = len(v.Float64)
	case schema.VecString:
		l = len(v.String)
	case schema.VecBool:
		l = len(v.Bool)
	default:
		l = len(v.Any)
	}
	return v.Len == n && l >= n && (v.Null == nil || len(v.Null) >= n)
}

// vectorRows is c as records of sch.
func vectorRows(sch *schema.StructType, c schema.ColumnChunk) [][]any {
	rows := make([][]any, c.Rows)
	vals := make([]any, c.Rows*len(sch.Fields))
	for r := range rows {
		rows[r] = vals[r*len(sch.Fields) : (r+1)*len(sch.Fields) : (r+1)*len(sch.Fields)]
	}
	for j, f := range sch.Fields {
		if j >= len(c.Vectors) {
			break
		}
		v := &c.Vectors[j]
		for r := range min(c.Rows, v.Len) {
			rows[r][j] = v.Value(r, f.Type)
		}
	}
	return rows
}

func (w *BatchWriter) writeColumns(ctx context.Context, c schema.ColumnChunk) error {
	if c.Rows == 0 {
		return nil
	}
	lay := w.lay
	groups := []*partGroup{{values: map[string]*string{}}}
	if len(lay.partIdx) > 0 {
		var err error
		if groups, err = partitionColumnGroups(lay, c, &w.freeRowIdx); err != nil {
			return err
		}
	}
	if !w.encodingsChosen {
		w.encodingsChosen = true
		dictMax, _ := w.sharesAmong(len(groups))
		if plain := lay.choosePlainVectors(c, groups, dictMax); plain != nil {
			lay.pschema = lay.withPlainColumns(plain)
		}
	}
	// Each file builds its rows' values from the vectors (vectorValues).
	vecs := make([]*schema.Vector, len(lay.plan.fields))
	for j := range vecs {
		vecs[j] = &c.Vectors[lay.dataIdx[j]]
	}
	if len(groups) > 1 {
		vecs = w.byPartition.sort(groups, vecs, c.Rows)
		defer w.byPartition.release()
	}
	return w.writeGroups(ctx, groups, nil, c.Rows, nil, vecs)
}

// partitionOrder holds a partitioned columnar chunk's data vectors with
// their rows in partition order (sort), reused from chunk to chunk.
type partitionOrder struct {
	gid    []int32 // the group of each row of the chunk
	starts []int   // the first row of each group in partition order
	pos    []int
	vecs   []schema.Vector
	ptrs   []*schema.Vector
}

// sort returns the n rows of vecs reordered group by group (each group's
// rows in their order: a stable counting sort) and renumbers each group's
// rows to its range of the result, so that a partition's file reads its
// values from consecutive memory. Reading them where they were, each
// partition's rows scattered over the chunk, was the largest difference
// between the partitioned and the unpartitioned ingest of the 3M flights
// (vectorValues: 0.27 s of CPU against 0.10, 229 airports, 32,768-row
// chunks); this pass reads each vector once in order and writes it to one
// place per group. Every row of the chunk is in one group.
func (o *partitionOrder) sort(groups []*partGroup, vecs []*schema.Vector, n int) []*schema.Vector {
	o.gid = slices.Grow(o.gid[:0], n)[:n]
	o.starts = o.starts[:0]
	off := 0
	for gi, g := range groups {
		for k, r := range g.rows {
			o.gid[r] = int32(gi)
			g.rows[k] = off + k
		}
		o.starts = append(o.starts, off)
		off += len(g.rows)
	}
	o.pos = slices.Grow(o.pos[:0], len(groups))[:len(groups)]
	if len(o.vecs) < len(vecs) {
		o.vecs = make([]schema.Vector, len(vecs))
	}
	o.ptrs = o.ptrs[:0]
	for j, v := range vecs {
		d := &o.vecs[j]
		d.Kind, d.Len = v.Kind, n
		switch v.Kind {
		case schema.VecInt64, schema.VecMicros:
			d.Int64 = scatterRows(d.Int64, v.Int64[:n], o)
		case schema.VecFloat64:
			d.Float64 = scatterRows(d.Float64, v.Float64[:n], o)
		case schema.VecString:
			d.String = scatterRows(d.String, v.String[:n], o)
		case schema.VecBool:
			d.Bool = scatterRows(d.Bool, v.Bool[:n], o)
		default:
			d.Any = scatterRows(d.Any, v.Any[:n], o)
		}
		nulls := d.Null
		d.Null = nil
		if v.Null != nil {
			d.Null = scatterRows(nulls, v.Null[:n], o)
		}
		o.ptrs = append(o.ptrs, d)
	}
	return o.ptrs
}

// release drops the chunk's strings and boxed values (kept for the next
// chunk's buffers, they would keep the chunk's memory alive).
func (o *partitionOrder) release() {
	for j := range o.vecs {
		clear(o.vecs[j].String)
		clear(o.vecs[j].Any)
	}
}

// scatterRows is src with each row r moved to its group's next place
// (partitionOrder.sort), in dst's memory when it is large enough.
func scatterRows[T any](dst, src []T, o *partitionOrder) []T {
	dst = slices.Grow(dst[:0], len(src))[:len(src)]
	pos := o.pos
	copy(pos, o.starts)
	gid := o.gid[:len(src)]
	for r, x := range src {
		g := gid[r]
		dst[pos[g]] = x
		pos[g]++
	}
	return dst
}

// partitionColumnGroups is partitionGroups for the rows of c (lay has
// partition columns): a value is boxed only for a row partitionGroupsOf
// cannot place by its string (one string partition column, e.g. the 3M
// flights by origin: 229 values boxed, not 3M; the records of boxed
// partition values were 10% of that ingest's CPU).
func partitionColumnGroups(lay *layout, c schema.ColumnChunk, free *[][]int) ([]*partGroup, error) {
	var strs []string
	var nulls []bool
	if len(lay.partIdx) == 1 {
		fi := lay.partIdx[0]
		if v := &c.Vectors[fi]; v.Kind == schema.VecString && lay.schema.Fields[fi].Type == schema.TypeString {
			strs, nulls = v.String[:c.Rows], v.Null
		}
	}
	value := func(i, fi int) any { return c.Vectors[fi].Value(i, lay.schema.Fields[fi].Type) }
	return lay.partitionGroupsOf(c.Rows, lay.schema, value, strs, nulls, free)
}

// isTimestamp: t is timestamp or timestamp_ntz (the types a
// schema.VecMicros vector holds).
func isTimestamp(t schema.DataType) bool {
	return t == schema.TypeTimestamp || t == schema.TypeTimestampNTZ
}

// vectorValues sets col to the values of leaf column n for rows [lo,hi) of
// v (the k-th value is v's row sel[lo+k] when sel is not nil, else row
// lo+k), as leafColumn shreds them from records: levels set, a null
// parquet.Value{} at definition level 0. When st is not nil the values are
// added to it as leafColumn adds them. col's array is reused (grown to
// hi-lo values); for a column other than a string col must hold no value
// with a pointer (a byte array's), since the fast loops leave that word as
// it is (nil in every value of those kinds) to write no pointer, and so
// take no write barrier while the collector runs.
//
// With fast (the layout mirror holds, levelsMirrorOK) each kind's values are
// written in place through valueLayout, levels and statistics in the same
// loop, a column without nulls in [lo,hi) compared by its typed values
// (strings on their 8-byte prefixes first, strRange; doubles after, from
// the values, for NaN): building each parquet.Value by its constructor,
// setting its levels in a second pass and finding the least and greatest
// through parquet.Value accessors were about a quarter of the CPU of
// ingesting the 3M flights (vectorColumn 18%, leafStats 9%). A range with
// nulls gets them after and its statistics from the values
// (addValueStats); timestamps as time.Time (schema.VecAny), and every
// column without fast, are built value by value (vectorValue).
func vectorValues(n *wnode, v *schema.Vector, sel []int, lo, hi int, col []parquet.Value, st *colStats, fast bool) []parquet.Value {
	col = slices.Grow(col[:0], hi-lo)[:hi-lo]
	if !fast || v.Kind == schema.VecAny {
		for k := range col {
			col[k] = vectorValue(n, v, rowAt(sel, lo, k))
		}
		if st != nil {
			st.addValueStats(n.leaf, col)
		}
		return col
	}
	nulls := v.Null != nil && anyNull(v.Null, sel, lo, hi)
	// The loops' least and greatest count without nulls; a double's are
	// taken from the values after (NaN apart, addValueStats).
	valueStats := st != nil && (nulls || n.leaf == lkDouble)
	rangeTo := st
	if valueStats {
		rangeTo = nil
	}
	ls := unsafe.Slice((*valueLayout)(unsafe.Pointer(unsafe.SliceData(col))), len(col))
	d, c := byte(n.def), ^uint16(n.col)
	if n.leaf == lkString {
		kind := mirrorOf(parquet.ByteArrayValue(nil)).kind
		xs := v.String
		var r strRange
		for k := range ls {
			i := lo + k
			if sel != nil {
				i = sel[i]
			}
			x := xs[i]
			l := &ls[k] // field by field: a valueLayout built whole goes through the stack
			l.ptr, l.u64, l.kind, l.def, l.rep, l.colix = unsafe.StringData(x), uint64(len(x)), kind, d, 0, c
			if p := prefix8(x); !r.has || p <= r.loP || p >= r.hiP {
				r.addPrefixed(x, p)
			}
		}
		r.k = len(ls)
		if rangeTo != nil {
			rangeTo.addStringRange(r)
		}
	} else {
		// Longs, integers, timestamps (schema.VecMicros) and doubles: 8 bytes
		// a value, stored as u64.
		kind, xs := mirrorOf(parquet.Int64Value(0)).kind, v.Int64
		switch n.leaf {
		case lkInt:
			kind = mirrorOf(parquet.Int32Value(0)).kind
		case lkDouble:
			kind = mirrorOf(parquet.DoubleValue(0)).kind
			xs = unsafe.Slice((*int64)(unsafe.Pointer(unsafe.SliceData(v.Float64))), len(v.Float64)) // the bits, as math.Float64bits
		}
		var least, greatest int64
		for k := range ls {
			i := lo + k
			if sel != nil {
				i = sel[i]
			}
			x := xs[i]
			if n.leaf == lkInt {
				x = int64(int32(x)) // parquet.Int32Value's u64, sign-extended
			}
			l := &ls[k] // ptr stays nil: no pointer written, no write barrier
			l.u64, l.kind, l.def, l.rep, l.colix = uint64(x), kind, d, 0, c
			if k == 0 {
				least, greatest = x, x
			}
			least, greatest = min(least, x), max(greatest, x)
		}
		if rangeTo != nil {
			rangeTo.addIntRange(least, greatest, len(ls))
		}
	}
	if nulls {
		setNulls(col, v.Null, sel, lo, n.col)
	}
	if valueStats {
		st.addValueStats(n.leaf, col)
	}
	return col
}

// rowAt is the row of v that vectorValues's k-th value of [lo,hi) comes
// from.
func rowAt(sel []int, lo, k int) int {
	if sel != nil {
		return sel[lo+k]
	}
	return lo + k
}

// vectorValue is row i of v as leafColumn shreds the value of leaf column
// n, levels set (the reference vectorValues's fast loops match).
func vectorValue(n *wnode, v *schema.Vector, i int) parquet.Value {
	var x parquet.Value
	switch {
	case v.Null != nil && v.Null[i]:
		return x.Level(0, 0, n.col)
	case n.leaf == lkString:
		x = parquet.ByteArrayValue(stringBytes(v.String[i]))
	case n.leaf == lkInt:
		x = parquet.Int32Value(int32(v.Int64[i]))
	case n.leaf == lkDouble:
		x = parquet.DoubleValue(v.Float64[i])
	case v.Kind == schema.VecAny: // a timestamp as time.Time
		t, ok := v.Any[i].(time.Time)
		if !ok {
			return x.Level(0, 0, n.col)
		}
		if n.leaf == lkTimestampNTZ {
			t = ntzWall(t)
		}
		x = parquet.Int64Value(t.UnixMicro())
	default: // a long, or a timestamp as schema.VecMicros
		x = parquet.Int64Value(v.Int64[i])
	}
	return x.Level(0, n.def, n.col)
}

// anyNull reports whether a row of [lo,hi) (through sel, as vectorValues
// reads them) is null.
func anyNull(null []bool, sel []int, lo, hi int) bool {
	if sel == nil {
		return slices.Contains(null[lo:hi], true)
	}
	for _, i := range sel[lo:hi] {
		if null[i] {
			return true
		}
	}
	return false
}

// setNulls makes the values of col whose rows are null (as vectorValues
// reads them from lo on) parquet.Value{} of column col, definition level 0.
func setNulls(vals []parquet.Value, null []bool, sel []int, lo, col int) {
	for k := range vals {
		if null[rowAt(sel, lo, k)] {
			vals[k] = parquet.Value{}.Level(0, 0, col)
		}
	}
}

// mirrorOf is v seen through the layout mirror (see levelsMirrorOK).
func mirrorOf(v parquet.Value) valueLayout { return *(*valueLayout)(unsafe.Pointer(&v)) }
