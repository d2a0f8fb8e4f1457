package stream

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/checkpoint"
	"github.com/lakesink/lakesink/stream/source"
)

// ForeachBatchFunc receives each batch in place of a Sink (Spark's
// foreachBatch). It must be idempotent per batchID: after a crash the same
// batch (same id, same rows) may be delivered again.
type ForeachBatchFunc func(ctx context.Context, batchID int64, batch *schema.Batch) error

// Options configure a streaming query.
type Options struct {
	// QueryName is an optional name shown in progress reports.
	QueryName string
	// CheckpointStore is rooted at the checkpoint directory. Required.
	CheckpointStore storage.Store
	// Source is the query's one source. Required.
	Source source.Source
	// Sink receives each batch. Exactly one of Sink and ForeachBatch is set.
	Sink sink.Sink
	// ForeachBatch receives each batch instead of a Sink.
	ForeachBatch ForeachBatchFunc
	// SinkKind ("delta", "filesink", ...) and SinkURL are recorded in the
	// checkpoint's metadata; a restart with other values is refused unless
	// AllowReset. Default "" (not recorded, not checked).
	SinkKind string
	SinkURL  string
	// Trigger decides when batches run. Default AvailableNow().
	Trigger Trigger
	// MaxFilesPerTrigger caps the new files of one batch; 0 = no cap.
	// Ignored by Once (as in Spark).
	MaxFilesPerTrigger int
	// MaxBytesPerTrigger is a soft cap on the bytes of the new files of one
	// batch (source.ReadLimit.MaxBytes); 0 = no cap. Ignored by Once.
	MaxBytesPerTrigger int64
	// AllowReset lets a checkpoint be reused with another source or sink:
	// its metadata is rewritten (same query id).
	AllowReset bool
	// FirstBatchID is the id of the first batch of a fresh checkpoint
	// (one without offsets). Default 0. Used by the file sink's
	// --allow-reset to continue numbering after its log's latest batch.
	FirstBatchID int64
	// MinBatchesToRetain is how many offsets/commits files are kept
	// (spark.sql.streaming.minBatchesToRetain). Default 100.
	MinBatchesToRetain int
	// IdlePollInterval is the wait of ProcessingTime(0) when there is no new
	// data. Default 100ms.
	IdlePollInterval time.Duration
	// CheckFresh, when set, is called once before the first batch with the
	// query id and whether the checkpoint is fresh (has no batch yet). It
	// lets the caller compare the checkpoint with the sink's own record
	// (a _spark_metadata log already ahead, a Delta table that already
	// ingested this source) and refuse with an error.
	CheckFresh func(ctx context.Context, queryID string, fresh bool) error
	// Progress, when set, receives a report after each batch, from the
	// goroutine that runs the query.
	Progress func(Progress)
	// Logger receives one Info line per batch. Default: discard.
	Logger *slog.Logger
	// Now is the clock (batch timestamps, progress durations), as in every
	// lakesink Options struct. Default time.Now. Waiting between interval
	// triggers uses real timers.
	Now func() time.Time
}

// DefaultOptions returns the defaults (the required fields stay empty).
func DefaultOptions() Options {
	return Options{Trigger: AvailableNow(), MinBatchesToRetain: 100, IdlePollInterval: 100 * time.Millisecond}
}

// Validate lists every problem with the options.
func (o Options) Validate() error {
	var errs []error
	bad := func(format string, args ...any) {
		errs = append(errs, fmt.Errorf("%w: "+format, append([]any{ErrInvalidOptions}, args...)...))
	}
	if o.CheckpointStore == nil {
		bad("CheckpointStore is required")
	}
	if o.Source == nil {
		bad("Source is required")
	}
	if (o.Sink == nil) == (o.ForeachBatch == nil) {
		bad("set exactly one of Sink and ForeachBatch")
	}
	if o.MaxFilesPerTrigger < 0 {
		bad("MaxFilesPerTrigger %d < 0", o.MaxFilesPerTrigger)
	}
	if o.MaxBytesPerTrigger < 0 {
		bad("MaxBytesPerTrigger %d < 0", o.MaxBytesPerTrigger)
	}
	if o.FirstBatchID < 0 {
		bad("FirstBatchID %d < 0", o.FirstBatchID)
	}
	if o.MinBatchesToRetain < 0 {
		bad("MinBatchesToRetain %d < 0", o.MinBatchesToRetain)
	}
	if o.Trigger.interval < 0 {
		bad("trigger interval %v < 0", o.Trigger.interval)
	}
	return errors.Join(errs...)
}

// Query is one streaming query over a checkpoint. Run it once; a restart is
// a new Query on the same checkpoint.
type Query struct {
	opts  Options
	runID string
	cp    *checkpoint.Checkpoint
	log   *slog.Logger

	nextBatch      int64
	committed      string // end offset of the last committed batch ("" none)
	pending        bool   // a planned but uncommitted batch to rerun
	pendingStart   string
	pendingEnd     string
	lastTriggerAt  time.Time
	batchesRun     int
	lastProgress   *Progress
	purgeThreshold int64
}

// NewQuery validates and copies opts.
func NewQuery(opts Options) (*Query, error) {
	def := DefaultOptions()
	if opts.MinBatchesToRetain == 0 {
		opts.MinBatchesToRetain = def.MinBatchesToRetain
	}
	if opts.IdlePollInterval == 0 {
		opts.IdlePollInterval = def.IdlePollInterval
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	lg := opts.Logger
	if lg == nil {
		lg = slog.New(slog.DiscardHandler)
	}
	return &Query{opts: opts, runID: uuid.NewString(), log: lg}, nil
}

// Run is NewQuery(opts) followed by Query.Run.
func Run(ctx context.Context, opts Options) error {
	q, err := NewQuery(opts)
	if err != nil {
		return err
	}
	return q.Run(ctx)
}

// ID is the query id (stable across restarts); "" before Run opened the
// checkpoint.
func (q *Query) ID() string {
	if q.cp == nil {
		return ""
	}
	return q.cp.QueryID()
}

// RunID identifies this run.
func (q *Query) RunID() string { return q.runID }

// LastProgress returns the report of the last batch of this run (nil if none).
// Not safe to call while Run is running.
func (q *Query) LastProgress() *Progress { return q.lastProgress }

// Run opens the checkpoint, recovers, and runs micro-batches as the trigger
// says (MicroBatchExecution.runActivatedStream):
//
//   - recovery (populateStartOffsets): if the latest offsets/L has no
//     commits/L, batch L is rerun first with exactly its recorded offsets,
//     so exactly the same files; otherwise the next batch is L+1;
//   - each batch N: plan the end offset, write offsets/N (put-if-absent),
//     read the batch, Sink.AddBatch(N), then write commits/N;
//   - a trigger with no new data runs no batch and writes nothing.
//
// AvailableNow and Once return nil when done. ProcessingTime returns nil when
// ctx is cancelled between batches; a batch interrupted by cancellation is
// abandoned uncommitted (it is rerun at the next start) and Run returns an
// error wrapping ctx.Err().
func (q *Query) Run(ctx context.Context) error {
	if q.cp != nil {
		return fmt.Errorf("%w: a Query runs once; create a new one to restart", ErrInvalidOptions)
	}
	o := &q.opts
	cp, err := checkpoint.Open(ctx, o.CheckpointStore, checkpoint.Metadata{
		Source: o.Source.URL(), SinkKind: o.SinkKind, Sink: o.SinkURL,
	}, o.AllowReset)
	if err != nil {
		return fmt.Errorf("open checkpoint %s: %w", o.CheckpointStore.URL(), err)
	}
	q.cp = cp
	fresh, err := q.recover(ctx)
	if err != nil {
		return err
	}
	if o.CheckFresh != nil {
		if err := o.CheckFresh(ctx, cp.QueryID(), fresh); err != nil {
			return err
		}
	}
	if err := o.Source.Start(ctx, cp.SourceDir(0)); err != nil {
		return fmt.Errorf("start source %s: %w", o.Source.URL(), err)
	}
	if o.Trigger.kind == kindAvailableNow {
		if err := o.Source.PrepareAvailableNow(ctx); err != nil {
			return fmt.Errorf("prepare source %s: %w", o.Source.URL(), err)
		}
	}
	q.log.Info("stream: query started", "id", cp.QueryID(), "runId", q.runID, "nextBatch", q.nextBatch,
		"rerun", q.pending, "trigger", o.Trigger.String(), "fresh", fresh)

	for {
		start := o.Now()
		ran, err := q.trigger(ctx)
		if err != nil {
			var be *BatchError
			if o.Trigger.kind == kindProcessingTime && ctx.Err() != nil && errors.As(err, &be) && be.Stage == "latestOffset" {
				return nil // stopped while planning: no batch was started
			}
			return err
		}
		switch o.Trigger.kind {
		case kindOnce:
			return nil
		case kindAvailableNow:
			if !ran {
				return nil
			}
			continue
		}
		// ProcessingTime: wait for the next interval boundary, or poll.
		wait := o.Trigger.interval - o.Now().Sub(start)
		if !ran && o.Trigger.interval == 0 {
			wait = o.IdlePollInterval
		}
		if wait <= 0 {
			if ctx.Err() != nil {
				return nil
			}
			continue
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil
		case <-t.C:
		}
	}
}

// recover reads the offset and commit logs (populateStartOffsets). fresh
// reports a checkpoint without any planned batch.
func (q *Query) recover(ctx context.Context) (fresh bool, err error) {
	latest, seq, ok, err := q.cp.LatestOffsets(ctx)
	if err != nil {
		return false, fmt.Errorf("recover: %w", err)
	}
	if !ok {
		q.nextBatch = q.opts.FirstBatchID
		return true, nil
	}
	end, err := q.sourceOffset(latest, seq)
	if err != nil {
		return false, err
	}
	start := ""
	prev, err := q.cp.ReadOffsets(ctx, latest-1)
	switch {
	case err == nil:
		if start, err = q.sourceOffset(latest-1, prev); err != nil {
			return false, err
		}
	case errors.Is(err, storage.ErrNotFound):
		ids, lerr := q.cp.OffsetBatchIDs(ctx)
		if lerr != nil {
			return false, lerr
		}
		if len(ids) == 0 || ids[0] != latest {
			return false, fmt.Errorf("recover: %w: offsets/%d is missing but offsets/%d exists", checkpoint.ErrMissingBatch, latest-1, latest)
		}
		// latest is the first batch of this checkpoint: it starts at the beginning.
	default:
		return false, fmt.Errorf("recover: %w", err)
	}
	committed := false
	if _, err := q.cp.ReadCommit(ctx, latest); err == nil {
		committed = true
	} else if !errors.Is(err, storage.ErrNotFound) {
		return false, fmt.Errorf("recover: %w", err)
	}
	if committed {
		q.nextBatch, q.committed = latest+1, end
		return false, nil
	}
	q.nextBatch, q.committed = latest, start
	q.pending, q.pendingStart, q.pendingEnd = true, start, end
	q.log.Info("stream: batch was planned but not committed; rerunning it", "batch", latest)
	return false, nil
}

func (q *Query) sourceOffset(batchID int64, seq checkpoint.OffsetSeq) (string, error) {
	if len(seq.Offsets) != 1 {
		return "", fmt.Errorf("%w: offsets/%d has %d source offsets, the query has 1 source", ErrSourceCount, batchID, len(seq.Offsets))
	}
	return seq.Offsets[0], nil
}

// trigger runs at most one batch; ran reports whether one ran.
func (q *Query) trigger(ctx context.Context) (ran bool, err error) {
	o := &q.opts
	triggerStart := o.Now()
	var d DurationMs
	batchID := q.nextBatch
	var start, end string
	recovered := q.pending
	if q.pending {
		start, end = q.pendingStart, q.pendingEnd
	} else {
		limit := source.ReadLimit{MaxFiles: o.MaxFilesPerTrigger, MaxBytes: o.MaxBytesPerTrigger}
		if o.Trigger.kind == kindOnce {
			limit = source.ReadLimit{}
		}
		t0 := o.Now()
		end, err = o.Source.LatestOffset(ctx, limit)
		d.LatestOffset = ms(o.Now().Sub(t0))
		if err != nil {
			return false, &BatchError{BatchID: batchID, Stage: "latestOffset", Err: err}
		}
		if end == "" || end == q.committed {
			return false, nil // no new data: no batch, nothing written
		}
		start = q.committed
		t0 = o.Now()
		seq := checkpoint.OffsetSeq{
			Metadata: &checkpoint.OffsetSeqMetadata{BatchTimestampMs: triggerStart.UnixMilli(), Conf: map[string]string{}},
			Offsets:  []string{end},
		}
		if err := q.cp.WriteOffsets(ctx, batchID, seq); err != nil {
			return false, &BatchError{BatchID: batchID, Stage: "walCommit", Err: err}
		}
		if start != "" {
			if err := o.Source.Commit(ctx, start); err != nil {
				return false, &BatchError{BatchID: batchID, Stage: "source commit", Err: err}
			}
		}
		if keep := int64(o.MinBatchesToRetain); batchID-keep > q.purgeThreshold {
			if err := q.cp.Purge(ctx, batchID-keep); err != nil {
				return false, &BatchError{BatchID: batchID, Stage: "purge", Err: err}
			}
			q.purgeThreshold = batchID - keep
		}
		d.WalCommit = ms(o.Now().Sub(t0))
	}

	t0 := o.Now()
	batch, stats, err := o.Source.GetBatch(ctx, start, end)
	d.GetBatch = ms(o.Now().Sub(t0))
	if err != nil {
		return false, &BatchError{BatchID: batchID, Stage: "getBatch", Err: err}
	}

	t0 = o.Now()
	var res sink.Result
	if o.Sink != nil {
		res, err = o.Sink.AddBatch(ctx, batchID, batch)
	} else {
		// A streamed batch (Source options asked for one) reaches the
		// hook collected.
		if err = batch.Collect(); err == nil {
			err = o.ForeachBatch(ctx, batchID, batch)
		}
		res = sink.Result{BatchID: batchID, Version: -1, NumRows: int64(len(batch.Rows))}
	}
	d.AddBatch = ms(o.Now().Sub(t0))
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (batch abandoned uncommitted; it reruns at the next start): %w", ctx.Err(), err)
		}
		return false, &BatchError{BatchID: batchID, Stage: "addBatch", Err: err}
	}

	// The sink's commit has landed: record it even if ctx was cancelled
	// meanwhile (a tiny write; otherwise the batch would only be rerun and
	// skipped).
	t0 = o.Now()
	wctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Minute)
	err = q.cp.WriteCommit(wctx, batchID, checkpoint.CommitMetadata{})
	cancel()
	d.CommitOffsets = ms(o.Now().Sub(t0))
	if err != nil {
		return false, &BatchError{BatchID: batchID, Stage: "commit", Err: err}
	}
	q.committed, q.nextBatch, q.pending = end, batchID+1, false
	q.batchesRun++
	now := o.Now()
	d.TriggerExecution = ms(now.Sub(triggerStart))

	rows := int64(len(batch.Rows))
	if batch.Chunks != nil {
		rows = res.NumRows // a streamed batch: its rows went straight to the sink
	}
	p := Progress{
		ID: q.cp.QueryID(), RunID: q.runID, Name: o.QueryName, Timestamp: triggerStart.UTC(),
		BatchID: batchID, NumInputRows: rows, DurationMs: d, Recovered: recovered,
		Sink: SinkProgress{Description: q.sinkDescription(), Result: res},
	}
	if !res.Skipped {
		p.Sink.NumOutputRows = res.NumRows
	}
	if recovered {
		p.Recovery = "rerun"
	}
	if !q.lastTriggerAt.IsZero() {
		if secs := triggerStart.Sub(q.lastTriggerAt).Seconds(); secs > 0 {
			p.InputRowsPerSecond = float64(rows) / secs
		}
	}
	if secs := now.Sub(triggerStart).Seconds(); secs > 0 {
		p.ProcessedRowsPerSecond = float64(rows) / secs
	}
	q.lastTriggerAt = triggerStart
	p.Sources = []SourceProgress{{
		Description: o.Source.URL(), StartOffset: rawOffset(start), EndOffset: rawOffset(end),
		NumInputRows: rows, NumInputFiles: stats.NumFiles, NumInputBytes: stats.NumBytes, NumBadRecords: stats.NumBadRecords,
		InputRowsPerSecond: p.InputRowsPerSecond, ProcessedRowsPerSecond: p.ProcessedRowsPerSecond,
	}}
	q.lastProgress = &p
	q.log.Info("stream: batch committed", "batch", batchID, "rows", rows, "files", stats.NumFiles,
		"recovery", p.Recovery, "skipped", res.Skipped, "version", res.Version, "ms", d.TriggerExecution)
	if o.Progress != nil {
		o.Progress(p)
	}
	return true, nil
}

func (q *Query) sinkDescription() string {
	if q.opts.Sink == nil {
		return "ForeachBatchSink"
	}
	if q.opts.SinkKind != "" || q.opts.SinkURL != "" {
		return q.opts.SinkKind + "[" + q.opts.SinkURL + "]"
	}
	return fmt.Sprintf("%T", q.opts.Sink)
}

func ms(d time.Duration) int64 { return d.Milliseconds() }
