package main

import (
	"context"

	"github.com/spf13/cobra"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/table"
)

func newConvertCommand(g *globalOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "convert DIR",
		Short: "Publish a Spark file-sink directory as a Delta table in place, incrementally",
		Long: `Publish the Spark file-sink directory DIR as a Delta table: _delta_log is
created beside _spark_metadata, with add actions (relative paths) for exactly
the files the file-sink log names. Each run adds the batches logged since the
previous run in ONE commit with txn{appId: "filesink-convert", version: latest
batch}, so a repeated run is a no-op. Other engines then read the directory as
a Delta table, and lakesink compact can optimise it (the file-sink log itself
cannot express removals, so it is never rewritten). VACUUM on such a directory
never deletes a file _spark_metadata names.

EXAMPLE
  lakesink convert ./out && lakesink compact ./out

EXIT STATUS
  0 ok (also when nothing is new), 1 error, 3 conflict (a concurrent convert), 4 corrupt log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runConvert(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0])
		},
	}
}

func runConvert(ctx context.Context, p *printer, dir string) error {
	t, err := table.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer t.Close()
	res, err := compaction.Convert(ctx, t, compaction.ConvertOptions{})
	if err != nil {
		return err
	}
	if p.json {
		return p.emitSummary(t.URL(), res)
	}
	if res.Version < 0 {
		p.summaryf("nothing to convert: every logged batch is already in the Delta table\n")
		return nil
	}
	verb := "added"
	if res.Created {
		verb = "created the Delta table with"
	}
	p.summaryf("%s %s (%s) of file-sink batches %d..%d, version %d\n", verb, plural(res.NumFiles, "file", "files"), humanBytes(res.NumBytes), res.FromBatch+1, res.ToBatch, res.Version)
	return nil
}
