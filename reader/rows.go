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
	// direct: the rows decoded from a file are the records' values (the
	// projection reads exactly the output columns, in order, with no
	// partition column and no predicate).
	direct bool
	// columnar: the read yields Batches (readRowGroupColumns), not records.
	columnar bool
	// free takes back the record slices run has yielded every record of
	// (records are yielded by value: the slice is free once they are), for
	// the readers to fill again; nil outside run.
	free chan []Record
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
	p.direct = p.pred == nil && len(p.partIdx) == 0 && slices.Equal(p.outIdx, p.wantIdx)
	p.readOpts.ReuseChunkRows = true // records copies each row's slice out (readRowGroup)
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
// file order. Only the columns the projection and the predicate need are
// fetched and decoded. Files are read by up to ReadOptions.Workers
// goroutines at once, and so are the row groups of one file when fewer
// files than workers are left; each reader decodes its row group in chunks
// of at most 8,192 records, so memory is bounded by a few chunks per worker
// plus each row group's compressed column chunks, whatever the table or row
// group size. Partition columns come from the log's partition values;
// columns a file lacks (schema evolution) are null; rows deleted by a
// deletion vector are skipped. Stopping the iteration early (break, Limit)
// cancels the readers and waits for them. An error ends the iteration; it
// names the file.
//
// The records of one chunk share one backing array for their Values;
// keeping a record keeps its chunk alive.
func (s *Snapshot) Rows(ctx context.Context, o ReadOptions) iter.Seq2[Record, error] {
	return func(yield func(Record, error) bool) {
		p, err := s.plan(ctx, o)
		if err != nil {
			yield(Record{}, err)
			return
		}
		var n int64
		p.run(ctx, o.workers(), func(c chunk) bool {
			for _, r := range c.recs {
				if !yield(r, nil) {
					return false
				}
				n++
				if o.Limit > 0 && n >= o.Limit {
					return false
				}
			}
			clear(c.recs) // keep no chunk's values alive through the slice
			select {
			case p.free <- c.recs:
			default:
			}
			return true
		}, func(err error) { yield(Record{}, err) })
	}
}

const (
	// chunkMaxRows bounds the records one row-group reader decodes at once.
	chunkMaxRows = 8192
	// chunkBudgetBytes bounds a chunk by the row group's uncompressed size
	// per row (wide rows make smaller chunks).
	chunkBudgetBytes = 4 << 20
)

// chunk is one piece of a row group's surviving rows: records (Rows) or a
// batch (Batches).
type chunk struct {
	recs  []Record
	batch *Batch
}

// chunkStream carries one row group's chunks, in order.
type chunkStream chan chunk

// run reads the plan's files in parallel and yields records in file order.
//
// Ownership: run owns every goroutine through the errgroup g and waits for
// it before returning. A launcher starts one task per file, in order, each
// holding one of workers tokens; a file task reads its row groups in order
// and hands each one's chunkStream to the consumer (this goroutine) through
// the file's channel; when a token is free it gives a row group to a helper
// goroutine (with its own parquetio.File) instead of reading it itself, so
// one big file is still read by several workers. Streams are consumed in
// order, each holds at most one chunk ahead, so memory stays bounded.
//
// consume gets every chunk in order (false: stop); fail gets the error that
// ended the read, if any.
func (p *readPlan) run(ctx context.Context, workers int, consume func(chunk) bool, fail func(error)) {
	if len(p.files) == 0 {
		return
	}
	parent := ctx
	ctx, cancel := context.WithCancel(parent)
	g, gctx := errgroup.WithContext(ctx)
	tokens := make(chan struct{}, workers)
	files := make(chan chan chunkStream, workers)
	p.free = make(chan []Record, 2*workers)
	g.Go(func() error {
		defer close(files)
		for i := range p.files {
			select {
			case tokens <- struct{}{}:
			case <-gctx.Done():
				return nil
			}
			streams := make(chan chunkStream, workers)
			select {
			case files <- streams:
			case <-gctx.Done():
				<-tokens
				return nil
			}
			g.Go(func() error {
				defer func() { <-tokens }()
				err := p.readFileParallel(gctx, g, tokens, &p.files[i], streams)
				if err == nil {
					close(streams) // see readFileParallel
				}
				return err
			})
		}
		return nil
	})
	finish := func() error {
		cancel()
		return g.Wait()
	}
	// stopped reports the error that stopped the readers: a reader's
	// error, or the caller's cancellation.
	stopped := func() {
		err := finish()
		if err == nil {
			err = parent.Err()
		}
		if err == nil {
			err = context.Cause(gctx)
		}
		fail(err)
	}
	// next receives from c; !ok when c is closed, stop when the read failed
	// or was cancelled.
	next := func(c <-chan chunk) (ch chunk, ok, stop bool) {
		select {
		case ch, ok = <-c:
		case <-gctx.Done():
			return chunk{}, false, true
		}
		return ch, ok, !ok && gctx.Err() != nil
	}
	for {
		var streams chan chunkStream
		var ok bool
		select {
		case streams, ok = <-files:
		case <-gctx.Done():
			stopped()
			return
		}
		if !ok {
			break
		}
		for {
			var s chunkStream
			select {
			case s, ok = <-streams:
			case <-gctx.Done():
				stopped()
				return
			}
			if !ok {
				break
			}
			for {
				ch, ok, stop := next(s)
				if stop {
					stopped() // a reader stopped on an error
					return
				}
				if !ok {
					break
				}
				if !consume(ch) {
					finish()
					return
				}
			}
		}
		if gctx.Err() != nil {
			stopped()
			return
		}
	}
	if err := finish(); err != nil {
		fail(err)
	}
}

// openedFile is a data file ready for its row groups to be read.
type openedFile struct {
	f        *File
	pf       *parquetio.File // nil for a JSON lines file of a file sink
	dv       *deletionVector
	partVals []any
}

func (p *readPlan) openFile(ctx context.Context, f *File) (*openedFile, error) {
	s := p.s
	dv, err := loadDeletionVector(ctx, s.store, f.Path, f.DeletionVector)
	if err != nil {
		return nil, err
	}
	of := &openedFile{f: f, dv: dv, partVals: make([]any, len(p.partIdx))}
	for j, i := range p.partIdx {
		of.partVals[j] = f.PartitionValues[s.schema.Fields[i].Name]
	}
	if !s.sinkJSON {
		pf, err := parquetio.OpenFile(ctx, s.store, f.Key, f.Size)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.store.URL(), err)
		}
		of.pf = pf
	}
	return of, nil
}

func (of *openedFile) close() {
	if of.pf != nil {
		of.pf.Close()
	}
}

func (of *openedFile) numRowGroups() int {
	if of.pf == nil {
		return 1 // a JSON lines file: one group of all its records
	}
	return of.pf.NumRowGroups()
}

// readFile reads one data file row group by row group, handing each chunk
// of surviving records to emit (false: stop).
func (p *readPlan) readFile(ctx context.Context, f *File, emit func([]Record) bool) error {
	of, err := p.openFile(ctx, f)
	if err != nil {
		return err
	}
	defer of.close()
	var base int64
	for rg := range of.numRowGroups() {
		n, ok, err := p.readRowGroup(ctx, of, of.pf, rg, base, func(c chunk) bool { return emit(c.recs) })
		if err != nil || !ok {
			return err
		}
		base += n
	}
	return nil
}

// readFileParallel is readFile for run: each row group's chunks go to their
// own stream, sent on streams in order; a row group is given to a helper
// goroutine of g when a token is free (the last one never is: this task
// reads it while holding its own token).
//
// A stream is closed only when its row group was read to the end or the
// read was cancelled: one ending on an error stays open (as does the
// file's streams channel, left to run's task), so that the consumer, which
// takes a closed stream for a finished row group, waits for the errgroup's
// cancellation instead of moving on to the next row group or file before
// it (the error would then come after records read past the failed rows,
// or never, for a caller stopping at a limit).
func (p *readPlan) readFileParallel(ctx context.Context, g *errgroup.Group, tokens chan struct{}, f *File, streams chan<- chunkStream) error {
	of, err := p.openFile(ctx, f)
	if err != nil {
		return err
	}
	defer of.close()
	groups := of.numRowGroups()
	var base int64
	for rg := range groups {
		s := make(chunkStream, 1)
		select {
		case streams <- s:
		case <-ctx.Done():
			return nil
		}
		emit := func(c chunk) bool {
			select {
			case s <- c:
				return true
			case <-ctx.Done():
				return false
			}
		}
		rows := int64(0)
		if of.pf != nil {
			rows = of.pf.RowGroupNumRows(rg)
		}
		helped := false
		if rg < groups-1 && of.pf != nil {
			select {
			case tokens <- struct{}{}:
				helped = true
			default:
			}
		}
		if helped {
			pf, err := of.pf.Clone()
			if err != nil {
				<-tokens
				return fmt.Errorf("%s: %w", p.s.store.URL(), err)
			}
			first := base // base moves on before the helper runs
			g.Go(func() error {
				defer func() { <-tokens }()
				defer pf.Close()
				_, _, err := p.readRowGroup(ctx, of, pf, rg, first, emit)
				if err == nil {
					close(s)
				}
				return err
			})
		} else {
			_, ok, err := p.readRowGroup(ctx, of, of.pf, rg, base, emit)
			if err != nil {
				return err
			}
			close(s)
			if !ok {
				return nil
			}
		}
		base += rows
	}
	return nil
}

// readRowGroup reads row group rg of of through pf (of.pf or a clone of it),
// whose first row has index base in the file; it returns the row group's
// row count and false when emit stopped it.
func (p *readPlan) readRowGroup(ctx context.Context, of *openedFile, pf *parquetio.File, rg int, base int64, emit func(chunk) bool) (int64, bool, error) {
	if p.columnar {
		return p.readRowGroupColumns(ctx, of, pf, rg, base, emit)
	}
	s := p.s
	var chunks iter.Seq2[[][]any, error]
	if pf == nil {
		chunks = func(yield func([][]any, error) bool) {
			yield(filesink.ReadJSONFile(ctx, s.store, of.f.Key, p.want))
		}
	} else {
		maxRows := min(chunkMaxRows, pf.ChunkRows(rg, chunkBudgetBytes))
		chunks = pf.RowGroupChunks(ctx, rg, p.want, p.readOpts, maxRows)
	}
	idx := base
	full := make([]any, p.schemaLen)
	for rows, err := range chunks {
		if err != nil {
			return 0, false, fmt.Errorf("%s: %w", s.store.URL(), err)
		}
		recs := p.records(rows, idx, of, full)
		idx += int64(len(rows))
		if len(recs) > 0 && !emit(chunk{recs: recs}) {
			return idx - base, false, nil
		}
	}
	return idx - base, true, nil
}

// records turns decoded rows (of p.want), the first at row index base of
// the file, into the records that survive the deletion vector and the
// predicate. full is scratch of the schema's width.
func (p *readPlan) records(rows [][]any, base int64, of *openedFile, full []any) []Record {
	var recs []Record
	select {
	case recs = <-p.free:
	default:
	}
	if cap(recs) < len(rows) {
		recs = make([]Record, 0, len(rows))
	}
	recs = recs[:0]
	width := len(p.outIdx)
	var backing []any
	for r, row := range rows {
		if of.dv.Contains(base + int64(r)) {
			continue
		}
		if p.direct && len(row) == width {
			// The decoded row is the record's values.
			recs = append(recs, Record{Schema: p.out, Values: row[:width:width]})
			continue
		}
		clear(full)
		for j, i := range p.wantIdx {
			if j < len(row) {
				full[i] = row[j]
			}
		}
		for j, i := range p.partIdx {
			full[i] = of.partVals[j]
		}
		if p.pred != nil && p.pred.EvalRow(full) != expr.True {
			continue
		}
		if len(backing) < width {
			backing = make([]any, width*min(len(rows)-r, 1024))
		}
		vals := backing[:width:width]
		backing = backing[width:]
		for k, i := range p.outIdx {
			vals[k] = full[i]
		}
		recs = append(recs, Record{Schema: p.out, Values: vals})
	}
	return recs
}
