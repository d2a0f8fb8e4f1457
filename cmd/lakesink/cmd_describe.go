package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// DescribeOptions are the flags of `lakesink describe`.
type DescribeOptions struct {
	Version   int64  // -1: latest
	Timestamp string // RFC 3339; empty: latest
	// SkipChecksum reads without checking the version's .crc.
	SkipChecksum bool
}

// AddFlags registers the flags.
func (o *DescribeOptions) AddFlags(f *pflag.FlagSet) {
	f.Int64Var(&o.Version, "version", -1, "describe this version (time travel); default latest")
	f.StringVar(&o.Timestamp, "timestamp", "", "describe the latest version at or before this time: RFC 3339, \"2024-01-31 10:00:00\" or 2024-01-31 (UTC), or epoch milliseconds")
	f.BoolVar(&o.SkipChecksum, "skip-checksum", false, "read the table even when a version checksum file (_delta_log/N.crc) disagrees with its commits (by default that is a corrupt table, exit 4)")
}

func newDescribeCommand(g *globalOptions) *cobra.Command {
	var o DescribeOptions
	cmd := &cobra.Command{
		Use:   "describe URL",
		Short: "Show a table's version, schema, protocol, properties, size and txn versions",
		Long: `Describe the Delta table at URL at its latest version (or --version N,
--timestamp T): schema, partition columns, protocol (reader/writer versions
and features), properties, the number and size of live files, the number of
records (summed from file stats; null when a file has none) and the txn
version of every appId (streaming query ids).

EXAMPLE
  lakesink describe ./demo/flights
  lakesink describe ./demo/flights --version 3 --json

A table whose rows lakesink cannot read (a reader feature it does not
implement, a reader version above 3, a catalog-managed table) is still
described: its protocol, schema and properties, a line saying why its
rows cannot be read (--json: "readable": false and "unreadableReason"),
and exit status 4; the figures that need the table's file state
(numFiles, sizeInBytes, numRecords, txns) are not shown (null). A
catalog-managed table (catalogManaged, catalogOwned-preview) may have
commits its catalog ratified that are not yet published in _delta_log/,
so without --version its latest version is not presented (--json:
"version" null, "latestPublishedVersion" the newest commit in
_delta_log/).

EXIT STATUS
  0 ok, 1 error (no table), 4 corrupt or unsupported table (an empty commit file, a version
  checksum .crc that disagrees with the log: see --skip-checksum; a table whose rows
  lakesink cannot read, described as above)`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			return runDescribe(cmd.Context(), newPrinter(g, cmd.OutOrStdout(), cmd.ErrOrStderr()), args[0], o)
		},
	}
	o.AddFlags(cmd.Flags())
	return cmd
}

// Description is the --json shape of describe. Version is null for a
// catalog-managed table described at its latest version (only its catalog
// knows that version; LatestPublishedVersion is the newest commit in
// _delta_log/); NumFiles, SizeInBytes, NumRecords and Txns are null when
// Readable is false (UnreadableReason says why).
type Description struct {
	Table                  string `json:"table"`
	Version                *int64 `json:"version"`
	LatestPublishedVersion *int64 `json:"latestPublishedVersion,omitempty"`
	// Timestamp is the commit time of Version (or LatestPublishedVersion).
	Timestamp        string            `json:"timestamp"`
	Readable         bool              `json:"readable"`
	UnreadableReason string            `json:"unreadableReason,omitempty"`
	ID               string            `json:"id"`
	Name             string            `json:"name,omitempty"`
	Description      string            `json:"description,omitempty"`
	Schema           json.RawMessage   `json:"schema"`
	PartitionColumns []string          `json:"partitionColumns"`
	MinReaderVersion int               `json:"minReaderVersion"`
	MinWriterVersion int               `json:"minWriterVersion"`
	ReaderFeatures   []string          `json:"readerFeatures"`
	WriterFeatures   []string          `json:"writerFeatures"`
	Properties       map[string]string `json:"properties"`
	NumFiles         *int              `json:"numFiles"`
	SizeInBytes      *int64            `json:"sizeInBytes"`
	NumRecords       *int64            `json:"numRecords"`
	Txns             map[string]int64  `json:"txns"`
}

// snapshotFor opens the snapshot a read command asks for.
func snapshotFor(ctx context.Context, t *table.Table, version int64, ts string) (*txlog.Snapshot, error) {
	switch {
	case version < -1:
		return nil, fmt.Errorf("--version %d: versions start at 0", version)
	case version >= 0 && ts != "":
		return nil, fmt.Errorf("give --version or --timestamp, not both")
	case version >= 0:
		return t.SnapshotAt(ctx, version)
	case ts != "":
		at, err := parseTime(ts)
		if err != nil {
			return nil, err
		}
		return t.SnapshotAsOf(ctx, at)
	default:
		return t.Snapshot(ctx)
	}
}

// catalogManagedFeature is the catalog-managed table feature of p
// (catalogManaged, or its earlier name catalogOwned-preview), or "". Only
// the managing catalog of such a table knows its latest version: ratified
// commits may not be published in _delta_log/ yet (they may sit in
// _delta_log/_staged_commits/ or in the catalog), and filesystem-based
// access is not supported (PROTOCOL.md "Catalog-managed tables",
// protocol_rfcs/accepted/catalog-managed.md).
func catalogManagedFeature(p txlog.Protocol) string {
	for _, f := range slices.Concat(p.ReaderFeatures, p.WriterFeatures) {
		if f == txlog.FeatureCatalogManaged || f == txlog.FeatureCatalogOwnedPreview {
			return f
		}
	}
	return ""
}

// unreadableReason words why rows of a table cannot be read, from the
// refusal of reader.CheckReadable.
func unreadableReason(p txlog.Protocol, err error) string {
	var ufe *txlog.UnsupportedFeatureError
	if !errors.As(err, &ufe) {
		return err.Error()
	}
	switch f := ufe.Feature; {
	case f == txlog.FeatureCatalogManaged || f == txlog.FeatureCatalogOwnedPreview:
		return fmt.Sprintf("the table is catalog-managed (reader feature %q): only its managing catalog may read it, "+
			"filesystem-based access is not supported (PROTOCOL.md \"Catalog-managed tables\")", f)
	case strings.HasPrefix(f, "readerVersion "):
		return fmt.Sprintf("it needs reader version %d; lakesink reads reader versions 1 to 3", p.MinReaderVersion)
	case strings.HasPrefix(f, "columnMapping mode "):
		return fmt.Sprintf("its delta.columnMapping.mode is %q; lakesink reads none, name and id", strings.TrimPrefix(f, "columnMapping mode "))
	default:
		return fmt.Sprintf("it needs the reader feature %q, which lakesink does not implement", f)
	}
}

// describe builds the Description of a snapshot; latest says the snapshot
// is the latest version found in _delta_log/ (no --version). readErr is
// reader.CheckReadable's refusal, or nil.
func describe(url string, snap *txlog.Snapshot, latest bool, readErr error) (Description, error) {
	md, pr := snap.Metadata(), snap.Protocol()
	v := snap.Version()
	d := Description{
		Table: url, Version: &v, Timestamp: snap.Timestamp().UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		Readable: readErr == nil,
		ID:       md.ID, Name: md.Name, Description: md.Description,
		Schema: json.RawMessage(md.SchemaString), PartitionColumns: md.PartitionColumns,
		MinReaderVersion: pr.MinReaderVersion, MinWriterVersion: pr.MinWriterVersion,
		ReaderFeatures: nonNil(pr.ReaderFeatures), WriterFeatures: nonNil(pr.WriterFeatures),
		Properties: md.Configuration,
	}
	if latest && catalogManagedFeature(pr) != "" {
		d.Version, d.LatestPublishedVersion = nil, &v
	}
	if d.Properties == nil {
		d.Properties = map[string]string{}
	}
	if d.PartitionColumns == nil {
		d.PartitionColumns = []string{}
	}
	if !json.Valid(d.Schema) {
		return d, fmt.Errorf("%w: schemaString of version %d is not valid JSON", txlog.ErrCorruptLog, snap.Version())
	}
	if readErr != nil {
		// The file state of a log replayed without the reader feature it
		// needs may be wrong: no figure is drawn from it.
		d.UnreadableReason = unreadableReason(pr, readErr)
		return d, nil
	}
	n, size := snap.NumFiles(), snap.SizeInBytes()
	d.NumFiles, d.SizeInBytes, d.Txns = &n, &size, snap.Txns()
	if total, ok := statsRecords(snap); ok {
		d.NumRecords = &total
	}
	return d, nil
}

// statsRecords sums numRecords over the live files' stats (PROTOCOL.md,
// "Per-file Statistics"); ok is false when a file has none.
func statsRecords(snap *txlog.Snapshot) (total int64, ok bool) {
	for _, a := range snap.Files() {
		var st struct {
			NumRecords *int64 `json:"numRecords"`
		}
		if a.Stats == "" || json.Unmarshal([]byte(a.Stats), &st) != nil || st.NumRecords == nil {
			return 0, false
		}
		total += *st.NumRecords
		if a.DeletionVector != nil {
			// Rows a deletion vector marks are deleted (PROTOCOL.md
			// "Deletion Vectors": cardinality is the number of rows it
			// marks); stats.numRecords still counts them.
			total -= a.DeletionVector.Cardinality
		}
	}
	return total, true
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func runDescribe(ctx context.Context, p *printer, url string, o DescribeOptions) error {
	if st, err := storage.Open(ctx, url); err == nil {
		isFileSink, err := filesink.HasLog(ctx, st)
		hasDelta := false
		for _, lerr := range st.List(ctx, "_delta_log/", "") {
			hasDelta = lerr == nil
			break
		}
		st.Close()
		if err == nil && isFileSink && !hasDelta {
			return describeFileSink(ctx, p, url)
		}
	}
	topts := []table.Option{table.ReadOnly()}
	if o.SkipChecksum {
		topts = append(topts, table.WithoutChecksumValidation())
	}
	t, err := table.Open(ctx, url, topts...)
	if err != nil {
		return err
	}
	defer t.Close()
	snap, err := snapshotFor(ctx, t, o.Version, o.Timestamp)
	if err != nil {
		return checksumHint(err)
	}
	readErr := reader.CheckReadable(snap)
	d, err := describe(t.URL(), snap, o.Version < 0 && o.Timestamp == "", readErr)
	if err != nil {
		return err
	}
	if readErr != nil {
		// The description is printed, and the command ends with the
		// refusal (exit 4), as scan would.
		readErr = fmt.Errorf("%s version %d: %w", t.URL(), snap.Version(), readErr)
	}
	if p.json {
		if err := p.emitValue("table", d); err != nil {
			return err
		}
		return readErr
	}
	p.textf("table        %s\n", d.Table)
	if d.Version != nil {
		p.textf("version      %d (%s)\n", *d.Version, d.Timestamp)
	} else {
		p.textf("version      unknown: the table is catalog-managed (%s), only its catalog knows its latest version; "+
			"the newest commit published in _delta_log/ is %d (%s)\n", catalogManagedFeature(snap.Protocol()), *d.LatestPublishedVersion, d.Timestamp)
	}
	if d.Name != "" {
		p.textf("name         %s\n", d.Name)
	}
	p.textf("protocol     reader %d / writer %d", d.MinReaderVersion, d.MinWriterVersion)
	if len(d.ReaderFeatures)+len(d.WriterFeatures) > 0 {
		p.textf("  features: reader [%s] writer [%s]", strings.Join(d.ReaderFeatures, ", "), strings.Join(d.WriterFeatures, ", "))
	}
	p.textf("\n")
	if !d.Readable {
		p.textf("rows         cannot be read by lakesink: %s\n", d.UnreadableReason)
	}
	if s, err := snap.Schema(); err == nil {
		p.textf("schema\n")
		for _, f := range s.Fields {
			null := ""
			if !f.Nullable {
				null = " not null"
			}
			p.textf("  %-20s %s%s\n", f.Name, f.Type.TypeName(), null)
		}
	}
	p.textf("partitioned  [%s]\n", strings.Join(d.PartitionColumns, ", "))
	if d.Readable {
		recs := "unknown (a file has no stats)"
		if d.NumRecords != nil {
			recs = fmt.Sprint(*d.NumRecords)
		}
		p.textf("files        %d (%s), records %s\n", *d.NumFiles, humanBytes(*d.SizeInBytes), recs)
	} else {
		p.textf("files        not shown: the file state of a table lakesink cannot read is not known to it\n")
	}
	if len(d.Properties) > 0 {
		keys := make([]string, 0, len(d.Properties))
		for k := range d.Properties {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		p.textf("properties\n")
		for _, k := range keys {
			p.textf("  %s=%s\n", k, d.Properties[k])
		}
	}
	if len(d.Txns) > 0 {
		ids := make([]string, 0, len(d.Txns))
		for k := range d.Txns {
			ids = append(ids, k)
		}
		sort.Strings(ids)
		p.textf("txns (appId -> version)\n")
		for _, k := range ids {
			p.textf("  %s -> %d\n", k, d.Txns[k])
		}
	}
	return readErr
}

// FileSinkDescription is the --json shape of describe for a Spark file-sink
// directory (read through its _spark_metadata log).
type FileSinkDescription struct {
	Directory        string          `json:"directory"`
	Kind             string          `json:"kind"`
	LatestBatchID    int64           `json:"latestBatchId"`
	Schema           json.RawMessage `json:"schema"`
	PartitionColumns []string        `json:"partitionColumns"`
	NumFiles         int             `json:"numFiles"`
	SizeInBytes      int64           `json:"sizeInBytes"`
}

func describeFileSink(ctx context.Context, p *printer, url string) error {
	snap, err := reader.Open(ctx, url)
	if err != nil {
		return err
	}
	defer snap.Close()
	files, err := snap.Files(ctx, nil)
	if err != nil {
		return err
	}
	// The store's URL, as describe prints a Delta table (file:///abs/path).
	d := FileSinkDescription{Directory: snap.Store().URL(), Kind: string(snap.Kind()), LatestBatchID: snap.Version(),
		PartitionColumns: nonNil(snap.PartitionColumns()), NumFiles: len(files)}
	for _, f := range files {
		d.SizeInBytes += f.Size
	}
	if s := snap.Schema(); s != nil {
		if d.Schema, err = s.MarshalJSON(); err != nil {
			return err
		}
	}
	if p.json {
		return p.emitValue("filesink", d)
	}
	p.textf("file-sink    %s (Spark file sink, read through _spark_metadata)\n", d.Directory)
	p.textf("batch        %d (latest in the log)\n", d.LatestBatchID)
	if s := snap.Schema(); s != nil {
		p.textf("schema\n")
		for _, f := range s.Fields {
			p.textf("  %-20s %s\n", f.Name, f.Type.TypeName())
		}
	}
	p.textf("partitioned  [%s]\n", strings.Join(d.PartitionColumns, ", "))
	p.textf("files        %d (%s)\n", d.NumFiles, humanBytes(d.SizeInBytes))
	return nil
}
