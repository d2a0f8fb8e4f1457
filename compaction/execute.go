package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// ExecOptions configure Execute. The zero value takes every default.
type ExecOptions struct {
	// Workers is how many bins are rewritten at once. Default (0):
	// runtime.GOMAXPROCS(0).
	Workers int
	// Compression codec of the rewritten files: snappy (default), zstd,
	// gzip, lz4, none.
	Compression string
	// RowGroupSizeBytes bounds a row group of the rewritten files, and so the
	// memory one worker buffers. Default (0): 16 MiB. Memory model: a worker
	// holds one decoded input row group (about five times its uncompressed
	// size as Go values, since a row group is decoded whole) plus one
	// output row group; small row groups keep a later re-compaction of these
	// files bounded too.
	RowGroupSizeBytes int64
	// CommitAttempts is how many times the OPTIMIZE commit is retried after a
	// conflict that abandons bins (a concurrent remove of an input).
	// Default (0): 5.
	CommitAttempts int
	// Auto is written as operationParameters.auto (true when the maintenance
	// service, not a user, started the run).
	Auto bool
	// Progress, when set, is called after every rewritten input file and
	// at each phase change. Calls are serialised; it must return quickly.
	Progress func(ProgressEvent)
	// Now is the clock for deletionTimestamp. Default time.Now.
	Now func() time.Time
}

// Validate lists every invalid field.
func (o ExecOptions) Validate() error {
	var errs []error
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: %d workers is negative", ErrInvalidOptions, o.Workers))
	}
	if o.RowGroupSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: row group size %d bytes is negative", ErrInvalidOptions, o.RowGroupSizeBytes))
	}
	if o.CommitAttempts < 0 {
		errs = append(errs, fmt.Errorf("%w: %d commit attempts is negative", ErrInvalidOptions, o.CommitAttempts))
	}
	if err := parquetio.CheckCompression(o.Compression); err != nil {
		errs = append(errs, fmt.Errorf("%w: compression: %w", ErrInvalidOptions, err))
	}
	return errors.Join(errs...)
}

// DefaultExecOptions returns the defaults documented on each field.
func DefaultExecOptions() ExecOptions {
	return ExecOptions{
		Workers:           runtime.GOMAXPROCS(0),
		Compression:       "snappy",
		RowGroupSizeBytes: 16 << 20,
		CommitAttempts:    5,
		Now:               time.Now,
	}
}

func (o ExecOptions) withDefaults() ExecOptions {
	d := DefaultExecOptions()
	if o.Workers == 0 {
		o.Workers = d.Workers
	}
	if o.Compression == "" {
		o.Compression = d.Compression
	}
	if o.RowGroupSizeBytes == 0 {
		o.RowGroupSizeBytes = d.RowGroupSizeBytes
	}
	if o.CommitAttempts == 0 {
		o.CommitAttempts = d.CommitAttempts
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	return o
}

// Phases reported in ProgressEvent.Phase.
const (
	PhaseRewrite = "rewrite"
	PhaseCommit  = "commit"
	PhaseDone    = "done"
)

// ProgressEvent reports how far an Execute has come.
type ProgressEvent struct {
	Phase          string `json:"phase"`          // PhaseRewrite, PhaseCommit or PhaseDone
	BinsDone       int    `json:"binsDone"`       // bins rewritten so far
	BinsTotal      int    `json:"binsTotal"`      // bins in the plan
	FilesDone      int    `json:"filesDone"`      // input files rewritten so far
	FilesTotal     int    `json:"filesTotal"`     // input files in the plan
	BytesRewritten int64  `json:"bytesRewritten"` // input bytes read and rewritten so far
	BytesTotal     int64  `json:"bytesTotal"`     // input bytes in the plan
}

// Result reports an OPTIMIZE run.
type Result struct {
	// Version committed; -1 when nothing was committed (empty plan, or every
	// bin abandoned).
	Version     int64 `json:"version"`
	ReadVersion int64 `json:"readVersion"` // the snapshot version the plan was made from
	// NumBins rewritten and committed; AbandonedBins were dropped because an
	// input was removed concurrently (their output files were deleted).
	NumBins       int `json:"numBins"`
	AbandonedBins int `json:"abandonedBins"`
	// The commit's operationMetrics, as numbers (Delta's OptimizeMetrics
	// names; sizes in bytes).
	NumRemovedFiles int   `json:"numRemovedFiles"` // input files removed (rewritten)
	NumAddedFiles   int   `json:"numAddedFiles"`   // output files added
	NumRemovedBytes int64 `json:"numRemovedBytes"` // total size of the removed files
	NumAddedBytes   int64 `json:"numAddedBytes"`   // total size of the added files
	NumRows         int64 `json:"numRows"`         // rows rewritten (the same in and out)
	MinFileSize     int64 `json:"minFileSize"`     // size of the smallest added file, 0 when none
	MaxFileSize     int64 `json:"maxFileSize"`     // size of the largest added file, 0 when none
	// CommitAttempts is how many OPTIMIZE commits were tried.
	CommitAttempts int `json:"commitAttempts"`
	// Metrics is commitInfo.operationMetrics as committed.
	Metrics map[string]string `json:"operationMetrics,omitempty"`
	// Duration of the whole OPTIMIZE; DurationMs is the same in
	// milliseconds, the unit of every duration in lakesink's JSON output (as
	// Spark's StreamingQueryProgress durationMs).
	Duration   time.Duration `json:"-"`
	DurationMs int64         `json:"durationMs"`
}

// Optimize plans and executes one OPTIMIZE run on the latest snapshot.
func Optimize(ctx context.Context, t *table.Table, po PlanOptions, eo ExecOptions) (*Plan, *Result, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, nil, fmt.Errorf("compact: %w", err) // names the table
	}
	plan, err := NewPlan(snap, po)
	if err != nil {
		return nil, nil, fmt.Errorf("compact %s: %w", t.URL(), err)
	}
	res, err := Execute(ctx, t, plan, eo)
	return plan, res, err
}

// binOutput is what rewriting one bin produced.
type binOutput struct {
	bin   *Bin
	files []parquetio.WrittenFile
	rows  int64
}

// Execute rewrites the plan's bins and commits them in ONE commit (PROTOCOL.md,
// "Add File and Remove File": compaction removes and adds with
// dataChange=false, so streaming readers skip it). Each bin is read one row
// group at a time and written through a streaming Parquet writer that rolls at
// the target size, so memory is bounded by a row group per worker, not by
// file or table size. Rows are kept exactly (values, types, count; partition
// values come from the log, as partition columns are not stored in files).
//
// The commit depends only on the inputs (Transaction.ReadFiles): concurrent
// appends never conflict. When a concurrent commit removed an input, the bins
// holding removed inputs are abandoned (their new files deleted) and the rest
// is committed on the latest snapshot; removed rows are never resurrected.
// On any other error nothing is committed; files already written are deleted
// (best effort) unless the commit outcome is unknown.
func Execute(ctx context.Context, t *table.Table, plan *Plan, opts ExecOptions) (*Result, error) {
	start := time.Now()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if plan == nil {
		return nil, fmt.Errorf("%w: nil plan", ErrInvalidOptions)
	}
	res := &Result{Version: -1, ReadVersion: plan.ReadVersion}
	if len(plan.Bins) == 0 {
		if opts.Progress != nil {
			opts.Progress(ProgressEvent{Phase: PhaseDone})
		}
		res.Duration = time.Since(start)
		res.DurationMs = res.Duration.Milliseconds()
		return res, nil
	}
	snap := plan.snap
	if snap == nil {
		s, err := t.SnapshotAt(ctx, plan.ReadVersion)
		if err != nil {
			return nil, fmt.Errorf("compact: load version %d: %w: %w", plan.ReadVersion, ErrPlanStale, err) // names the table
		}
		snap = s
	}
	md := snap.Metadata()
	// Skip the bins whose inputs are already gone from the latest snapshot
	// (a plan made earlier, or fed back from --dry-run output).
	bins := plan.Bins
	if latest, err := t.Snapshot(ctx); err == nil && latest.Version() != snap.Version() {
		bins = nil
		for i := range plan.Bins {
			if inputsLive(latest, &plan.Bins[i]) {
				bins = append(bins, plan.Bins[i])
			} else {
				res.AbandonedBins++
			}
		}
		if len(bins) == 0 {
			if opts.Progress != nil {
				opts.Progress(ProgressEvent{Phase: PhaseDone})
			}
			res.Duration = time.Since(start)
			res.DurationMs = res.Duration.Milliseconds()
			return res, nil
		}
	}
	if plan.TableID != "" && md.ID != plan.TableID {
		return nil, fmt.Errorf("compact %s: %w: plan for table %s, table is %s", t.URL(), ErrPlanStale, plan.TableID, md.ID)
	}
	sch, err := md.Schema()
	if err != nil {
		return nil, fmt.Errorf("compact %s: %w", t.URL(), err)
	}
	dataSchema := dataColumns(sch, md.PartitionColumns)
	target := plan.TargetFileSizeBytes
	if target <= 0 {
		target = txlog.DefaultTargetFileSizeBytes
	}
	wopts := parquetio.WriteOptions{
		TargetFileSizeBytes: target,
		RowGroupSizeBytes:   opts.RowGroupSizeBytes,
		Compression:         opts.Compression,
		NumIndexedCols:      snap.Properties().DataSkippingNumIndexedCols,
	}
	if wopts.NumIndexedCols == 0 {
		wopts.NoStats = true
	}

	// Rewrite.
	var numFiles int
	var numBytes int64
	for _, b := range bins {
		numFiles += len(b.Files)
		numBytes += b.Bytes
	}
	prog := &progress{fn: opts.Progress, ev: ProgressEvent{Phase: PhaseRewrite, BinsTotal: len(bins), FilesTotal: numFiles, BytesTotal: numBytes}}
	prog.send(func(*ProgressEvent) {})
	outs := make([]*binOutput, len(bins))
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Workers)
	for i := range bins {
		g.Go(func() error {
			out, err := rewriteBin(gctx, t, snap, &bins[i], dataSchema, wopts, prog)
			if err != nil {
				return err
			}
			outs[i] = out
			prog.send(func(e *ProgressEvent) { e.BinsDone++ })
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		deleteOutputs(ctx, t, outs)
		return nil, fmt.Errorf("compact %s: %w", t.URL(), err)
	}

	// Commit, dropping bins whose inputs were removed concurrently.
	prog.send(func(e *ProgressEvent) { e.Phase = PhaseCommit })
	live := outs
	for attempt := 1; ; attempt++ {
		res.CommitAttempts = attempt
		v, metrics, err := commitBins(ctx, t, snap, plan, live, opts)
		if err == nil {
			fillResult(res, live, metrics)
			res.Version = v
			break
		}
		var ce *txlog.ConflictError
		retryable := errors.As(err, &ce) && (ce.Kind == txlog.ConflictConcurrentDeleteRead ||
			ce.Kind == txlog.ConflictConcurrentDeleteDelete || ce.Kind == txlog.ConflictMetadataChanged)
		if !retryable || attempt >= opts.CommitAttempts {
			if !errors.Is(err, txlog.ErrCommitStateUnknown) {
				deleteOutputs(ctx, t, live)
			}
			return nil, fmt.Errorf("compact %s: commit after reading version %d: %w", t.URL(), snap.Version(), err)
		}
		latest, lerr := t.Snapshot(ctx)
		if lerr != nil {
			deleteOutputs(ctx, t, live)
			return nil, fmt.Errorf("compact: reload after conflict (%v): %w", err, lerr) // lerr names the table
		}
		if cerr := compatibleMetadata(md, latest.Metadata()); cerr != nil {
			deleteOutputs(ctx, t, live)
			return nil, fmt.Errorf("compact %s: %w (after %v)", t.URL(), cerr, err)
		}
		var keep, drop []*binOutput
		for _, o := range live {
			if inputsLive(latest, o.bin) {
				keep = append(keep, o)
			} else {
				drop = append(drop, o)
			}
		}
		deleteOutputs(ctx, t, drop)
		res.AbandonedBins += len(drop)
		live, snap = keep, latest
		if len(live) == 0 {
			break
		}
	}
	prog.send(func(e *ProgressEvent) { e.Phase = PhaseDone })
	res.Duration = time.Since(start)
	res.DurationMs = res.Duration.Milliseconds()
	return res, nil
}

// compatibleMetadata reports whether files written for old's schema may be
// committed into a table whose metadata is now cur: same partition columns,
// and every old column still there with the same type (a merged schema only
// adds nullable columns, which read as null from our files).
func compatibleMetadata(old, cur txlog.Metadata) error {
	if !slices.Equal(old.PartitionColumns, cur.PartitionColumns) {
		return fmt.Errorf("%w: partition columns changed from %v to %v", ErrPlanStale, old.PartitionColumns, cur.PartitionColumns)
	}
	if old.SchemaString == cur.SchemaString {
		return nil
	}
	os, err := old.Schema()
	if err != nil {
		return err
	}
	cs, err := cur.Schema()
	if err != nil {
		return err
	}
	for _, f := range os.Fields {
		g, ok := cs.Field(f.Name)
		if !ok || !schema.TypesEqual(f.Type, g.Type) {
			return fmt.Errorf("%w: column %s changed", ErrPlanStale, f.Name)
		}
	}
	return nil
}

func inputsLive(snap *txlog.Snapshot, b *Bin) bool {
	for _, a := range b.Files {
		k, err := snap.FileKey(a.Path)
		if err != nil {
			return false
		}
		if cur, ok := snap.File(k); !ok || cur.Path != a.Path {
			return false
		}
	}
	return true
}

// commitBins commits the removes and adds of outs on snap.
func commitBins(ctx context.Context, t *table.Table, snap *txlog.Snapshot, plan *Plan, outs []*binOutput, opts ExecOptions) (int64, map[string]any, error) {
	tx := t.Log().Begin(snap)
	now := opts.Now().UnixMilli()
	ext := true
	var addSizes []int64
	var removedBytes int64
	var removed int
	for _, o := range outs {
		paths := make([]string, 0, len(o.bin.Files))
		for _, a := range o.bin.Files {
			paths = append(paths, a.Path)
			size := a.Size
			ts := now
			tx.Add(txlog.Action{Remove: &txlog.Remove{
				Path: a.Path, DeletionTimestamp: &ts, DataChange: false, ExtendedFileMetadata: &ext,
				PartitionValues: a.PartitionValues, Size: &size, Stats: a.Stats, Tags: a.Tags,
				DeletionVector: a.DeletionVector, BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
			}})
			removed++
			removedBytes += a.Size
		}
		tx.ReadFiles(paths...)
		for _, f := range o.files {
			pv := o.bin.PartitionValues
			if pv == nil {
				pv = map[string]*string{}
			}
			tx.Add(txlog.Action{Add: &txlog.Add{
				Path:             txlog.EncodePath(f.Path),
				PartitionValues:  pv,
				Size:             f.Size,
				ModificationTime: f.ModificationTime.UnixMilli(),
				DataChange:       false,
				Stats:            f.Stats,
			}})
			addSizes = append(addSizes, f.Size)
		}
	}
	slices.Sort(addSizes)
	var addedBytes int64
	for _, s := range addSizes {
		addedBytes += s
	}
	pct := func(p float64) int64 {
		if len(addSizes) == 0 {
			return 0
		}
		return addSizes[int(p*float64(len(addSizes)-1))]
	}
	predicate := "[]"
	if plan.Where != "" {
		b, _ := json.Marshal([]string{plan.Where})
		predicate = string(b)
	}
	// Parameter and metric names follow Delta's DeltaOperations.Optimize and
	// OptimizeMetrics (delta-io/delta), plus delta-rs's targetSize.
	params := txlog.OperationParameters{
		"predicate":  predicate,
		"zOrderBy":   "[]",
		"auto":       strconv.FormatBool(opts.Auto),
		"targetSize": strconv.FormatInt(plan.TargetFileSizeBytes, 10),
	}
	metrics := map[string]any{
		"numRemovedFiles": strconv.Itoa(removed),
		"numAddedFiles":   strconv.Itoa(len(addSizes)),
		"numRemovedBytes": strconv.FormatInt(removedBytes, 10),
		"numAddedBytes":   strconv.FormatInt(addedBytes, 10),
		"minFileSize":     strconv.FormatInt(pct(0), 10),
		"p25FileSize":     strconv.FormatInt(pct(0.25), 10),
		"p50FileSize":     strconv.FormatInt(pct(0.5), 10),
		"p75FileSize":     strconv.FormatInt(pct(0.75), 10),
		"maxFileSize":     strconv.FormatInt(pct(1), 10),
		"numBatches":      strconv.Itoa(len(outs)),
	}
	v, err := tx.Commit(ctx, "OPTIMIZE", params, metrics)
	return v, metrics, err
}

func fillResult(res *Result, outs []*binOutput, metrics map[string]any) {
	res.NumBins = len(outs)
	res.MinFileSize = -1
	for _, o := range outs {
		res.NumRemovedFiles += len(o.bin.Files)
		res.NumRemovedBytes += o.bin.Bytes
		res.NumRows += o.rows
		for _, f := range o.files {
			res.NumAddedFiles++
			res.NumAddedBytes += f.Size
			if res.MinFileSize < 0 || f.Size < res.MinFileSize {
				res.MinFileSize = f.Size
			}
			res.MaxFileSize = max(res.MaxFileSize, f.Size)
		}
	}
	if res.MinFileSize < 0 {
		res.MinFileSize = 0
	}
	res.Metrics = make(map[string]string, len(metrics))
	for k, v := range metrics {
		res.Metrics[k] = fmt.Sprint(v)
	}
}

// rewriteBin streams the rows of a bin's inputs, in bounded chunks (see
// copyRows), into new files rolled at the target size.
func rewriteBin(ctx context.Context, t *table.Table, snap *txlog.Snapshot, b *Bin, dataSchema *schema.StructType, wopts parquetio.WriteOptions, prog *progress) (out *binOutput, err error) {
	store := t.Store()
	out = &binOutput{bin: b}
	ext, _ := parquetio.CompressionExtension(wopts.Compression)
	var fw *parquetio.FileWriter
	seq := 0
	defer func() {
		if err != nil {
			if fw != nil {
				_ = fw.Abort()
			}
			deleteOutputs(ctx, t, []*binOutput{out})
		}
	}()
	closeFile := func() error {
		wf, err := fw.Close(ctx)
		fw = nil
		if err != nil {
			return err
		}
		out.files = append(out.files, wf)
		return nil
	}
	var expected int64
	for _, a := range b.Files {
		key, err := snap.FileKey(a.Path)
		if err != nil {
			return nil, err
		}
		dv, err := loadDV(ctx, store, snap, a.DeletionVector)
		if err != nil {
			return nil, fmt.Errorf("deletion vector of %s: %w", a.Path, err)
		}
		if n, ok := numRecords(a.Stats); ok && expected >= 0 {
			expected += n
			if dv != nil {
				expected -= dv.Cardinality()
			}
		} else {
			expected = -1
		}
		f, err := parquetio.OpenFile(ctx, store, key, a.Size)
		if err != nil {
			return nil, err
		}
		var rowIndex int64
		if err := copyRows(ctx, f, dataSchema, func(rows [][]any) error {
			if dv != nil { // drop the rows the DV marks deleted (row index in the file)
				live := rows[:0:0]
				for _, r := range rows {
					if !dv.Contains(rowIndex) {
						live = append(live, r)
					}
					rowIndex++
				}
				if rows = live; len(rows) == 0 {
					return nil
				}
			}
			if fw == nil {
				p := parquetio.DeltaFileName(seq, ext)
				if b.Partition != "" {
					p = b.Partition + "/" + p
				}
				seq++
				w, err := parquetio.NewFileWriter(ctx, store, p, dataSchema, wopts)
				if err != nil {
					return err
				}
				fw = w
				fw.SetPartitionValues(b.PartitionValues)
			}
			if err := fw.Write(ctx, rows); err != nil {
				return fmt.Errorf("rewrite %s: %w", key, err)
			}
			out.rows += int64(len(rows))
			if fw.EstimatedSize() >= wopts.TargetFileSizeBytes {
				return closeFile()
			}
			return nil
		}); err != nil {
			f.Close()
			return nil, err
		}
		f.Close()
		prog.send(func(e *ProgressEvent) { e.FilesDone++; e.BytesRewritten += a.Size })
	}
	if fw != nil {
		if err := closeFile(); err != nil {
			return nil, err
		}
	}
	if expected >= 0 && expected != out.rows {
		return nil, fmt.Errorf("%w: bin %q: inputs declare %d records, read %d", ErrRowCountMismatch, b.Partition, expected, out.rows)
	}
	var written int64
	for _, f := range out.files {
		written += f.NumRecords
	}
	if written != out.rows {
		return nil, fmt.Errorf("%w: bin %q: read %d records, wrote %d", ErrRowCountMismatch, b.Partition, out.rows, written)
	}
	return out, nil
}

// Reading bounds: rows are decoded in chunks of about readChunkBytes of
// uncompressed data (decoded values take several times that), at most
// maxReadChunkRows records, so a worker's memory is bounded by the input's
// compressed row group plus one chunk, whatever the row group size (issue 7).
const (
	readChunkBytes   = 4 << 20
	maxReadChunkRows = 64 << 10
)

// copyRows passes every record of f, projected to schema, to write in
// bounded chunks.
func copyRows(ctx context.Context, f *parquetio.File, sch *schema.StructType, write func([][]any) error) error {
	for i := range f.NumRowGroups() {
		maxRows := min(f.ChunkRows(i, readChunkBytes), maxReadChunkRows)
		for rows, err := range f.RowGroupChunks(ctx, i, sch, parquetio.ReadOptions{}, maxRows) {
			if err != nil {
				return err
			}
			if err := write(rows); err != nil {
				return err
			}
		}
	}
	return nil
}

// deleteOutputs removes files written for bins that will not be committed
// (best effort: an unreferenced file is invisible and VACUUM collects it).
func deleteOutputs(ctx context.Context, t *table.Table, outs []*binOutput) {
	dctx := context.WithoutCancel(ctx)
	for _, o := range outs {
		if o == nil {
			continue
		}
		for _, f := range o.files {
			_ = t.Store().Delete(dctx, f.Path)
		}
	}
}

// progress serialises ProgressEvent updates.
type progress struct {
	fn func(ProgressEvent)
	mu sync.Mutex
	ev ProgressEvent
}

func (p *progress) send(update func(*ProgressEvent)) {
	if p == nil || p.fn == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	update(&p.ev)
	p.fn(p.ev)
}

// dataColumns is schema without the partition columns (they live in the log,
// not in the files; PROTOCOL.md, "Partition Value Serialization").
func dataColumns(s *schema.StructType, partCols []string) *schema.StructType {
	out := &schema.StructType{}
	for _, f := range s.Fields {
		isPart := false
		for _, c := range partCols {
			if strings.EqualFold(c, f.Name) {
				isPart = true
			}
		}
		if !isPart {
			out.Fields = append(out.Fields, f)
		}
	}
	return out
}

// numRecords reads stats.numRecords.
func numRecords(stats string) (int64, bool) {
	if stats == "" {
		return 0, false
	}
	var s struct {
		NumRecords *int64 `json:"numRecords"`
	}
	if err := json.Unmarshal([]byte(stats), &s); err != nil || s.NumRecords == nil {
		return 0, false
	}
	return *s.NumRecords, true
}

// loadDV reads deletion vector d (nil for no descriptor; parquetio.LoadDV:
// inline or in its file, framing, CRC and cardinality checked).
func loadDV(ctx context.Context, store storage.Store, snap *txlog.Snapshot, d *txlog.DeletionVector) (*parquetio.DeletionVector, error) {
	if d == nil {
		return nil, nil
	}
	dv, err := parquetio.LoadDV(ctx, store, dvDescriptor(d), snap.FileKey)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", txlog.ErrCorruptLog, err)
	}
	return dv, nil
}
