package main

import (
	"context"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/storage"
)

// newFileSinkCommand groups the verbs over Spark file-sink directories.
func newFileSinkCommand(g *globalOptions) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "filesink",
		Short: "Inspect and maintain Spark file-sink directories (_spark_metadata)",
		Long: `Verbs over a Spark Structured Streaming file-sink directory: data files plus
the _spark_metadata log (one file per batch, N.compact every compactInterval
batches). Readers must list the directory through its log, never by listing
data files: ls does that; orphans finds the files the log does not name.`,
	}
	cmd.AddCommand(newFileSinkLsCommand(g), newFileSinkCompactLogCommand(g), newFileSinkOrphansCommand(g))
	return cmd
}

func newFileSinkLsCommand(g *globalOptions) *cobra.Command {
	var legacy, ignoreLog bool
	cmd := &cobra.Command{
		Use:   "ls DIR",
		Short: "List the live files of a file-sink directory through its _spark_metadata log",
		Long: `List the live data files of DIR as Spark reads them: the latest N.compact
plus the batch files after it. "action":"delete" lines are ignored as Spark
3.1+ does (--legacy-delete honours them as Spark up to 3.0 did). Without a
_spark_metadata folder the directory is listed, as Spark does.

EXAMPLE
  lakesink filesink ls ./out --json

EXIT STATUS
  0 ok, 1 error, 4 corrupt log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr())
			opts := filesink.DefaultOptions()
			opts.LegacyDeleteAction, opts.IgnoreLog = legacy, ignoreLog
			return runFileSinkLs(cmd.Context(), p, args[0], opts)
		},
	}
	cmd.Flags().BoolVar(&legacy, "legacy-delete", false, `honour "action":"delete" lines (Spark <= 3.0)`)
	cmd.Flags().BoolVar(&ignoreLog, "ignore-log", false, "list the data files instead of reading _spark_metadata")
	return cmd
}

func runFileSinkLs(ctx context.Context, p *printer, dir string, opts filesink.Options) error {
	if err := storage.CheckLocalDir(dir); err != nil {
		return err
	}
	st, err := storage.Open(ctx, dir)
	if err != nil {
		return err
	}
	defer st.Close()
	ls, err := filesink.ListFiles(ctx, st, opts)
	if err != nil {
		return err
	}
	var total int64
	for _, f := range ls.Files {
		total += f.Size
		if p.json {
			parts := map[string]any{}
			for _, kv := range f.Partition {
				parts[kv.Column] = kv.Value
			}
			if err := p.emit("file", map[string]any{"path": f.Key, "size": f.Size, "modificationTime": f.ModificationTime.UnixMilli(), "partition": parts}); err != nil {
				return err
			}
			continue
		}
		p.textf("%-80s %10s  %s\n", f.Key, humanBytes(f.Size), f.ModificationTime.UTC().Format(time.RFC3339))
	}
	if p.json {
		return p.emit("summary", map[string]any{"fromLog": ls.FromLog, "latestBatchId": ls.LatestBatchID, "numFiles": len(ls.Files), "sizeInBytes": total})
	}
	src := "listing (no _spark_metadata)"
	if ls.FromLog {
		src = fmt.Sprintf("_spark_metadata through batch %d", ls.LatestBatchID)
	}
	p.summaryf("%d files, %s, from %s\n", len(ls.Files), humanBytes(total), src)
	return nil
}

func newFileSinkCompactLogCommand(g *globalOptions) *cobra.Command {
	var retention string
	cmd := &cobra.Command{
		Use:   "compact-log DIR",
		Short: "Rewrite the latest N.compact now, applying the retention, and delete expired log files",
		Long: `Compact the _spark_metadata log of DIR now, outside a batch: the latest
compaction file is rewritten applying --retention: an entry is dropped when
its file's modificationTime is more than the retention before now (Spark's
FileStreamSink "retention" option: kept while now - modificationTime <=
retention, in milliseconds). Without --retention nothing is dropped;
--retention 0s drops every entry older than now, i.e. all of them. Dropped
entries' files are no longer listed by readers of DIR but stay on disk
(see "lakesink filesink orphans"; data files are never deleted here). Then
expired batch files are deleted as after a batch. A log without a compaction
file yet (fewer than compactInterval batches) is only cleaned up. Run it only
while no query writes the directory.

EXAMPLE
  lakesink filesink compact-log ./out --retention 7d

EXIT STATUS
  0 ok, 1 error (e.g. DIR has no _spark_metadata), 4 corrupt log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr())
			opts := filesink.DefaultOptions()
			if retention != "" {
				d, err := filesink.ParseRetention(retention)
				if err != nil {
					return err
				}
				opts.Retention = &d
			}
			if err := storage.CheckLocalDir(args[0]); err != nil {
				return err
			}
			st, err := storage.Open(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			// A typo in DIR must not report success: without a log there is
			// nothing to compact (ls, by contrast, lists such a directory).
			if has, err := filesink.HasLog(cmd.Context(), st); err != nil {
				return err
			} else if !has {
				return fmt.Errorf("%w: %s has no %s folder: not a Spark file-sink directory", filesink.ErrMissingLogFile, st.URL(), filesink.MetadataDir)
			}
			res, deleted, err := filesink.CompactLog(cmd.Context(), st, opts)
			if err != nil {
				return err
			}
			if deleted == nil {
				deleted = []string{}
			}
			if p.json {
				return p.emit("summary", map[string]any{"batchId": res.BatchID, "file": res.Key, "entries": res.EntriesWritten, "streamed": res.Streamed, "deletedLogFiles": deleted})
			}
			if res.Key == "" {
				// CompactLog never creates a compaction file at a batch that
				// is not a compaction batch (Spark finds them by batch id).
				p.summaryf("no compaction file yet (Spark writes N.compact every compactInterval batches, default 10): nothing rewritten; deleted %d expired log files\n", len(deleted))
				return nil
			}
			p.summaryf("compacted into %s (%d entries); deleted %d expired log files\n", res.Key, res.EntriesWritten, len(deleted))
			return nil
		},
	}
	cmd.Flags().StringVar(&retention, "retention", "", "drop entries whose file is more than this older than now (12h, 7d; a bare number is milliseconds; 0s drops all; default: keep all)")
	return cmd
}

func newFileSinkOrphansCommand(g *globalOptions) *cobra.Command {
	var olderThan time.Duration
	var del bool
	cmd := &cobra.Command{
		Use:   "orphans DIR",
		Short: "List (or delete) data files the _spark_metadata log does not name",
		Long: `List the files of DIR that the log does not name (failed tasks, crashed
batches) and that are older than --older-than. With --delete, remove them.
Never touches a file the log names, a file younger than the threshold, or
names starting with _ or .

EXAMPLE
  lakesink filesink orphans ./out --older-than 24h --delete

EXIT STATUS
  0 ok, 1 error, 4 corrupt log`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			p := newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr())
			ctx := cmd.Context()
			st, err := storage.Open(ctx, args[0])
			if err != nil {
				return err
			}
			defer st.Close()
			opts := filesink.DefaultOptions()
			orphans, err := filesink.Orphans(ctx, st, olderThan, opts)
			if err != nil {
				return err
			}

			for _, o := range orphans {

				if p.json {
					_ = p.emit("orphan", map[string]any{"path": o.Path, "size": o.Size, "modificationTime": o.ModTime})
				} else {
					p.textf("%s\n", o.Path)
				}
			}
			var deleted []string
			if del && len(orphans) > 0 {
				if deleted, err = filesink.DeleteOrphans(ctx, st, orphans, opts); err != nil {
					return err
				}
			}
			if p.json {
				return p.emit("summary", map[string]any{"orphans": len(orphans), "deleted": len(deleted)})
			}
			p.summaryf("%s older than %s%s\n", plural(len(orphans), "orphan", "orphans"), olderThan, map[bool]string{true: fmt.Sprintf(", %d deleted", len(deleted)), false: ""}[del])

			return nil
		},
	}
	olderThan = 24 * time.Hour
	cmd.Flags().Var((*daysDuration)(&olderThan), "older-than", "only files older than this, e.g. 24h or 7d (younger ones may belong to a running batch)")
	cmd.Flags().BoolVar(&del, "delete", false, "delete the orphans")
	return cmd
}

// daysDuration is a duration flag that also takes days ("7d"), as --retain
// and --retention do.
type daysDuration time.Duration

func (d *daysDuration) String() string { return time.Duration(*d).String() }
func (d *daysDuration) Type() string   { return "duration" }
func (d *daysDuration) Set(s string) error {
	v, err := parseDays(s)
	if err != nil {
		return fmt.Errorf("want a duration such as 24h or 7d")
	}
	*d = daysDuration(v)
	return nil
}
