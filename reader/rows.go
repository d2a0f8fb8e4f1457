package reader

import (
	"context"
	"fmt"
	"iter"
	"slices"
	"strings"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
)

// Record is one row of a Rows read: Values[i] is the value of
// Schema.Fields[i], as the Go value of its Delta type listed in package
// schema (the same as a schema.Batch's rows: int64 for long, schema.Date
// for date, time.Time for timestamp, schema.Decimal, nil for null, ...).
// Every record of one read shares its Schema.
type Record struct {
	Schema *schema.StructType // the read's schema, shared by its records
	Values []any              // Values[i] is the value of Schema.Fields[i]
}

// Get returns the value of the named top-level column.
func (r Record) Get(name string) (any, bool) {
	for i, f := range r.Schema.Fields {
		if f.Name == name {
			return r.Values[i], true
		}
	}
	return nil, false
}

// readPlan is what one Rows call reads.
type readPlan struct {
	s         *Snapshot
	files     []File
	pred      *expr.Predicate
	out       *schema.StructType // projected schema
	outIdx    []int              // out field -> schema field
	want      *schema.StructType // fields read from Parquet
	wantIdx   []int              // want field -> schema field
	partIdx   []int              // partition fields needed -> schema field
	readOpts  parquetio.ReadOptions
	schemaLen int
}

func (s *Snapshot) plan(ctx context.Context, o ReadOptions) (*readPlan, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	p := &readPlan{s: s, pred: o.Predicate, schemaLen: len(s.schema.Fields)}
	if p.pred == nil && strings.TrimSpace(o.Where) != "" {
		pred, err := s.Predicate(o.Where)
		if err != nil {
			return nil, fmt.Errorf("where %q: %w", o.Where, err)
		}
		p.pred = pred
	}
	// Projection.
	p.out = &schema.StructType{}
	if len(o.Columns) == 0 {
		for i, f := range s.schema.Fields {
			p.outIdx = append(p.outIdx, i)
			p.out.Fields = append(p.out.Fields, f)
		}
	} else {
		for _, name := range o.Columns {
			i, err := topLevelField(s.schema, name)
			if err != nil {
				return nil, err
			}
			p.outIdx = append(p.outIdx, i)
			p.out.Fields = append(p.out.Fields, s.schema.Fields[i])
		}
	}
	needed := map[int]bool{}
	for _, i := range p.outIdx {
		needed[i] = true
	}
	if p.pred != nil {
		for _, c := range p.pred.Columns() {
			needed[c.Index[0]] = true
		}
	}
	p.want = &schema.StructType{}
	for i, f := range s.schema.Fields {
		if !needed[i] {
			continue
		}
		if slices.Contains(s.partitions, f.Name) {
			p.partIdx = append(p.partIdx, i)
			continue
		}
		p.wantIdx = append(p.wantIdx, i)
		p.want.Fields = append(p.want.Fields, f)
	}
	switch s.mapping {
	case MappingName:
		p.readOpts.ByPhysicalName = true
	case MappingID:
		p.readOpts.ByFieldID = true
	}
	if o.Files != nil {
		for _, f := range o.Files {
			if p.pred == nil || s.mayMatch(p.pred, &f) {
				p.files = append(p.files, f)
			}
		}
		return p, nil
	}
	files, err := s.Files(ctx, p.pred)
	if err != nil {
		return nil, err
	}
	p.files = files
	return p, nil
}

// topLevelField resolves a projected column name (exact, else
// case-insensitive when unambiguous).
func topLevelField(sch *schema.StructType, name string) (int, error) {
	for i, f := range sch.Fields {
		if f.Name == name {
			return i, nil
		}
	}
	found := -1
	for i, f := range sch.Fields {
		if strings.EqualFold(f.Name, name) {
			if found >= 0 {
				return 0, fmt.Errorf("%w: %q is ambiguous", ErrUnknownColumn, name)
			}
			found = i
		}
	}
	if found < 0 {
		return 0, fmt.Errorf("%w: %q", ErrUnknownColumn, name)
	}
	return found, nil
}

// Rows reads the snapshot's rows: the projected columns of every row that
// satisfies the predicate, file by file in snapshot order and row by row in
// file order. Files are read by up to ReadOptions.Workers goroutines at
// once, each streaming one row group at a time, so memory is bounded by
// about 2×Workers row groups whatever the table size. Partition columns come
// from the log's partition values; columns a file lacks (schema evolution)
// are null; rows deleted by a deletion vector are skipped. Stopping the
// iteration early (break, Limit) cancels the readers and waits for them.
// An error ends the iteration; it names the file.
func (s *Snapshot) Rows(ctx context.Context, o ReadOptions) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		p, err := s.plan(ctx, o)
		if err != nil {
			yield(Record{}, err)
			return
		}
		p.run(ctx, o.workers(), o.Limit, yield)
	}
}

// run reads the plan's files in parallel and yields records in file order.
func (p *readPlan) run(ctx context.Context, workers int, limit int64, yield func(Record, error) bool) {
	if len(p.files) == 0 {
		return
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	// One channel per file; a file's reader can run ahead of the consumer
	// by one row group.
	chans := make([]chan []Record, len(p.files))
	for i := range chans {
		chans[i] = make(chan []Record, 1)
	}
	launched := make(chan struct{})
	go func() {
		defer close(launched)
		for i := range p.files {
			if gctx.Err() != nil {
				return
			}
			g.Go(func() error {
				defer close(chans[i])
				return p.readFile(gctx, &p.files[i], func(recs []Record) bool {
					select {
					case chans[i] <- recs:
						return true
					case <-gctx.Done():
						return false
					}
				})
			})
		}
	}()
	finish := func() error {
		cancel()
		<-launched
		return g.Wait()
	}
	// fail reports the error that stopped the readers: a reader's error, or
	// the caller's cancellation.
	fail := func() {
		err := finish()
		if err == nil {
			err = parent.Err()
		}
		if err == nil {
			err = context.Cause(gctx)
		}
		yield(Record{}, err)
	}
	var n int64
	for i := range p.files {
		for {
			var recs []Record
			var ok bool
			select {
			case recs, ok = <-chans[i]:
			case <-gctx.Done():
				fail()
				return
			}
			if !ok {
				if gctx.Err() != nil {
					fail() // the reader of file i stopped on an error
					return
				}
				break
			}
			for _, r := range recs {
				if !yield(r, nil) {
					finish()
					return
				}
				n++
				if limit > 0 && n >= limit {
					finish()
					return
				}
			}
		}
	}
	if err := finish(); err != nil {
		yield(Record{}, err)
	}
}

// readFile reads one data file row group by row group, handing each group's
// surviving records to emit (false: stop).
func (p *readPlan) readFile(ctx context.Context, f *File, emit func([]Record) bool) error {
	s := p.s
	dv, err := loadDeletionVector(ctx, s.store, f.Path, f.DeletionVector)
	if err != nil {
		return err
	}
	var (
		groups    int
		readGroup func(rg int) ([][]any, error)
	)
	if s.sinkJSON {
		// A JSON lines file of a file sink: one group of all its records.
		groups = 1
		readGroup = func(int) ([][]any, error) { return filesink.ReadJSONFile(ctx, s.store, f.Key, p.want) }
	} else {
		pf, err := parquetio.OpenFile(ctx, s.store, f.Key, f.Size)
		if err != nil {
			return fmt.Errorf("%s: %w", s.store.URL(), err)
		}
		defer pf.Close()
		groups = pf.NumRowGroups()
		readGroup = func(rg int) ([][]any, error) { return pf.ReadRowGroup(ctx, rg, p.want, p.readOpts) }
	}
	partVals := make([]any, len(p.partIdx))
	for j, i := range p.partIdx {
		partVals[j] = f.PartitionValues[s.schema.Fields[i].Name]
	}
	var rowIndex int64
	full := make([]any, p.schemaLen)
	for rg := range groups {
		rows, err := readGroup(rg)
		if err != nil {
			return fmt.Errorf("%s: %w", s.store.URL(), err)
		}
		recs := make([]Record, 0, len(rows))
		for r, row := range rows {
			idx := rowIndex + int64(r)
			if dv.Contains(idx) {
				continue
			}
			clear(full)
			for j, i := range p.wantIdx {
				if j < len(row) {
					full[i] = row[j]
				}
			}
			for j, i := range p.partIdx {
				full[i] = partVals[j]
			}
			if p.pred != nil && p.pred.EvalRow(full) != expr.True {
				continue
			}
			vals := make([]any, len(p.outIdx))
			for k, i := range p.outIdx {
				vals[k] = full[i]
			}
			recs = append(recs, Record{Schema: p.out, Values: vals})
		}
		rowIndex += int64(len(rows))
		if len(recs) > 0 && !emit(recs) {
			return nil
		}
	}
	return nil
}
