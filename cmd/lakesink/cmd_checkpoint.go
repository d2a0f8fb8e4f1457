package main

import (
	"context"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/table"
)

func newCheckpointCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "checkpoint URL",
		Short: "Write a Parquet checkpoint of the latest version and update _last_checkpoint",
		Long: `Write the classic single-file Parquet checkpoint of the latest version of the
Delta table at URL (PROTOCOL.md, Checkpoints), then _last_checkpoint, so that
readers load the table from one checkpoint plus the commits after it.

EXAMPLE
  lakesink checkpoint ./demo/flights

EXIT STATUS
  0 ok, 1 error, 4 corrupt or unsupported table`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheckpoint(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0])
		},
	}
}

func runCheckpoint(ctx context.Context, p *printer, url string) error {
	t, err := table.Open(ctx, url)
	if err != nil {
		return err
	}
	defer t.Close()
	res, err := compaction.Checkpoint(ctx, t)
	if err != nil {
		return err
	}
	if p.json {
		return p.emitSummary(t.URL(), res)
	}
	p.summaryf("checkpoint of version %d: %d actions, %d add files, %s\n", res.Version, res.Actions, res.NumOfAddFiles, humanBytes(res.SizeInBytes))
	return nil
}

func newCleanupLogCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "cleanup-log URL",
		Short: "Delete expired commit and checkpoint files (delta.logRetentionDuration)",
		Long: `Delete log files of the Delta table at URL that are older than
delta.logRetentionDuration (default 30 days) and older than the newest
checkpoint, keeping every retained version readable (PROTOCOL.md, Metadata
Cleanup), and the temporary files (.lakesink-tmp-*) that killed writers left
in _delta_log when older than that retention and 1 hour.

EXAMPLE
  lakesink cleanup-log ./demo/flights

EXIT STATUS
  0 ok, 1 error, 4 corrupt or unsupported table`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCleanupLog(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0])
		},
	}
}

func runCleanupLog(ctx context.Context, p *printer, url string) error {
	t, err := table.Open(ctx, url)
	if err != nil {
		return err
	}
	defer t.Close()
	res, err := compaction.CleanupLog(ctx, t, compaction.CleanupLogOptions{})
	if err != nil {
		return err
	}
	if p.json {
		return p.emitSummary(t.URL(), res)
	}
	if res.CheckpointVersion < 0 {
		// Only log files before a checkpoint at or before the cutoff may go.
		p.summaryf("nothing to delete: no checkpoint is older than the cutoff %s (delta.logRetentionDuration), so every log file is still needed\n",
			res.Cutoff.UTC().Format(time.RFC3339))
		return nil
	}
	p.summaryf("deleted %d expired log files (commits at or before %s, reachable from checkpoint %d)\n", res.FilesDeleted, res.Cutoff.UTC().Format(time.RFC3339), res.CheckpointVersion)
	return nil
}
