package parquetio

import (
	"context"
	"fmt"
	"io"
	"iter"
	"strings"

	"github.com/lakesink/lakesink/schema"
	"github.com/parquet-go/parquet-go"
)

// ReadRowGroup decodes row group i into records of want (nil: the file's own
// schema). Requested fields are matched to file columns by name (see
// ReadOptions); a requested field that the file lacks reads as null; only
// requested columns are fetched and decoded. Values use the Batch
// representation. The rows of one call share one backing array (keeping any
// row keeps the row group's rows alive); equal strings may share storage.
// Errors wrap ErrCorruptFile or ErrUnsupported and name the path.
//
// The decoded rows take several times the row group's uncompressed size;
// use RowGroupChunks to bound memory for large row groups.
func (f *File) ReadRowGroup(ctx context.Context, i int, want *schema.StructType, opts ReadOptions) ([][]any, error) {
	var out [][]any
	for rows, err := range f.RowGroupChunks(ctx, i, want, opts, 0) {
		if err != nil {
			return nil, err
		}
		if out == nil {
			out = rows
		} else {
			out = append(out, rows...)
		}
	}
	if out == nil {
		out = [][]any{}
	}
	return out, nil
}

// RowGroupChunks decodes row group i like ReadRowGroup, but incrementally:
// it yields the records in order, in chunks of at most maxRows (maxRows <= 0:
// one chunk with the whole row group). Memory is bounded by one chunk of
// decoded records plus the row group's compressed bytes of the requested
// columns and one decoded page per column, not by the row group's decoded
// size. Each chunk has its own backing array. An empty row group yields
// nothing. After an error the iteration stops. The File must not be used for
// another read until the iteration ends (it holds the row group's bytes).
func (f *File) RowGroupChunks(ctx context.Context, i int, want *schema.StructType, opts ReadOptions, maxRows int) iter.Seq2[[][]any, error] {
	return func(yield func([][]any, error) bool) {
		rd, err := f.openRowGroup(ctx, i, want, opts)
		if err != nil {
			yield(nil, err)
			return
		}
		defer rd.close()
		for {
			rows, err := rd.next(ctx, maxRows)
			if err != nil {
				yield(nil, err)
				return
			}
			if rows == nil {
				return
			}
			if !yield(rows, nil) {
				return
			}
		}
	}
}

// Chunks iterates every row group of the file with RowGroupChunks, yielding
// chunks of at most maxRows records (a chunk never spans row groups).
func (f *File) Chunks(ctx context.Context, want *schema.StructType, opts ReadOptions, maxRows int) iter.Seq2[[][]any, error] {
	return func(yield func([][]any, error) bool) {
		for i := range f.NumRowGroups() {
			for rows, err := range f.RowGroupChunks(ctx, i, want, opts, maxRows) {
				if !yield(rows, err) || err != nil {
					return
				}
			}
		}
	}
}

// Columns iterates every row group of the file with RowGroupColumns,
// yielding chunks of at most maxRows records (a chunk never spans row
// groups): the records of Chunks, column-wise.
func (f *File) Columns(ctx context.Context, want *schema.StructType, opts ReadOptions, maxRows int) iter.Seq2[ColumnChunk, error] {
	return func(yield func(ColumnChunk, error) bool) {
		for i := range f.NumRowGroups() {
			for c, err := range f.RowGroupColumns(ctx, i, want, opts, maxRows) {
				if !yield(c, err) || err != nil {
					return
				}
			}
		}
	}
}

// rgReader decodes one row group chunk by chunk.
type rgReader struct {
	f       *File
	rg      int
	want    *schema.StructType
	plan    *readPlan
	cols    []int
	flat    map[int]int // top-level primitive column -> field index
	streams map[int]*colStream
	curs    map[int]*cursor // columns assembled into records
	left    int             // records not yet yielded
	done    int             // records yielded
	reuse   bool            // ReadOptions.ReuseChunkRows
	micros  bool            // ReadOptions.TimestampMicros
	out     [][]any         // the chunk slice handed back again when reuse
}

// CheckRead reports whether the file's columns can be read as want (nil:
// the file's own schema) without reading any value: a *ColumnError wrapping
// a *TypeMismatchError (or another cause) for the first field that cannot.
// A read that passes may still fail on corrupt data.
func (f *File) CheckRead(want *schema.StructType, opts ReadOptions) (err error) {
	defer recoverCorrupt(f.path, &err)
	if want == nil {
		want = f.schema
	}
	_, _, err = f.readPlan(want, opts)
	return err
}

func (f *File) openRowGroup(ctx context.Context, i int, want *schema.StructType, opts ReadOptions) (_ *rgReader, err error) {
	defer recoverCorrupt(f.path, &err)
	rgs := f.pf.RowGroups()
	if i < 0 || i >= len(rgs) {
		return nil, fmt.Errorf("%s: row group %d out of range [0,%d)", f.path, i, len(rgs))
	}
	if want == nil {
		want = f.schema
	}
	plan, cols, err := f.readPlan(want, opts)
	if err != nil {
		return nil, err
	}
	rg := rgs[i]
	chunks := rg.ColumnChunks()
	for _, c := range cols {
		if c >= len(chunks) {
			return nil, fmt.Errorf("%w: %s: row group %d lacks column %d", ErrCorruptFile, f.path, i, c)
		}
	}
	// Fetch the byte ranges of the needed column chunks.
	if err := f.prefetch(ctx, i, cols); err != nil {
		return nil, err
	}
	rd := &rgReader{
		f: f, rg: i, want: want, plan: plan, cols: cols,
		flat:    make(map[int]int, len(plan.fields)),
		streams: make(map[int]*colStream, len(cols)),
		curs:    make(map[int]*cursor, len(cols)),
		left:    int(rg.NumRows()),
		reuse:   opts.ReuseChunkRows,
		micros:  opts.TimestampMicros,
	}
	// Top-level primitive fields are decoded straight into the rows; the
	// other columns into cursors for record assembly.
	for j, n := range plan.fields {
		if n.kind == nkLeaf && !n.missing && f.leaves[n.col].rep == 0 {
			rd.flat[n.col] = j
		}
	}
	for _, c := range cols {
		rd.streams[c] = &colStream{pages: chunks[c].Pages(), buf: make([]parquet.Value, 1024)}
		if _, ok := rd.flat[c]; !ok {
			rd.curs[c] = &cursor{}
		}
	}
	return rd, nil
}

func (rd *rgReader) close() {
	for _, s := range rd.streams {
		_ = s.pages.Close()
	}
	rd.f.ra.drop()
}

func (rd *rgReader) colErr(c int, err error) error {
	return fmt.Errorf("%s: row group %d, column %s: %w", rd.f.path, rd.rg, strings.Join(columnPath(rd.f, c), "."), err)
}

// next decodes the next at most maxRows records; nil when the row group is
// exhausted.
func (rd *rgReader) next(ctx context.Context, maxRows int) (_ [][]any, err error) {
	f := rd.f
	defer recoverCorrupt(f.path, &err)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if rd.left == 0 {
		// Every column must be exhausted exactly at the row group's end.
		for _, c := range rd.cols {
			if ok, err := rd.streams[c].more(); err != nil {
				return nil, rd.colErr(c, err)
			} else if ok {
				return nil, rd.colErr(c, fmt.Errorf("%w: more values than the row group's %d rows", ErrCorruptFile, rd.done))
			}
		}
		return nil, nil
	}
	n := rd.left
	if maxRows > 0 && maxRows < n {
		n = maxRows
	}
	nf := len(rd.plan.fields)
	backing := make([]any, n*nf)
	var out [][]any
	if rd.reuse && cap(rd.out) >= n {
		out = rd.out[:n]
	} else {
		out = make([][]any, n)
		if rd.reuse {
			rd.out = out
		}
	}
	for r := range out {
		out[r] = backing[r*nf : (r+1)*nf : (r+1)*nf]
	}
	for _, c := range rd.cols {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		s, leaf, conv := rd.streams[c], f.leaves[c], rd.plan.convs[c]
		var err error
		if j, ok := rd.flat[c]; ok {
			err = s.readFlat(leaf, conv, out, j, rd.done)
		} else {
			err = s.readRecords(leaf, conv, rd.curs[c], n)
		}
		if err != nil {
			return nil, rd.colErr(c, err)
		}
	}
	if len(rd.curs) > 0 {
		for r := range n {
			if r%4096 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			row := out[r]
			for j, fn := range rd.plan.fields {
				if fn.kind == nkLeaf && !fn.missing {
					if _, ok := rd.flat[fn.col]; ok {
						continue
					}
				}
				v, err := assemble(fn, rd.curs)
				if err != nil {
					return nil, fmt.Errorf("%w: %s: row group %d, row %d, field %s: %v", ErrCorruptFile, f.path, rd.rg, rd.done+r, rd.want.Fields[j].Name, err)
				}
				row[j] = v
			}
		}
	}
	rd.left -= n
	rd.done += n
	return out, nil
}

// colStream reads one column chunk's values page by page, holding at most one
// decoded page and a small value buffer.
type colStream struct {
	pages parquet.Pages
	vr    parquet.ValueReader
	buf   []parquet.Value
	i, n  int // buf[i:n] not yet consumed
	eof   bool
	// typed: the column is read page by page into typed vectors
	// (readTyped), at ps, instead of through vr and buf.
	typed bool
	ps    pageState
}

// more reports whether a value is pending, reading pages as needed. Values
// in buf stay valid until the next page is read, which happens only once
// they are consumed.
func (s *colStream) more() (bool, error) {
	for s.i >= s.n {
		if s.eof {
			return false, nil
		}
		if s.vr == nil {
			page, err := s.pages.ReadPage()
			if err == io.EOF {
				s.eof = true
				return false, nil
			}
			if err != nil {
				return false, fmt.Errorf("%w: read page: %v", ErrCorruptFile, err)
			}
			s.vr = page.Values()
		}
		n, err := s.vr.ReadValues(s.buf)
		s.i, s.n = 0, n
		switch {
		case err == io.EOF:
			s.vr = nil
		case err != nil:
			return false, fmt.Errorf("%w: decode values: %v", ErrCorruptFile, err)
		case n == 0:
			return false, fmt.Errorf("%w: decode values: no progress", ErrCorruptFile)
		}
	}
	return true, nil
}

// readFlat decodes the next len(rows) values of a non-repeated top-level
// column into field j of rows; base is the index of rows[0] in the row group.
func (s *colStream) readFlat(leaf *fnode, conv convFunc, rows [][]any, j, base int) error {
	for r := 0; r < len(rows); {
		ok, err := s.more()
		if err != nil {
			return err
		}
		if !ok {
			return fmt.Errorf("%w: %d values for at least %d rows", ErrCorruptFile, base+r, base+len(rows))
		}
		m := min(s.n-s.i, len(rows)-r)
		for _, v := range s.buf[s.i : s.i+m] {
			if v.DefinitionLevel() == leaf.def && !v.IsNull() {
				x, cerr := conv(v)
				if cerr != nil {
					return cerr
				}
				rows[r][j] = x
			}
			r++
		}
		s.i += m
	}
	return nil
}

// readRecords refills cur with the levels and values of the column's next n
// records (a record starts at repetition level 0).
func (s *colStream) readRecords(leaf *fnode, conv convFunc, cur *cursor, n int) error {
	clear(cur.vals)
	cur.reps, cur.defs, cur.vals, cur.pos = cur.reps[:0], cur.defs[:0], cur.vals[:0], 0
	recs := 0
	for {
		ok, err := s.more()
		if err != nil {
			return err
		}
		if !ok {
			return nil // a short column is reported by assembly
		}
		for ; s.i < s.n; s.i++ {
			v := s.buf[s.i]
			if v.RepetitionLevel() == 0 {
				if recs == n {
					return nil
				}
				recs++
			}
			cur.reps = append(cur.reps, uint8(v.RepetitionLevel()))
			d := v.DefinitionLevel()
			cur.defs = append(cur.defs, uint8(d))
			if d == leaf.def && !v.IsNull() && conv != nil {
				x, cerr := conv(v)
				if cerr != nil {
					return cerr
				}
				cur.vals = append(cur.vals, x)
			} else {
				cur.vals = append(cur.vals, nil)
			}
		}
	}
}

// ChunkRows is how many records of row group i take about byteBudget bytes
// uncompressed (from the footer's total_byte_size; decoded Go values take
// several times that), clamped to [1, the row group's rows]. It sizes the
// maxRows of RowGroupChunks from a memory budget.
func (f *File) ChunkRows(i int, byteBudget int64) int {
	rgs := f.pf.Metadata().RowGroups
	if i < 0 || i >= len(rgs) {
		return 1
	}
	rows, size := rgs[i].NumRows, rgs[i].TotalByteSize
	if rows <= 0 {
		return 1
	}
	if size <= 0 || byteBudget <= 0 {
		return int(rows)
	}
	n := int64(float64(byteBudget) / (float64(size) / float64(rows)))
	return int(max(1, min(n, rows)))
}
