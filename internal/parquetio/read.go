package parquetio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/big"
	"sort"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"
	"github.com/parquet-go/parquet-go/format"
)

// ReadOptions selects how requested columns are matched to file columns.
type ReadOptions struct {
	// ByPhysicalName matches requested fields to file columns by their
	// column-mapping physical name (delta.columnMapping.physicalName) instead
	// of the logical name (PROTOCOL.md, "Column Mapping", mode "name").
	ByPhysicalName bool
	// ByFieldID matches by Parquet field_id = delta.columnMapping.id first
	// (mode "id"), falling back to the physical name.
	ByFieldID bool
	// ReuseChunkRows makes RowGroupChunks hand back the same [][]any for
	// every chunk of a row group (each row's values still have their own
	// storage, so rows may be kept; the outer slice may not), for a caller
	// that copies the rows out before asking for the next chunk.
	ReuseChunkRows bool
	// TimestampMicros makes RowGroupColumns (and Columns) decode a top-level
	// timestamp or timestamp_ntz field whose column stores INT64 micros or
	// millis into a VecMicros vector, page by page with no time.Time per
	// value, instead of VecAny; other timestamp columns (INT96, nanos, DATE
	// widened to timestamp_ntz) stay VecAny.
	TimestampMicros bool
}

// File is an open Parquet data file. Its footer is read at open; row groups
// are fetched one at a time (only the requested columns' byte ranges), so
// memory is bounded by one row group. Not safe for concurrent use.
type File struct {
	store  storage.Store
	path   string
	size   int64
	ra     *segReaderAt
	pf     *parquet.File
	root   *fnode
	leaves []*fnode
	schema *schema.StructType
	footer segment // the file's tail holding the footer, for Clone
}

// fnode is one element of the file's Parquet schema.
type fnode struct {
	name     string
	el       *format.SchemaElement
	children []*fnode
	def      int // max definition level at this node
	rep      int // max repetition level at this node
	leaf     int // leaf: column index
	first    int // first leaf column index of the subtree
	end      int // one past the last leaf column index
}

func (n *fnode) repetition() format.FieldRepetitionType {
	if n.el.RepetitionType.Valid {
		return n.el.RepetitionType.V
	}
	return format.Required
}
func (n *fnode) optional() bool { return n.repetition() == format.Optional }
func (n *fnode) repeated() bool { return n.repetition() == format.Repeated }

const footerPrefetch = 64 << 10

// OpenFile opens the Parquet file at path in store. size is the file's size
// in bytes (from the log); size < 0 asks the store. It reads the footer only.
// Errors wrap ErrCorruptFile for unreadable files and name the path.
func OpenFile(ctx context.Context, store storage.Store, path string, size int64) (_ *File, err error) {
	defer recoverCorrupt(path, &err)
	if size < 0 {
		fi, err := store.Stat(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("open parquet file %s: %w", path, err)
		}
		size = fi.Size
	}
	if size < 12 {
		return nil, fmt.Errorf("%w: %s: %d bytes is too small for Parquet", ErrCorruptFile, path, size)
	}
	tailLen := min(size, footerPrefetch)
	tail, err := readRange(ctx, store, path, size-tailLen, tailLen)
	if err != nil {
		return nil, err
	}
	if string(tail[len(tail)-4:]) != "PAR1" {
		return nil, fmt.Errorf("%w: %s: no PAR1 footer magic", ErrCorruptFile, path)
	}
	footerLen := int64(binary.LittleEndian.Uint32(tail[len(tail)-8:]))
	if footerLen+8 > size-4 {
		return nil, fmt.Errorf("%w: %s: footer length %d exceeds the file size %d", ErrCorruptFile, path, footerLen, size)
	}
	if footerLen+8 > tailLen {
		tailLen = footerLen + 8
		if tail, err = readRange(ctx, store, path, size-tailLen, tailLen); err != nil {
			return nil, err
		}
	}
	// Keep only the footer and its length word (the tail may hold data
	// pages too), for Clone.
	footer := segment{off: size - footerLen - 8, data: bytes.Clone(tail[tailLen-footerLen-8:])}
	return openFooter(store, path, size, footer)
}

// openFooter parses a file from its footer bytes; it does no I/O.
func openFooter(store storage.Store, path string, size int64, footer segment) (*File, error) {
	ra := &segReaderAt{path: path}
	ra.add(footer.off, footer.data)
	pf, err := parquet.OpenFile(ra, size,
		parquet.SkipMagicBytes(true),
		parquet.SkipPageIndex(true),
		parquet.SkipBloomFilters(true),
	)
	if err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorruptFile, path, err)
	}
	f := &File{store: store, path: path, size: size, ra: ra, pf: pf, footer: footer}
	if err := f.buildTree(); err != nil {
		return nil, err
	}
	ra.drop() // the footer is parsed; keep no bytes between row groups
	return f, nil
}

// Clone returns another File over the same footer, without I/O: row groups
// of one file are read concurrently through one File each (a File is not
// safe for concurrent use).
func (f *File) Clone() (_ *File, err error) {
	defer recoverCorrupt(f.path, &err)
	return openFooter(f.store, f.path, f.size, f.footer)
}

func readRange(ctx context.Context, store storage.Store, path string, off, n int64) ([]byte, error) {
	rc, err := store.NewRangeReader(ctx, path, off, n)
	if err != nil {
		return nil, fmt.Errorf("read %s [%d,+%d): %w", path, off, n, err)
	}
	defer rc.Close()
	buf := make([]byte, n)
	if _, err := io.ReadFull(rc, buf); err != nil {
		return nil, fmt.Errorf("read %s [%d,+%d): %w", path, off, n, err)
	}
	return buf, nil
}

func (f *File) buildTree() error {
	els := f.pf.Metadata().Schema
	if len(els) == 0 {
		return fmt.Errorf("%w: %s: empty schema", ErrCorruptFile, f.path)
	}
	pos := 0
	leaf := 0
	var build func(def, rep, depth int) (*fnode, error)
	build = func(def, rep, depth int) (*fnode, error) {
		// parquet-go opens no file deeper than MaxColumnDepth; the bound
		// also keeps this recursion shallow on a hostile footer.
		if pos >= len(els) || depth > schema.MaxColumnDepth {
			return nil, fmt.Errorf("%w: %s: malformed schema", ErrCorruptFile, f.path)
		}
		el := &els[pos]
		pos++
		n := &fnode{name: el.Name, el: el, first: leaf}
		if depth > 0 {
			switch n.repetition() {
			case format.Optional:
				def++
			case format.Repeated:
				def++
				rep++
			}
		}
		n.def, n.rep = def, rep
		nc := 0
		if el.NumChildren.Valid {
			nc = int(el.NumChildren.V)
		}
		if nc == 0 && depth > 0 {
			n.leaf = leaf
			leaf++
			f.leaves = append(f.leaves, n)
		}
		for i := 0; i < nc; i++ {
			c, err := build(def, rep, depth+1)
			if err != nil {
				return nil, err
			}
			n.children = append(n.children, c)
		}
		n.end = leaf
		return n, nil
	}
	root, err := build(0, 0, 0)
	if err != nil {
		return err
	}
	f.root = root
	st := &schema.StructType{}
	for _, c := range root.children {
		t, err := fileType(c)
		if err != nil {
			return &ColumnError{Path: f.path, Column: c.name, Err: err}
		}
		if c.repeated() { // bare repeated field: a list of required elements
			t = &schema.ArrayType{ElementType: t}
		}
		sf := schema.StructField{Name: c.name, Type: t, Nullable: c.optional()}
		if c.el.FieldID != 0 {
			sf.Metadata = map[string]any{schema.MetaColumnMappingID: int64(c.el.FieldID)}
		}
		st.Fields = append(st.Fields, sf)
	}
	f.schema = st
	return nil
}

// Schema is the file's schema as Delta types (Spark's Parquet-to-Catalyst
// conversion: INT96 and TIMESTAMP(isAdjustedToUTC=true) are timestamp,
// TIMESTAMP(false) is timestamp_ntz, DECIMAL of any physical type is
// decimal(p,s), LIST/MAP (and legacy 2-level forms) are array/map).
func (f *File) Schema() *schema.StructType { return f.schema }

// NumRows is the number of records in the file.
func (f *File) NumRows() int64 { return f.pf.NumRows() }

// NumRowGroups is the number of row groups.
func (f *File) NumRowGroups() int { return len(f.pf.RowGroups()) }

// RowGroupNumRows is the number of records in row group i (0 when i is out
// of range).
func (f *File) RowGroupNumRows(i int) int64 {
	rgs := f.pf.Metadata().RowGroups
	if i < 0 || i >= len(rgs) {
		return 0
	}
	return rgs[i].NumRows
}

// Path is the file's path in its store.
func (f *File) Path() string { return f.path }

// Lookup returns a footer key/value metadata entry.
func (f *File) Lookup(key string) (string, bool) { return f.pf.Lookup(key) }

// Close releases the file's buffers.
func (f *File) Close() error {
	f.ra.drop()
	return nil
}

// fileType converts a file schema node (ignoring its own repetition) to a
// Delta type.
func fileType(n *fnode) (schema.DataType, error) {
	el := n.el
	lt := el.LogicalType.Value
	ct, hasCT := el.ConvertedType.Get()
	if len(n.children) == 0 && el.Type.Valid {
		switch lt := lt.(type) {
		case *format.StringType, *format.EnumType, *format.JsonType:
			return schema.TypeString, nil
		case *format.DateType:
			return schema.TypeDate, nil
		case *format.TimestampType:
			if lt.IsAdjustedToUTC {
				return schema.TypeTimestamp, nil
			}
			return schema.TypeTimestampNTZ, nil
		case *format.DecimalType:
			return schema.DecimalType{Precision: int(lt.Precision), Scale: int(lt.Scale)}, nil
		case *format.IntType:
			switch lt.BitWidth {
			case 8:
				if lt.IsSigned {
					return schema.TypeByte, nil
				}
				return schema.TypeShort, nil
			case 16:
				if lt.IsSigned {
					return schema.TypeShort, nil
				}
				return schema.TypeInteger, nil
			case 32:
				if lt.IsSigned {
					return schema.TypeInteger, nil
				}
				return schema.TypeLong, nil
			case 64:
				if lt.IsSigned {
					return schema.TypeLong, nil
				}
				return schema.DecimalType{Precision: 20, Scale: 0}, nil
			}
		}
		if hasCT {
			switch ct {
			case deprecated.UTF8, deprecated.Enum, deprecated.Json:
				return schema.TypeString, nil
			case deprecated.Date:
				return schema.TypeDate, nil
			case deprecated.TimestampMillis, deprecated.TimestampMicros:
				return schema.TypeTimestamp, nil
			case deprecated.Decimal:
				return schema.DecimalType{Precision: int(el.Precision.V), Scale: int(el.Scale.V)}, nil
			case deprecated.Int8:
				return schema.TypeByte, nil
			case deprecated.Int16:
				return schema.TypeShort, nil
			case deprecated.Uint8:
				return schema.TypeShort, nil
			case deprecated.Uint16:
				return schema.TypeInteger, nil
			case deprecated.Uint32:
				return schema.TypeLong, nil
			}
		}
		switch el.Type.V {
		case format.Boolean:
			return schema.TypeBoolean, nil
		case format.Int32:
			return schema.TypeInteger, nil
		case format.Int64:
			return schema.TypeLong, nil
		case format.Int96:
			return schema.TypeTimestamp, nil
		case format.Float:
			return schema.TypeFloat, nil
		case format.Double:
			return schema.TypeDouble, nil
		case format.ByteArray, format.FixedLenByteArray:
			return schema.TypeBinary, nil
		}
		return nil, fmt.Errorf("%w: physical type %v", ErrUnsupported, el.Type.V)
	}
	if isListNode(n) {
		elem, elemNullable := listElement(n)
		t, err := fileType(elem)
		if err != nil {
			return nil, err
		}
		return &schema.ArrayType{ElementType: t, ContainsNull: elemNullable}, nil
	}
	if isMapNode(n) {
		kv := n.children[0]
		if len(kv.children) < 1 {
			return nil, fmt.Errorf("%w: map %s has no key", ErrCorruptFile, n.name)
		}
		kt, err := fileType(kv.children[0])
		if err != nil {
			return nil, err
		}
		var vt schema.DataType = schema.TypeBinary
		vnull := true
		if len(kv.children) > 1 {
			if vt, err = fileType(kv.children[1]); err != nil {
				return nil, err
			}
			vnull = !kv.children[1].isRequired()
		}
		return &schema.MapType{KeyType: kt, ValueType: vt, ValueContainsNull: vnull}, nil
	}
	st := &schema.StructType{}
	for _, c := range n.children {
		t, err := fileType(c)
		if err != nil {
			return nil, err
		}
		if c.repeated() {
			t = &schema.ArrayType{ElementType: t}
		}
		sf := schema.StructField{Name: c.name, Type: t, Nullable: c.optional()}
		if c.el.FieldID != 0 {
			sf.Metadata = map[string]any{schema.MetaColumnMappingID: int64(c.el.FieldID)}
		}
		st.Fields = append(st.Fields, sf)
	}
	return st, nil
}

func (n *fnode) isRequired() bool { return n.repetition() == format.Required }

func isListNode(n *fnode) bool {
	if len(n.children) != 1 || !n.children[0].repeated() {
		return false
	}
	if _, ok := n.el.LogicalType.Value.(*format.ListType); ok {
		return true
	}
	ct, ok := n.el.ConvertedType.Get()
	return ok && ct == deprecated.List
}

func isMapNode(n *fnode) bool {
	if len(n.children) != 1 || !n.children[0].repeated() || len(n.children[0].children) == 0 {
		return false
	}
	if _, ok := n.el.LogicalType.Value.(*format.MapType); ok {
		return true
	}
	ct, ok := n.el.ConvertedType.Get()
	return ok && (ct == deprecated.Map || ct == deprecated.MapKeyValue)
}

// listElement applies the Parquet LIST backward-compatibility rules
// (parquet-format LogicalTypes.md, "Lists"): the repeated child is itself the
// element when it is a primitive, has several fields, or is named "array" or
// "<list>_tuple"; otherwise its single child is the element (3-level).
func listElement(list *fnode) (elem *fnode, nullable bool) {
	r := list.children[0]
	if len(r.children) == 0 || len(r.children) > 1 || r.name == "array" || r.name == list.name+"_tuple" {
		return r, false
	}
	e := r.children[0]
	return e, !e.isRequired()
}

// segReaderAt serves ReadAt from prefetched byte ranges of the file.
type segReaderAt struct {
	path string
	segs []segment
}

type segment struct {
	off  int64
	data []byte
}

func (r *segReaderAt) add(off int64, data []byte) {
	r.segs = append(r.segs, segment{off, data})
}

func (r *segReaderAt) drop() { r.segs = nil }

func (r *segReaderAt) ReadAt(p []byte, off int64) (int, error) {
	for _, s := range r.segs {
		if off >= s.off && off+int64(len(p)) <= s.off+int64(len(s.data)) {
			return copy(p, s.data[off-s.off:]), nil
		}
	}
	// A read that reaches past a prefetched segment's end (buffered page
	// reads do) gets what the segment has, then EOF.
	for _, s := range r.segs {
		if off >= s.off && off < s.off+int64(len(s.data)) {
			n := copy(p, s.data[off-s.off:])
			return n, io.EOF
		}
	}
	return 0, fmt.Errorf("%w: %s: read of [%d,+%d) outside the fetched ranges", ErrCorruptFile, r.path, off, len(p))
}

// RowGroups iterates the row groups, decoding each with ReadRowGroup.
func (f *File) RowGroups(ctx context.Context, want *schema.StructType, opts ReadOptions) iter.Seq2[[][]any, error] {
	return func(yield func([][]any, error) bool) {
		for i := range f.NumRowGroups() {
			rows, err := f.ReadRowGroup(ctx, i, want, opts)
			if !yield(rows, err) || err != nil {
				return
			}
		}
	}
}

// ReadAll reads every row of the file (tests and small files).
func (f *File) ReadAll(ctx context.Context, want *schema.StructType, opts ReadOptions) ([][]any, error) {
	var all [][]any
	for rows, err := range f.RowGroups(ctx, want, opts) {
		if err != nil {
			return nil, err
		}
		all = append(all, rows...)
	}
	return all, nil
}

func columnPath(f *File, c int) []string {
	var path []string
	var walk func(n *fnode, p []string) bool
	walk = func(n *fnode, p []string) bool {
		if len(n.children) == 0 && n.leaf == c && n != f.root {
			path = append(p, n.name)
			return true
		}
		for _, ch := range n.children {
			if walk(ch, append(p[:len(p):len(p)], n.name)) {
				return true
			}
		}
		return false
	}
	for _, ch := range f.root.children {
		if walk(ch, nil) {
			break
		}
	}
	return path
}

const coalesceGap = 1 << 20

func (f *File) prefetch(ctx context.Context, rgIndex int, cols []int) error {
	md := f.pf.Metadata()
	if rgIndex >= len(md.RowGroups) {
		return fmt.Errorf("%w: %s: row group %d missing in footer", ErrCorruptFile, f.path, rgIndex)
	}
	rgmd := md.RowGroups[rgIndex]
	type rng struct{ off, end int64 }
	var rs []rng
	for _, c := range cols {
		if c >= len(rgmd.Columns) {
			return fmt.Errorf("%w: %s: row group %d lacks column %d", ErrCorruptFile, f.path, rgIndex, c)
		}
		cm := rgmd.Columns[c].MetaData
		start := cm.DataPageOffset
		if cm.DictionaryPageOffset > 0 && cm.DictionaryPageOffset < start {
			start = cm.DictionaryPageOffset
		}
		end := start + cm.TotalCompressedSize
		if start < 0 || end > f.size || end < start {
			return fmt.Errorf("%w: %s: column chunk [%d,%d) outside the file", ErrCorruptFile, f.path, start, end)
		}
		rs = append(rs, rng{start, end})
	}
	sort.Slice(rs, func(a, b int) bool { return rs[a].off < rs[b].off })
	var merged []rng
	for _, r := range rs {
		if len(merged) > 0 && r.off <= merged[len(merged)-1].end+coalesceGap {
			if r.end > merged[len(merged)-1].end {
				merged[len(merged)-1].end = r.end
			}
			continue
		}
		merged = append(merged, r)
	}
	f.ra.drop()
	for _, r := range merged {
		data, err := readRange(ctx, f.store, f.path, r.off, r.end-r.off)
		if err != nil {
			return err
		}
		f.ra.add(r.off, data)
	}
	return nil
}

// cursor holds the decoded values of one column chunk.
type cursor struct {
	reps []uint8
	defs []uint8
	vals []any
	pos  int
}

func (c *cursor) more() bool { return c.pos < len(c.defs) }

// convFunc converts a non-null physical value to the Batch value.
type convFunc func(parquet.Value) (any, error)

// rnode is a requested field bound to file columns.
type rnode struct {
	kind     nodeKind
	missing  bool
	optional bool
	def      int // definition level when present
	rep      int // list/map: repetition level of entries
	col      int // leaf column
	anchor   int // a column of the subtree to peek levels from
	cols     []int
	children []*rnode
	// variant: a struct of a variant's metadata and value, assembled into
	// a schema.Variant (variant.go).
	variant bool
}

type readPlan struct {
	fields []*rnode
	convs  map[int]convFunc
}

func (f *File) readPlan(want *schema.StructType, opts ReadOptions) (*readPlan, []int, error) {
	p := &readPlan{convs: map[int]convFunc{}}
	for _, wf := range want.Fields {
		fn := matchField(f.root, wf, opts)
		if fn == nil {
			p.fields = append(p.fields, &rnode{missing: true})
			continue
		}
		rn, err := f.bind(fn, wf.Type, p, opts, fn.repeated())
		if err != nil {
			return nil, nil, &ColumnError{Path: f.path, Column: wf.Name, Err: err}
		}
		p.fields = append(p.fields, rn)
	}
	cols := make([]int, 0, len(p.convs))
	for c := range p.convs {
		cols = append(cols, c)
	}
	sort.Ints(cols)
	return p, cols, nil
}

func matchField(parent *fnode, wf schema.StructField, opts ReadOptions) *fnode {
	if opts.ByFieldID {
		if id, ok := wf.ColumnMappingID(); ok {
			for _, c := range parent.children {
				if int64(c.el.FieldID) == id && c.el.FieldID != 0 {
					return c
				}
			}
		}
	}
	name := wf.Name
	if opts.ByPhysicalName || opts.ByFieldID {
		name = wf.PhysicalName()
	}
	for _, c := range parent.children {
		if c.name == name {
			return c
		}
	}
	for _, c := range parent.children {
		if strings.EqualFold(c.name, name) {
			return c
		}
	}
	return nil
}

// bind matches a requested type to file node n. bareRepeated: n is a
// repeated field standing for a whole list (legacy form without LIST).
func (f *File) bind(n *fnode, want schema.DataType, p *readPlan, opts ReadOptions, bareRepeated bool) (*rnode, error) {
	if bareRepeated {
		at, ok := want.(*schema.ArrayType)
		if !ok {
			return nil, fmt.Errorf("%w: repeated column read as %s", ErrUnsupported, schema.FormatType(want))
		}
		elem, err := f.bind(n, at.ElementType, p, opts, false)
		if err != nil {
			return nil, err
		}
		elem.optional = false
		return &rnode{kind: nkList, def: n.def - 1, rep: n.rep, children: []*rnode{elem}, anchor: elem.anchor, cols: elem.cols}, nil
	}
	r := &rnode{optional: n.optional(), def: n.def}
	switch wt := want.(type) {
	case schema.PrimitiveType, schema.DecimalType:
		if wt == schema.TypeVariant && len(n.children) > 0 {
			return f.bindVariant(n, p, opts)
		}
		if len(n.children) > 0 {
			return nil, fmt.Errorf("%w: group read as %s", ErrUnsupported, schema.FormatType(want))
		}
		conv, err := converter(wt, n)
		if err != nil {
			return nil, err
		}
		r.kind = nkLeaf
		r.col = n.leaf
		r.anchor = n.leaf
		r.cols = []int{n.leaf}
		p.convs[n.leaf] = conv
		return r, nil
	case *schema.StructType:
		if len(n.children) == 0 {
			return nil, fmt.Errorf("%w: primitive read as struct", ErrUnsupported)
		}
		r.kind = nkStruct
		r.anchor = -1
		for _, cf := range wt.Fields {
			cn := matchField(n, cf, opts)
			if cn == nil {
				r.children = append(r.children, &rnode{missing: true})
				continue
			}
			c, err := f.bind(cn, cf.Type, p, opts, cn.repeated())
			if err != nil {
				return nil, fmt.Errorf("field %s: %w", cf.Name, err)
			}
			r.children = append(r.children, c)
			r.cols = append(r.cols, c.cols...)
			if r.anchor < 0 {
				r.anchor = c.anchor
			}
		}
		if r.anchor < 0 { // nothing requested exists: read one leaf for the levels
			leaf := f.leaves[n.first]
			if n.first >= n.end {
				return nil, fmt.Errorf("%w: empty group", ErrCorruptFile)
			}
			if _, ok := p.convs[leaf.leaf]; !ok {
				p.convs[leaf.leaf] = nil
			}
			r.anchor = leaf.leaf
			r.cols = append(r.cols, leaf.leaf)
		}
		return r, nil
	case *schema.ArrayType:
		if !isListNode(n) {
			return nil, fmt.Errorf("%w: %s read as array", ErrUnsupported, n.name)
		}
		rep := n.children[0]
		elemNode, _ := listElement(n)
		elem, err := f.bind(elemNode, wt.ElementType, p, opts, false)
		if err != nil {
			return nil, err
		}
		if elemNode == rep { // 2-level: the repeated node is the element
			elem.optional = false
		}
		r.kind = nkList
		r.rep = rep.rep
		r.children = []*rnode{elem}
		r.anchor = elem.anchor
		r.cols = elem.cols
		return r, nil
	case *schema.MapType:
		if !isMapNode(n) {
			return nil, fmt.Errorf("%w: %s read as map", ErrUnsupported, n.name)
		}
		kv := n.children[0]
		k, err := f.bind(kv.children[0], wt.KeyType, p, opts, false)
		if err != nil {
			return nil, err
		}
		r.kind = nkMap
		r.rep = kv.rep
		r.children = []*rnode{k}
		r.anchor = k.anchor
		r.cols = k.cols
		if len(kv.children) > 1 {
			v, err := f.bind(kv.children[1], wt.ValueType, p, opts, false)
			if err != nil {
				return nil, err
			}
			r.children = append(r.children, v)
			r.cols = append(r.cols, v.cols...)
		} else {
			r.children = append(r.children, &rnode{missing: true})
		}
		return r, nil
	}
	return nil, fmt.Errorf("%w: requested type %T", ErrUnsupported, want)
}

var errShortColumn = errors.New("column ended early")

// assemble rebuilds one value of n from the column cursors (Dremel record
// assembly: a definition level below n's means n is null; a repetition
// level equal to a list's means another element of it).
func assemble(n *rnode, curs map[int]*cursor) (any, error) {
	if n.missing {
		return nil, nil
	}
	a := curs[n.anchor]
	if !a.more() {
		return nil, errShortColumn
	}
	if int(a.defs[a.pos]) < n.def {
		skip(n, curs)
		return nil, nil
	}
	switch n.kind {
	case nkLeaf:
		c := curs[n.col]
		v := c.vals[c.pos]
		c.pos++
		return v, nil
	case nkStruct:
		vals := make([]any, len(n.children))
		for i, c := range n.children {
			v, err := assemble(c, curs)
			if err != nil {
				return nil, err
			}
			vals[i] = v
		}
		// Anchor-only columns (no requested child in the file) advance here.
		advanceAnchorOnly(n, curs)
		if n.variant {
			return decodeVariant(vals)
		}
		return vals, nil
	case nkList, nkMap:
		// Present: an empty collection unless an entry exists (def > n.def).
		if int(a.defs[a.pos]) == n.def {
			skip(n, curs)
			if n.kind == nkList {
				return []any{}, nil
			}
			return []schema.MapEntry{}, nil
		}
		var list []any
		var entries []schema.MapEntry
		for {
			if n.kind == nkList {
				v, err := assemble(n.children[0], curs)
				if err != nil {
					return nil, err
				}
				list = append(list, v)
			} else {
				k, err := assemble(n.children[0], curs)
				if err != nil {
					return nil, err
				}
				v, err := assemble(n.children[1], curs)
				if err != nil {
					return nil, err
				}
				entries = append(entries, schema.MapEntry{Key: k, Value: v})
			}
			if !a.more() || int(a.reps[a.pos]) != n.rep {
				break
			}
		}
		if n.kind == nkList {
			return list, nil
		}
		return entries, nil
	}
	return nil, nil
}

// skip consumes the single entry that a null or empty n has in each of its
// columns.
func skip(n *rnode, curs map[int]*cursor) {
	seen := map[int]bool{}
	for _, c := range n.cols {
		if !seen[c] {
			seen[c] = true
			curs[c].pos++
		}
	}
}

// advanceAnchorOnly moves an anchor column that no child consumed.
func advanceAnchorOnly(n *rnode, curs map[int]*cursor) {
	for _, c := range n.children {
		if !c.missing {
			return
		}
	}
	curs[n.anchor].pos++
}

// converter builds the conversion from the file leaf's physical values to the
// requested Delta type.
func converter(want schema.DataType, n *fnode) (convFunc, error) {
	el := n.el
	phys, _ := el.Type.Get()
	mismatch := func() (convFunc, error) {
		ft, _ := fileType(n)
		return nil, &TypeMismatchError{FileType: fmt.Sprintf("%s (%v)", schema.FormatType(ft), phys), Want: schema.FormatType(want)}
	}
	switch w := want.(type) {
	case schema.DecimalType:
		scale := 0
		if dt, ok := el.LogicalType.Value.(*format.DecimalType); ok {
			scale = int(dt.Scale)
		} else if el.Scale.Valid {
			scale = int(el.Scale.V)
		}
		toDec := func(u *big.Int) (any, error) {
			d := schema.Decimal{Unscaled: u, Scale: scale}
			if scale != w.Scale {
				r, err := rescale(d, w.Scale)
				if err != nil {
					return nil, err
				}
				d = schema.Decimal{Unscaled: r, Scale: w.Scale}
			}
			return d, nil
		}
		switch phys {
		case format.Int32:
			return func(v parquet.Value) (any, error) { return toDec(big.NewInt(int64(v.Int32()))) }, nil
		case format.Int64:
			return func(v parquet.Value) (any, error) { return toDec(big.NewInt(v.Int64())) }, nil
		case format.ByteArray, format.FixedLenByteArray:
			return func(v parquet.Value) (any, error) { return toDec(fromTwosComplement(v.ByteArray())) }, nil
		}
		return mismatch()
	case schema.PrimitiveType:
		switch w {
		case schema.TypeString:
			if phys == format.ByteArray || phys == format.FixedLenByteArray {
				// Equal short strings (low-cardinality columns) share one
				// string and one boxed value.
				cache := new(stringCache)
				return func(v parquet.Value) (any, error) { return cache.get(v.ByteArray()), nil }, nil
			}
		case schema.TypeBinary:
			if phys == format.ByteArray || phys == format.FixedLenByteArray {
				return func(v parquet.Value) (any, error) { return bytes.Clone(v.ByteArray()), nil }, nil
			}
		case schema.TypeLong:
			switch phys {
			case format.Int64:
				cache := new(intCache[int64])
				return func(v parquet.Value) (any, error) { return cache.box(v.Int64()), nil }, nil
			case format.Int32:
				cache := new(intCache[int64])
				if ct, ok := el.ConvertedType.Get(); ok && ct == deprecated.Uint32 {
					return func(v parquet.Value) (any, error) { return cache.box(int64(uint32(v.Int32()))), nil }, nil
				}
				return func(v parquet.Value) (any, error) { return cache.box(int64(v.Int32())), nil }, nil
			}
		case schema.TypeInteger:
			if phys == format.Int32 {
				cache := new(intCache[int32])
				return func(v parquet.Value) (any, error) { return cache.box(v.Int32()), nil }, nil
			}
		case schema.TypeShort:
			if phys == format.Int32 {
				return func(v parquet.Value) (any, error) { return int16(v.Int32()), nil }, nil
			}
		case schema.TypeByte:
			if phys == format.Int32 {
				return func(v parquet.Value) (any, error) { return int8(v.Int32()), nil }, nil
			}
		case schema.TypeFloat:
			if phys == format.Float {
				return func(v parquet.Value) (any, error) { return v.Float(), nil }, nil
			}
		case schema.TypeDouble:
			switch phys {
			case format.Double:
				return func(v parquet.Value) (any, error) { return v.Double(), nil }, nil
			case format.Float:
				return func(v parquet.Value) (any, error) { return float64(v.Float()), nil }, nil
			case format.Int32:
				// Type widening byte, short, int -> double (PROTOCOL.md
				// "Type Widening"): a file written before the change.
				return func(v parquet.Value) (any, error) { return float64(v.Int32()), nil }, nil
			}
		case schema.TypeBoolean:
			if phys == format.Boolean {
				return func(v parquet.Value) (any, error) { return v.Boolean(), nil }, nil
			}
		case schema.TypeDate:
			if phys == format.Int32 {
				return func(v parquet.Value) (any, error) { return schema.Date(v.Int32()), nil }, nil
			}
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			if w == schema.TypeTimestampNTZ && phys == format.Int32 && isDate(el) {
				// Type widening date -> timestamp_ntz (PROTOCOL.md "Type
				// Widening"): a file written before the change holds days;
				// the value is midnight of that day.
				return func(v parquet.Value) (any, error) { return time.Unix(int64(v.Int32())*86400, 0).UTC(), nil }, nil
			}
			switch phys {
			case format.Int96:
				return func(v parquet.Value) (any, error) { return int96Time(v.Int96()), nil }, nil
			case format.Int64:
				unit := int64(1000) // nanoseconds per unit: micros by default
				if ts, ok := el.LogicalType.Value.(*format.TimestampType); ok {
					switch ts.Unit.Value.(type) {
					case *format.MilliSeconds:
						unit = 1_000_000
					case *format.NanoSeconds:
						unit = 1
					}
				} else if ct, ok := el.ConvertedType.Get(); ok && ct == deprecated.TimestampMillis {
					unit = 1_000_000
				}
				return func(v parquet.Value) (any, error) { return unitTime(v.Int64(), unit), nil }, nil
			}
		}
	}
	return mismatch()
}

// stringCache boxes strings, handing back the same boxed value for a short
// string met recently: a direct-mapped table of stringCacheSlots entries
// keyed by an FNV-1a hash of the bytes. A column of a few hundred distinct
// values (codes, names, enum-like text) then costs no allocation per value.
type stringCache struct {
	slots [stringCacheSlots]struct {
		s string
		v any
	}
}

const (
	stringCacheSlots  = 512
	stringCacheMaxLen = 64 // longer strings rarely repeat: boxed as they come
)

func (c *stringCache) get(b []byte) any {
	if len(b) > stringCacheMaxLen {
		return string(b)
	}
	h := uint32(2166136261)
	for _, x := range b {
		h = (h ^ uint32(x)) * 16777619
	}
	e := &c.slots[h%stringCacheSlots]
	if e.v != nil && e.s == string(b) {
		return e.v
	}
	e.s = string(b)
	e.v = e.s
	return e.v
}

// intCache boxes integers, handing back one boxed value per integer in
// [intCacheMin, intCacheMin+intCacheLen) once it was met (Go boxes only 0
// to 255 without an allocation): counts, distances, delays, years and
// codes then cost no allocation per value. Its table is allocated at the
// first value in range.
type intCache[T int32 | int64] struct {
	vals *[intCacheLen]any
}

const (
	intCacheMin = -256
	intCacheLen = 4096
)

func (c *intCache[T]) box(x T) any {
	i := int64(x) - intCacheMin
	if i < 0 || i >= intCacheLen {
		return x
	}
	if c.vals == nil {
		c.vals = new([intCacheLen]any)
	}
	p := &c.vals[i]
	if *p == nil {
		*p = x
	}
	return *p
}

// isDate: the column is annotated DATE (logical type or converted type).
func isDate(el *format.SchemaElement) bool {
	if _, ok := el.LogicalType.Value.(*format.DateType); ok {
		return true
	}
	ct, ok := el.ConvertedType.Get()
	return ok && ct == deprecated.Date
}

func unitTime(x, nanosPerUnit int64) time.Time {
	switch nanosPerUnit {
	case 1:
		return time.Unix(0, x).UTC()
	case 1000:
		return time.UnixMicro(x).UTC()
	default:
		return time.UnixMilli(x).UTC()
	}
}

// int96Time decodes an INT96 timestamp (nanoseconds of the day, then the
// Julian day), as Spark writes with spark.sql.parquet.outputTimestampType=INT96.
func int96Time(i deprecated.Int96) time.Time {
	nanos := int64(uint64(i[1])<<32 | uint64(i[0]))
	days := int64(int32(i[2])) - 2440588
	return time.Unix(days*86400, nanos).UTC()
}

// fromTwosComplement decodes a big-endian two's complement integer.
func fromTwosComplement(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if len(b) > 0 && b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

// recoverCorrupt turns a panic of the Parquet decoder on malformed input
// into ErrCorruptFile: a corrupt file must fail its read, not the process.
func recoverCorrupt(path string, err *error) {
	if r := recover(); r != nil {
		*err = fmt.Errorf("%w: %s: decoder failure: %v", ErrCorruptFile, path, r)
	}
}
