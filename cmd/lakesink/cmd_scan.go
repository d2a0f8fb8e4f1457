package main

import (
	"bufio"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// ScanOptions are the flags of `lakesink scan`.
type ScanOptions struct {
	Version   int64
	Timestamp string
	Columns   []string
	Where     string
	Limit     int64
	Format    string
	// SkipChecksum reads without checking the version's .crc.
	SkipChecksum bool
}

// AddFlags registers the flags.
func (o *ScanOptions) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.Version, "version", -1, "read this version (time travel); default latest")
	f.StringVar(&o.Timestamp, "timestamp", "", "read the latest version at or before this time: RFC 3339, \"2024-01-31 10:00:00\" or 2024-01-31 (UTC), or epoch milliseconds")
	f.StringSliceVar(&o.Columns, "columns", nil, "columns to print, comma-separated (default all)")
	f.StringVar(&o.Where, "where", "", `filter, e.g. "origin = 'SFO' AND delay > 60" (prunes partitions and skips files by stats)`)
	f.Int64Var(&o.Limit, "limit", 0, "stop after N rows (0: all)")
	f.StringVar(&o.Format, "format", "json", "json (NDJSON), csv or table")
	f.BoolVar(&o.SkipChecksum, "skip-checksum", false, "read the table even when a version checksum file (_delta_log/N.crc) disagrees with its commits (by default that is a corrupt table, exit 4)")
}

func newScanCommand(g *globalOptions) *cobra.Command {
	var o ScanOptions
	cmd := &cobra.Command{
		Use:   "scan URL",
		Short: "Print the rows of a table snapshot (Delta table or file-sink directory)",
		Long: `Print the rows of a consistent snapshot of URL: a Delta table (latest, or
--version/--timestamp) or a Spark file-sink directory (read through its
_spark_metadata log). --where prunes partitions, skips files by their stats,
and filters every row. Output: NDJSON by default (timestamps RFC 3339,
decimals as strings, binary base64), or --format csv|table.

EXAMPLE
  lakesink scan ./demo/flights --where "origin = 'SFO'" --limit 5
  lakesink scan ./demo/flights --columns date,delay --version 2 --format csv

EXIT STATUS
  0 ok, 1 error, 4 corrupt or unsupported table (an unknown reader feature,
  an empty commit file, a version checksum .crc that disagrees with the log:
  see --skip-checksum)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runScan(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// openSnapshot opens a reader snapshot per the time-travel flags.
func openSnapshot(ctx context.Context, url string, version int64, ts string, skipChecksum bool) (*reader.Snapshot, error) {
	var opts []reader.Option
	if skipChecksum {
		opts = append(opts, reader.SkipChecksumValidation())
	}
	if version < -1 {
		return nil, fmt.Errorf("--version %d: versions start at 0", version)
	}
	if version >= 0 && ts != "" {
		return nil, fmt.Errorf("give --version or --timestamp, not both")
	}
	if version >= 0 {
		opts = append(opts, reader.AtVersion(version))
	}
	if ts != "" {
		at, err := parseTime(ts)
		if err != nil {
			return nil, err
		}
		opts = append(opts, reader.AsOf(at))
	}
	snap, err := reader.Open(ctx, url, opts...)
	return snap, checksumHint(err)
}

func runScan(ctx context.Context, p *printer, url string, o ScanOptions) error {
	switch o.Format {
	case "json", "csv", "table":
	default:
		return fmt.Errorf("--format %q: want json, csv or table", o.Format)
	}
	seen := map[string]bool{}
	for _, c := range o.Columns {
		// A repeated column printed a JSON object with a duplicate key.
		k := strings.ToLower(c)
		if seen[k] {
			return fmt.Errorf("--columns: column %q given twice", c)
		}
		seen[k] = true
	}
	if p.json && o.Format != "json" {
		// --json printed CSV or a table when --format said so.
		return fmt.Errorf("--json prints NDJSON rows: give --json or --format %s, not both", o.Format)
	}
	snap, err := openSnapshot(ctx, url, o.Version, o.Timestamp, o.SkipChecksum)
	if err != nil {
		return err
	}
	defer snap.Close()
	ro := reader.DefaultReadOptions()
	ro.Columns, ro.Limit = o.Columns, o.Limit
	if strings.TrimSpace(o.Where) != "" {
		// Bound here, as files binds it, so that the error names the flag.
		pred, err := snap.Predicate(o.Where)
		if err != nil {
			return whereHint(fmt.Errorf("--where %q: %w", o.Where, err), snap.Schema())
		}
		ro.Predicate = pred
	}

	var (
		cw     *csv.Writer
		tw     *tabwriter.Writer
		header bool
		// NDJSON: each record appended by reader.Record.AppendJSON (the
		// bytes encoding/json wrote for it, without a reflection pass per
		// value) into one line buffer, written through a 64 KiB buffer.
		bw   *bufio.Writer
		line []byte
	)
	switch o.Format {
	case "json":
		bw = bufio.NewWriterSize(p.out, 64<<10)
		// Rows printed before an error stay printed.
		defer bw.Flush()
	case "csv":
		cw = csv.NewWriter(p.out)
		defer cw.Flush()
	case "table":
		tw = tabwriter.NewWriter(p.out, 0, 4, 2, ' ', 0)
		defer tw.Flush()
	}
	for rec, err := range snap.Rows(ctx, ro) {
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return &hintError{err, err.Error() + "; a data file of this snapshot is gone: VACUUM deletes the files that only " +
					"versions older than its retention use (or it was deleted by hand), so this snapshot can no longer be read"}
			}
			return whereHint(err, snap.Schema())
		}
		fields := rec.Schema.Fields
		switch o.Format {
		case "json":
			line = append(rec.AppendJSON(line[:0]), '\n') // columns in schema order
			if _, err := bw.Write(line); err != nil {
				return err
			}
		case "csv", "table":
			cells := make([]string, len(fields))
			if !header {
				for i, f := range fields {
					cells[i] = f.Name
				}
				writeRow(cw, tw, cells)
				header = true
			}
			for i, f := range fields {
				cells[i] = reader.FormatValue(rec.Values[i], f.Type)
			}
			writeRow(cw, tw, cells)
		}
	}
	if bw != nil {
		return bw.Flush()
	}
	return nil
}

func writeRow(cw *csv.Writer, tw *tabwriter.Writer, cells []string) {
	if cw != nil {
		_ = cw.Write(cells)
		return
	}
	fmt.Fprintln(tw, strings.Join(cells, "\t"))
}

// whereHint adds what a new user needs after a --where or --columns error:
// the table's columns after an unknown one, and the quoting rule after a
// bare word on the right of a comparison (origin = SFO reads SFO as a
// column).
func whereHint(err error, sch *schema.StructType) error {
	var se *expr.SyntaxError
	switch {
	case errors.Is(err, reader.ErrUnknownColumn) || (errors.Is(err, expr.ErrBind) && strings.Contains(err.Error(), "no column")):
		var names []string
		for _, f := range sch.Fields {
			names = append(names, f.Name)
		}
		msg := err.Error()
		if errors.Is(err, reader.ErrUnknownColumn) && !strings.HasPrefix(msg, "--") {
			msg = "--columns: " + msg // the projection's error, which names the column only
		}
		return &hintError{err, fmt.Sprintf("%s; the columns are: %s", msg, strings.Join(names, ", "))}
	case errors.As(err, &se) && strings.Contains(se.Msg, "comparing two columns"):
		return &hintError{err, err.Error() + "; text literals take single quotes, e.g. origin = 'SFO'"}
	}
	return err
}
