package parquetio

import (
	"context"
	"fmt"
	"io"
	"iter"
	"unsafe"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// The columnar types are schema's (a streamed schema.Batch carries them).
type (
	// VectorKind is schema.VectorKind.
	VectorKind = schema.VectorKind
	// Vector is schema.Vector.
	Vector = schema.Vector
	// ColumnChunk is schema.ColumnChunk: Rows consecutive rows of a row
	// group as columns, Vectors[j] holding field j of the read's want
	// schema.
	ColumnChunk = schema.ColumnChunk
)

// The vector kinds (schema's).
const (
	VecAny     = schema.VecAny
	VecInt64   = schema.VecInt64
	VecFloat64 = schema.VecFloat64
	VecString  = schema.VecString
	VecBool    = schema.VecBool
	VecMicros  = schema.VecMicros
)

// KindOf is schema.KindOf: the VectorKind of Delta type t.
func KindOf(t schema.DataType) VectorKind { return schema.KindOf(t) }

// NewVector is schema.NewVector: n zero (not null) values of kind.
func NewVector(kind VectorKind, n int) Vector { return schema.NewVector(kind, n) }

// RowGroupColumns decodes row group i like RowGroupChunks, but into
// columns: each chunk is one Vector per field of want (KindOf its type),
// of at most maxRows rows (maxRows <= 0: the whole row group). Top-level
// long, integer, short, byte, double, float and string columns are decoded
// page by page into their typed slices (dictionary pages by index into the
// dictionary, strings of one page or dictionary sharing one allocation),
// without a boxed value per row; other columns hold the values
// RowGroupChunks gives. Fields are matched, converted (type widening) and
// checked as ReadRowGroup does; a field the file lacks is all null. Each
// chunk has its own vectors. Errors as ReadRowGroup. The File must not be
// used for another read until the iteration ends.
func (f *File) RowGroupColumns(ctx context.Context, i int, want *schema.StructType, opts ReadOptions, maxRows int) iter.Seq2[ColumnChunk, error] {
	return func(yield func(ColumnChunk, error) bool) {
		rd, err := f.openRowGroup(ctx, i, want, opts)
		if err != nil {
			yield(ColumnChunk{}, err)
			return
		}
		defer rd.close()
		for {
			c, err := rd.nextColumns(ctx, maxRows)
			if err != nil {
				yield(ColumnChunk{}, err)
				return
			}
			if c.Rows == 0 {
				return
			}
			if !yield(c, nil) {
				return
			}
		}
	}
}

// nextColumns is next for RowGroupColumns; no rows when the row group is
// exhausted.
func (rd *rgReader) nextColumns(ctx context.Context, maxRows int) (_ ColumnChunk, err error) {
	f := rd.f
	defer recoverCorrupt(f.path, &err)
	if err := ctx.Err(); err != nil {
		return ColumnChunk{}, err
	}
	if rd.left == 0 {
		for _, c := range rd.cols {
			if ok, err := rd.streams[c].pending(); err != nil {
				return ColumnChunk{}, rd.colErr(c, err)
			} else if ok {
				return ColumnChunk{}, rd.colErr(c, fmt.Errorf("%w: more values than the row group's %d rows", ErrCorruptFile, rd.done))
			}
		}
		return ColumnChunk{}, nil
	}
	n := rd.left
	if maxRows > 0 && maxRows < n {
		n = maxRows
	}
	vecs := make([]Vector, len(rd.plan.fields))
	for j, fn := range rd.plan.fields {
		kind := KindOf(rd.want.Fields[j].Type)
		if _, flat := rd.flat[fn.col]; flat && !fn.missing && rd.micros {
			if _, ok := microsConv(rd.want.Fields[j].Type, rd.f.leaves[fn.col]); ok {
				kind = VecMicros
			}
		}
		vecs[j] = NewVector(kind, n)
		if fn.missing {
			vecs[j].Null = make([]bool, n)
			for r := range n {
				vecs[j].Null[r] = true
			}
		}
	}
	for _, c := range rd.cols {
		if err := ctx.Err(); err != nil {
			return ColumnChunk{}, err
		}
		s, leaf, conv := rd.streams[c], f.leaves[c], rd.plan.convs[c]
		var err error
		if j, ok := rd.flat[c]; ok {
			v := &vecs[j]
			tc, ok := typedConv(rd.want.Fields[j].Type, leaf)
			if v.Kind == VecMicros {
				tc, ok = microsConv(rd.want.Fields[j].Type, leaf)
			}
			if ok {
				s.typed = true
				err = s.readTyped(leaf, tc, v, rd.done)
			} else {
				err = s.readFlatVector(leaf, conv, v, rd.done)
			}
		} else {
			err = s.readRecords(leaf, conv, rd.curs[c], n)
		}
		if err != nil {
			return ColumnChunk{}, rd.colErr(c, err)
		}
	}
	if len(rd.curs) > 0 {
		for r := range n {
			if r%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return ColumnChunk{}, err
				}
			}
			for j, fn := range rd.plan.fields {
				if fn.missing {
					continue
				}
				if fn.kind == nkLeaf {
					if _, ok := rd.flat[fn.col]; ok {
						continue
					}
				}
				v, err := assemble(fn, rd.curs)
				if err != nil {
					return ColumnChunk{}, fmt.Errorf("%w: %s: row group %d, row %d, field %s: %v", ErrCorruptFile, f.path, rd.rg, rd.done+r, rd.want.Fields[j].Name, err)
				}
				if err := vecs[j].Set(r, v); err != nil {
					return ColumnChunk{}, fmt.Errorf("%w: %s: row group %d, row %d, field %s: %v", ErrUnsupported, f.path, rd.rg, rd.done+r, rd.want.Fields[j].Name, err)
				}
			}
		}
	}
	rd.left -= n
	rd.done += n
	return ColumnChunk{Rows: n, Vectors: vecs}, nil
}

// readFlatVector is readFlat into a Vector (columns without a typed page
// path: boolean, fixed-length strings, and the VecAny types).
func (s *colStream) readFlatVector(leaf *fnode, conv convFunc, v *Vector, base int) error {
	for r := 0; r < v.Len; {
		ok, err := s.more()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %d values for at least %d rows", ErrCorruptFile, base+r, base+v.Len)
		}
		m := min(s.n-s.i, v.Len-r)
		for _, pv := range s.buf[s.i : s.i+m] {
			if pv.DefinitionLevel() == leaf.def && !pv.IsNull() {
				x, cerr := conv(pv)
				if cerr != nil {
					return cerr
				}
				if err := v.Set(r, x); err != nil {
					return err
				}
			} else {
				v.SetNull(r)
			}
			r++
		}
		s.i += m
	}
	return nil
}

// typedPath is how a column's pages decode into a typed vector.
type typedPath struct {
	phys     format.Type
	unsigned bool // INT32 annotated UINT_32, read as long
	// scale: a VecMicros vector's values are the stored ones times scale
	// (1 micros, 1,000 millis); 0 otherwise.
	scale int64
}

// microsConv reports whether leaf, read as Delta type want, decodes into a
// VecMicros vector (ReadOptions.TimestampMicros): a timestamp or
// timestamp_ntz stored as INT64 micros or millis, the values converter's
// unitTime gives, without time.Time. (DATE days widened to timestamp_ntz
// and nanos stay VecAny: days of a far year overflow int64 micros, and
// nanos would lose their digits before a reader asked for them.)
func microsConv(want schema.DataType, leaf *fnode) (typedPath, bool) {
	if want != schema.TypeTimestamp && want != schema.TypeTimestampNTZ {
		return typedPath{}, false
	}
	el := leaf.el
	phys, ok := el.Type.Get()
	if !ok {
		return typedPath{}, false
	}
	switch phys {
	case format.Int64:
		if ts, ok := el.LogicalType.Value.(*format.TimestampType); ok {
			switch ts.Unit.Value.(type) {
			case *format.MilliSeconds:
				return typedPath{phys: phys, scale: 1000}, true
			case *format.NanoSeconds:
				return typedPath{}, false
			}
			return typedPath{phys: phys, scale: 1}, true
		}
		if ct, ok := el.ConvertedType.Get(); ok && ct == deprecated.TimestampMillis {
			return typedPath{phys: phys, scale: 1000}, true
		}
		return typedPath{phys: phys, scale: 1}, true
	}
	return typedPath{}, false
}

// typedConv reports whether leaf, read as Delta type want, has a typed page
// path: the physical types whose page data parquet-go exposes as Go slices
// (INT32, INT64, FLOAT, DOUBLE, BYTE_ARRAY), with the conversions of
// converter (which already accepted the pair).
func typedConv(want schema.DataType, leaf *fnode) (typedPath, bool) {
	phys, ok := leaf.el.Type.Get()
	if !ok {
		return typedPath{}, false
	}
	tp := typedPath{phys: phys}
	switch KindOf(want) {
	case VecInt64:
		switch phys {
		case format.Int64:
			return tp, want == schema.TypeLong
		case format.Int32:
			if want == schema.TypeLong {
				ct, ok := leaf.el.ConvertedType.Get()
				tp.unsigned = ok && ct == deprecated.Uint32
			}
			return tp, true
		}
	case VecFloat64:
		switch phys {
		case format.Double:
			return tp, want == schema.TypeDouble
		case format.Float:
			return tp, true
		case format.Int32:
			return tp, want == schema.TypeDouble
		}
	case VecString:
		return tp, phys == format.ByteArray
	}
	return typedPath{}, false
}

// pageState is the typed reader's position in its current page.
type pageState struct {
	page parquet.Page
	defs []byte // definition levels; nil: every value is present
	nlev int    // levels (rows) in the page
	lvl  int    // next level
	val  int    // next non-null value
	// strs: the current page's (or dictionary's) strings, cut from one
	// allocation; dict is the dictionary they were cut from.
	strs     []string
	dict     parquet.Dictionary
	dictStrs []string
}

// pending reports whether the column has a value left (typed or not).
func (s *colStream) pending() (bool, error) {
	if !s.typed {
		return s.more()
	}
	for s.ps.page == nil || s.ps.lvl >= s.ps.nlev {
		if s.eof {
			return false, nil
		}
		if err := s.nextPage(); err != nil {
			return false, err
		}
	}
	return true, nil
}

// nextPage makes the column's next page current. The current one goes
// back to parquet-go's buffer pools first (parquet.Release): nothing read
// from it is kept (values are copied into the vectors, strings cut from a
// copy, cutStrings; TestRowGroupColumnsSmallPages fails when a value
// points into a reused page), and a page's buffers allocated anew each
// time were 110 MiB of the 3M flights' ingest, a third of its allocations.
func (s *colStream) nextPage() error {
	if s.ps.page != nil {
		parquet.Release(s.ps.page)
		s.ps.page, s.ps.defs = nil, nil
	}
	page, err := s.pages.ReadPage()
	if err == io.EOF {
		s.eof = true
		s.ps.page = nil
		return nil
	}
	if err != nil {
		return fmt.Errorf("%w: read page: %v", ErrCorruptFile, err)
	}
	s.ps.page = page
	s.ps.nlev = int(page.NumValues())
	s.ps.defs = page.DefinitionLevels()
	if len(s.ps.defs) == 0 {
		s.ps.defs = nil
	} else if len(s.ps.defs) != s.ps.nlev {
		return fmt.Errorf("%w: %d definition levels for %d values", ErrCorruptFile, len(s.ps.defs), s.ps.nlev)
	}
	s.ps.lvl, s.ps.val = 0, 0
	s.ps.strs = nil
	return nil
}

// readTyped decodes the next v.Len values of a non-repeated top-level
// column straight from its pages' data into v; base is the index of v's
// first value in the row group.
func (s *colStream) readTyped(leaf *fnode, tp typedPath, v *Vector, base int) error {
	maxDef := byte(leaf.def)
	for r := 0; r < v.Len; {
		ok, err := s.pending()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %d values for at least %d rows", ErrCorruptFile, base+r, base+v.Len)
		}
		ps := &s.ps
		m := min(ps.nlev-ps.lvl, v.Len-r)
		var defs []byte
		if ps.defs != nil {
			defs = ps.defs[ps.lvl : ps.lvl+m]
			for k, d := range defs {
				if d != maxDef {
					v.SetNull(r + k)
				}
			}
		}
		data := ps.page.Data()
		var idx []int32
		if d := ps.page.Dictionary(); d != nil {
			idx = data.Int32()
			if tp.phys == format.ByteArray {
				if ps.dict != d {
					dd := d.Page().Data()
					ps.dict, ps.dictStrs = d, cutStrings(dd.ByteArray())
				}
				ps.strs = ps.dictStrs
			}
			data = d.Page().Data()
		}
		switch tp.phys {
		case format.Int64:
			ps.val = fillNum(v.Int64[r:r+m], defs, maxDef, data.Int64(), idx, ps.val)
		case format.Int32:
			src := data.Int32()
			if tp.unsigned {
				ps.val = fillNum(v.Int64[r:r+m], defs, maxDef, unsafe.Slice((*uint32)(unsafe.Pointer(unsafe.SliceData(src))), len(src)), idx, ps.val)
			} else if v.Kind == VecFloat64 {
				ps.val = fillNum(v.Float64[r:r+m], defs, maxDef, src, idx, ps.val)
			} else {
				ps.val = fillNum(v.Int64[r:r+m], defs, maxDef, src, idx, ps.val)
			}
		case format.Float:
			ps.val = fillNum(v.Float64[r:r+m], defs, maxDef, data.Float(), idx, ps.val)
		case format.Double:
			ps.val = fillNum(v.Float64[r:r+m], defs, maxDef, data.Double(), idx, ps.val)
		case format.ByteArray:
			if ps.strs == nil {
				ps.strs = cutStrings(data.ByteArray())
			}
			ps.val = fillStr(v.String[r:r+m], defs, maxDef, ps.strs, idx, ps.val)
		}
		if tp.scale > 1 {
			for k := range m {
				v.Int64[r+k] *= tp.scale
			}
		}
		ps.lvl += m
		r += m
	}
	return nil
}

// fillNum writes the present values of dst (defs[k] == maxDef, or every
// one when defs is nil) from src, in order from the val-th non-null value,
// by dictionary index when idx is not nil; it returns the next val. An
// index outside src panics (recovered as ErrCorruptFile).
func fillNum[D int64 | float64, S int32 | uint32 | int64 | float32 | float64](dst []D, defs []byte, maxDef byte, src []S, idx []int32, val int) int {
	switch {
	case defs == nil && idx == nil:
		for k, x := range src[val : val+len(dst)] {
			dst[k] = D(x)
		}
		return val + len(dst)
	case defs == nil:
		for k, i := range idx[val : val+len(dst)] {
			dst[k] = D(src[i])
		}
		return val + len(dst)
	}
	for k, d := range defs {
		if d != maxDef {
			continue
		}
		i := val
		if idx != nil {
			i = int(idx[val])
		}
		dst[k] = D(src[i])
		val++
	}
	return val
}

// fillStr is fillNum for strings.
func fillStr(dst []string, defs []byte, maxDef byte, src []string, idx []int32, val int) int {
	switch {
	case defs == nil && idx == nil:
		copy(dst, src[val:val+len(dst)])
		return val + len(dst)
	case defs == nil:
		for k, i := range idx[val : val+len(dst)] {
			dst[k] = src[i]
		}
		return val + len(dst)
	}
	for k, d := range defs {
		if d != maxDef {
			continue
		}
		i := val
		if idx != nil {
			i = int(idx[val])
		}
		dst[k] = src[i]
		val++
	}
	return val
}

// cutStrings is the values of a BYTE_ARRAY page (data, offsets: n+1 of
// them) as strings cut from one copy of data.
func cutStrings(data []byte, offsets []uint32) []string {
	if len(offsets) == 0 {
		return nil
	}
	all := string(data)
	strs := make([]string, len(offsets)-1)
	for i := range strs {
		strs[i] = all[offsets[i]:offsets[i+1]]
	}
	return strs
}
