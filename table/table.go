package table

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

// Version is lakesink's version, written as commitInfo.engineInfo "lakesink/<Version>".
const Version = "0.1.0"

// EngineInfo is the commitInfo.engineInfo value of every lakesink commit.
const EngineInfo = "lakesink/" + Version

// Table is a Delta table at a storage location. Reads load the latest
// snapshot from the log, so a long-lived *Table always sees the latest
// commits. Write keeps the snapshot its last commit produced
// (txlog.Transaction.PostCommitSnapshot) and brings it up to date before
// the next write by reading only the commits after it (txlog.Log.Update;
// Delta's SnapshotManagement.update): a blind append costs a constant
// number of store calls whatever the table's size. After a failed commit
// (a conflict, an unknown outcome) the held snapshot stays, so the next
// write also reads only the commits after it, the winners included; an
// error reading the log drops it and the next write loads the log again.
// Safe for concurrent use.
type Table struct {
	store        storage.Store
	log          *txlog.Log
	owned        bool // Close closes the store
	singleWriter bool

	probeMu sync.Mutex
	probed  bool  // the conditional-write probe ran
	probe   error // and its outcome

	held struct {
		sync.Mutex
		snap *txlog.Snapshot // the newest snapshot a write read or committed
	}
}

// writeSnapshot is the latest snapshot for a write: the held one brought
// up to date, or (none held) a full load. txlog.ErrTableNotFound when there
// is no table.
func (t *Table) writeSnapshot(ctx context.Context) (*txlog.Snapshot, error) {
	t.held.Lock()
	h := t.held.snap
	t.held.Unlock()
	var s *txlog.Snapshot
	var err error
	if h == nil {
		s, err = t.log.Snapshot(ctx)
	} else {
		s, err = t.log.Update(ctx, h)
	}
	if err != nil {
		t.forget()
		return nil, err
	}
	t.hold(s)
	return s, nil
}

// hold keeps s for the next write unless a newer one is held.
func (t *Table) hold(s *txlog.Snapshot) {
	if s == nil {
		return
	}
	t.held.Lock()
	defer t.held.Unlock()
	if t.held.snap == nil || s.Version() >= t.held.snap.Version() {
		t.held.snap = s
	}
}

// forget drops the held snapshot: the next write loads the log.
func (t *Table) forget() {
	t.held.Lock()
	t.held.snap = nil
	t.held.Unlock()
}

// config collects the Options of Open and Create.
type config struct {
	log          txlog.Options
	singleWriter bool
	skipCRC      bool
	// checkpointOnCommit: WithCheckpointOnCommit.
	checkpointOnCommit bool
	readOnly           bool // ReadOnly
}

// Option configures Open and Create.
type Option func(*config)

// WithLogOptions replaces the transaction log options (commit attempts,
// checkpoint interval, clock, ...); zero fields take their defaults.
func WithLogOptions(o txlog.Options) Option { return func(c *config) { c.log = o } }

// WithoutChecksumValidation loads snapshots without checking them against
// their version's _delta_log/N.crc (txlog.Options.SkipChecksumValidation),
// whatever WithLogOptions says: by default a version whose .crc disagrees
// with its replayed state is a *txlog.CorruptLogError.
func WithoutChecksumValidation() Option { return func(c *config) { c.skipCRC = true } }

// WithSingleWriter skips the conditional-write probe of object stores: the
// caller promises that only one process writes the table, so that a store
// that ignores If-None-Match cannot lose a commit to a concurrent writer.
func WithSingleWriter() Option { return func(c *config) { c.singleWriter = true } }

// WithCheckpointOnCommit writes each automatic checkpoint (every
// delta.checkpointInterval versions) before the Write that made it due
// returns, as Delta's post-commit hook does, instead of after it in the
// background (the default; txlog.Options.BackgroundCheckpoint): for a
// caller that must see the checkpoint on disk when Write returns.
func WithCheckpointOnCommit() Option { return func(c *config) { c.checkpointOnCommit = true } }

// ReadOnly opens a table that is only read (snapshots, history): its log
// keeps nothing for writing, such as the loaded checkpoint's bytes kept to
// seed the next checkpoint (txlog.Options.ReadOnly, whatever WithLogOptions
// says), and every write fails with txlog.ErrReadOnly.
func ReadOnly() Option { return func(c *config) { c.readOnly = true } }

// Open opens the table at url (a path, file://, mem:// or s3:// URL). It does
// no I/O beyond opening the store: a missing table is reported by the first
// read (txlog.ErrTableNotFound), so that a writer can create it.
func Open(ctx context.Context, url string, opts ...Option) (*Table, error) {
	st, err := storage.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", url, err)
	}
	t, err := OpenStore(st, opts...)
	if err != nil {
		st.Close()
		return nil, err
	}
	t.owned = true
	return t, nil
}

// OpenStore opens the table rooted at store. The caller keeps ownership of
// store (Close does not close it).
func OpenStore(store storage.Store, opts ...Option) (*Table, error) {
	c := config{log: txlog.DefaultOptions()}
	for _, o := range opts {
		o(&c)
	}
	c.log.EngineInfo = EngineInfo
	// A write's automatic checkpoint is written after Write returned
	// (txlog.Options.BackgroundCheckpoint); Close waits for it.
	c.log.BackgroundCheckpoint = !c.checkpointOnCommit
	if c.skipCRC {
		c.log.SkipChecksumValidation = true
	}
	if c.readOnly {
		c.log.ReadOnly = true
	}
	l, err := txlog.New(store, c.log)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", store.URL(), err)
	}
	return &Table{store: store, log: l, singleWriter: c.singleWriter}, nil
}

// Close waits for the automatic checkpoint a write left running
// (txlog.Log.Close; later writes write theirs before they return) and
// releases the store if Open opened it. A process that exits without Close
// may lose that checkpoint, never a commit: the table stays readable from
// the previous one and the commits after it.
func (t *Table) Close() error {
	err := t.log.Close()
	if t.owned {
		err = errors.Join(err, t.store.Close())
	}
	return err
}

// URL is the table root.
func (t *Table) URL() string { return t.store.URL() }

// Store is the storage rooted at the table root.
func (t *Table) Store() storage.Store { return t.store }

// Log is the table's transaction log.
func (t *Table) Log() *txlog.Log { return t.log }

// Exists reports whether the table has a log with at least one commit.
func (t *Table) Exists(ctx context.Context) (bool, error) {
	_, err := t.log.LatestVersion(ctx)
	if errors.Is(err, txlog.ErrTableNotFound) {
		return false, nil
	}
	return err == nil, err
}

// Snapshot returns the log state at the latest version (protocol, metadata,
// live add actions, txns; see txlog.Snapshot). txlog.ErrTableNotFound if
// there is no table. To read rows, use reader.OpenTable(ctx, t).
func (t *Table) Snapshot(ctx context.Context) (*txlog.Snapshot, error) {
	s, err := t.log.Snapshot(ctx)
	return s, t.wrap(err)
}

// wrap names the table in an error from the log.
func (t *Table) wrap(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("table %s: %w", t.URL(), err)
}

// SnapshotAt returns the snapshot of version v (txlog.ErrVersionNotFound if
// the version is not in the log).
func (t *Table) SnapshotAt(ctx context.Context, v int64) (*txlog.Snapshot, error) {
	s, err := t.log.SnapshotAt(ctx, v)
	return s, t.wrap(err)
}

// SnapshotAsOf returns the snapshot of the latest commit at or before ts
// (txlog.ErrTimestampOutOfRange before the first commit).
func (t *Table) SnapshotAsOf(ctx context.Context, ts time.Time) (*txlog.Snapshot, error) {
	s, err := t.log.SnapshotAsOf(ctx, ts)
	return s, t.wrap(err)
}

// History returns up to limit commits, newest first (limit <= 0: all).
func (t *Table) History(ctx context.Context, limit int) ([]txlog.CommitEntry, error) {
	h, err := t.log.History(ctx, limit)
	return h, t.wrap(err)
}

// CreateOptions describe a new table.
type CreateOptions struct {
	Schema           *schema.StructType // required
	PartitionColumns []string           // top-level columns of Schema, in directory order
	Properties       map[string]string  // table properties (delta.*), written as metaData.configuration
	Name             string             // metaData.name, "" for none
	Description      string             // metaData.description, "" for none
}

// Validate lists every problem with the options.
func (o CreateOptions) Validate() error {
	var errs []error
	if o.Schema == nil || len(o.Schema.Fields) == 0 {
		errs = append(errs, fmt.Errorf("%w: a schema with at least one column is required", ErrInvalidOptions))
	} else {
		if err := schema.ValidateForWrite(o.Schema); err != nil {
			errs = append(errs, err)
		}
		seen := map[string]bool{}
		for _, c := range o.PartitionColumns {
			if seen[c] {
				errs = append(errs, fmt.Errorf("%w: partition column %q given twice", ErrInvalidOptions, c))
			}
			seen[c] = true
		}
		if err := schema.CheckPartitionColumns(o.Schema, o.PartitionColumns); err != nil {
			errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOptions, err))
		}
	}
	if err := txlog.ValidateProperties(o.Properties); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOptions, err))
	}
	return errors.Join(errs...)
}

// newTableActions returns the protocol and metaData actions of a new table.
func newTableActions(o CreateOptions, now time.Time) ([]txlog.Action, error) {
	if err := o.Validate(); err != nil {
		return nil, err
	}
	schemaJSON, err := o.Schema.MarshalJSON()
	if err != nil {
		return nil, fmt.Errorf("encode schema: %w", err)
	}
	created := now.UnixMilli()
	proto := txlog.NewTableProtocol(string(schemaJSON))
	props, _ := txlog.ParseTableProperties(o.Properties) // validated above
	if props.EnableInCommitTimestamps {
		proto = withWriterFeature(proto, txlog.FeatureInCommitTimestamp)
	}
	if props.EnableDeletionVectors {
		proto = withDeletionVectors(proto)
	}
	md := txlog.Metadata{
		ID:               uuid.NewString(),
		Name:             o.Name,
		Description:      o.Description,
		Format:           txlog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     string(schemaJSON),
		PartitionColumns: slices.Clone(o.PartitionColumns),
		Configuration:    maps.Clone(o.Properties),
		CreatedTime:      &created,
	}
	if md.PartitionColumns == nil {
		md.PartitionColumns = []string{}
	}
	if md.Configuration == nil {
		md.Configuration = map[string]string{}
	}
	return []txlog.Action{{Protocol: &proto}, {MetaData: &md}}, nil
}

// withWriterFeature is p with the writer feature f at writer version 7. A
// legacy writer version lists the features it implied (PROTOCOL.md, "Table
// Features" and "Writer Version Requirements": writer 2 appendOnly and
// invariants; 3 checkConstraints; 4 changeDataFeed and generatedColumns; 5
// columnMapping; 6 identityColumns). The reader version is unchanged.
func withWriterFeature(p txlog.Protocol, f string) txlog.Protocol {
	if p.MinWriterVersion < 7 {
		implied := []struct {
			v int
			f string
		}{{2, txlog.FeatureAppendOnly}, {2, txlog.FeatureInvariants}, {3, txlog.FeatureCheckConstraints},
			{4, txlog.FeatureChangeDataFeed}, {4, txlog.FeatureGeneratedColumns}, {5, txlog.FeatureColumnMapping},
			{6, txlog.FeatureIdentityColumns}}
		wf := slices.Clone(p.WriterFeatures)
		for _, i := range implied {
			if int(p.MinWriterVersion) >= i.v && !slices.Contains(wf, i.f) {
				wf = append(wf, i.f)
			}
		}
		p.MinWriterVersion, p.WriterFeatures = 7, wf
	}
	if !slices.Contains(p.WriterFeatures, f) {
		p.WriterFeatures = append(slices.Clone(p.WriterFeatures), f)
	}
	return p
}

// withDeletionVectors is p with the deletionVectors feature, a reader and
// writer feature (PROTOCOL.md, "Deletion Vectors"): reader 3 / writer 7,
// keeping every feature the old protocol implied, as Delta's
// Protocol.withFeatures makes a legacy protocol's implicitlySupportedFeatures
// explicit (e.g. 1/2 becomes writerFeatures [appendOnly, invariants,
// deletionVectors], readerFeatures [deletionVectors]; a legacy reader 2
// with writer 5 implied columnMapping, which becomes a reader feature too).
func withDeletionVectors(p txlog.Protocol) txlog.Protocol {
	legacyReader := p.MinReaderVersion < 3
	columnMapping := legacyReader && p.MinReaderVersion >= 2 && p.MinWriterVersion >= 5
	p = withWriterFeature(p, txlog.FeatureDeletionVectors)
	if legacyReader {
		p.MinReaderVersion, p.ReaderFeatures = 3, nil
		if columnMapping {
			p.ReaderFeatures = []string{txlog.FeatureColumnMapping}
		}
	}
	if !slices.Contains(p.ReaderFeatures, txlog.FeatureDeletionVectors) {
		p.ReaderFeatures = append(slices.Clone(p.ReaderFeatures), txlog.FeatureDeletionVectors)
	}
	return p
}

// Create creates the table at url: version 0 with protocol and metaData. It
// fails with txlog.ErrTableExists if a table is already there.
func Create(ctx context.Context, url string, o CreateOptions, opts ...Option) (*Table, error) {
	t, err := Open(ctx, url, opts...)
	if err != nil {
		return nil, err
	}
	if err := t.create(ctx, o); err != nil {
		t.Close()
		return nil, err
	}
	return t, nil
}

// create commits version 0 of a new table at t.
func (t *Table) create(ctx context.Context, o CreateOptions) error {
	if err := t.CheckConditionalWrites(ctx); err != nil {
		return err
	}
	actions, err := newTableActions(o, time.Now())
	if err != nil {
		return fmt.Errorf("create %s: %w", t.URL(), err)
	}
	tx := t.log.Begin(nil)
	tx.Add(actions...)
	params := txlog.OperationParameters{
		"partitionBy": jsonString(o.PartitionColumns),
		"description": o.Description,
		"isManaged":   "false",
		"properties":  jsonString(o.Properties),
	}
	if _, err := tx.Commit(ctx, "CREATE TABLE", params, nil); err != nil {
		return fmt.Errorf("create %s: %w", t.URL(), err)
	}
	return nil
}

// CheckConditionalWrites verifies, once per Table, that the store honours
// put-if-absent (PROTOCOL.md, "Delta Log Entries": mutual exclusion; S3's
// If-None-Match: *): it creates a probe object under _delta_log/ twice and
// expects the second attempt to fail, then deletes it. Local disk and memory
// stores implement put-if-absent themselves and are not probed. A store that
// lets the second put succeed would let two writers both win one version, so
// writing is refused with storage.ErrConditionalWriteUnsupported unless the
// table was opened WithSingleWriter.
func (t *Table) CheckConditionalWrites(ctx context.Context) error {
	if t.singleWriter || !strings.HasPrefix(t.store.URL(), "s3://") {
		return nil
	}
	t.probeMu.Lock()
	defer t.probeMu.Unlock()
	if t.probed {
		return t.probe
	}
	key := txlog.LogDir + "/.lakesink-probe-" + uuid.NewString()
	defer func() { _ = t.store.Delete(context.WithoutCancel(ctx), key) }() // on every path
	if err := t.store.PutIfAbsent(ctx, key, []byte("probe")); err != nil {
		// Not a verdict (a timeout, a 503, an unknown outcome): report it
		// and probe again at the next write.
		return fmt.Errorf("table %s: probe conditional writes: %w", t.URL(), err)
	}
	err := t.store.PutIfAbsent(ctx, key, []byte("probe"))
	switch {
	case errors.Is(err, storage.ErrAlreadyExists):
		err = nil // the verdict: conditional writes are honoured
	case err == nil:
		err = fmt.Errorf("table %s: %w: a second put-if-absent of %s succeeded; concurrent writers could overwrite each other's commits "+
			"(open the table in single-writer mode if only one process writes it)", t.URL(), storage.ErrConditionalWriteUnsupported, key)
	default:
		return fmt.Errorf("table %s: probe conditional writes: %w", t.URL(), err)
	}
	t.probed, t.probe = true, err
	return err
}
