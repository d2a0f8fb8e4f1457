package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/schollz/progressbar/v3"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/table"
)

// CompactOptions are the flags of `lakesink compact`.
type CompactOptions struct {
	TargetSize string
	Where      string
	DryRun     bool
	MaxBins    int
	MaxBytes   string
	Workers    int
}

// AddFlags registers the flags.
func (o *CompactOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.TargetSize, "target-size", "", "target file size (default: delta.targetFileSize, else 128MiB)")
	f.StringVar(&o.Where, "where", "", `limit to partitions matching a predicate over partition columns, e.g. "origin = 'SFO'"`)
	f.BoolVar(&o.DryRun, "dry-run", false, "print the plan (bins of small files per partition) and change nothing")
	f.IntVar(&o.MaxBins, "max-bins", 0, "rewrite at most N bins in this run (0: all)")
	f.StringVar(&o.MaxBytes, "max-bytes", "", "rewrite at most this many input bytes in this run (e.g. 10GiB)")
	f.IntVar(&o.Workers, "workers", 0, "bins rewritten at once (default: number of CPUs)")
}

func newCompactCommand(g *globalOptions) *cobra.Command {
	var o CompactOptions
	cmd := &cobra.Command{
		Use:   "compact URL",
		Short: "OPTIMIZE: bin-pack small files into target-size files in ONE commit",
		Long: `Compact the Delta table at URL (Delta's OPTIMIZE): per partition, live files
smaller than the target size are grouped into bins up to the target size
(bins of one file are dropped), each bin is rewritten by streaming its row
groups, and all removes and adds are committed with dataChange=false in ONE
commit (operation OPTIMIZE). Readers see the table before or after, never in
between; appends committed meanwhile are kept; a bin whose input was removed
concurrently is abandoned, never resurrected. With --json, "status" lines
(phase rewrite, commit, done; at most one a second within a phase, none with
--quiet) precede the "summary" line.

EXAMPLE
  lakesink compact ./demo/flights
  lakesink compact s3://bucket/events --where "day = '2024-01-31'" --dry-run

EXIT STATUS
  0 ok (also when there is nothing to compact), 1 error, 3 conflict, 4 corrupt or unsupported table`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCompact(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runCompact(ctx context.Context, p *printer, url string, o CompactOptions) error {
	po := compaction.PlanOptions{Where: o.Where, MaxBins: o.MaxBins}
	var err error
	if o.TargetSize != "" {
		if po.TargetFileSizeBytes, err = parseByteSizeFlag("target-size", o.TargetSize); err != nil {
			return err
		}
	}
	if o.MaxBytes != "" {
		if po.MaxBytes, err = parseByteSizeFlag("max-bytes", o.MaxBytes); err != nil {
			return err
		}
	}
	t, err := table.Open(ctx, url)
	if err != nil {
		return err
	}
	defer t.Close()
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	if strings.TrimSpace(o.Where) != "" {
		// Bound here, as scan and files bind it, so that the error names
		// the flag (and the columns after an unknown one).
		sch, err := snap.Schema()
		if err != nil {
			return fmt.Errorf("compact %s: %w", t.URL(), err)
		}
		if _, err := expr.ParseAndBind(o.Where, sch); err != nil {
			return whereHint(fmt.Errorf("--where %q: %w", o.Where, err), sch)
		}
	}
	plan, err := compaction.NewPlan(snap, po)
	if errors.Is(err, compaction.ErrPredicate) {
		// The filter binds (above): it names a data column.
		return &hintError{err, fmt.Sprintf("--where %q: compact rewrites whole partitions, so the filter may name partition columns only (%s)",
			o.Where, strings.Join(snap.Metadata().PartitionColumns, ", "))}
	}
	if err != nil {
		return fmt.Errorf("compact %s: %w", t.URL(), err) // as compaction.Execute names it
	}
	if o.DryRun {
		if p.json {
			for _, b := range plan.Bins {
				if err := p.emit("bin", map[string]any{"partition": b.Partition, "files": len(b.Files), "bytes": b.Bytes, "rows": b.Rows}); err != nil {
					return err
				}
			}
			return p.emitSummary(t.URL(), map[string]any{"dryRun": true, "readVersion": plan.ReadVersion, "bins": len(plan.Bins),
				"numFiles": plan.NumFiles, "bytes": plan.Bytes, "consideredFiles": plan.ConsideredFiles, "skippedBins": plan.SkippedBins,
				"targetFileSizeBytes": plan.TargetFileSizeBytes})
		}
		p.textf("plan for version %d: %d bins, %d of %d files, %s (target %s)\n", plan.ReadVersion, len(plan.Bins),
			plan.NumFiles, plan.ConsideredFiles, humanBytes(plan.Bytes), humanBytes(plan.TargetFileSizeBytes))
		for _, b := range plan.Bins {
			part := b.Partition
			if part == "" {
				part = "(unpartitioned)"
			}
			p.textf("  %-40s %4d files  %10s\n", part, len(b.Files), humanBytes(b.Bytes))
		}
		return nil
	}
	eo := compaction.DefaultExecOptions()
	eo.Workers = o.Workers
	var bar *progressbar.ProgressBar
	if p.progressEnabled() && plan.Bytes > 0 {
		bar = progressbar.NewOptions64(plan.Bytes, progressbar.OptionSetWriter(p.err), progressbar.OptionShowBytes(true),
			progressbar.OptionSetDescription(fmt.Sprintf("compacting %d bins", len(plan.Bins))), progressbar.OptionClearOnFinish())
	}
	status := statusThrottle{every: statusInterval}
	eo.Progress = func(ev compaction.ProgressEvent) {
		if bar != nil {
			_ = bar.Set64(ev.BytesRewritten)
			bar.Describe(fmt.Sprintf("%s: bin %d/%d", ev.Phase, ev.BinsDone, ev.BinsTotal))
		}
		// --json: status lines are progress, so --quiet drops them, and they
		// are throttled (the library reports every file read: thousands of
		// lines for a large table).
		if p.json && !p.quiet && status.due(ev.Phase, time.Now()) {
			_ = p.emitValue("status", ev)
		}
	}
	start := time.Now()
	res, err := compaction.Execute(ctx, t, plan, eo)
	if bar != nil {
		_ = bar.Finish()
	}
	if err != nil {
		return err
	}
	if p.json {
		return p.emitSummary(t.URL(), res)
	}
	if res.Version < 0 {
		if res.AbandonedBins > 0 {
			p.summaryf("nothing committed: all %d bins were abandoned because their inputs were removed concurrently (another compaction or a complete-mode write); their new files are deleted\n", res.AbandonedBins)
			return nil
		}
		p.summaryf("nothing to compact (%d live files considered)\n", plan.ConsideredFiles)
		return nil
	}
	// The rows count those of the rewritten files, not the table's: say both
	// (it read "compacted ... 19989 rows" for a 20,000-row table).
	held := "the table's row count is unknown (a file has no stats)"
	if total, ok := statsRecords(snap); ok {
		held = fmt.Sprintf("the table holds %s", plural(total, "row", "rows"))
	}
	p.summaryf("compacted %d of %d files (%s) into %s (%s) in %s; the rewritten files held %s, %s; committed version %d in %s",
		res.NumRemovedFiles, snap.NumFiles(), humanBytes(res.NumRemovedBytes), plural(res.NumAddedFiles, "file", "files"),
		humanBytes(res.NumAddedBytes), plural(res.NumBins, "bin", "bins"), plural(res.NumRows, "row", "rows"), held, res.Version,
		time.Since(start).Round(time.Millisecond))
	if res.AbandonedBins > 0 {
		p.summaryf(" (%d bins abandoned: an input was removed concurrently)", res.AbandonedBins)
	}
	p.summaryf("\n")
	return nil
}

// statusInterval is the least time between two --json status lines of the
// same phase.
const statusInterval = time.Second

// statusThrottle lets a progress event through when its phase differs from
// the last one let through, or when every has passed since then.
type statusThrottle struct {
	every time.Duration
	phase string
	last  time.Time
}

func (s *statusThrottle) due(phase string, now time.Time) bool {
	if phase == s.phase && now.Sub(s.last) < s.every {
		return false
	}
	s.phase, s.last = phase, now
	return true
}
