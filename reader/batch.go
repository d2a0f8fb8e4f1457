package reader

import (
	"context"
	"fmt"
	"iter"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
)

// Batch is consecutive rows of one data file in columnar form: Columns[i]
// holds the Len values of Schema.Fields[i]. Every batch of one read shares
// its Schema.
type Batch struct {
	Schema  *schema.StructType // the read's schema, shared by its batches
	Len     int                // rows in the batch, >= 1
	Columns []Column           // Columns[i] holds Schema.Fields[i]
}

// Column is the Len values of one column of a Batch, in the one slice that
// its Delta type uses, Len elements long:
//
//   - Int64: long, integer, short and byte;
//   - Float64: double and float (float values widened, exactly);
//   - String: string (the strings of one Parquet page or dictionary share
//     one allocation: keeping one keeps that page's bytes);
//   - Bool: boolean;
//   - Values: every other type, as the Go values of Record.Values (nil for
//     null).
//
// Nulls[i] reports that row i is null (its slot in the typed slice holds
// the zero value); Nulls is nil when no row of the batch is null.
type Column struct {
	Type    schema.DataType // the column's Delta type (Schema.Fields[i].Type)
	Nulls   []bool          // Nulls[i]: row i is null; nil when none is
	Int64   []int64         // long, integer, short, byte values
	Float64 []float64       // double, float values
	String  []string        // string values
	Bool    []bool          // boolean values
	Values  []any           // values of every other type (Record representation)
}

// IsNull reports whether row i of the column is null.
func (c *Column) IsNull(i int) bool { return c.Nulls != nil && c.Nulls[i] }

// Value is row i as Record.Values holds it: nil for null, int64 for long,
// int32 for integer, int16 for short, int8 for byte, float32 for float, the
// typed slice's value for the other typed columns, Values[i] otherwise.
func (c *Column) Value(i int) any {
	v := c.vector()
	return v.Value(i, c.Type)
}

func (c *Column) vector() parquetio.Vector {
	v := parquetio.Vector{Kind: parquetio.KindOf(c.Type), Null: c.Nulls, Int64: c.Int64, Float64: c.Float64, String: c.String, Bool: c.Bool, Any: c.Values}
	return v
}

func columnOf(t schema.DataType, v parquetio.Vector) Column {
	return Column{Type: t, Nulls: v.Null, Int64: v.Int64, Float64: v.Float64, String: v.String, Bool: v.Bool, Values: v.Any}
}

// Batches reads the rows that Rows reads, in the same order, as columns:
// the same files, projection (only the projected and predicate columns are
// fetched and decoded), predicate, deletion vectors, partition values,
// column mapping, type widening and Limit, and the same parallelism (files,
// and the row groups of one file, read by up to ReadOptions.Workers
// goroutines). A batch holds rows of one row group of one file, at most
// 65,536 of them (fewer for wide rows: about 4 MiB of the row group's
// uncompressed data; a JSON lines file of a file sink is one batch), after
// the deletion vector and the predicate dropped theirs; a batch with no row
// left is not yielded. Top-level long, integer,
// short, byte, double, float and string columns of Parquet files are
// decoded page by page into their typed slices, with no boxed value per
// row: the aggregate-friendly way to read. Batch.Columns[i].Value(r) is the
// value Rows gives in Record.Values[i] for the same row.
//
// Each batch has its own storage; a caller may keep it. Stopping the
// iteration early (break, Limit) cancels the readers and waits for them. An
// error ends the iteration; it names the file.
func (s *Snapshot) Batches(ctx context.Context, o ReadOptions) iter.Seq2[*Batch, error] {
	return func(yield func(*Batch, error) bool) {
		p, err := s.plan(ctx, o)
		if err != nil {
			yield(nil, err)
			return
		}
		p.columnar = true
		var n int64
		p.run(ctx, o.workers(), func(c chunk) bool {
			b := c.batch
			if o.Limit > 0 && n+int64(b.Len) > o.Limit {
				b.truncate(int(o.Limit - n))
			}
			n += int64(b.Len)
			if !yield(b, nil) {
				return false
			}
			return o.Limit == 0 || n < o.Limit
		}, func(err error) { yield(nil, err) })
	}
}

// truncate keeps the first n rows.
func (b *Batch) truncate(n int) {
	keep := make([]int32, n)
	for i := range keep {
		keep[i] = int32(i)
	}
	for i := range b.Columns {
		v := b.Columns[i].vector()
		v.Len = b.Len
		v.Take(keep)
		b.Columns[i] = columnOf(b.Columns[i].Type, v)
	}
	b.Len = n
}

// batchMaxRows bounds the rows of one Batch.
const batchMaxRows = 65536

// readRowGroupColumns is readRowGroup for Batches.
func (p *readPlan) readRowGroupColumns(ctx context.Context, of *openedFile, pf *parquetio.File, rg int, base int64, emit func(chunk) bool) (int64, bool, error) {
	s := p.s
	var chunks iter.Seq2[parquetio.ColumnChunk, error]
	if pf == nil {
		chunks = func(yield func(parquetio.ColumnChunk, error) bool) {
			rows, err := filesink.ReadJSONFile(ctx, s.store, of.f.Key, p.want)
			if err != nil || len(rows) == 0 {
				yield(parquetio.ColumnChunk{}, err)
				return
			}
			vecs := make([]parquetio.Vector, len(p.want.Fields))
			for j, f := range p.want.Fields {
				vecs[j] = parquetio.NewVector(parquetio.KindOf(f.Type), len(rows))
				for r, row := range rows {
					if j >= len(row) {
						vecs[j].SetNull(r)
					} else if err := vecs[j].Set(r, row[j]); err != nil {
						yield(parquetio.ColumnChunk{}, fmt.Errorf("%s: column %s: %w", of.f.Key, f.Name, err))
						return
					}
				}
			}
			yield(parquetio.ColumnChunk{Rows: len(rows), Vectors: vecs}, nil)
		}
	} else {
		maxRows := min(batchMaxRows, pf.ChunkRows(rg, chunkBudgetBytes))
		chunks = pf.RowGroupColumns(ctx, rg, p.want, p.readOpts, maxRows)
	}
	idx := base
	var full []any
	if p.pred != nil {
		full = make([]any, p.schemaLen)
	}
	for c, err := range chunks {
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", s.store.URL(), err)
		}
		if c.Rows == 0 {
			break
		}
		n := c.Rows
		b, err := p.batch(c.Vectors, n, idx, of, full)
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", s.store.URL(), err)
		}
		idx += int64(n)
		if b != nil && !emit(chunk{batch: b}) {
			return idx - base, false, nil
		}
	}
	return idx - base, true, nil
}

// batch turns decoded vectors of p.want (n rows, the first at row index
// base of the file) into the batch of the rows that survive the deletion
// vector and the predicate; nil when none does. full is scratch of the
// schema's width (predicate reads only).
func (p *readPlan) batch(vecs []parquetio.Vector, n int, base int64, of *openedFile, full []any) (*Batch, error) {
	var keep []int32 // nil: every row
	if of.dv != nil || p.pred != nil {
		keep = make([]int32, 0, n)
		for r := range n {
			if of.dv.Contains(base + int64(r)) {
				continue
			}
			if p.pred != nil {
				clear(full)
				for j, i := range p.wantIdx {
					full[i] = vecs[j].Value(r, p.want.Fields[j].Type)
				}
				for j, i := range p.partIdx {
					full[i] = of.partVals[j]
				}
				if p.pred.EvalRow(full) != expr.True {
					continue
				}
			}
			keep = append(keep, int32(r))
		}
		if len(keep) == 0 {
			return nil, nil
		}
		if len(keep) == n {
			keep = nil
		}
	}
	m := n
	if keep != nil {
		m = len(keep)
	}
	if m == 0 {
		return nil, nil
	}
	b := &Batch{Schema: p.out, Len: m, Columns: make([]Column, len(p.outIdx))}
	for k, i := range p.outIdx {
		t := p.s.schema.Fields[i].Type
		if j := indexOf(p.wantIdx, i); j >= 0 {
			v := vecs[j]
			if keep != nil {
				v.Take(keep)
			}
			b.Columns[k] = columnOf(t, v)
			continue
		}
		// A partition column: the file's value on every row.
		v := parquetio.NewVector(parquetio.KindOf(t), m)
		x := of.partVals[indexOf(p.partIdx, i)]
		for r := range m {
			if err := v.Set(r, x); err != nil {
				return nil, fmt.Errorf("%s: partition column %s: %w", of.f.Key, p.s.schema.Fields[i].Name, err)
			}
		}
		b.Columns[k] = columnOf(t, v)
	}
	return b, nil
}

func indexOf(xs []int, x int) int {
	for j, y := range xs {
		if y == x {
			return j
		}
	}
	return -1
}
