package main

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/table"
)

// HistoryOptions are the flags of `lakesink history`.
type HistoryOptions struct {
	Limit int // 0: all
	// SkipChecksum lists the commits without checking the latest
	// snapshot against its version checksum file (.crc).
	SkipChecksum bool
}

// AddFlags registers the flags.
func (o *HistoryOptions) AddFlags(f *pflag.FlagSet) {
	f.IntVar(&o.Limit, "limit", 0, "show at most N commits, newest first (0: all)")
	f.BoolVar(&o.SkipChecksum, "skip-checksum", false, "list the commits even when a version checksum file (_delta_log/N.crc) disagrees with its commits (by default that is a corrupt table, exit 4)")
}

func newHistoryCommand(g *globalOptions) *cobra.Command {
	var o HistoryOptions
	cmd := &cobra.Command{
		Use:   "history URL",
		Short: "List a table's commits, newest first",
		Long: `List the commits of the Delta table at URL, newest first: version,
timestamp, operation, its parameters and metrics (commitInfo), as Delta's
DESCRIBE HISTORY does.

EXAMPLE
  lakesink history ./demo/flights --limit 5
  lakesink history ./demo/flights --json | jq .operation

EXIT STATUS
  0 ok, 1 error (no table), 4 corrupt or unsupported table (as for scan, a
  checksum .crc that disagrees with the log: see --skip-checksum)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runHistory(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// HistoryEntry is the --json shape of one commit.
type HistoryEntry struct {
	Version             int64             `json:"version"`
	Timestamp           string            `json:"timestamp"`
	Operation           string            `json:"operation"`
	OperationParameters map[string]string `json:"operationParameters"`
	OperationMetrics    map[string]string `json:"operationMetrics"`
	EngineInfo          string            `json:"engineInfo,omitempty"`
	ReadVersion         *int64            `json:"readVersion,omitempty"`
	IsBlindAppend       bool              `json:"isBlindAppend"`
}

func runHistory(ctx context.Context, p *printer, url string, o HistoryOptions) error {
	topts := []table.Option{table.ReadOnly()}
	if o.SkipChecksum {
		topts = append(topts, table.WithoutChecksumValidation())
	}
	t, err := table.Open(ctx, url, topts...)
	if err != nil {
		return err
	}
	defer t.Close()
	// The latest snapshot is loaded as scan, describe and files load it,
	// so that a .crc that disagrees with the log (PROTOCOL.md, "Version
	// Checksum File") is the same corrupt table, exit 4, here.
	if _, err := t.Snapshot(ctx); err != nil {
		return err
	}
	h, err := t.History(ctx, o.Limit)
	if err != nil {
		return err
	}
	if !p.json {
		p.textf("%-8s %-24s %-18s %s\n", "VERSION", "TIMESTAMP", "OPERATION", "PARAMETERS / METRICS")
	}
	for _, c := range h {
		e := HistoryEntry{Version: c.Version, Timestamp: c.Timestamp.UTC().Format(time.RFC3339Nano),
			Operation: c.CommitInfo.Operation(), OperationParameters: stringMap(c.CommitInfo.StringMap("operationParameters")),
			OperationMetrics: stringMap(c.CommitInfo.StringMap("operationMetrics")), IsBlindAppend: c.CommitInfo.IsBlindAppend()}
		e.EngineInfo, _ = c.CommitInfo.String("engineInfo")
		if rv, ok := c.CommitInfo.ReadVersion(); ok {
			e.ReadVersion = &rv
		}
		if p.json {
			if err := p.emitValue("commit", e); err != nil {
				return err
			}
			continue
		}
		p.textf("%-8d %-24s %-18s %s\n", e.Version, c.Timestamp.UTC().Format("2006-01-02 15:04:05.000"), e.Operation, summarise(e.OperationParameters, e.OperationMetrics))
	}
	if p.json {
		return p.emitSummary(t.URL(), map[string]any{"commits": len(h)})
	}
	return nil
}

func stringMap(m map[string]string) map[string]string {
	if m == nil {
		return map[string]string{}
	}
	return m
}

// summarise renders parameters and metrics on one line, keys sorted.
func summarise(params, metrics map[string]string) string {
	var parts []string
	for _, m := range []map[string]string{params, metrics} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := m[k]
			if len(v) > 40 {
				v = v[:37] + "..."
			}
			parts = append(parts, fmt.Sprintf("%s=%s", k, v))
		}
	}
	return strings.Join(parts, " ")
}

// parseTime accepts RFC 3339, "2006-01-02 15:04:05" (UTC) and a date, or
// milliseconds since the epoch: the value of --timestamp, which its error
// names.
func parseTime(s string) (time.Time, error) {
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02 15:04:05.999999999", "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	var ms int64
	if _, err := fmt.Sscanf(s, "%d", &ms); err == nil && fmt.Sprint(ms) == s {
		return time.UnixMilli(ms), nil
	}
	return time.Time{}, fmt.Errorf("--timestamp %q: want RFC 3339 (2024-01-31T10:00:00Z), 2024-01-31 10:00:00 or 2024-01-31 (both UTC), or milliseconds since the epoch", s)
}
