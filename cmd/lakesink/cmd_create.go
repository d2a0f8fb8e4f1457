package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// CreateOptions are the flags of `lakesink create`.
type CreateOptions struct {
	Schema      string   // a file or inline Delta schema JSON
	PartitionBy []string // partition columns
	Properties  []string // k=v table properties
	Name        string
	Description string
}

// AddFlags registers the flags.
func (o *CreateOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Schema, "schema", "", "Delta schema JSON, inline or a file path (required)")
	f.StringSliceVar(&o.PartitionBy, "partition-by", nil, "partition columns, comma-separated, in directory order")
	f.StringArrayVar(&o.Properties, "property", nil, "table property k=v (repeatable), e.g. delta.checkpointInterval=10")
	f.StringVar(&o.Name, "name", "", "table name (metaData.name)")
	f.StringVar(&o.Description, "description", "", "table description")
}

func newCreateCommand(g *globalOptions) *cobra.Command {
	var o CreateOptions
	cmd := &cobra.Command{
		Use:   "create URL --schema FILE|JSON",
		Short: "Create an empty Delta table (version 0)",
		Long: `Create an empty Delta table at URL: commit version 0 with the protocol and
metaData actions. A plain schema gets reader 1 / writer 2; a schema that needs
a table feature (timestamp_ntz) gets reader 3 / writer 7 with exactly that
feature. Fails if a table exists at URL.

EXAMPLE
  lakesink create ./events --schema '{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}}]}'
  lakesink create s3://bucket/flights --schema flights.json --partition-by origin

EXIT STATUS
  0 created, 1 error (including: a table exists), 4 unsupported schema`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCreate(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	_ = cmd.MarkFlagRequired("schema")
	return cmd
}

// loadSchema reads a Delta schema (the metaData.schemaString JSON) from
// inline JSON or a file. A JSON syntax error names the file (or "inline"),
// the 1-based line and column, and what was wrong; every error keeps
// schema.ErrSchema (or the read error) for errors.Is.
func loadSchema(s string) (*schema.StructType, error) {
	data := []byte(s)
	where := "--schema (inline JSON)"
	if !strings.HasPrefix(strings.TrimSpace(s), "{") {
		b, err := os.ReadFile(s)
		if err != nil {
			return nil, fmt.Errorf("--schema: read schema file: %w", err)
		}
		data, where = b, "schema file "+s
	}
	var raw any
	if err := json.Unmarshal(data, &raw); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			line, col := lineColumn(data, se.Offset)
			return nil, &hintError{err: fmt.Errorf("%w: %w", schema.ErrSchema, err),
				msg: fmt.Sprintf("%s: line %d, column %d: %v", where, line, col, err)}
		}
		return nil, &hintError{err: fmt.Errorf("%w: %w", schema.ErrSchema, err), msg: fmt.Sprintf("%s: %v", where, err)}
	}
	st, err := schema.ParseSchema(data)
	if err != nil {
		return nil, &hintError{err: err, msg: fmt.Sprintf("%s: %s", where, strings.Replace(err.Error(), schema.ErrSchema.Error()+": ", "", 1))}
	}
	return st, nil
}

// lineColumn turns the byte offset of a json.SyntaxError (the count of bytes
// read when the error was found) into a 1-based line and column (in bytes)
// of the offending byte.
func lineColumn(data []byte, offset int64) (line, col int) {
	off := min(max(int(offset)-1, 0), len(data))
	before := data[:off]
	line = 1 + bytes.Count(before, []byte("\n"))
	col = off - bytes.LastIndexByte(before, '\n')
	return line, col
}

func parseProperties(kvs []string) (map[string]string, error) {
	props := map[string]string{}
	for _, kv := range kvs {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || k == "" {
			return nil, fmt.Errorf("--property %q: want key=value", kv)
		}
		props[k] = v
	}
	return props, nil
}

func runCreate(ctx context.Context, p *printer, url string, o CreateOptions) error {
	sch, err := loadSchema(o.Schema)
	if err != nil {
		return err
	}
	props, err := parseProperties(o.Properties)
	if err != nil {
		return err
	}
	if err := checkPartitionBy(o.PartitionBy); err != nil {
		return err
	}
	t, err := table.Create(ctx, url, table.CreateOptions{Schema: sch, PartitionColumns: o.PartitionBy, Properties: props, Name: o.Name, Description: o.Description})
	if err != nil {
		return partitionByError(err)
	}
	defer t.Close()
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return err
	}
	if p.json {
		return p.emitSummary(t.URL(), map[string]any{"version": snap.Version(),
			"minReaderVersion": snap.Protocol().MinReaderVersion, "minWriterVersion": snap.Protocol().MinWriterVersion})
	}
	p.summaryf("created %s (version %d, reader %d / writer %d)\n", t.URL(), snap.Version(), snap.Protocol().MinReaderVersion, snap.Protocol().MinWriterVersion)
	return nil
}
