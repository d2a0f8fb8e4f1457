package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/table"
)

// VacuumOptions are the flags of `lakesink vacuum`.
type VacuumOptions struct {
	Retain               string
	DryRun               bool
	Force                bool
	Mode                 string
	UntrackedMinAge      string
	ForceUntrackedMinAge bool
}

// AddFlags registers the flags.
func (o *VacuumOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Retain, "retain", "", "retention, e.g. 168h (default: delta.deletedFileRetentionDuration, else 7 days)")
	f.BoolVar(&o.DryRun, "dry-run", false, "list the files that would be deleted; delete nothing")
	f.BoolVar(&o.Force, "force", false, "allow a retention shorter than the table's (readers of old versions may lose files)")
	f.StringVar(&o.Mode, "mode", "full", "full (list the table directory) or lite (only files of expired remove actions in the log; no listing), as Delta's VACUUM FULL / LITE")
	f.StringVar(&o.UntrackedMinAge, "untracked-min-age", "", "files no commit in the log names are deleted only when older than this and the retention (default 1h; --retain never lowers it)")
	f.BoolVar(&o.ForceUntrackedMinAge, "force-untracked-min-age", false, "allow --untracked-min-age below 1h (a writer's files not committed yet may be deleted)")
}

func newVacuumCommand(g *globalOptions) *cobra.Command {
	var o VacuumOptions
	cmd := &cobra.Command{
		Use:   "vacuum URL",
		Short: "Delete data files no snapshot within the retention window references",
		Long: `VACUUM the Delta table at URL: delete files in the table directory that are
not referenced by the latest snapshot and were removed (tombstone
deletionTimestamp) or written (modification time) longer ago than the
retention. Never touches _delta_log, other names starting with _ or . that are
not partition directories, or files younger than the retention. A retention
below the table's delta.deletedFileRetentionDuration needs --force.

Files that no commit still in the log names (untracked: a batch being
written, an OPTIMIZE output not committed yet) are deleted only when older
than --untracked-min-age (default 1h) as well as the retention: --retain 0h
--force cannot delete the files of a commit in flight. Going below 1h needs
--force-untracked-min-age. lakesink's own temporary files (.lakesink-tmp-*, a
data file being written or one a killed writer left) outside _delta_log are
untracked files under the same rule, and are listed by --dry-run.

--mode lite (Delta's VACUUM LITE) lists nothing and deletes only the files of
expired remove actions still in the log; --mode full (the default) lists the
table directory. A VACUUM that deletes files records a VACUUM START and a
VACUUM END commit (see history); --dry-run commits nothing.

EXAMPLE
  lakesink vacuum ./demo/flights --dry-run
  lakesink vacuum ./demo/flights --retain 0h --force
  lakesink vacuum ./demo/flights --mode lite

EXIT STATUS
  0 ok, 1 error (e.g. retention too short without --force), 4 corrupt or unsupported table`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runVacuum(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runVacuum(ctx context.Context, p *printer, url string, o VacuumOptions) error {
	vo := compaction.VacuumOptions{DryRun: o.DryRun, Force: o.Force, ForceUntrackedMinAge: o.ForceUntrackedMinAge}
	mode, err := compaction.ParseVacuumMode(o.Mode)
	if err != nil {
		return fmt.Errorf("--mode %q: want full or lite", o.Mode)
	}
	vo.Mode = mode
	if o.UntrackedMinAge != "" {
		d, err := parseDays(o.UntrackedMinAge)
		if err != nil {
			if d, err = compaction.ParseInterval(o.UntrackedMinAge); err != nil {
				return fmt.Errorf("--untracked-min-age %q: want a duration such as 1h or 30m", o.UntrackedMinAge)
			}
		}
		if d < 0 {
			return fmt.Errorf("--untracked-min-age %s: want 0 or more", o.UntrackedMinAge)
		}
		vo.UntrackedMinAge = d
		vo.UntrackedMinAgeZero = d == 0
	}
	if o.Retain != "" {
		d, err := parseDays(o.Retain)
		if err != nil {
			if d, err = compaction.ParseInterval(o.Retain); err != nil {
				return fmt.Errorf("--retain %q: want a duration such as 168h or 7d", o.Retain)
			}
		}
		if d < 0 {
			return fmt.Errorf("--retain %s: want 0 or more", o.Retain)
		}
		vo.Retention = d
		vo.RetainZero = d == 0
	}
	t, err := table.Open(ctx, url)
	if err != nil {
		return err
	}
	defer t.Close()
	res, err := compaction.Vacuum(ctx, t, vo)
	if err != nil {
		// The library names its option (Force); the CLI names the flag.
		switch msg := err.Error(); {
		case errors.Is(err, compaction.ErrRetentionTooShort):
			msg = strings.Replace(msg, "; use Force to override", "", 1)
			return &hintError{err, msg + ": pass --force to vacuum anyway (readers of older versions may then lose files)"}
		case errors.Is(err, compaction.ErrUntrackedMinAgeTooShort):
			msg = strings.Replace(msg, "; use ForceUntrackedMinAge to override", "", 1)
			return &hintError{err, msg + ": pass --force-untracked-min-age to go below it (a concurrent writer's files not committed yet may then be deleted)"}
		case errors.Is(err, compaction.ErrUnconvertedBatches):
			msg = strings.Replace(msg, "convert first or use Force", "run lakesink convert first, or pass --force", 1)
			return &hintError{err, msg}
		}
		return err
	}
	if p.json {
		for _, f := range res.Files {
			if err := p.emitValue("file", f); err != nil {
				return err
			}
		}
		res.Files = nil
		return p.emitSummary(t.URL(), res)
	}
	verb := "deleted"
	if res.DryRun {
		verb = "would delete"
		for _, f := range res.Files {
			p.textf("  %-80s %10s  %s\n", f.Path, humanBytes(f.Size), f.ModTime.UTC().Format(time.RFC3339))
		}
	}
	p.summaryf("%s %d files (%s) of %d examined (%s); retention %s (cutoff %s), untracked files kept younger than %s; kept %d (%d untracked)\n", verb, res.FilesDeleted,
		humanBytes(res.BytesDeleted), res.FilesListed, strings.ToLower(res.Mode), res.Retention, res.Cutoff.UTC().Format(time.RFC3339),
		res.UntrackedMinAge, res.FilesKept, res.UntrackedKept)
	if res.StartVersion >= 0 {
		p.summaryf("committed VACUUM START at version %d, VACUUM END at version %d\n", res.StartVersion, res.EndVersion)
	}
	return nil
}

// parseDays is time.ParseDuration plus a "d" (24h) suffix: "7d", "1.5d".
func parseDays(s string) (time.Duration, error) {
	if n, ok := strings.CutSuffix(s, "d"); ok {
		f, err := strconv.ParseFloat(n, 64)
		if err != nil || f < 0 {
			return 0, fmt.Errorf("invalid duration %q", s)
		}
		return time.Duration(f * float64(24*time.Hour)), nil
	}
	return time.ParseDuration(s)
}
