package parquetio

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/parquet-go/parquet-go"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// BatchWriter writes one batch given chunk by chunk (a streamed
// schema.Batch) as Parquet data files, as WriteFiles writes a batch held in
// memory: rows grouped by partition into Hive directories, files rolled at
// TargetFileSizeBytes, Delta statistics per file. Each partition's file
// stays open across Write calls, so a chunked batch gives the same files as
// one Write of all its rows. Memory is bounded by one chunk plus the open
// files' buffered row groups, which together stay under bufferedBytesBudget:
// past it the largest open row group is flushed early, as parquet-mr's
// MemoryManager shrinks the row groups of concurrent writers when they pass
// its pool (parquet.memory.pool.ratio).
//
// Files become visible one by one as they are closed; they are invisible to
// Delta readers until a commit names them. After an error, Abort deletes the
// files written so far (best effort). Not safe for concurrent use.
type BatchWriter struct {
	store   storage.Store
	lay     *layout
	name    func(partIndex int, codecExt string) string
	seq     atomic.Int64
	parts   map[string]*openPart
	order   []*openPart // in order of first appearance
	rows    int         // records written so far (RowError.Row offsets)
	failed  bool
	closed  bool
	workers int
	maxOpen int // open files at most (their column buffers within openFilesBudget)
	// closeAtEnd closes each partition's file at the end of every write
	// (WriteFiles: one write holds the whole batch).
	closeAtEnd bool
	// encodingsChosen: the first rows chose the PLAIN columns
	// (choosePlainColumns), before any file was created.
	encodingsChosen bool
	// dictBudget, pageBudget and bufBudget: dictionaryBudget, pageBudget
	// and bufferedBytesBudget (tests lower them).
	dictBudget, pageBudget, bufBudget int64
	// pre shreds the rows of a partitioned write once, in row order, when
	// the plan allows it (writePlan.preShreddable); nil otherwise.
	pre *shredder
	// syncObjects makes the closed files durable (storage.SyncObjects;
	// tests count the calls).
	syncObjects func(ctx context.Context, st storage.Store, paths []string) error
	// freeRowIdx are the row index slices of the last chunk's partitions,
	// for the next chunk's (partitionGroups).
	freeRowIdx [][]int
	// byPartition reorders a partitioned columnar chunk's rows
	// (WriteColumns).
	byPartition partitionOrder
}

// openPart is one partition of a BatchWriter: its closed files and the file
// being written (nil between files).
type openPart struct {
	dir    string
	values map[string]*string
	files  []WrittenFile
	fw     *FileWriter
	// held is fw's bufferedBytes after its last write (on the goroutine
	// that wrote it) or flush (bound): no other call changes it.
	held int64
}

// bufferedBytesBudget bounds the row-group bytes a BatchWriter's open files
// hold in memory together when more than one is open (parquet-go buffers a
// row group's compressed pages until it is flushed; a partition's file is
// one row group unless flushed early, so its pages stayed in memory until the
// batch ended: 29 MiB of page buffers for the 229 airports of the 3M
// flights). One open file is bounded by RowGroupSizeBytes and RowGroupRows
// alone.
const bufferedBytesBudget = 16 << 20

// NewBatchWriter starts writing a batch of schema sch (partition columns
// included, as in a schema.Batch) with opts. Errors: ErrOptions,
// schema.ErrSchema.
func NewBatchWriter(store storage.Store, sch *schema.StructType, opts WriteOptions) (*BatchWriter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if sch == nil {
		return nil, fmt.Errorf("%w: batch has no schema", schema.ErrSchema)
	}
	if err := schema.ValidateForWrite(sch); err != nil {
		return nil, err
	}
	lay, err := newLayout(sch, opts)
	if err != nil {
		return nil, err
	}
	name := opts.FileName
	if name == nil {
		name = DeltaFileName
	}
	w := &BatchWriter{store: store, lay: lay, name: name, parts: map[string]*openPart{},
		workers:    partitionWorkers(opts.Workers, lay.plan.numCols),
		maxOpen:    max(1, openFilesBudget/(max(lay.plan.numCols, 1)*columnBufferBytes)),
		dictBudget: dictionaryBudget, pageBudget: pageBudget, bufBudget: bufferedBytesBudget,
		syncObjects: storage.SyncObjects}
	lay.deferSync = true
	if len(lay.partIdx) > 0 && lay.plan.preShreddable() {
		w.pre = newShredder(lay.plan)
	}
	return w, nil
}

// Write validates rows (each with one value per schema field) and writes
// them. A row that does not fit fails the call with a *schema.RowError whose
// Row counts from the batch's first row (every earlier Write included); none
// of these rows is written, and the writer takes no more rows.
func (w *BatchWriter) Write(ctx context.Context, rows [][]any) error {
	if w.closed || w.failed {
		return errors.New("batch writer is closed or failed")
	}
	err := w.write(ctx, rows, true)
	if err != nil {
		w.failed = true
		var re *schema.RowError
		if errors.As(err, &re) {
			re.Row += w.rows
		}
	}
	w.rows += len(rows)
	return err
}

func (w *BatchWriter) write(ctx context.Context, rows [][]any, validate bool) error {
	lay := w.lay
	if validate {
		if err := checkArity(rows, len(lay.schema.Fields)); err != nil {
			return err
		}
		if err := validateColumns(lay, rows, lay.dataIdx); err != nil {
			return err
		}
	}
	groups, err := lay.partitionGroups(&schema.Batch{Schema: lay.schema, Rows: rows}, &w.freeRowIdx)
	if err != nil {
		return err
	}
	if !w.encodingsChosen && len(rows) > 0 {
		w.encodingsChosen = true
		dictMax, _ := w.sharesAmong(len(groups))
		if plain := lay.choosePlainColumns(rows, groups, dictMax); plain != nil {
			lay.pschema = lay.withPlainColumns(plain)
		}
	}
	var pre [][]parquet.Value
	if len(groups) > 1 && w.pre != nil {
		w.pre.preShred(lay, rows, lay.dataIdx)
		pre = w.pre.cols
	}
	return w.writeGroups(ctx, groups, rows, len(rows), pre, nil)
}

// writeGroups writes the rows of each group (of n rows in all: rows, or
// pre or the vectors vecs when rows is nil; vecs[j] holds field j of the
// plan) to its partition's file, Workers partitions at once, then bounds
// the open files. The values of pre are cleared after.
func (w *BatchWriter) writeGroups(ctx context.Context, groups []*partGroup, rows [][]any, n int, pre [][]parquet.Value, vecs []*schema.Vector) error {
	lay := w.lay
	targets := make([]*openPart, len(groups))
	for gi, g := range groups {
		p := w.parts[g.key]
		if p == nil {
			p = &openPart{dir: PartitionPath(lay.partKeys, g.values), values: g.values}
			w.parts[g.key] = p
			w.order = append(w.order, p)
		}
		targets[gi] = p
	}
	// A few goroutines take the groups, largest first, one after another
	// (one goroutine per group, 229 airports a chunk, each grew its stack
	// anew in parquet-go's deep frames: 5% of the CPU); several groups keep
	// the CPUs busy, so a file's lanes then run one after another.
	order := make([]int, len(groups))
	for i := range order {
		order[i] = i
	}
	if len(groups) > 1 {
		slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(groups[b].rows), len(groups[a].rows)) })
	}
	var next atomic.Int64
	work := func(gctx context.Context) error {
		for {
			k := int(next.Add(1) - 1)
			if k >= len(order) {
				return nil
			}
			if err := gctx.Err(); err != nil {
				return err
			}
			g, p := groups[order[k]], targets[order[k]]
			n := n
			if g.rows != nil {
				n = len(g.rows)
			}
			if err := w.appendTo(gctx, ctx, p, rows, g.rows, n, pre, vecs, len(groups) > 1); err != nil {
				return err
			}
			if w.closeAtEnd && p.fw != nil {
				if err := w.closeFile(gctx, p); err != nil {
					return err
				}
			}
			p.held = 0
			if p.fw != nil {
				p.held = p.fw.bufferedBytes()
			}
		}
	}
	var err error
	if min(w.workers, len(groups)) == 1 {
		// One goroutine's work is done on the caller's: a goroutine of its
		// own first waits for a P, behind whatever else is runnable (a
		// 1-row append on 2 CPUs with 4 writers and their checkpoints:
		// 0.5 ms or more per hop).
		err = work(ctx)
	} else {
		eg, gctx := errgroup.WithContext(ctx)
		for range min(w.workers, len(groups)) {
			eg.Go(func() error { return work(gctx) })
		}
		err = eg.Wait()
	}
	for _, g := range groups {
		if g.rows != nil {
			w.freeRowIdx = append(w.freeRowIdx, g.rows[:0])
		}
	}
	if vecs != nil {
		for _, p := range targets {
			if p.fw != nil {
				p.fw.vecs = nil // the chunk's, not to be kept
			}
		}
	}
	if pre != nil {
		for _, p := range targets {
			if p.fw != nil {
				p.fw.pre = nil
			}
		}
		for c := range pre {
			clear(pre[c]) // the strings of rows
			pre[c] = pre[c][:0]
		}
	}
	if err != nil {
		return err
	}
	return w.bound(ctx)
}

// appendTo writes the n rows of rows (rowIdx; nil: all; rows is nil when
// pre holds them, shredded, or vecs, typed) to partition p, rolling its file
// at the target size, the file's lanes one after another when serialLanes;
// the last file stays open. New files are created under
// fileCtx (the Write call's: a store writer is bound to the ctx it was made
// with, and this file may outlive ctx, the errgroup's).
func (w *BatchWriter) appendTo(ctx, fileCtx context.Context, p *openPart, rows [][]any, rowIdx []int, n int, pre [][]parquet.Value, vecs []*schema.Vector, serialLanes bool) error {
	lay := w.lay
	for start := 0; start < n; {
		if err := ctx.Err(); err != nil {
			return err
		}
		if p.fw == nil {
			path := w.name(int(w.seq.Add(1)-1), lay.codecExt)
			if p.dir != "" {
				path = p.dir + "/" + path
			}
			dictMax, pageBytes := w.columnShares()
			fw, err := lay.newFileWriterSized(fileCtx, w.store, path, dictMax, pageBytes)
			if err != nil {
				return err
			}
			fw.partValues = p.values
			p.fw = fw
		}
		p.fw.pre, p.fw.vecs, p.fw.serialLanes = pre, vecs, serialLanes
		took, err := p.fw.writeRange(rows, rowIdx, start, n, lay.dataIdx, lay.opts.TargetFileSizeBytes)
		if err != nil {
			return err
		}
		start += took
		if p.fw.EstimatedSize() >= lay.opts.TargetFileSizeBytes {
			if err := w.closeFile(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// dictionaryBudget and pageBudget bound what the columns of a BatchWriter's
// open files hold together besides their encoded pages. parquet-go keeps a
// column's dictionary, and the hash table that builds it (about twice its
// size), until the file is closed, and each column buffers one data page of
// values; a batch spread over many partitions holds them for every column
// of every open file (229 airports of the 3M flights, 4 data columns: 86
// MiB of int64 dictionaries and tables at 1 MiB each, 58 MiB of 64 KiB
// pages). A new file's columns get an equal share of each budget among the
// partitions seen so far: its dictionaries fall back to PLAIN past their
// share (between minDictionaryBytes and parquet-mr's 1 MiB) and its pages
// are cut at theirs (between minPageBytes and pageBufferSize), as
// parquet-mr's MemoryManager shares its pool among open writers
// (parquet.memory.pool.ratio). An unpartitioned batch keeps the full sizes.
// The budgets were 24 and 16 MiB: the 229 airports then held ~130 MiB live
// and peaked at 287 MiB RSS; at 12 and 8 MiB, 237 MiB, and the data files
// were no larger (26.2 MB against 26.6).
const (
	dictionaryBudget   = 12 << 20
	minDictionaryBytes = 16 << 10
	pageBudget         = 8 << 20
	minPageBytes       = 8 << 10
)

// columnShares is a new file's share of the dictionary and page budgets
// per column.
func (w *BatchWriter) columnShares() (dictMaxBytes, pageBytes int64) {
	return w.sharesAmong(len(w.parts))
}

// sharesAmong is columnShares with parts partitions seen.
func (w *BatchWriter) sharesAmong(parts int) (dictMaxBytes, pageBytes int64) {
	n := int64(max(parts, 1) * max(w.lay.plan.numCols, 1))
	dictMaxBytes = min(max(w.dictBudget/n, minDictionaryBytes), dictionaryPageBytes)
	pageBytes = min(max(w.pageBudget/n, minPageBytes), pageBufferSize)
	return dictMaxBytes, pageBytes
}

func (w *BatchWriter) closeFile(ctx context.Context, p *openPart) error {
	fw := p.fw
	p.fw = nil
	wf, err := fw.Close(ctx)
	if err != nil {
		return err
	}
	p.files = append(p.files, wf)
	return nil
}

// bound keeps the open files within maxOpen (closing the oldest ones) and,
// when several are open, their buffered row groups within bufBudget
// (flushing the largest row groups, Workers at once).
func (w *BatchWriter) bound(ctx context.Context) error {
	var open []*openPart
	for _, p := range w.order {
		if p.fw != nil {
			open = append(open, p)
		}
	}
	if len(open) > w.maxOpen {
		if err := w.closeFiles(ctx, open[:len(open)-w.maxOpen/2]); err != nil {
			return err
		}
		open = open[len(open)-w.maxOpen/2:]
	}
	if len(open) <= 1 {
		return nil
	}
	// Each file's buffered bytes as its writer left them (parquet-go sums
	// its columns' pages for each Size: finding the largest anew for each
	// flush was 2% of a partitioned ingest's CPU, and asking every open
	// file here, 229 for each chunk of the 3M flights by origin, was on the
	// caller's goroutine between chunks), largest first (the first in
	// order among equals).
	held := make([]int64, len(open))
	var total int64
	for i, p := range open {
		held[i] = p.held
		total += held[i]
	}
	if total <= w.bufBudget {
		return nil
	}
	byHeld := make([]int, len(open))
	for i := range byHeld {
		byHeld[i] = i
	}
	slices.SortStableFunc(byHeld, func(a, b int) int { return cmp.Compare(held[b], held[a]) })
	var flush []*openPart
	for _, i := range byHeld {
		if total <= w.bufBudget || held[i] == 0 {
			break
		}
		flush = append(flush, open[i])
		total -= held[i]
	}
	// The files' flushes are independent: Workers at once (one after
	// another on the caller's goroutine, they were a serial stretch of 3-5
	// ms every few chunks, the other CPUs idle).
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(w.workers)
	for _, p := range flush {
		eg.Go(func() error {
			if err := gctx.Err(); err != nil {
				return err
			}
			if err := p.fw.flushRowGroup(); err != nil {
				return err
			}
			p.held = p.fw.bufferedBytes()
			return nil
		})
	}
	return eg.Wait()
}

// closeFiles closes the open files of parts, Workers at once (closing is
// mostly waiting for the store: fsync, upload).
func (w *BatchWriter) closeFiles(ctx context.Context, parts []*openPart) error {
	eg, gctx := errgroup.WithContext(ctx)
	eg.SetLimit(w.workers)
	for _, p := range parts {
		if p.fw != nil {
			eg.Go(func() error { return w.closeFile(gctx, p) })
		}
	}
	return eg.Wait()
}

// Close finishes every open file, makes them all durable
// (storage.SyncObjects: their files were written by
// storage.NewDeferredWriter, whose Close does not fsync) and returns the
// batch's files, partition by partition in order of first appearance, each
// partition's in writing order. On error the files are deleted (best
// effort).
func (w *BatchWriter) Close(ctx context.Context) ([]WrittenFile, error) {
	if w.closed || w.failed {
		return nil, errors.New("batch writer is closed or failed")
	}
	if err := w.closeAndSync(ctx); err != nil {
		w.Abort(ctx)
		return nil, err
	}
	w.closed = true
	return w.files(), nil
}

// closeAndSync closes the open files, Workers at once, and then makes
// every file of the batch durable in one syncObjects call. The sync
// waited for no close before (syncObjects calls, several at once, took
// the files as they were closed), but its goroutines, blocked in fsync,
// held the CPUs the closes needed until the runtime took them back: the
// 229 files of the 3M flights by origin then took 251 ms (median of 8
// runs on the loaded 2-core machine) from the first close to the last
// fsync, against 203 ms closing them all (~80 ms of CPU) and then
// syncing them. Overlapping them was measured again, on the same
// machine at load ~2-8: each partition's fsyncs started by its closer
// right after its close, 16 closers so that some close while others wait,
// made the whole ingest no faster (1.04x the wall, 20 alternated pairs;
// a trace had 2 fsyncs in flight, each holding a P, 12-14 goroutines
// waiting for one); the kernel's asynchronous fsyncs (io_submit of
// IOCB_CMD_FSYNC) submitted at each close made closeAndSync 104 ms
// against 77 (medians of 8 alternated runs; the closes took ~70 ms
// instead of ~26 while the kernel's workers ran the writeback on the
// CPUs they needed); and all of them submitted at once after the closes,
// instead of 16 at a time, synced no faster (~75 ms against ~55): the
// file system, not the runtime, bounds the sync. Errors: a file's
// Close, or the sync's wrapped "make data files durable".
func (w *BatchWriter) closeAndSync(ctx context.Context) error {
	if err := w.closeFiles(ctx, w.order); err != nil {
		return err
	}
	files := w.files()
	paths := make([]string, len(files))
	for i, f := range files {
		paths[i] = f.Path
	}
	if err := w.syncObjects(ctx, w.store, paths); err != nil {
		return fmt.Errorf("make data files durable: %w", err)
	}
	return nil
}

func (w *BatchWriter) files() []WrittenFile {
	var out []WrittenFile
	for _, p := range w.order {
		out = append(out, p.files...)
	}
	return out
}

// Abort discards the open files and deletes the closed ones (best effort:
// files no commit names are invisible and VACUUM removes them).
func (w *BatchWriter) Abort(ctx context.Context) {
	for _, p := range w.order {
		if p.fw != nil {
			_ = p.fw.Abort()
			p.fw = nil
		}
	}
	for _, f := range w.files() {
		_ = w.store.Delete(context.WithoutCancel(ctx), f.Path)
	}
	for _, p := range w.order {
		p.files = nil
	}
	w.closed = true
}
