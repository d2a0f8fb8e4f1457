package main

import (
	"context"
	"errors"
	"fmt"
	"iter"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/ingest"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
)

// MergeOptions are the flags of `lakesink merge`.
type MergeOptions struct {
	Source          string
	Format          string
	Schema          string
	TimestampFormat string
	MergeKeys       []string
	SequenceBy      string
	DeleteWhen      string
	UpdateColumns   []string
	CDCFormat       string
	PartitionBy     []string
	AppID           string
	Version         int64
	TargetFileSize  string
}

// AddFlags registers the flags.
func (o *MergeOptions) AddFlags(f *pflag.FlagSet) {
	f.StringVar(&o.Source, "source", "", "URL or path of ONE input file: the change batch (required)")
	f.StringVar(&o.Format, "format", "json", "input format: json (NDJSON or a JSON array), csv (with header), parquet")
	f.StringVar(&o.Schema, "schema", "", "Delta schema JSON of the input (inline or file); default: the table's, else inferred")
	f.StringVar(&o.TimestampFormat, "timestamp-format", "", "pattern of timestamp values without a zone, taken as UTC")
	f.StringSliceVar(&o.MergeKeys, "merge-key", nil, "key columns, comma-separated (required)")
	f.StringVar(&o.SequenceBy, "sequence-by", "", "column ordering the changes of a key: the highest wins, an older change never overwrites a newer row")
	f.StringVar(&o.DeleteWhen, "delete-when", "", `predicate over the input's columns marking deletes, e.g. "op = 'd'"`)
	f.StringSliceVar(&o.UpdateColumns, "update-columns", nil, "columns a matched change sets (default: every table column the input has)")
	f.StringVar(&o.CDCFormat, "cdc-format", "", "input records are change events: debezium (JSON envelope before/after/op/ts_ms, bare or in Kafka Connect's {schema, payload}; --schema is after's)")
	f.StringSliceVar(&o.PartitionBy, "partition-by", nil, "partition columns of a table the merge creates")
	f.StringVar(&o.AppID, "app-id", "", "txn appId: with --version, a rerun of the same merge is skipped (as table.Write's txnAppId)")
	f.Int64Var(&o.Version, "version", 0, "txn version for --app-id")
	f.StringVar(&o.TargetFileSize, "target-file-size", "", "roll data files at this size (default: delta.targetFileSize, else 128MiB)")
}

func newMergeCommand(g *globalOptions) *cobra.Command {
	var o MergeOptions
	cmd := &cobra.Command{
		Use:   "merge URL --source FILE --merge-key COL[,COL]",
		Short: "Upsert one batch of changes into a Delta table by key (MERGE), in one commit",
		Long: `Merge the rows of one input file into the Delta table at URL by the
--merge-key columns, as Spark's
  MERGE INTO t USING s ON t.k = s.k
  WHEN MATCHED AND <delete-when> THEN DELETE
  WHEN MATCHED THEN UPDATE SET * WHEN NOT MATCHED THEN INSERT *
Only the files that may hold the keys (partition values, key statistics)
are read, and only those with a changed row are rewritten; everything lands
in ONE commit (operation MERGE). Several rows of one key need --sequence-by
(the highest wins; ties: the later row), else the merge is refused; with
--sequence-by a change older than the table's row is not applied.
With --app-id and --version the commit records txn {appId, version}, and a
rerun of a version already committed is skipped. A missing table is created
from the input's columns (less those only --delete-when reads).

EXAMPLE
  lakesink merge ./customers --source changes.json --merge-key id \
    --sequence-by updated_at --delete-when "op = 'd'" --app-id backfill --version 3

EXIT STATUS
  0 ok (a skipped version is ok), 1 error (e.g. a duplicate key), 3 commit
  conflict left after the retries, 4 corrupt or unsupported table`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runMerge(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	_ = cmd.MarkFlagRequired("source")
	_ = cmd.MarkFlagRequired("merge-key")
	return cmd
}

func runMerge(ctx context.Context, p *printer, url string, o MergeOptions) error {
	if o.Version != 0 && o.AppID == "" {
		return fmt.Errorf("--version needs --app-id")
	}
	var target int64
	if o.TargetFileSize != "" {
		n, err := parseByteSizeFlag("target-file-size", o.TargetFileSize)
		if err != nil {
			return err
		}
		target = n
	}
	t, err := table.Open(ctx, url)
	if err != nil {
		return err
	}
	defer t.Close()
	var sch *schema.StructType
	if o.Schema != "" {
		if sch, err = loadSchema(o.Schema); err != nil {
			return err
		}
	} else if snap, err := t.Snapshot(ctx); err == nil {
		if sch, err = snap.Schema(); err != nil {
			return err
		}
	}
	deleteWhen := o.DeleteWhen
	var transform func(*schema.Batch) (*schema.Batch, error)
	decodeSchema := sch
	if o.CDCFormat != "" {
		if err := ingest.CheckCDC(o.CDCFormat, sink.Update, o.DeleteWhen); err != nil {
			return cdcFlagError(err)
		}
		if sch == nil {
			return cdcFlagError(&ingest.CDCError{Format: o.CDCFormat, Problem: ingest.CDCNeedsSchema})
		}
		var row *schema.StructType
		row, decodeSchema, transform = source.DebeziumDecoding(sch, o.SequenceBy)
		deleteWhen = source.DebeziumDeleteWhen(row)
	}
	evolve := o.Schema == "" && expr.ReadsColumnsOutside(deleteWhen, sch)
	batch, err := readOneFile(ctx, o.Source, o.Format, decodeSchema, o.TimestampFormat, evolve)
	if err != nil {
		return mergeHint(err)
	}
	if transform != nil {
		if batch, err = transform(batch); err != nil {
			return fmt.Errorf("--source %s: %w", o.Source, err)
		}
	}
	res, err := t.Merge(ctx, batch, table.MergeOptions{
		Keys: o.MergeKeys, SequenceBy: o.SequenceBy, DeleteWhen: deleteWhen, UpdateColumns: o.UpdateColumns,
		LastRowWins: o.CDCFormat != "", AppID: o.AppID, Version: o.Version, PartitionColumns: o.PartitionBy,
		TargetFileSizeBytes: target,
	})
	if err != nil {
		return partitionByError(mergeFlagError(err, o.CDCFormat != ""))
	}
	if p.json {
		return p.emitSummary(t.URL(), res)
	}
	if res.Skipped {
		p.summaryf("skipped: %s version %d is already committed (table version %d)\n", o.AppID, o.Version, res.Version)
		return nil
	}
	p.summaryf("merged %s into %s at version %d: %d inserted, %d updated, %d deleted; %s rewritten of %d (%d scanned), %s added\n",
		plural(res.NumSourceRows, "row", "rows"), t.URL(), res.Version, res.NumInserted, res.NumUpdated, res.NumDeleted,
		plural(res.NumFilesRemoved, "file", "files"), res.NumFilesInTable, res.NumFilesScanned, plural(res.NumFilesAdded, "file", "files"))
	return nil
}

// mergeHint says what to do about an input field the schema lacks. A merge
// writes the table's columns only and never changes the table's schema
// (as Delta's MERGE without schema evolution ignores source columns the
// target lacks): such a field is read only when --schema names it.
func mergeHint(err error) error {
	if errors.Is(err, source.ErrUnknownField) {
		return &hintError{err, err.Error() + "; merge does not add columns to the table: give --schema with the table's columns " +
			"and this one (a column the table lacks is read, e.g. by --delete-when, and not written), or leave the field out of the input"}
	}
	return err
}

// readOneFile decodes one input file with the file source's decoders.
// With evolve, columns the file has beyond schema are inferred and kept.
func readOneFile(ctx context.Context, fileURL, format string, sch *schema.StructType, tsFormat string, evolve bool) (*schema.Batch, error) {
	base, query := fileURL, ""
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base, query = base[:i], base[i:]
	}
	i := strings.LastIndexByte(base, '/')
	dir, name := ".", base
	if i >= 0 {
		dir, name = base[:i], base[i+1:]
		if dir == "" {
			dir = "/"
		}
	}
	st, err := storage.Open(ctx, dir+query)
	if err != nil {
		return nil, fmt.Errorf("--source: %w", err)
	}
	defer st.Close()
	if _, err := st.Stat(ctx, name); err != nil {
		return nil, fmt.Errorf("--source: %w", err)
	}
	opts := source.DefaultOptions(source.Format(format))
	opts.Schema = sch
	opts.TimestampFormat = tsFormat
	if evolve {
		opts.SchemaEvolution = source.SchemaEvolutionAddNewColumns
	}
	src, err := source.NewFileSource(oneFileStore{st, name}, opts)
	if err != nil {
		return nil, err
	}
	op, err := storage.NewOpener(storage.DefaultOptions()) // a private mem:// for the one-batch source log
	if err != nil {
		return nil, err
	}
	chk, err := op.Open(ctx, "mem://merge-source-log")
	if err != nil {
		return nil, err
	}
	defer chk.Close()
	if err := src.Start(ctx, chk); err != nil {
		return nil, err
	}
	end, err := src.LatestOffset(ctx, source.ReadLimit{})
	if err != nil {
		return nil, err
	}
	b, _, err := src.GetBatch(ctx, "", end)
	if err != nil {
		return nil, fmt.Errorf("--source %s: %w", fileURL, err)
	}
	return b, nil
}

// oneFileStore is a store whose listing shows one file.
type oneFileStore struct {
	storage.Store
	name string
}

func (s oneFileStore) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		for fi, err := range s.Store.List(ctx, prefix, startAfter) {
			if err != nil {
				yield(fi, err)
				return
			}
			if fi.Path == s.name && !yield(fi, nil) {
				return
			}
		}
	}
}
