package main

import (
	"context"
	"fmt"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// FilesOptions are the flags of `lakesink files`.
type FilesOptions struct {
	Version   int64
	Timestamp string
	Where     string
	// SkipChecksum reads without checking the version's .crc.
	SkipChecksum bool
}

// AddFlags registers the flags.
func (o *FilesOptions) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.Version, "version", -1, "list this version's files; default latest")
	f.StringVar(&o.Timestamp, "timestamp", "", "list the files of the latest version at or before this time: RFC 3339, \"2024-01-31 10:00:00\" or 2024-01-31 (UTC), or epoch milliseconds")
	f.StringVar(&o.Where, "where", "", "keep only the files this predicate may match (partition pruning and stats skipping)")
	f.BoolVar(&o.SkipChecksum, "skip-checksum", false, "read the table even when a version checksum file (_delta_log/N.crc) disagrees with its commits (by default that is a corrupt table, exit 4)")
}

func newFilesCommand(g *globalOptions) *cobra.Command {
	var o FilesOptions
	cmd := &cobra.Command{
		Use:   "files URL",
		Short: "List a snapshot's live data files, and which a --where predicate keeps",
		Long: `List the live data files of a snapshot of URL with their partition values,
size and record count. With --where, only the files the predicate could
match: partitions are pruned by partition values and files skipped by their
min/max/nullCount stats (a file without stats is always kept).

EXAMPLE
  lakesink files ./demo/flights --where "origin = 'SFO'"
  lakesink files ./demo/flights --where "delay > 600" --json

EXIT STATUS
  0 ok, 1 error, 4 corrupt or unsupported table (an empty commit file, a version
  checksum .crc that disagrees with the log: see --skip-checksum)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runFiles(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

func runFiles(ctx context.Context, p *printer, url string, o FilesOptions) error {
	snap, err := openSnapshot(ctx, url, o.Version, o.Timestamp, o.SkipChecksum)
	if err != nil {
		return err
	}
	defer snap.Close()
	all, err := snap.Files(ctx, nil)
	if err != nil {
		return err
	}
	kept := all
	if o.Where != "" {
		pred, err := snap.Predicate(o.Where)
		if err != nil {
			return whereHint(fmt.Errorf("--where %q: %w", o.Where, err), snap.Schema())
		}
		if kept, err = snap.Files(ctx, pred); err != nil {
			return err
		}
	}
	var bytes int64
	for _, f := range kept {
		bytes += f.Size
		if p.json {
			if err := p.emitValue("file", f); err != nil {
				return err
			}
			continue
		}
		var parts []string
		for k, v := range f.PartitionValues {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
		sort.Strings(parts)
		recs := "?"
		if f.NumRecords >= 0 {
			recs = fmt.Sprint(f.NumRecords)
		}
		p.textf("%-70s %10s %8s rows  %s\n", f.Key, humanBytes(f.Size), recs, strings.Join(parts, ","))
	}
	if p.json {
		return p.emitSummary(snap.Store().URL(), map[string]any{"version": snap.Version(), "numFiles": len(all), "numKept": len(kept), "bytesKept": bytes})
	}
	p.textf("%d of %d files kept (%s)\n", len(kept), len(all), humanBytes(bytes))
	return nil
}
