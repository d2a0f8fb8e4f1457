package parquetio

import (
	"context"
	"errors"
	"fmt"
	"time"

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
		sample := c
		sample.Rows = min(c.Rows, dictionarySampleRows)
		if plain := lay.choosePlainColumns(vectorRows(lay.schema, sample), groups); plain != nil {
			lay.pschema = lay.withPlainColumns(plain)
		}
	}
	if len(groups) > 1 {
		// Each partition's file builds its rows' values from the vectors.
		vecs := make([]*schema.Vector, len(lay.plan.fields))
		for j := range vecs {
			vecs[j] = &c.Vectors[lay.dataIdx[j]]
		}
		return w.writeGroups(ctx, groups, nil, c.Rows, nil, vecs)
	}
	if w.pre == nil {
		w.pre = newShredder(lay.plan)
	}
	w.pre.shredVectors(lay, c)
	return w.writeGroups(ctx, groups, nil, c.Rows, w.pre.cols, nil)
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

// shredVectors is preShred for the vectors of c (field j of the plan is
// c.Vectors[lay.dataIdx[j]], which columnsFit accepted): one column array
// per leaf, with the levels leafColumn gives, the lanes of lay in parallel.
func (s *shredder) shredVectors(lay *layout, c schema.ColumnChunk) {
	lay.eachLane(c.Rows, func(k int) {
		for _, j := range lay.lanes[k] {
			n := lay.plan.fields[j]
			s.cols[n.col] = vectorColumn(n, &c.Vectors[lay.dataIdx[j]], s.cols[n.col][:0], s.plan.fastLevels)
		}
	})
}

// vectorColumn appends the values of v, leaf column n, to col as
// leafColumn shreds them from records (a null is parquet.Value{}), levels
// set.
func vectorColumn(n *wnode, v *schema.Vector, col []parquet.Value, fast bool) []parquet.Value {
	start := len(col)
	null := func(i int) bool { return v.Null != nil && v.Null[i] }
	switch n.leaf {
	case lkString:
		for i, x := range v.String[:v.Len] {
			if null(i) {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.ByteArrayValue(stringBytes(x)))
			}
		}
	case lkLong:
		for i, x := range v.Int64[:v.Len] {
			if null(i) {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.Int64Value(x))
			}
		}
	case lkInt:
		for i, x := range v.Int64[:v.Len] {
			if null(i) {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.Int32Value(int32(x)))
			}
		}
	case lkDouble:
		for i, x := range v.Float64[:v.Len] {
			if null(i) {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.DoubleValue(x))
			}
		}
	case lkTimestamp, lkTimestampNTZ:
		if v.Kind == schema.VecMicros {
			// Already the int64 the column stores (schema.VecMicros).
			for i, x := range v.Int64[:v.Len] {
				if null(i) {
					col = append(col, parquet.Value{})
				} else {
					col = append(col, parquet.Int64Value(x))
				}
			}
			break
		}
		for i, x := range v.Any[:v.Len] {
			t, ok := x.(time.Time)
			if !ok || null(i) {
				col = append(col, parquet.Value{})
				continue
			}
			if n.leaf == lkTimestampNTZ {
				t = ntzWall(t)
			}
			col = append(col, parquet.Int64Value(t.UnixMicro()))
		}
	}
	if n.def > 0 {
		setLevels(col[start:], n.def, n.col, fast)
	}
	return col
}

// isTimestamp: t is timestamp or timestamp_ntz (the types a
// schema.VecMicros vector holds).
func isTimestamp(t schema.DataType) bool {
	return t == schema.TypeTimestamp || t == schema.TypeTimestampNTZ
}

// vectorColumnSel is vectorColumn for the rows sel of v (indexes into v, in
// any order): the values of those rows, in that order, appended to col.
func vectorColumnSel(n *wnode, v *schema.Vector, sel []int, col []parquet.Value, fast bool) []parquet.Value {
	start := len(col)
	switch n.leaf {
	case lkString:
		for _, i := range sel {
			if v.Null != nil && v.Null[i] {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.ByteArrayValue(stringBytes(v.String[i])))
			}
		}
	case lkLong:
		for _, i := range sel {
			if v.Null != nil && v.Null[i] {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.Int64Value(v.Int64[i]))
			}
		}
	case lkInt:
		for _, i := range sel {
			if v.Null != nil && v.Null[i] {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.Int32Value(int32(v.Int64[i])))
			}
		}
	case lkDouble:
		for _, i := range sel {
			if v.Null != nil && v.Null[i] {
				col = append(col, parquet.Value{})
			} else {
				col = append(col, parquet.DoubleValue(v.Float64[i]))
			}
		}
	case lkTimestamp, lkTimestampNTZ:
		if v.Kind == schema.VecMicros {
			for _, i := range sel {
				if v.Null != nil && v.Null[i] {
					col = append(col, parquet.Value{})
				} else {
					col = append(col, parquet.Int64Value(v.Int64[i]))
				}
			}
			break
		}
		for _, i := range sel {
			t, ok := v.Any[i].(time.Time)
			if !ok || (v.Null != nil && v.Null[i]) {
				col = append(col, parquet.Value{})
				continue
			}
			if n.leaf == lkTimestampNTZ {
				t = ntzWall(t)
			}
			col = append(col, parquet.Int64Value(t.UnixMicro()))
		}
	}
	if n.def > 0 {
		setLevels(col[start:], n.def, n.col, fast)
	}
	return col
}
