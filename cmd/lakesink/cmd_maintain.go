package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/table"
)

// MaintainOptions are the flags of `lakesink maintain`.
type MaintainOptions struct {
	Interval           time.Duration
	Once               bool
	SmallFileThreshold int
	VacuumInterval     time.Duration
	Metrics            MetricsFlags // metrics_flags.go
}

// AddFlags registers the flags.
func (o *MaintainOptions) AddFlags(f *pflag.FlagSet) {
	o.Interval, o.VacuumInterval = 5*time.Minute, 24*time.Hour
	f.Var((*daysDuration)(&o.Interval), "interval", "time between two maintenance passes over a table, e.g. 5m or 1d")
	f.BoolVar(&o.Once, "once", false, "run one pass over every table and exit")
	f.IntVar(&o.SmallFileThreshold, "small-files", 50, "OPTIMIZE a partition holding more than N small files")
	f.Var((*daysDuration)(&o.VacuumInterval), "vacuum-interval", "time between two VACUUM and log cleanups of a table, e.g. 24h or 7d (negative: never)")
	o.Metrics.AddFlags(f)
}

func newMaintainCommand(g *globalOptions) *cobra.Command {
	var o MaintainOptions
	cmd := &cobra.Command{
		Use:   "maintain URL...",
		Short: "Run the maintenance service: OPTIMIZE, checkpoints, VACUUM and log cleanup on a schedule",
		Long: `Keep the Delta tables at URL... healthy beside their writers: OPTIMIZE a
partition when it holds more than --small-files small files, checkpoint when
delta.checkpointInterval versions have passed, VACUUM and clean up the log
every --vacuum-interval. Runs until SIGINT/SIGTERM (which finishes or
abandons the current step with the table consistent), or one pass with --once.

EXAMPLE
  lakesink maintain ./demo/flights --once
  lakesink maintain s3://bucket/a s3://bucket/b --interval 1m

EXIT STATUS
  0 ok (also when SIGINT/SIGTERM stops the service between passes, as for
  ingest --trigger interval), 1 error, 130 interrupted during a pass`,
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMaintain(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args, o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runMaintain(ctx context.Context, p *printer, urls []string, o MaintainOptions) error {
	var tables []*table.Table
	defer func() {
		for _, t := range tables {
			t.Close()
		}
	}()
	for _, u := range urls {
		t, err := table.Open(ctx, u)
		if err != nil {
			return err
		}
		tables = append(tables, t)
	}
	if o.Interval < 0 {
		return fmt.Errorf("--interval %s: want 0 or more", o.Interval)
	}
	so := compaction.DefaultServiceOptions()
	so.Interval, so.SmallFileThreshold, so.VacuumInterval = o.Interval, o.SmallFileThreshold, o.VacuumInterval
	cm, err := o.Metrics.start()
	if err != nil {
		return fmt.Errorf("--metrics-addr: %w", err)
	}
	defer cm.close()
	if so.Metrics, err = cm.maintain(); err != nil {
		return err
	}
	so.OnPass = func(r compaction.TableReport, err error) {
		if r.FailedStep != "snapshot" {
			cm.ready() // a snapshot was open
		}
		cm.observe(err == nil)
	}
	if !p.quiet {
		var h slog.Handler = slog.NewTextHandler(p.err, nil)
		if p.json {
			h = slog.NewJSONHandler(p.err, nil)
		}
		so.Logger = slog.New(h)
	}
	svc, err := compaction.NewService(tables, so)
	if err != nil {
		return err
	}
	if !o.Once {
		return maintainStopped(p, svc.Run(ctx), ctx.Err())
	}
	reports, err := svc.RunOnce(ctx)
	for _, r := range reports {
		if p.json {
			_ = p.emitValue("table", r)
			continue
		}
		var done []string
		if r.Optimize != nil && r.Optimize.Version >= 0 {
			done = append(done, fmt.Sprintf("optimized %d->%d files (v%d)", r.Optimize.NumRemovedFiles, r.Optimize.NumAddedFiles, r.Optimize.Version))
		}
		if r.Checkpoint != nil {
			done = append(done, fmt.Sprintf("checkpoint v%d", r.Checkpoint.Version))
		}
		if r.Vacuum != nil {
			done = append(done, fmt.Sprintf("vacuumed %d files", r.Vacuum.FilesDeleted))
		}
		if r.CleanupLog != nil {
			done = append(done, fmt.Sprintf("cleaned %d log files", r.CleanupLog.FilesDeleted))
		}
		if r.Error != "" {
			done = append(done, "error: "+r.Error)
		}
		if len(done) == 0 {
			done = append(done, "nothing due")
		}
		p.summaryf("%s: %s\n", r.Table, strings.Join(done, "; "))
	}
	return err
}

// maintainStopped maps the end of Service.Run (err) after a stop request
// (ctxErr, the signal context's error): a stop between passes is the normal
// way to end the service, exit status 0 as ingest --trigger interval; a stop
// that cut a pass short is exit 130 and says which table's step was
// abandoned.
func maintainStopped(p *printer, err, ctxErr error) error {
	var pe *compaction.PassInterruptedError
	switch {
	case ctxErr == nil || err == nil:
		return err
	case errors.As(err, &pe):
		return &hintError{err, fmt.Sprintf("interrupted: maintenance stopped during a pass of %s; every table is consistent (the step in progress was abandoned)",
			strings.Join(pe.Tables, ", "))}
	case errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded):
		if !p.quiet && !p.json {
			fmt.Fprintln(p.err, "maintenance stopped between passes")
		}
		return nil
	}
	return err
}
