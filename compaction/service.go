package compaction

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/metrics"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// ServiceOptions configure a Service. Zero fields take their defaults.
type ServiceOptions struct {
	// Interval between two maintenance passes over a table. Default 5m.
	Interval time.Duration
	// SmallFileThreshold: OPTIMIZE runs on the partitions holding more than
	// this many small files. Default 50.
	SmallFileThreshold int
	// SmallFileSizeBytes: a file smaller than this is small. Default (0): the
	// OPTIMIZE target size (delta.targetFileSize, else 128 MiB).
	SmallFileSizeBytes int64
	// VacuumInterval between two VACUUMs (and expired-log cleanups) of a
	// table. Default 24h. Negative: never.
	VacuumInterval time.Duration
	// Retention of VACUUM. Default (0): the table's
	// delta.deletedFileRetentionDuration. A shorter one fails the step
	// (the service never forces).
	Retention time.Duration
	// DisableCheckpoints turns off the checkpoints the service writes when
	// delta.checkpointInterval versions have passed since the last one.
	DisableCheckpoints bool
	// Plan limits each OPTIMIZE run (MaxBins, MaxBytes, TargetFileSizeBytes).
	Plan PlanOptions
	// Exec configures each OPTIMIZE run (Workers, Compression, ...). Auto
	// is always set.
	Exec ExecOptions
	// BackoffMin and BackoffMax bound the wait after a failed pass; it
	// doubles per consecutive failure. Defaults 1s and Interval.
	BackoffMin, BackoffMax time.Duration
	// Logger receives one record per step. Default: discard.
	Logger *slog.Logger
	// Metrics, when set, receives every pass (files compacted, bytes
	// rewritten, files vacuumed, checkpoints written, the failed step;
	// metrics.NewMaintain on the caller's registry).
	Metrics *metrics.Maintain
	// OnPass, when set, is called after every pass over a table with its
	// report and error, from the goroutine that ran it.
	OnPass func(TableReport, error)
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// DefaultServiceOptions returns the documented defaults.
func DefaultServiceOptions() ServiceOptions {
	return ServiceOptions{
		Interval:           5 * time.Minute,
		SmallFileThreshold: 50,
		VacuumInterval:     24 * time.Hour,
		BackoffMin:         time.Second,
		BackoffMax:         5 * time.Minute,
		Logger:             slog.New(slog.DiscardHandler),
		Now:                time.Now,
	}
}

// Validate lists every invalid field.
func (o ServiceOptions) Validate() error {
	var errs []error
	if o.Interval < 0 {
		errs = append(errs, fmt.Errorf("%w: pass interval %s is negative", ErrInvalidOptions, o.Interval))
	}
	if o.SmallFileThreshold < 0 {
		errs = append(errs, fmt.Errorf("%w: small-file threshold %d is negative", ErrInvalidOptions, o.SmallFileThreshold))
	}
	if o.SmallFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: small-file size %d bytes is negative", ErrInvalidOptions, o.SmallFileSizeBytes))
	}
	if o.Retention < 0 {
		errs = append(errs, fmt.Errorf("%w: retention %s is negative", ErrInvalidOptions, o.Retention))
	}
	if o.BackoffMin < 0 || o.BackoffMax < 0 {
		errs = append(errs, fmt.Errorf("%w: negative backoff", ErrInvalidOptions))
	}
	if err := o.Plan.Validate(); err != nil {
		errs = append(errs, err)
	}
	if err := o.Exec.Validate(); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

func (o ServiceOptions) withDefaults() ServiceOptions {
	d := DefaultServiceOptions()
	if o.Interval == 0 {
		o.Interval = d.Interval
	}
	if o.SmallFileThreshold == 0 {
		o.SmallFileThreshold = d.SmallFileThreshold
	}
	if o.VacuumInterval == 0 {
		o.VacuumInterval = d.VacuumInterval
	}
	if o.BackoffMin == 0 {
		o.BackoffMin = min(d.BackoffMin, o.Interval)
	}
	if o.BackoffMax == 0 {
		o.BackoffMax = o.Interval
	}
	if o.Logger == nil {
		o.Logger = d.Logger
	}
	if o.Now == nil {
		o.Now = d.Now
	}
	o.Exec.Auto = true
	return o
}

// Service is the maintenance service: for each table it runs OPTIMIZE when a
// partition has more than SmallFileThreshold small files, writes a checkpoint
// when one is due, and VACUUMs and cleans up the expired log on a schedule.
// Run owns every goroutine it starts and returns only after they have ended.
type Service struct {
	tables []*table.Table
	opts   ServiceOptions
	wake   chan struct{} // one-slot: merged triggers

	mu struct {
		sync.Mutex
		lastVacuum map[string]time.Time // by table URL
	}
}

// NewService returns a service for tables (the caller keeps ownership of
// them). Options are copied.
func NewService(tables []*table.Table, opts ServiceOptions) (*Service, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if len(tables) == 0 {
		return nil, fmt.Errorf("%w: no tables", ErrInvalidOptions)
	}
	s := &Service{tables: slices.Clone(tables), opts: opts.withDefaults(), wake: make(chan struct{}, 1)}
	s.mu.lastVacuum = map[string]time.Time{}
	return s, nil
}

// Trigger asks Run for a pass over every table now. Triggers that arrive
// while one is pending merge into it.
func (s *Service) Trigger() {
	select {
	case s.wake <- struct{}{}:
	default:
	}
}

// TableReport is what one maintenance pass did to a table.
type TableReport struct {
	Table      string            `json:"table"`                // the table's URL
	Optimize   *Result           `json:"optimize,omitempty"`   // the OPTIMIZE step, nil when not run
	Checkpoint *CheckpointResult `json:"checkpoint,omitempty"` // the checkpoint step, nil when not run
	Vacuum     *VacuumResult     `json:"vacuum,omitempty"`     // the VACUUM step, nil when not run
	CleanupLog *CleanupResult    `json:"cleanupLog,omitempty"` // the log cleanup step, nil when not run
	Error      string            `json:"error,omitempty"`      // the failed step's error message, "" when none
	// FailedStep names the step that failed: snapshot, optimize,
	// checkpoint, vacuum or cleanup-log ("" when none).
	FailedStep string `json:"failedStep,omitempty"`
}

// RunOnce makes one pass over every table, one table after the other, and
// returns a report per table and the joined errors.
func (s *Service) RunOnce(ctx context.Context) ([]TableReport, error) {
	var errs []error
	reports := make([]TableReport, 0, len(s.tables))
	for _, t := range s.tables {
		rep, err := s.pass(ctx, t)
		if err != nil {
			errs = append(errs, err)
		}
		reports = append(reports, rep)
		if ctx.Err() != nil {
			break
		}
	}
	return reports, errors.Join(errs...)
}

// Run maintains the tables until ctx is cancelled: one goroutine per table
// makes a pass every Interval (or on Trigger), waiting with exponential
// back-off after a failed pass. A cancelled pass abandons its step with the
// table consistent (nothing half-committed). Run returns once every
// goroutine has finished: ctx.Err() when the cancel came between passes, or
// an error matching both ErrPassInterrupted and ctx.Err(), naming the
// tables, when it cut a pass short.
func (s *Service) Run(ctx context.Context) error {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var cut []string // tables whose pass the cancel interrupted
	fanout := make([]chan struct{}, len(s.tables))
	for i, t := range s.tables {
		fanout[i] = make(chan struct{}, 1)
		wg.Add(1)
		go func() {
			defer wg.Done()
			if s.loop(ctx, t, fanout[i]) {
				mu.Lock()
				cut = append(cut, t.URL())
				mu.Unlock()
			}
		}()
	}
	// Distribute triggers to every table (one-slot channels merge them).
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-ctx.Done():
				return
			case <-s.wake:
				for _, c := range fanout {
					select {
					case c <- struct{}{}:
					default:
					}
				}
			}
		}
	}()
	wg.Wait()
	if len(cut) > 0 {
		slices.Sort(cut)
		return &PassInterruptedError{Tables: cut, Err: ctx.Err()}
	}
	return ctx.Err()
}

// PassInterruptedError is Service.Run's error when the cancel cut a pass
// short: Tables are the URLs of the tables whose step was abandoned (each
// left consistent), Err the context's error. It matches ErrPassInterrupted
// and Err.
type PassInterruptedError struct {
	Tables []string
	Err    error
}

// Error implements error.
func (e *PassInterruptedError) Error() string {
	return fmt.Sprintf("%v: %s: %v", ErrPassInterrupted, strings.Join(e.Tables, ", "), e.Err)
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *PassInterruptedError) Unwrap() []error { return []error{ErrPassInterrupted, e.Err} }

// loop runs the passes of one table until ctx is cancelled; it reports
// whether the cancel interrupted a pass (the pass returned with ctx done).
func (s *Service) loop(ctx context.Context, t *table.Table, wake <-chan struct{}) (interrupted bool) {
	backoff := time.Duration(0)
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			return false
		case <-timer.C:
		case <-wake:
			if !timer.Stop() {
				select {
				case <-timer.C:
				default:
				}
			}
		}
		if ctx.Err() != nil {
			return false // the timer and the cancel were both ready
		}
		_, err := s.pass(ctx, t)
		if ctx.Err() != nil {
			return true
		}
		wait := s.opts.Interval
		if err != nil {
			if backoff == 0 {
				backoff = s.opts.BackoffMin
			} else {
				backoff = min(backoff*2, s.opts.BackoffMax)
			}
			wait = backoff
		} else {
			backoff = 0
		}
		timer.Reset(wait)
	}
}

// pass runs the steps that are due on one table and reports the pass to
// Metrics and OnPass.
func (s *Service) pass(ctx context.Context, t *table.Table) (TableReport, error) {
	rep, step, err := s.passSteps(ctx, t)
	if m := s.opts.Metrics; m != nil {
		mp := metrics.MaintainPass{Table: rep.Table, FailedStep: step}
		if r := rep.Optimize; r != nil && r.Version >= 0 {
			mp.FilesCompacted, mp.BytesRewritten = r.NumRemovedFiles, r.NumRemovedBytes
		}
		if rep.Checkpoint != nil {
			mp.CheckpointsWritten = 1
		}
		if rep.Vacuum != nil {
			mp.FilesVacuumed = rep.Vacuum.FilesDeleted
		}
		if rep.CleanupLog != nil {
			mp.LogFilesDeleted = rep.CleanupLog.FilesDeleted
		}
		m.ObservePass(mp)
	}
	if s.opts.OnPass != nil {
		s.opts.OnPass(rep, err)
	}
	return rep, err
}

// passSteps runs the steps; step names the one that failed.
func (s *Service) passSteps(ctx context.Context, t *table.Table) (rep TableReport, step string, err error) {
	log := s.opts.Logger.With("table", t.URL())
	rep = TableReport{Table: t.URL()}
	// fail reports a failed step; the returned error names the table and
	// the step once: failNamed's err comes from a call that names both
	// (the table's Snapshot, Execute, Checkpoint, Vacuum, CleanupLog).
	report := func(failed string, err, wrapped error) (TableReport, string, error) {
		log.Warn("maintenance step failed", "step", failed, "err", err)
		rep.Error, rep.FailedStep = err.Error(), failed
		return rep, failed, wrapped
	}
	fail := func(failed string, err error) (TableReport, string, error) {
		return report(failed, err, fmt.Errorf("maintain %s: %s: %w", t.URL(), failed, err))
	}
	failNamed := func(failed string, err error) (TableReport, string, error) {
		return report(failed, err, fmt.Errorf("maintain: %w", err))
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return failNamed("snapshot", err)
	}

	// OPTIMIZE the partitions with too many small files.
	small := s.opts.SmallFileSizeBytes
	if small == 0 {
		if small = s.opts.Plan.TargetFileSizeBytes; small == 0 {
			props := snap.Properties()
			if err := props.Err(txlog.PropTargetFileSize); err != nil {
				return fail("optimize", err)
			}
			small = props.TargetFileSizeBytes
		}
	}
	counts := map[string]int{}
	for _, a := range snap.Files() {
		if a.Size < small {
			counts[parquetio.PartitionPath(snap.Metadata().PartitionColumns, a.PartitionValues)]++
		}
	}
	var hot []string
	for p, n := range counts {
		if n > s.opts.SmallFileThreshold {
			hot = append(hot, p)
		}
	}
	slices.Sort(hot)
	if len(hot) > 0 {
		po := s.opts.Plan
		po.Partitions = hot
		if po.MinFileSizeBytes == 0 {
			po.MinFileSizeBytes = small
		}
		plan, err := NewPlan(snap, po)
		if err != nil {
			return fail("optimize", err)
		}
		res, err := Execute(ctx, t, plan, s.opts.Exec)
		if err != nil {
			return failNamed("optimize", err)
		}
		rep.Optimize = res
		log.Info("optimize", "partitions", len(hot), "version", res.Version,
			"removedFiles", res.NumRemovedFiles, "addedFiles", res.NumAddedFiles, "abandonedBins", res.AbandonedBins)
		if res.Version >= 0 {
			if snap, err = t.Snapshot(ctx); err != nil {
				return failNamed("snapshot", err)
			}
		}
	}

	// Checkpoint when delta.checkpointInterval versions have passed, or when
	// _last_checkpoint is older than the newest checkpoint (a crash between
	// a checkpoint and its hint; nothing else would rewrite the hint until
	// the next interval, and log cleanup may delete the checkpoint it names).
	if !s.opts.DisableCheckpoints {
		last := snap.CheckpointVersion()
		due := snap.Version()-max(last, 0) >= snap.Properties().CheckpointInterval
		if !due && last >= 0 {
			hint, err := t.Log().LastCheckpointHint(ctx)
			if err != nil {
				return fail("checkpoint", err)
			}
			due = hint == nil || hint.Version < last
		}
		if due {
			cp, err := Checkpoint(ctx, t)
			if err != nil {
				return failNamed("checkpoint", err)
			}
			rep.Checkpoint = cp
			log.Info("checkpoint", "version", cp.Version)
		}
	}

	// VACUUM and log cleanup on their schedule.
	if s.opts.VacuumInterval > 0 {
		now := s.opts.Now()
		s.mu.Lock()
		lastV, seen := s.mu.lastVacuum[t.URL()]
		s.mu.Unlock()
		if !seen || now.Sub(lastV) >= s.opts.VacuumInterval {
			vr, err := Vacuum(ctx, t, VacuumOptions{Retention: s.opts.Retention, Now: s.opts.Now})
			if err != nil {
				return failNamed("vacuum", err)
			}
			rep.Vacuum = vr
			log.Info("vacuum", "filesDeleted", vr.FilesDeleted, "bytesDeleted", vr.BytesDeleted)
			cr, err := CleanupLog(ctx, t, CleanupLogOptions{Now: func() time.Time { return now }})
			if err != nil {
				return failNamed("cleanup-log", err)
			}
			rep.CleanupLog = cr
			log.Info("cleanup-log", "filesDeleted", cr.FilesDeleted, "checkpointVersion", cr.CheckpointVersion)
			s.mu.Lock()
			s.mu.lastVacuum[t.URL()] = now
			s.mu.Unlock()
		}
	}
	return rep, "", nil
}
