package reader

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// Kind is the on-disk format a snapshot was read from.
type Kind string

// Kinds of snapshot.
const (
	KindDelta    Kind = "delta"
	KindFileSink Kind = "filesink"
)

// Column mapping modes (PROTOCOL.md, "Column Mapping").
const (
	MappingNone = "none"
	MappingName = "name"
	MappingID   = "id"
)

// Snapshot is a consistent, immutable view of a table: a Delta table at one
// version, or the live files of a file-sink directory at the time it was
// opened. It is safe for concurrent use. Close releases the store when Open
// opened it.
type Snapshot struct {
	store      storage.Store
	owned      bool
	kind       Kind
	delta      *txlog.Snapshot // KindDelta only
	log        *txlog.Log      // KindDelta only: the log the snapshot was read from
	version    int64
	timestamp  time.Time
	schema     *schema.StructType
	partitions []string // logical names, in the table's order
	mapping    string
	sinkFiles  []File // KindFileSink: the live files (partition values from paths)
	sinkJSON   bool   // KindFileSink: the data files are JSON lines (filesink.IsJSONFile)
}

// Open opens a snapshot of the table at tableURL (a path, file://, mem:// or
// s3:// URL; see storage): the latest version, or the version
// chosen with AtVersion or AsOf. A Delta table is recognised by its
// _delta_log; a URL ending in _spark_metadata, or a directory with a
// _spark_metadata log and no _delta_log, is read as a Spark file-sink
// directory (time travel does not apply to it). A table that needs a reader
// feature lakesink does not implement is refused with a
// *txlog.UnsupportedFeatureError naming the feature.
func Open(ctx context.Context, tableURL string, opts ...Option) (*Snapshot, error) {
	o := openOptions{version: -1}
	for _, fn := range opts {
		fn(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	forceSink := false
	if trimmed := strings.TrimRight(tableURL, "/"); strings.HasSuffix(trimmed, "/"+filesink.MetadataDir) || trimmed == filesink.MetadataDir {
		forceSink = true
		tableURL = strings.TrimSuffix(trimmed, filesink.MetadataDir)
		if tableURL == "" {
			tableURL = "."
		}
	}
	store := o.store
	owned := false
	if store == nil {
		st, err := storage.Open(ctx, tableURL)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", tableURL, err)
		}
		store, owned = st, true
	}
	s, err := open(ctx, store, o, forceSink)
	if err != nil {
		if owned {
			store.Close()
		}
		return nil, err
	}
	s.owned = owned
	return s, nil
}

func open(ctx context.Context, store storage.Store, o openOptions, forceSink bool) (*Snapshot, error) {
	if !forceSink {
		lo := txlog.DefaultOptions()
		if o.logOptions != nil {
			lo = *o.logOptions
		}
		if o.skipCRC {
			lo.SkipChecksumValidation = true
		}
		lo.ReadOnly = true // a reader writes nothing (no checkpoint memo kept)
		l, err := txlog.New(store, lo)
		if err != nil {
			return nil, fmt.Errorf("open %s: %w", store.URL(), err)
		}
		s, err := openLog(ctx, store, l, o)
		if err == nil || !errors.Is(err, txlog.ErrTableNotFound) {
			return s, err
		}
		// No Delta log: try a file-sink directory.
		fl, ferr := filesink.NewLog(store, filesink.DefaultOptions())
		if ferr != nil {
			return nil, fmt.Errorf("open %s: %w", store.URL(), ferr)
		}
		ok, ferr := fl.Exists(ctx)
		if ferr != nil || !ok {
			return nil, fmt.Errorf("%w: %s: %w", ErrNotATable, store.URL(), err)
		}
	}
	if o.version >= 0 || o.hasAsOf {
		return nil, fmt.Errorf("%w: time travel does not apply to the file-sink directory %s", ErrOption, store.URL())
	}
	return openFileSink(ctx, store, o)
}

// OpenTable opens a snapshot of t, a Delta table already open, through t's
// own store and transaction log (so with the log options and checksum
// validation t was opened with), without reopening it by URL: the latest
// version, or the one chosen with AtVersion or AsOf. It returns what Open
// returns for the same table, with the same errors (a table without a log
// is ErrNotATable; a missing version matches txlog.ErrVersionNotFound).
// WithStore, WithLogOptions, SkipChecksumValidation and
// WithLegacyFileSinkDeletes do not apply (the table brings its own) and are
// refused with ErrOption. Close does not close t's store.
//
// The snapshot is read here rather than by a method of table.Table because
// the import direction runs reader → table (docs/design.md, "Packages"):
// reader already imports filesink, which implements sink's interface, and
// sink writes through table.
func OpenTable(ctx context.Context, t *table.Table, opts ...Option) (*Snapshot, error) {
	o := openOptions{version: -1}
	for _, fn := range opts {
		fn(&o)
	}
	if err := o.validate(); err != nil {
		return nil, err
	}
	if o.store != nil || o.logOptions != nil || o.skipCRC || o.legacyDel {
		return nil, fmt.Errorf("%w: OpenTable %s reads with the table's own store and log options: WithStore, WithLogOptions, SkipChecksumValidation and WithLegacyFileSinkDeletes do not apply", ErrOption, t.URL())
	}
	s, err := openLog(ctx, t.Store(), t.Log(), o)
	switch {
	case errors.Is(err, txlog.ErrTableNotFound):
		return nil, fmt.Errorf("%w: %s: %w", ErrNotATable, t.URL(), err)
	case err != nil:
		return nil, err
	}
	return s, nil
}

// openLog reads the snapshot o chooses from the Delta log l of store. Errors
// other than those of newDeltaSnapshot name the store's URL; a table without
// a log matches txlog.ErrTableNotFound.
func openLog(ctx context.Context, store storage.Store, l *txlog.Log, o openOptions) (*Snapshot, error) {
	var ds *txlog.Snapshot
	var err error
	switch {
	case o.version >= 0:
		ds, err = l.SnapshotAt(ctx, o.version)
	case o.hasAsOf:
		ds, err = l.SnapshotAsOf(ctx, o.asOf)
	default:
		ds, err = l.Snapshot(ctx)
	}
	if err != nil {
		if errors.Is(err, txlog.ErrTableNotFound) {
			return nil, err
		}
		return nil, fmt.Errorf("open %s: %w", store.URL(), err)
	}
	s, err := newDeltaSnapshot(store, ds)
	if err != nil {
		return nil, err
	}
	s.log = l
	return s, nil
}

// CheckReadable returns the *txlog.UnsupportedFeatureError (errors.Is
// storage.ErrCorrupt) with which Open refuses the rows of the Delta
// snapshot ds, or nil when Open reads them: a reader version above 3, a
// reader feature outside those this package implements (catalogManaged
// and catalogOwned-preview among them: only their catalog may read such a
// table, PROTOCOL.md "Catalog-managed tables"), or a
// delta.columnMapping.mode other than none, name and id. It reads nothing
// beyond ds: a describe of a table can say whether its rows can be read
// without opening it twice. PROTOCOL.md "Reader Version Requirements",
// "Table Features".
func CheckReadable(ds *txlog.Snapshot) error {
	if err := checkReadable(ds.Protocol(), ds.Metadata()); err != nil {
		return err
	}
	switch mode := ds.Properties().ColumnMappingMode; mode {
	case MappingNone, MappingName, MappingID:
		return nil
	default:
		return &txlog.UnsupportedFeatureError{Feature: "columnMapping mode " + mode}
	}
}

func newDeltaSnapshot(store storage.Store, ds *txlog.Snapshot) (*Snapshot, error) {
	md := ds.Metadata()
	if err := CheckReadable(ds); err != nil {
		return nil, fmt.Errorf("%s version %d: %w", store.URL(), ds.Version(), err)
	}
	sch, err := ds.Schema()
	if err != nil {
		return nil, fmt.Errorf("%s version %d: schema: %w", store.URL(), ds.Version(), err)
	}
	mode := ds.Properties().ColumnMappingMode
	for _, p := range md.PartitionColumns {
		if partitionField(sch, p) < 0 {
			return nil, fmt.Errorf("%w: %s version %d: partition column %q is not in the schema", ErrCorruptFile, store.URL(), ds.Version(), p)
		}
	}
	parts := make([]string, len(md.PartitionColumns))
	for i, p := range md.PartitionColumns {
		parts[i] = sch.Fields[partitionField(sch, p)].Name
	}
	return &Snapshot{store: store, kind: KindDelta, delta: ds, version: ds.Version(), timestamp: ds.Timestamp(),
		schema: sch, partitions: parts, mapping: mode}, nil
}

// partitionField finds a partition column by logical or physical name.
func partitionField(sch *schema.StructType, name string) int {
	for i, f := range sch.Fields {
		if f.Name == name || f.PhysicalName() == name {
			return i
		}
	}
	for i, f := range sch.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// supportedReaderFeatures are the reader features rows are read correctly
// for: txlog's (timestampNtz, v2Checkpoint, vacuumProtocolCheck,
// typeWidening) plus column mapping, deletion vectors and variantType (and
// its preview name; values decoded from the Parquet variant binary encoding
// into schema.Variant, PROTOCOL.md "Variant Data Type"), which this package
// implements. Shredded variants (variantShredding) are not read yet.
var supportedReaderFeatures = append(slices.Clone(txlog.SupportedReaderFeatures),
	txlog.FeatureColumnMapping, txlog.FeatureDeletionVectors, txlog.FeatureVariantType, txlog.FeatureVariantTypePreview)

// checkReadable refuses a table whose protocol needs a reader feature we do
// not implement (PROTOCOL.md, "Reader Version Requirements", "Table
// Features"): reader version > 3, or version 3 with an unknown feature.
func checkReadable(p txlog.Protocol, _ txlog.Metadata) error {
	switch {
	case p.MinReaderVersion <= 2:
		return nil
	case p.MinReaderVersion == 3:
		for _, f := range p.ReaderFeatures {
			if !slices.Contains(supportedReaderFeatures, f) {
				return &txlog.UnsupportedFeatureError{Feature: f}
			}
		}
		return nil
	}
	return &txlog.UnsupportedFeatureError{Feature: fmt.Sprintf("readerVersion %d", p.MinReaderVersion)}
}

// Close releases the store if Open opened it.
func (s *Snapshot) Close() error {
	if s.owned {
		return s.store.Close()
	}
	return nil
}

// Kind is the format of the table.
func (s *Snapshot) Kind() Kind { return s.kind }

// Version is the Delta table version; for a file-sink directory, the latest
// batch id.
func (s *Snapshot) Version() int64 { return s.version }

// Timestamp is the commit time of the version (zero for file-sink
// directories).
func (s *Snapshot) Timestamp() time.Time { return s.timestamp }

// Schema is the logical table schema (partition columns included).
func (s *Snapshot) Schema() *schema.StructType { return s.schema }

// PartitionColumns are the partition columns' logical names.
func (s *Snapshot) PartitionColumns() []string { return slices.Clone(s.partitions) }

// ColumnMappingMode is "none", "name" or "id".
func (s *Snapshot) ColumnMappingMode() string { return s.mapping }

// Delta is the underlying log snapshot (nil for a file-sink directory).
func (s *Snapshot) Delta() *txlog.Snapshot { return s.delta }

// Store is the store rooted at the table.
func (s *Snapshot) Store() storage.Store { return s.store }

// Predicate parses and binds a predicate string against the schema. Errors
// wrap expr.ErrSyntax (a *expr.SyntaxError with the position) or
// expr.ErrBind.
func (s *Snapshot) Predicate(where string) (*expr.Predicate, error) {
	return expr.ParseAndBind(where, s.schema)
}

// File is one live data file of a snapshot.
type File struct {
	// Path is the path as written in the log (URL-encoded, maybe absolute).
	Path string `json:"path"`
	// Key is the storage key of the file relative to the table root.
	Key string `json:"key"`
	// Size in bytes.
	Size int64 `json:"size"`
	// ModificationTime of the file.
	ModificationTime time.Time `json:"modificationTime"`
	// PartitionValues are typed per the schema, keyed by logical column
	// name; a nil value is a null partition.
	PartitionValues map[string]any `json:"partitionValues,omitempty"`
	// Stats are the parsed statistics, nil when the file has none.
	Stats *expr.Stats `json:"stats,omitempty"`
	// NumRecords from the statistics (physical rows, deleted ones
	// included), -1 when unknown.
	NumRecords int64 `json:"numRecords"`
	// DeletionVector is the file's deletion vector descriptor, nil if none.
	DeletionVector *txlog.DeletionVector `json:"deletionVector,omitempty"`
}

// Files returns the live files, in snapshot order (by path), that may hold
// a row matching pred (nil: all files). Pruning uses partition values and
// statistics and is conservative (see package expr); it is an optimisation,
// never the filter.
func (s *Snapshot) Files(ctx context.Context, pred *expr.Predicate) ([]File, error) {
	var all []File
	if s.kind == KindFileSink {
		all = s.sinkFiles
	} else {
		adds := s.delta.Files()
		all = make([]File, 0, len(adds))
		for i, a := range adds {
			if i%1024 == 0 {
				if err := ctx.Err(); err != nil {
					return nil, err
				}
			}
			f, err := s.fileOf(a)
			if err != nil {
				return nil, err
			}
			all = append(all, f)
		}
	}
	if pred == nil {
		return slices.Clone(all), nil
	}
	out := make([]File, 0, len(all))
	for _, f := range all {
		if s.mayMatch(pred, &f) {
			out = append(out, f)
		}
	}
	return out, nil
}

func (s *Snapshot) fileOf(a *txlog.Add) (File, error) {
	key, err := s.delta.FileKey(a.Path)
	if err != nil {
		return File{}, fmt.Errorf("%w: %s version %d: %w", ErrCorruptFile, s.store.URL(), s.version, err)
	}
	f := File{Path: a.Path, Key: key, Size: a.Size, ModificationTime: time.UnixMilli(a.ModificationTime).UTC(),
		NumRecords: -1, DeletionVector: a.DeletionVector}
	if len(s.partitions) > 0 {
		f.PartitionValues = make(map[string]any, len(s.partitions))
		for _, name := range s.partitions {
			field := s.schema.Fields[partitionField(s.schema, name)]
			raw, ok := a.PartitionValues[field.PhysicalName()]
			if !ok {
				raw = a.PartitionValues[field.Name]
			}
			v, err := expr.ParsePartitionValue(raw, field.Type)
			if err != nil {
				return File{}, fmt.Errorf("%w: %s: file %s: %w", ErrCorruptFile, s.store.URL(), a.Path, err)
			}
			f.PartitionValues[name] = v
		}
	}
	if a.Stats != "" {
		st, err := expr.ParseStats(a.Stats)
		if err == nil && st != nil {
			f.Stats = st
			if st.NumRecords != nil {
				f.NumRecords = *st.NumRecords
			}
		}
		// Unparsable statistics are ignored: they can only prune.
	}
	return f, nil
}

// typeChanged: a field on the column's path was widened (delta.typeChanges).
// Statistics of files written before the change are in the older type, and
// the log does not say which files those are, so none of the column's
// statistics are used for skipping (PROTOCOL.md "Type Widening": reader
// requirements; the protocol allows not using them at all).
func typeChanged(c *expr.BoundColumn) bool {
	for _, f := range c.Fields {
		if f.TypeChanged() {
			return true
		}
	}
	return false
}

// mayMatch evaluates pred on what is known about the file.
func (s *Snapshot) mayMatch(pred *expr.Predicate, f *File) bool {
	cols := pred.Columns()
	return pred.MayMatch(func(i int) expr.Domain {
		c := cols[i]
		if len(c.Path) == 1 && slices.Contains(s.partitions, c.Path[0]) {
			return expr.ExactDomain(f.PartitionValues[c.Path[0]])
		}
		if f.Stats == nil || typeChanged(c) {
			return expr.UnknownDomain()
		}
		phys := c.PhysicalPath()
		d := f.Stats.Domain(phys, c.Type)
		if d.Min == nil && d.Max == nil && d.NullCount < 0 && !slices.Equal(phys, c.Path) {
			// Some writers key statistics by logical names even with
			// column mapping; they still describe the column.
			d = f.Stats.Domain(c.Path, c.Type)
		}
		return d
	})
}
