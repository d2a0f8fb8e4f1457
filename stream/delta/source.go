package delta

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/source"
)

// Options configure a Source.
type Options struct {
	// TableURL is the Delta table read (a path, file://, mem:// or s3://
	// URL). Required.
	TableURL string
	// Store, when set, is the table's store (rooted at the table); else it
	// is opened from TableURL at Start and closed by Close.
	Store storage.Store
	// StartingVersion, when >= 0, starts the stream at the commits of this
	// version, without the initial snapshot (Delta's startingVersion,
	// DeltaSource.getStartingVersion). Default -1: the latest snapshot's
	// files first, then later commits (DeltaSource.getStartingOffset with
	// isStartingVersion). A version after the latest is ErrInvalidOptions.
	StartingVersion int64
	// StartingTimestamp, when set, starts the stream at the first commit at
	// or after it (Delta's startingTimestamp,
	// DeltaSource.getStartingVersionFromTimestamp); a time after the latest
	// commit is ErrInvalidOptions. Exclusive with StartingVersion.
	StartingTimestamp time.Time
	// SkipChangeCommits skips every commit that removes data with
	// dataChange=true, its adds included (Delta's skipChangeCommits,
	// DeltaSource.validateCommitAndDecideSkipping); without it such a commit
	// fails the batch with ErrChangeCommit.
	SkipChangeCommits bool
	// Where filters the rows (the expr language, applied to every row after
	// file pruning); Columns projects them, in this order. Empty: all.
	Where   string
	Columns []string
	// Workers is how many files are read at once (reader.ReadOptions).
	Workers int
}

// DefaultOptions returns the defaults for the table at url.
func DefaultOptions(url string) Options { return Options{TableURL: url, StartingVersion: -1} }

// Validate lists every problem with the options.
func (o Options) Validate() error {
	var errs []error
	if strings.TrimSpace(o.TableURL) == "" && o.Store == nil {
		errs = append(errs, fmt.Errorf("%w: TableURL is required", ErrInvalidOptions))
	}
	if o.StartingVersion < -1 {
		errs = append(errs, fmt.Errorf("%w: StartingVersion %d < 0", ErrInvalidOptions, o.StartingVersion))
	}
	if o.StartingVersion >= 0 && !o.StartingTimestamp.IsZero() {
		errs = append(errs, fmt.Errorf("%w: StartingVersion and StartingTimestamp are exclusive", ErrInvalidOptions))
	}
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers %d < 0", ErrInvalidOptions, o.Workers))
	}
	return errors.Join(errs...)
}

// Files of the source's checkpoint directory (sources/0); names Spark's
// HDFSMetadataLog ignores (not batch numbers). startFile holds the offset
// the first batch starts after, resolved once (the starting snapshot's
// version, or the starting version); plannedFile the latest end offset
// LatestOffset returned, so that a restart plans after it.
const (
	startFile   = "lakesink-delta-start.json"
	plannedFile = "lakesink-delta-planned.json"
)

// Source streams a Delta table's new data files, as Delta's DeltaSource
// (delta-io/delta spark/.../sql/delta/sources/DeltaSource.scala); it
// implements source.Source. One Source serves one query run; it is not safe
// for concurrent use. See the package documentation.
type Source struct {
	opts    Options
	store   storage.Store
	owned   bool
	dir     storage.Store
	snap    *reader.Snapshot // latest snapshot at Start: schema, reads
	tableID string
	out     *schema.StructType // batch schema (projected)
	start   Offset             // the first batch starts after it
	planned Offset             // latest end offset planned
	hasCap  bool
	capVer  int64 // AvailableNow: the latest version at PrepareAvailableNow
	cache   map[versionKey][]reader.File
	// resumeChecked is the lowest version checkResume has checked in this
	// run (math.MaxInt64: none yet).
	resumeChecked int64
}

type versionKey struct {
	version  int64
	starting bool
}

var _ source.Source = (*Source)(nil)

// NewSource validates opts; the table is opened at Start.
func NewSource(opts Options) (*Source, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Source{opts: opts, cache: map[versionKey][]reader.File{}, resumeChecked: math.MaxInt64}, nil
}

// URL is the table's URL.
func (s *Source) URL() string {
	if s.opts.Store != nil {
		return s.opts.Store.URL()
	}
	return s.opts.TableURL
}

// Schema is the schema of the batches (known after Start).
func (s *Source) Schema() *schema.StructType { return s.out }

// Close releases the table's store if the source opened it.
func (s *Source) Close() error {
	if s.snap != nil {
		s.snap.Close()
	}
	if s.owned && s.store != nil {
		err := s.store.Close()
		s.store, s.owned = nil, false
		return err
	}
	return nil
}

// Start opens the latest snapshot, whose schema the run reads with (Delta's
// snapshotAtSourceInit), then restores the starting point from dir
// (resolving and recording it on the first run: DeltaSource.getStartingOffset)
// and the latest planned offset. A table whose id is not the recorded
// reservoirId fails with ErrTableChanged
// (DeltaErrors.differentDeltaTableReadByStreamingSource).
func (s *Source) Start(ctx context.Context, dir storage.Store) error {
	s.dir = dir
	if s.store == nil {
		if s.opts.Store != nil {
			s.store = s.opts.Store
		} else {
			st, err := storage.Open(ctx, s.opts.TableURL)
			if err != nil {
				return fmt.Errorf("delta source: open %s: %w", s.opts.TableURL, err)
			}
			s.store, s.owned = st, true
		}
	}
	snap, err := reader.Open(ctx, s.store.URL(), reader.WithStore(s.store))
	if err != nil {
		return err
	}
	if snap.Kind() != reader.KindDelta {
		snap.Close()
		return fmt.Errorf("%w: %s is not a Delta table", ErrInvalidOptions, s.URL())
	}
	if s.snap != nil {
		s.snap.Close()
	}
	s.snap, s.tableID = snap, snap.TableID()
	if s.out, err = project(snap.Schema(), s.opts.Columns); err != nil {
		return err
	}
	if _, err := snap.Predicate(s.opts.Where); strings.TrimSpace(s.opts.Where) != "" && err != nil {
		return fmt.Errorf("delta source: Where %q: %w", s.opts.Where, err)
	}
	start, err := s.readStart(ctx)
	if err != nil {
		return err
	}
	s.start, s.planned = start, start
	data, err := dir.Read(ctx, plannedFile)
	switch {
	case err == nil:
		p, err := ParseOffset(string(data))
		if err != nil {
			return fmt.Errorf("delta source: %s/%s: %w", dir.URL(), plannedFile, err)
		}
		if err := s.checkID(p); err != nil {
			return err
		}
		if s.start.before(p) {
			s.planned = p
		}
	case !errors.Is(err, storage.ErrNotFound):
		return fmt.Errorf("delta source: %w", err)
	}
	return nil
}

// readStart reads startFile, or resolves the starting point and records it.
func (s *Source) readStart(ctx context.Context) (Offset, error) {
	data, err := s.dir.Read(ctx, startFile)
	if err == nil {
		o, err := ParseOffset(string(data))
		if err != nil {
			return Offset{}, fmt.Errorf("delta source: %s/%s: %w", s.dir.URL(), startFile, err)
		}
		return o, s.checkID(o)
	}
	if !errors.Is(err, storage.ErrNotFound) {
		return Offset{}, fmt.Errorf("delta source: %w", err)
	}
	o := Offset{SourceVersion: SourceVersion, ReservoirID: s.tableID, Index: BaseIndex}
	switch {
	case s.opts.StartingVersion >= 0:
		latest, err := s.snap.LatestVersion(ctx)
		if err != nil {
			return Offset{}, err
		}
		if s.opts.StartingVersion > latest {
			return Offset{}, fmt.Errorf("%w: starting version %d is after the latest version %d of %s", ErrInvalidOptions, s.opts.StartingVersion, latest, s.URL())
		}
		o.ReservoirVersion = s.opts.StartingVersion
	case !s.opts.StartingTimestamp.IsZero():
		v, ok, err := s.snap.FirstVersionAtOrAfter(ctx, s.opts.StartingTimestamp)
		if err != nil {
			return Offset{}, err
		}
		if !ok {
			return Offset{}, fmt.Errorf("%w: starting timestamp %s is after the latest commit of %s", ErrInvalidOptions,
				s.opts.StartingTimestamp.UTC().Format(time.RFC3339Nano), s.URL())
		}
		o.ReservoirVersion = v
	default:
		o.ReservoirVersion, o.IsStartingVersion = s.snap.Version(), true
	}
	if err := s.dir.PutIfAbsent(ctx, startFile, []byte(o.String())); err != nil {
		if errors.Is(err, storage.ErrAlreadyExists) {
			return s.readStart(ctx)
		}
		return Offset{}, fmt.Errorf("delta source: record the starting point: %w", err)
	}
	return o, nil
}

func (s *Source) checkID(o Offset) error {
	if o.ReservoirID != s.tableID {
		return fmt.Errorf("%w: the checkpoint reads table id %s, %s now has table id %s (deleted and recreated?); start a new checkpoint",
			ErrTableChanged, o.ReservoirID, s.URL(), s.tableID)
	}
	return nil
}

// PrepareAvailableNow caps the stream at the table's latest version now
// (DeltaSourceBase.prepareForTriggerAvailableNow and its
// lastOffsetForTriggerAvailableNow).
func (s *Source) PrepareAvailableNow(ctx context.Context) error {
	v, err := s.snap.LatestVersion(ctx)
	if err != nil {
		return err
	}
	s.capVer, s.hasCap = v, true
	return nil
}

// LatestOffset plans the next batch after the latest planned offset and
// returns its end, a DeltaSourceOffset JSON ("" when nothing was ever
// planned and nothing is new): the files in (version, index) order,
// admitted while the batch has fewer than limit.MaxFiles files and fewer
// than limit.MaxBytes bytes (so at least one file; Delta's
// AdmissionLimits). A version whose files are all admitted moves the offset
// to (version+1, -1), as DeltaSource.buildOffsetFromIndexedFile does for
// the last file of a version, so versions without new data (OPTIMIZE,
// metadata changes, skipped change commits) advance the stream with an
// empty batch. Planning stops before a schema change the query cannot read;
// the next call fails at it with ErrSchemaChanged. Errors: ErrChangeCommit,
// ErrSchemaChanged, ErrTableChanged, ErrVersionUnavailable.
func (s *Source) LatestOffset(ctx context.Context, limit source.ReadLimit) (string, error) {
	latest, err := s.snap.LatestVersion(ctx)
	if err != nil {
		return "", err
	}
	if s.hasCap && latest > s.capVer {
		latest = s.capVer
	}
	from := s.planned
	if err := s.checkResume(ctx, from); err != nil {
		return "", err
	}
	end := from
	files, bytes := 0, int64(0)
	full := func() bool {
		return (limit.MaxFiles > 0 && files >= limit.MaxFiles) || (limit.MaxBytes > 0 && bytes >= limit.MaxBytes)
	}
plan:
	for v := from.ReservoirVersion; v <= latest; v++ {
		starting := from.IsStartingVersion && v == from.ReservoirVersion
		fs, err := s.filesOf(ctx, v, starting)
		if errors.Is(err, ErrSchemaChanged) && end != from {
			// The files before the change are read with the schema they
			// were written with first; the next call fails at v, so that
			// a restart resumes at the change.
			break
		}
		if err != nil {
			return "", err
		}
		lo := int64(BaseIndex)
		if v == from.ReservoirVersion {
			lo = from.Index
		}
		for i := lo + 1; i < int64(len(fs)); i++ {
			if full() {
				break plan
			}
			files++
			bytes += fs[i].Size
			end = Offset{SourceVersion: SourceVersion, ReservoirID: s.tableID, ReservoirVersion: v, Index: i, IsStartingVersion: starting}
		}
		end = Offset{SourceVersion: SourceVersion, ReservoirID: s.tableID, ReservoirVersion: v + 1, Index: BaseIndex}
	}
	if end == s.start {
		return "", nil // nothing planned yet and nothing new
	}
	if end != s.planned {
		if err := s.dir.Put(ctx, plannedFile, []byte(end.String())); err != nil {
			return "", fmt.Errorf("delta source: record the planned offset: %w", err)
		}
		s.planned = end
	}
	return end.String(), nil
}

// GetBatch reads the files after start up to and including end ("" start:
// from the recorded starting point), with Options.Where and Columns
// (DeltaSource.getBatch); a rerun of the same offsets reads the same files.
// BatchStats count the files and their bytes. Errors: ErrBadOffset, and
// those of LatestOffset.
func (s *Source) GetBatch(ctx context.Context, start, end string) (*schema.Batch, source.BatchStats, error) {
	var st source.BatchStats
	from := s.start
	if start != "" {
		o, err := ParseOffset(start)
		if err != nil {
			return nil, st, err
		}
		from = o
	}
	to, err := ParseOffset(end)
	if err != nil {
		return nil, st, err
	}
	if err := s.checkID(from); err != nil {
		return nil, st, err
	}
	if err := s.checkID(to); err != nil {
		return nil, st, err
	}
	if to.before(from) {
		return nil, st, fmt.Errorf("%w: end %s is before start %s", ErrBadOffset, end, from)
	}
	if err := s.checkResume(ctx, from); err != nil {
		return nil, st, err
	}
	var files []reader.File
	for v := from.ReservoirVersion; v <= to.ReservoirVersion; v++ {
		if v == to.ReservoirVersion && to.Index == BaseIndex {
			break
		}
		starting := from.IsStartingVersion && v == from.ReservoirVersion
		fs, err := s.filesOf(ctx, v, starting)
		if err != nil {
			return nil, st, err
		}
		lo, hi := int64(BaseIndex), int64(len(fs))-1
		if v == from.ReservoirVersion {
			lo = from.Index
		}
		if v == to.ReservoirVersion {
			if to.Index > hi {
				return nil, st, fmt.Errorf("%w: %s: version %d of %s has %d files", ErrBadOffset, end, v, s.URL(), len(fs))
			}
			hi = to.Index
		}
		for i := lo + 1; i <= hi; i++ {
			files = append(files, fs[i])
			st.NumBytes += fs[i].Size
		}
	}
	st.NumFiles = len(files)
	batch := &schema.Batch{Schema: s.out, Rows: [][]any{}}
	if len(files) == 0 {
		return batch, st, nil
	}
	for rec, err := range s.snap.Rows(ctx, reader.ReadOptions{Files: files, Where: s.opts.Where, Columns: s.opts.Columns, Workers: s.opts.Workers}) {
		if err != nil {
			return nil, st, err
		}
		batch.Rows = append(batch.Rows, rec.Values)
	}
	return batch, st, nil
}

// Commit drops what the source cached of versions before end (called
// once end is committed, as DeltaSource.commit).
func (s *Source) Commit(_ context.Context, end string) error {
	o, err := ParseOffset(end)
	if err != nil {
		return err
	}
	for k := range s.cache {
		if k.version < o.ReservoirVersion {
			delete(s.cache, k)
		}
	}
	return nil
}

// filesOf lists the data files of version v: the live files of snapshot v
// sorted by (modificationTime, path) when starting, else the adds with dataChange=true of
// commit v. A change commit fails with ErrChangeCommit, or has no files
// with SkipChangeCommits.
func (s *Source) filesOf(ctx context.Context, v int64, starting bool) ([]reader.File, error) {
	k := versionKey{v, starting}
	if fs, ok := s.cache[k]; ok {
		return fs, nil
	}
	var fs []reader.File
	if starting {
		snap, err := reader.Open(ctx, s.store.URL(), reader.WithStore(s.store), reader.AtVersion(v))
		if err != nil {
			return nil, fmt.Errorf("%w: the starting snapshot, version %d of %s: %w", ErrVersionUnavailable, v, s.URL(), err)
		}
		defer snap.Close()
		if err := s.checkTable(v, snap.TableID(), snap.Schema()); err != nil {
			return nil, err
		}
		if fs, err = snap.Files(ctx, nil); err != nil {
			return nil, err
		}
		// DeltaSourceSnapshot orders the initial files by
		// (modificationTime, path): older data first, the index is stable.
		slices.SortStableFunc(fs, func(a, b reader.File) int {
			if c := a.ModificationTime.Compare(b.ModificationTime); c != 0 {
				return c
			}
			return strings.Compare(a.Path, b.Path)
		})
	} else {
		c, err := s.snap.ReadCommit(ctx, v)
		if errors.Is(err, reader.ErrCommitNotFound) {
			return nil, fmt.Errorf("%w: version %d of %s is gone (log cleanup?); the stream cannot go on without it: start a new checkpoint, e.g. with a StartingVersion",
				ErrVersionUnavailable, v, s.URL())
		}
		if err != nil {
			return nil, err
		}
		if err := s.checkTable(v, c.TableID, c.Schema); err != nil {
			return nil, err
		}
		switch {
		case len(c.DataChangeRemoves) == 0:
			fs = c.Adds
		case s.opts.SkipChangeCommits:
			fs = nil
		default:
			return nil, fmt.Errorf("%w: version %d of %s removes %d data files with dataChange=true (e.g. %s): a DELETE, UPDATE, MERGE or overwrite",
				ErrChangeCommit, v, s.URL(), len(c.DataChangeRemoves), c.DataChangeRemoves[0])
		}
	}
	s.cache[k] = fs
	return fs, nil
}

// checkResume checks, before the first file a run reads after from, that
// the schema in effect at from's version is one the query's schema (that of
// the latest snapshot at Start) can read: a restarted query resuming before
// a schema change reads the older files with the new schema (Delta's
// DeltaSource.checkReadIncompatibleSchemaChangeOnStreamStartOnce). Later
// changes are checked by the metaData actions of the commits read. A
// version at or after the read snapshot, or the starting snapshot (checked
// by filesOf), needs no check; each lower version is checked once.
func (s *Source) checkResume(ctx context.Context, from Offset) error {
	v := from.ReservoirVersion
	if from.IsStartingVersion || v >= s.snap.Version() || v >= s.resumeChecked {
		return nil
	}
	snap, err := reader.Open(ctx, s.store.URL(), reader.WithStore(s.store), reader.AtVersion(v))
	if err != nil {
		return fmt.Errorf("%w: version %d of %s, where the stream resumes: %w", ErrVersionUnavailable, v, s.URL(), err)
	}
	defer snap.Close()
	if err := s.checkTable(v, snap.TableID(), snap.Schema()); err != nil {
		return err
	}
	s.resumeChecked = v
	return nil
}

// checkTable compares a version's table id and schema (when it has a
// metaData action) with those the query reads. A schema is readable when
// every column of it is in the read schema with the same type and
// nullability no looser, and the read schema's other columns are nullable
// (Delta's SchemaUtils.isReadCompatible with forbidTightenNullability, as
// DeltaSource.checkReadIncompatibleSchemaChanges calls it). The error names
// the column, both schemas, and whether a restart helps: it does for a
// change after the read snapshot, where LatestOffset stopped (an added
// nullable column is DeltaErrors.schemaChangedException's retryable case),
// and not for a version before the read snapshot, which the query would
// read with a schema that cannot read it.
func (s *Source) checkTable(v int64, id string, sch *schema.StructType) error {
	if id != "" && id != s.tableID {
		return fmt.Errorf("%w: version %d of %s has table id %s, the stream reads table id %s", ErrTableChanged, v, s.URL(), id, s.tableID)
	}
	if sch == nil {
		return nil
	}
	read := s.snap.Schema()
	problem := readProblem(sch, read)
	if problem == "" {
		return nil
	}
	var advice string
	switch {
	case v <= s.snap.Version():
		// The stream must read files of v with the newer read schema.
		advice = fmt.Sprintf("a restart does not help (the query reads with the latest schema, which cannot read version %d): start a new checkpoint", v)
	case readProblem(read, sch) == "":
		advice = "restart the query to read on with the new schema"
	default:
		// Everything before v was read (LatestOffset stops at the change):
		// a restart reads on from v, with the new schema.
		advice = "the change is not additive: restart the query to read on from this version with the new schema (the sink then receives the new types), or start a new checkpoint"
	}
	return fmt.Errorf("%w: version %d of %s %s; the query reads the schema of version %d, %s; version %d has %s; %s",
		ErrSchemaChanged, v, s.URL(), problem, s.snap.Version(), schemaString(read), v, schemaString(sch), advice)
}

// readProblem says why rows written with schema data cannot be read with
// schema read ("" if they can): Delta's SchemaUtils.isReadCompatible
// (every column of data in read with the same type, nullability not
// tightened; the columns read lacks are nullable).
func readProblem(data, read *schema.StructType) string {
	seen := map[string]bool{}
	for _, f := range data.Fields {
		i := fieldIndex(read, f.Name)
		switch {
		case i < 0:
			return fmt.Sprintf("has column %q (%s), which the query's schema lacks", f.Name, typeString(f.Type))
		case !schema.TypesEqual(read.Fields[i].Type, f.Type):
			return fmt.Sprintf("has column %q as %s, the query's schema as %s", f.Name, typeString(f.Type), typeString(read.Fields[i].Type))
		case f.Nullable && !read.Fields[i].Nullable:
			return fmt.Sprintf("has column %q nullable, the query's schema has it NOT NULL", f.Name)
		}
		seen[strings.ToLower(f.Name)] = true
	}
	for _, f := range read.Fields {
		if !seen[strings.ToLower(f.Name)] && !f.Nullable {
			return fmt.Sprintf("lacks the NOT NULL column %q of the query's schema", f.Name)
		}
	}
	return ""
}

// schemaString renders a schema as struct<name:type,...> (NOT NULL marked),
// as Spark's catalogString does, with Delta's type names.
func schemaString(st *schema.StructType) string {
	var b strings.Builder
	b.WriteString("struct<")
	for i, f := range st.Fields {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(f.Name + ":" + typeString(f.Type))
		if !f.Nullable {
			b.WriteString(" NOT NULL")
		}
	}
	b.WriteByte('>')
	return b.String()
}

func typeString(t schema.DataType) string {
	switch t := t.(type) {
	case *schema.StructType:
		return schemaString(t)
	case *schema.ArrayType:
		return "array<" + typeString(t.ElementType) + ">"
	case *schema.MapType:
		return "map<" + typeString(t.KeyType) + "," + typeString(t.ValueType) + ">"
	case nil:
		return "null"
	}
	return t.TypeName()
}

func fieldIndex(st *schema.StructType, name string) int {
	for i, f := range st.Fields {
		if strings.EqualFold(f.Name, name) {
			return i
		}
	}
	return -1
}

// project is the schema of the columns read, as reader's projection
// resolves them.
func project(sch *schema.StructType, cols []string) (*schema.StructType, error) {
	if len(cols) == 0 {
		return sch, nil
	}
	out := &schema.StructType{}
	for _, c := range cols {
		i := -1
		for j, f := range sch.Fields {
			if f.Name == c {
				i = j
				break
			}
		}
		if i < 0 {
			i = fieldIndex(sch, c)
		}
		if i < 0 {
			return nil, fmt.Errorf("%w: %q", reader.ErrUnknownColumn, c)
		}
		out.Fields = append(out.Fields, sch.Fields[i])
	}
	return out, nil
}
