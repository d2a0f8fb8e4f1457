package source

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"iter"
	"net/url"
	"runtime"
	"slices"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/checkpoint"
)

// Format is an input file format.
type Format string

const (
	FormatJSON    Format = "json"    // NDJSON, or one top-level JSON array per file
	FormatCSV     Format = "csv"     // with a header line
	FormatParquet Format = "parquet" // read through Options.ReadParquet
)

// ParquetReader decodes the Parquet file key (size bytes) of store into rows
// of schema (nil schema: the file's own schema, returned in the batch).
type ParquetReader func(ctx context.Context, store storage.Store, key string, size int64, sch *schema.StructType) (*schema.Batch, error)

// readParquet is the default ParquetReader: internal/parquetio's reader,
// matching columns by name; a schema field the file lacks reads as null.
func readParquet(ctx context.Context, store storage.Store, key string, size int64, sch *schema.StructType) (*schema.Batch, error) {
	f, err := parquetio.OpenFile(ctx, store, key, size)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if sch == nil {
		sch = f.Schema()
	}
	rows, err := f.ReadAll(ctx, sch, parquetio.ReadOptions{})
	if err != nil {
		return nil, err
	}
	return &schema.Batch{Schema: sch, Rows: rows}, nil
}

// parquetReadError words a failed read of the Parquet input file url. A
// column whose type is not the schema's (a string id for a long column) is
// bad input, a *RecordError naming the file once and the column, and not
// corruption (exit 1, not 4); anything else names the file and keeps its
// cause.
func parquetReadError(url string, err error) error {
	var ce *parquetio.ColumnError
	var tm *parquetio.TypeMismatchError
	if errors.As(err, &ce) && errors.As(err, &tm) {
		return &RecordError{File: url, Field: ce.Column, Err: errors.New(tm.Error())}
	}
	return fmt.Errorf("read parquet %s: %w", url, err)
}

// parquetSchema reads the schema in the footer of a Parquet file.
func parquetSchema(ctx context.Context, store storage.Store, key string, size int64) (*schema.StructType, error) {
	f, err := parquetio.OpenFile(ctx, store, key, size)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return f.Schema(), nil
}

// Options configure a FileSource.
type Options struct {
	// Format of the input files. Required.
	Format Format
	// Schema the records are decoded against. nil: inferred from the files
	// of the first batch this run reads (then fixed for the run).
	Schema *schema.StructType
	// TimestampFormat is a Spark/Java pattern ("yyyy/MM/dd HH:mm") or a Go
	// layout for timestamp values; values without a zone are UTC. RFC 3339
	// and "yyyy-MM-dd HH:mm:ss" are always accepted. Inference types text
	// as timestamp only when this is set. Default "".
	TimestampFormat string
	// DateFormat is a pattern for date values. Default "" (yyyy-MM-dd).
	DateFormat string
	// CSVDelimiter separates CSV fields. Default ','.
	CSVDelimiter rune
	// LatestFirst takes the newest files first when a batch is limited
	// (Spark's latestFirst). Default false: oldest first.
	LatestFirst bool
	// CompactIntervalBatches is the source log's compact interval. Default 10
	// (spark.sql.streaming.fileSource.log.compactInterval).
	CompactIntervalBatches int
	// DecodeConcurrency is how many files are read and decoded at once.
	// Default 4.
	DecodeConcurrency int
	// OnBadRecord, when set, receives every record that does not fit the
	// schema; the record is dropped and the batch goes on. If it returns an
	// error the batch fails with it. When nil, the first bad record fails the
	// batch with a *RecordError. It is called from the driver's goroutine,
	// in file and line order. A batch rerun after a crash reads the same
	// files, so the handler sees its bad records again: make it idempotent
	// (e.g. keyed by file and line).
	OnBadRecord func(BadRecord) error
	// ReadParquet decodes Parquet files. Default: lakesink's own Parquet
	// reader (the one package reader uses).
	ReadParquet ParquetReader
	// StreamChunkRows > 0 streams Parquet batches: GetBatch returns a
	// schema.Batch whose Chunks read the batch's files in order, row group
	// by row group, in chunks of at most this many records (a chunk never
	// spans files), so a batch is never in memory whole; read errors then
	// come from the chunks. JSON and CSV batches without an OnBadRecord are
	// streamed too: their files are read whole (and the schema inferred
	// from them) first, then decoded in order into chunks of this many
	// records (a chunk may span files); the first bad record ends the
	// chunks with its *RecordError. Only for a consumer that handles
	// schema.Batch.Chunks (the Delta sink in append or complete mode);
	// ignored with a custom ReadParquet. Default 0: a batch's rows are all
	// decoded into Rows.
	StreamChunkRows int
	// StreamChunkBytes > 0 bounds a streamed Parquet chunk by the size of
	// its decoded values too, estimated from the batch's schema (8 bytes a
	// fixed-width value, 32 a string or binary, 64 a nested one): a chunk
	// holds at most StreamChunkBytes / that many rows, and at least 4,096
	// (fewer only when StreamChunkRows is fewer). Default
	// 0: StreamChunkRows alone. Text batches are chunked by StreamChunkRows
	// alone.
	StreamChunkBytes int64
	// SchemaEvolution is what happens to input fields that are not in the
	// schema: "" or SchemaEvolutionFailOnNewColumns (the record is bad,
	// ErrUnknownField), SchemaEvolutionAddNewColumns (each batch's schema is
	// inferred from its input, JSON and CSV as without a Schema, Parquet from
	// every file's footer, and merged into Schema with EvolveSchema) or
	// SchemaEvolutionNone (ignored, as Spark does with a user schema). A
	// field holding null (JSON null, an empty CSV cell) loses nothing and is
	// never an error. For Parquet, a file with a column the schema lacks
	// fails the batch with a *RecordError naming the file and the column
	// (Line 0); OnBadRecord does not apply to a whole file.
	SchemaEvolution SchemaEvolutionMode
}

// DefaultOptions returns the defaults for format.
func DefaultOptions(format Format) Options {
	return Options{Format: format, CSVDelimiter: ',', CompactIntervalBatches: checkpoint.DefaultCompactInterval, DecodeConcurrency: 4}
}

// Validate lists every problem with the options.
func (o Options) Validate() error {
	var errs []error
	switch o.Format {
	case FormatJSON, FormatCSV, FormatParquet:
	default:
		errs = append(errs, fmt.Errorf("%w: %w %q (want json, csv or parquet)", ErrInvalidOptions, ErrFormat, o.Format))
	}
	if o.CompactIntervalBatches < 0 {
		errs = append(errs, fmt.Errorf("%w: CompactIntervalBatches %d < 0", ErrInvalidOptions, o.CompactIntervalBatches))
	}
	if o.DecodeConcurrency < 0 {
		errs = append(errs, fmt.Errorf("%w: DecodeConcurrency %d < 0", ErrInvalidOptions, o.DecodeConcurrency))
	}
	if _, err := javaLayout(o.TimestampFormat); err != nil {
		errs = append(errs, fmt.Errorf("%w: TimestampFormat: %w", ErrInvalidOptions, err))
	}
	if _, err := javaLayout(o.DateFormat); err != nil {
		errs = append(errs, fmt.Errorf("%w: DateFormat: %w", ErrInvalidOptions, err))
	}
	if _, err := ParseSchemaEvolutionMode(string(o.SchemaEvolution)); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// FileSource streams the files of a directory (any storage.Store), each
// file once (Spark's FileStreamSource): files are listed recursively, names
// with a path element starting with "." or "_" (except "_" elements holding
// "=", partition directories) and names ending in "._COPYING_" are ignored;
// new files are ordered by modification time, then name; each planned batch
// of files is written to the source log (sources/<i>/N) before the offset
// that names it, so a rerun reads exactly the same files.
//
// Unlike Spark, there is no maxFileAge: every file ever taken is remembered
// (restored from the source log), and a _spark_metadata log inside the source
// directory is not consulted.
type FileSource struct {
	store storage.Store
	opts  Options
	base  string // the store URL without its query, for file URLs
	conv  converter

	log        *checkpoint.FileSourceLog
	seen       map[string]bool
	logOffset  int64
	started    bool
	snapshot   []storage.FileInfo // AvailableNow: the files listed at prepare time
	hasSnap    bool
	schemaOnce sync.Mutex
	schema     *schema.StructType
	stream     bool // Parquet batches are streamed (Options.StreamChunkRows)
	textStream bool // JSON and CSV batches are streamed (Options.StreamChunkRows)
	blockBytes int  // a streamed JSON or CSV file is read this many bytes at a time (textBlockBytes)
}

var _ Source = (*FileSource)(nil)

// NewFileSource returns a file source over store, which is rooted at the
// source directory. The options are copied.
func NewFileSource(store storage.Store, opts Options) (*FileSource, error) {
	stream := opts.StreamChunkRows > 0 && opts.ReadParquet == nil && opts.Format == FormatParquet
	textStream := opts.StreamChunkRows > 0 && opts.OnBadRecord == nil && (opts.Format == FormatJSON || opts.Format == FormatCSV)
	opts, conv, err := prepare(opts)
	if err != nil {
		return nil, err
	}
	base := store.URL()
	if i := strings.IndexByte(base, '?'); i >= 0 {
		base = base[:i]
	}
	return &FileSource{
		store: store, opts: opts, base: strings.TrimSuffix(base, "/"),
		conv: conv, schema: opts.Schema, logOffset: -1, stream: stream, textStream: textStream, blockBytes: textBlockBytes,
	}, nil
}

// prepare fills the defaults of opts, validates them and builds the
// converter they describe.
func prepare(opts Options) (Options, converter, error) {
	def := DefaultOptions(opts.Format)
	if opts.CSVDelimiter == 0 {
		opts.CSVDelimiter = def.CSVDelimiter
	}
	if opts.CompactIntervalBatches == 0 {
		opts.CompactIntervalBatches = def.CompactIntervalBatches
	}
	if opts.DecodeConcurrency == 0 {
		opts.DecodeConcurrency = def.DecodeConcurrency
	}
	if opts.ReadParquet == nil {
		opts.ReadParquet = readParquet
	}
	if err := opts.Validate(); err != nil {
		return opts, converter{}, err
	}
	opts.SchemaEvolution, _ = ParseSchemaEvolutionMode(string(opts.SchemaEvolution))
	ts, _ := javaLayout(opts.TimestampFormat)
	ds, _ := javaLayout(opts.DateFormat)
	return opts, converter{tp: timeParser{tsLayout: ts, dateLayout: ds}, strict: opts.SchemaEvolution != SchemaEvolutionNone}, nil
}

// DecodeJSON decodes data, NDJSON whose line i is record i, as a FileSource
// with opts decodes one JSON file of a batch (opts.Format is taken as
// FormatJSON): against opts.Schema, or the schema inferred from data when it
// is nil, merged with it under SchemaEvolutionAddNewColumns (EvolveSchema);
// without opts.SchemaEvolution None a field the schema lacks makes its
// record bad. name stands for the file in the records' errors (e.g.
// "kafka://topic/0"). It returns the batch of the records that fit (its
// Schema the one decoded against, empty when none) and, in line order, the
// ones that did not, each with its Line and a *RecordError; OnBadRecord is
// not called. Errors: ErrInvalidOptions.
func DecodeJSON(data []byte, name string, opts Options) (*schema.Batch, []BadRecord, error) {
	opts.Format = FormatJSON
	opts, conv, err := prepare(opts)
	if err != nil {
		return nil, nil, err
	}
	s := &FileSource{opts: opts, conv: conv}
	files := []decodedFile{{url: name, key: name, data: data, size: int64(len(data))}}
	sch := opts.Schema
	switch {
	case opts.SchemaEvolution == SchemaEvolutionAddNewColumns:
		sch = EvolveSchema(sch, s.infer(files))
	case sch == nil:
		sch = s.infer(files)
	}
	s.decode(context.Background(), &files[0], sch) // JSON: no I/O
	if sch == nil {
		sch = &schema.StructType{}
	}
	return &schema.Batch{Schema: sch, Rows: files[0].rows}, files[0].bad, files[0].err
}

// URL is the source directory's URL.
func (s *FileSource) URL() string { return s.store.URL() }

// Schema returns the schema records are decoded against: the given one, or
// the inferred one once a batch has been read (nil before).
func (s *FileSource) Schema() *schema.StructType {
	s.schemaOnce.Lock()
	defer s.schemaOnce.Unlock()
	return s.schema
}

// Start restores the set of files already taken from the source log in dir.
func (s *FileSource) Start(ctx context.Context, dir storage.Store) error {
	s.log = checkpoint.NewFileSourceLog(dir, s.opts.CompactIntervalBatches)
	entries, err := s.log.AllFiles(ctx)
	if err != nil {
		return fmt.Errorf("restore file source log: %w", err)
	}
	s.seen = make(map[string]bool, len(entries))
	for _, e := range entries {
		s.seen[e.Path] = true
	}
	latest, ok, err := s.log.LatestBatchID(ctx)
	if err != nil {
		return err
	}
	if ok {
		s.logOffset = latest
	}
	s.started = true
	return nil
}

// fileURL is the path recorded in the source log for key: the source's URL
// joined with the key, each element URL-escaped (Spark records URL-encoded
// paths).
func (s *FileSource) fileURL(key string) string {
	parts := strings.Split(key, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return s.base + "/" + strings.Join(parts, "/")
}

// keyOf inverts fileURL. Spark (Hadoop Path.toUri) writes local paths as
// "file:/abs/path"; they are read as "file:///abs/path".
func (s *FileSource) keyOf(p string) (string, error) {
	if rest, ok := strings.CutPrefix(p, "file:/"); ok && !strings.HasPrefix(rest, "/") {
		p = "file:///" + rest
	}
	rest, ok := strings.CutPrefix(p, s.base+"/")
	if !ok {
		return "", fmt.Errorf("%w: %s is not under %s", ErrForeignPath, p, s.base)
	}
	key, err := url.PathUnescape(rest)
	if err != nil {
		return "", fmt.Errorf("%w: %s: %w", ErrForeignPath, p, err)
	}
	return key, nil
}

// ignored reports whether a listed key is hidden from the source
// (InMemoryFileIndex's shouldFilterOutPathName).
func ignored(key string) bool {
	if strings.HasSuffix(key, "._COPYING_") {
		return true
	}
	for _, el := range strings.Split(key, "/") {
		if strings.HasPrefix(el, ".") || (strings.HasPrefix(el, "_") && !strings.Contains(el, "=")) {
			return true
		}
	}
	return false
}

func (s *FileSource) list(ctx context.Context) ([]storage.FileInfo, error) {
	var out []storage.FileInfo
	for fi, err := range s.store.List(ctx, "", "") {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", s.store.URL(), err)
		}
		if !ignored(fi.Path) {
			out = append(out, fi)
		}
	}
	return out, nil
}

// PrepareAvailableNow lists the directory once; the run reads only those files.
func (s *FileSource) PrepareAvailableNow(ctx context.Context) error {
	files, err := s.list(ctx)
	if err != nil {
		return err
	}
	s.snapshot, s.hasSnap = files, true
	return nil
}

// LatestOffset takes up to limit.MaxFiles new files, records them as the next
// source log batch, and returns {"logOffset":N} of the latest log batch
// (FileStreamSource.fetchMaxOffset).
func (s *FileSource) LatestOffset(ctx context.Context, limit ReadLimit) (string, error) {
	if !s.started {
		return "", ErrNotStarted
	}
	files := s.snapshot
	if !s.hasSnap {
		var err error
		if files, err = s.list(ctx); err != nil {
			return "", err
		}
	}
	var fresh []storage.FileInfo
	for _, f := range files {
		if !s.seen[s.fileURL(f.Path)] {
			fresh = append(fresh, f)
		}
	}
	slices.SortFunc(fresh, func(a, b storage.FileInfo) int {
		c := cmp.Compare(a.ModTime.UnixMilli(), b.ModTime.UnixMilli())
		if s.opts.LatestFirst {
			c = -c
		}
		if c != 0 {
			return c
		}
		return cmp.Compare(a.Path, b.Path)
	})
	if limit.MaxFiles > 0 && len(fresh) > limit.MaxFiles {
		fresh = fresh[:limit.MaxFiles]
	}
	if len(fresh) > 0 {
		next := s.logOffset + 1
		entries := make([]checkpoint.FileEntry, len(fresh))
		for i, f := range fresh {
			entries[i] = checkpoint.FileEntry{Path: s.fileURL(f.Path), Timestamp: f.ModTime.UnixMilli(), BatchID: next}
		}
		if err := s.log.Add(ctx, next, entries); err != nil {
			return "", err
		}
		s.logOffset = next
		for _, e := range entries {
			s.seen[e.Path] = true
		}
	}
	if s.logOffset < 0 {
		return "", nil
	}
	return checkpoint.FileSourceOffset{LogOffset: s.logOffset}.String(), nil
}

func parseOffset(o string) (int64, error) {
	if o == "" {
		return -1, nil
	}
	off, err := checkpoint.ParseFileSourceOffset(o)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", ErrBadOffset, err)
	}
	return off.LogOffset, nil
}

// Commit is a no-op: source files are never cleaned up.
func (s *FileSource) Commit(ctx context.Context, end string) error {
	_, err := parseOffset(end)
	return err
}

type decodedFile struct {
	url    string
	key    string
	size   int64
	data   []byte // json, csv: the file's bytes
	rows   [][]any
	schema *schema.StructType // Parquet: the schema the rows conform to
	footer *schema.StructType // Parquet: the file's own schema (unless SchemaEvolutionNone)
	bad    []BadRecord
	err    error
}

// GetBatch reads the files of source log batches (start, end] in log order
// and decodes them against the schema (inferring it first if none is set).
func (s *FileSource) GetBatch(ctx context.Context, start, end string) (*schema.Batch, BatchStats, error) {
	if !s.started {
		return nil, BatchStats{}, ErrNotStarted
	}
	from, err := parseOffset(start)
	if err != nil {
		return nil, BatchStats{}, err
	}
	to, err := parseOffset(end)
	if err != nil {
		return nil, BatchStats{}, err
	}
	if to < from {
		return nil, BatchStats{}, fmt.Errorf("%w: end %s before start %s", ErrBadOffset, end, start)
	}
	entries, err := s.log.Range(ctx, from+1, to)
	if err != nil {
		return nil, BatchStats{}, fmt.Errorf("files of source batches %d..%d: %w", from+1, to, err)
	}
	files := make([]decodedFile, len(entries))
	for i, e := range entries {
		if files[i].key, err = s.keyOf(e.Path); err != nil {
			return nil, BatchStats{}, err
		}
		files[i].url = e.Path
	}
	// Read all files (Parquet, and JSON and CSV streamed against a known
	// schema: only their sizes; the reader fetches ranges, splitPieces
	// blocks).
	lazyText := s.textStream && s.Schema() != nil && s.opts.SchemaEvolution != SchemaEvolutionAddNewColumns
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(s.opts.DecodeConcurrency)
	for i := range files {
		g.Go(func() error {
			f := &files[i]
			if lazyText {
				fi, err := s.store.Stat(gctx, f.key)
				if err != nil {
					return fmt.Errorf("read %s: %w", f.url, err)
				}
				f.size = fi.Size
				return nil
			}
			if s.opts.Format == FormatParquet {
				fi, err := s.store.Stat(gctx, f.key)
				if err != nil {
					return fmt.Errorf("stat %s: %w", f.url, err)
				}
				f.size = fi.Size
				if s.opts.SchemaEvolution != SchemaEvolutionNone {
					if f.footer, err = parquetSchema(gctx, s.store, f.key, f.size); err != nil {
						return fmt.Errorf("read parquet %s: %w", f.url, err)
					}
				}
				return nil
			}
			data, err := s.store.Read(gctx, f.key)
			if err != nil {
				return fmt.Errorf("read %s: %w", f.url, err)
			}
			f.data, f.size = data, int64(len(data))
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return nil, BatchStats{}, err
	}
	stats := BatchStats{NumFiles: len(files)}
	for _, f := range files {
		stats.NumBytes += f.size
	}
	sch := s.Schema()
	first := 0
	if s.opts.SchemaEvolution == SchemaEvolutionAddNewColumns && len(files) > 0 {
		// Infer this batch's schema and merge it into the run's.
		var inferred *schema.StructType
		if s.opts.Format == FormatParquet {
			for _, f := range files {
				inferred = EvolveSchema(inferred, f.footer)
			}
		} else {
			inferred = s.infer(files)
		}
		if sch = EvolveSchema(sch, inferred); len(sch.Fields) > 0 {
			s.schemaOnce.Lock()
			s.schema = sch
			s.schemaOnce.Unlock()
		}
	} else if sch == nil && len(files) > 0 {
		if s.stream {
			// The first file's own schema is the schema of the run.
			if sch, err = parquetSchema(ctx, s.store, files[0].key, files[0].size); err != nil {
				return nil, BatchStats{}, fmt.Errorf("read parquet %s: %w", files[0].url, err)
			}
		} else if s.opts.Format == FormatParquet {
			// The first file's own schema is the schema of the run.
			s.decode(ctx, &files[0], nil)
			if files[0].err != nil {
				return nil, BatchStats{}, files[0].err
			}
			first = 1
			sch = files[0].schema
		} else {
			sch = s.infer(files)
		}
		// Fix the schema for the run, unless the files held no record at
		// all: then the next batch infers again.
		if len(sch.Fields) > 0 {
			s.schemaOnce.Lock()
			s.schema = sch
			s.schemaOnce.Unlock()
		}
	}
	if s.stream {
		if sch == nil {
			sch = &schema.StructType{}
		}
		// Every file's footer is checked against the schema here, so that a
		// file that does not fit fails the batch before any row is written,
		// as when the batch is decoded whole.
		g, gctx = errgroup.WithContext(ctx)
		g.SetLimit(s.opts.DecodeConcurrency)
		for _, f := range files {
			g.Go(func() error {
				pf, err := parquetio.OpenFile(gctx, s.store, f.key, f.size)
				if err != nil {
					return parquetReadError(f.url, err)
				}
				defer pf.Close()
				if err := pf.CheckRead(sch, parquetio.ReadOptions{}); err != nil {
					return parquetReadError(f.url, err)
				}
				return nil
			})
		}
		if err := g.Wait(); err != nil {
			return nil, BatchStats{}, err
		}
		for _, f := range files {
			if f.footer != nil {
				if cols := unknownColumns(sch, f.footer, ""); len(cols) > 0 {
					return nil, BatchStats{}, &RecordError{File: f.url, Field: cols[0], Err: unknownFieldError{}}
				}
			}
		}
		return &schema.Batch{Schema: sch, Chunks: s.parquetChunks(ctx, files, sch), Columns: s.parquetColumns(ctx, files, sch)}, stats, nil
	}
	if s.textStream {
		if sch == nil {
			sch = &schema.StructType{}
		}
		return &schema.Batch{Schema: sch, Chunks: s.textChunks(ctx, files, sch)}, stats, nil
	}
	// Decode all files.
	g, gctx = errgroup.WithContext(ctx)
	g.SetLimit(s.opts.DecodeConcurrency)
	for i := first; i < len(files); i++ {
		g.Go(func() error {
			s.decode(gctx, &files[i], sch)
			files[i].data = nil
			return gctx.Err()
		})
	}
	if err := g.Wait(); err != nil {
		return nil, BatchStats{}, err
	}
	batch := &schema.Batch{Schema: sch}
	for i := range files {
		f := &files[i]
		if f.err != nil {
			return nil, BatchStats{}, f.err
		}
		for _, b := range f.bad {
			if s.opts.OnBadRecord == nil {
				return nil, BatchStats{}, b.Err
			}
			if err := s.opts.OnBadRecord(b); err != nil {
				return nil, BatchStats{}, fmt.Errorf("bad record handler for %s line %d: %w", b.File, b.Line, err)
			}
			stats.NumBadRecords++
		}
		if f.footer != nil && sch != nil {
			if cols := unknownColumns(sch, f.footer, ""); len(cols) > 0 {
				return nil, BatchStats{}, &RecordError{File: f.url, Field: cols[0], Err: unknownFieldError{}}
			}
		}
		batch.Rows = append(batch.Rows, f.rows...)
	}
	if batch.Schema == nil {
		batch.Schema = &schema.StructType{}
	}
	return batch, stats, nil
}

func (s *FileSource) infer(files []decodedFile) *schema.StructType {
	in := &inferrer{tp: s.conv.tp, useTS: s.opts.TimestampFormat != ""}
	nobad := func(int, string, error) bool { return true }
	for _, f := range files {
		switch s.opts.Format {
		case FormatJSON:
			splitJSON(f.data, func(r rawRecord) bool { in.addJSON(r.json); return true }, nobad)
		case FormatCSV:
			splitCSV(f.data, s.opts.CSVDelimiter, func(h []string, r rawRecord, _ func() string) bool { in.addCSV(h, r.fields); return true }, nobad)
		}
	}
	return in.schema()
}

// decode fills f.rows and f.bad (or f.err for a file-level failure).
func (s *FileSource) decode(ctx context.Context, f *decodedFile, sch *schema.StructType) {
	if s.opts.Format == FormatParquet {
		b, err := s.opts.ReadParquet(ctx, s.store, f.key, f.size, sch)
		if err != nil {
			f.err = parquetReadError(f.url, err)
			return
		}
		f.rows, f.schema = b.Rows, b.Schema
		return
	}
	var rows rowSlab
	s.decodeText(f, sch, &rows, func(row []any) bool {
		f.rows = append(f.rows, row)
		return true
	}, func(b BadRecord) bool {
		f.bad = append(f.bad, b)
		return true
	})
}

// rowSlab hands out the rows of decoded records, carved from slabs of
// values (one allocation for many rows). A row handed out is its taker's.
type rowSlab struct {
	vals []any
	pos  int
	rows int // rows of the next slab: 16, doubling up to 4096 values
}

// next is a row of n nil values.
func (r *rowSlab) next(n int) []any {
	if r.pos+n > len(r.vals) {
		r.rows = min(max(16, 2*r.rows), max(1, 4096/max(n, 1)))
		r.vals, r.pos = make([]any, n*r.rows), 0
	}
	row := r.vals[r.pos : r.pos+n : r.pos+n]
	r.pos += n
	return row
}

// undo takes back row, the last one next handed out, for the next record.
func (r *rowSlab) undo(row []any) {
	clear(row)
	r.pos -= len(row)
}

// decodeText decodes the JSON or CSV file f against sch, in file order:
// each record that fits to row, each that does not to bad; either
// returning false stops the file.
func (s *FileSource) decodeText(f *decodedFile, sch *schema.StructType, slab *rowSlab, row func([]any) bool, bad func(BadRecord) bool) {
	reject := func(line int, text string, field string, err error) bool {
		re := &RecordError{File: f.url, Line: line, Field: field, Err: err}
		return bad(BadRecord{Reason: re.Error(), File: f.url, Line: line, Field: field, Raw: text, Err: re})
	}
	rejectErr := func(line int, text func() string, err error) bool {
		var fe *fieldError
		if errors.As(err, &fe) {
			return reject(line, text(), fe.field, fe.err)
		}
		return reject(line, text(), "", err)
	}
	badLine := func(line int, text string, err error) bool { return reject(line, text, "", err) }
	n := len(sch.Fields)
	switch s.opts.Format {
	case FormatJSON:
		var scratch []jsonMember
		splitJSON(f.data, func(r rawRecord) bool {
			out := slab.next(n)
			v, err := s.conv.jsonRow(r.json, sch, "", &scratch, out)
			if err != nil {
				slab.undo(out)
				return rejectErr(r.line, func() string { return string(r.raw) }, err)
			}
			return row(v)
		}, badLine)
	case FormatCSV:
		var cols, extra []int
		splitCSV(f.data, s.opts.CSVDelimiter, func(h []string, r rawRecord, text func() string) bool {
			if cols == nil {
				cols, extra = csvColumns(h, sch), csvExtra(h, sch)
			}
			out := slab.next(n)
			v, err := s.conv.csvRow(h, r.fields, sch, cols, extra, out)
			if err != nil {
				slab.undo(out)
				return rejectErr(r.line, text, err)
			}
			return row(v)
		}, badLine)
	}
}

// textChunks yields the records of files (JSON or CSV, decoded against sch)
// in order, in chunks of at most StreamChunkRows; the first bad record (or
// file-level failure) ends them with its *RecordError, as it fails a batch
// decoded whole (there is no OnBadRecord). Decoding runs ahead of the
// consumer, so it overlaps with writing: one goroutine splits the files
// into pieces of textPieceRows records (NDJSON: lines, each checked and
// converted by a worker; a JSON array or CSV: records split here, converted
// by a worker), up to min(DecodeConcurrency, GOMAXPROCS) workers convert
// pieces, and the chunks are put together in file order.
func (s *FileSource) textChunks(ctx context.Context, files []decodedFile, sch *schema.StructType) iter.Seq2[[][]any, error] {
	return func(yield func([][]any, error) bool) {
		type chunk struct {
			rows [][]any
			err  error
		}
		ctx, cancel := context.WithCancel(ctx)
		var wg sync.WaitGroup
		workers := max(1, min(s.opts.DecodeConcurrency, runtime.GOMAXPROCS(0)))
		order := make(chan *textPiece, 2*workers)
		work := make(chan *textPiece, 2*workers)
		ch := make(chan chunk, 2)
		wg.Add(2 + workers)
		go func() { // the splitter
			defer wg.Done()
			defer close(order)
			defer close(work)
			for i := range files {
				if !s.splitPieces(ctx, &files[i], sch, func(p *textPiece) bool {
					p.done = make(chan struct{})
					select {
					case order <- p:
					case <-ctx.Done():
						return false
					}
					select {
					case work <- p:
						return true
					case <-ctx.Done():
						close(p.done)
						return false
					}
				}) {
					return
				}
			}
		}()
		for range workers {
			go func() {
				defer wg.Done()
				var slab rowSlab
				var scratch []jsonMember
				var texts textInterner
				for p := range work {
					s.convertPiece(p, sch, &slab, &scratch, &texts)
					close(p.done)
				}
			}()
		}
		go func() { // puts the chunks together, in order
			defer wg.Done()
			defer close(ch)
			send := func(c chunk) bool {
				select {
				case ch <- c:
					return c.err == nil
				case <-ctx.Done():
					return false
				}
			}
			size := s.opts.StreamChunkRows
			rows := make([][]any, 0, size)
			for p := range order {
				select {
				case <-p.done:
				case <-ctx.Done():
					return
				}
				for len(p.rows) > 0 {
					n := min(size-len(rows), len(p.rows))
					rows = append(rows, p.rows[:n]...)
					p.rows = p.rows[n:]
					if len(rows) == size {
						if !send(chunk{rows: rows}) {
							return
						}
						rows = make([][]any, 0, size)
					}
				}
				if p.bad != nil {
					send(chunk{err: p.bad})
					return
				}
			}
			if len(rows) > 0 {
				send(chunk{rows: rows})
			}
		}()
		defer func() {
			cancel()
			for range ch { // let the producers finish
			}
			wg.Wait()
		}()
		for c := range ch {
			if !yield(c.rows, c.err) || c.err != nil {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			yield(nil, err)
		}
	}
}

// textPieceRows is how many records (NDJSON: lines) a piece of a streamed
// JSON or CSV batch holds.
const textPieceRows = 4096

// textPiece is a run of records of one file, converted by one worker:
// NDJSON lines (lines, from line first), CSV lines (csvLines, a file without
// quotes), or records already split (recs; CSV: fields, nf a record, at
// recLines).
type textPiece struct {
	f        *decodedFile
	lines    []byte
	first    int
	recs     []rawRecord
	csvLines []byte // CSV without quotes: lines, from line first
	fields   []string
	nf       int
	recLines []int
	header   []string
	cols     []int
	extra    []int

	done chan struct{} // closed when rows and bad are set
	rows [][]any
	bad  error // the piece's first bad record (a *RecordError) after rows, or the file's failed read
}

// splitPieces splits the JSON or CSV file f into pieces, in order, handing
// each to piece; false (from piece, or a bad record or read failure found
// while splitting, handed over as a piece holding only it) stops. The file
// is f.data when set, else it is read from the store textBlockBytes at a
// time (FileSource.blockBytes, see textBlocks): NDJSON and CSV up to its first quote character are
// cut into pieces block by block, so a few blocks are in memory at a time
// (pieces queued and being converted); a JSON array, or a CSV file from the
// record holding its first quote on, is read whole.
func (s *FileSource) splitPieces(ctx context.Context, f *decodedFile, sch *schema.StructType, piece func(*textPiece) bool) bool {
	tb := &textBlocks{data: f.data, size: s.blockBytes}
	f.data = nil
	if tb.data == nil {
		r, err := s.store.NewRangeReader(ctx, f.key, 0, -1)
		if err != nil {
			piece(&textPiece{f: f, bad: fmt.Errorf("read %s: %w", f.url, err)})
			return false
		}
		defer r.Close()
		tb.r = r
	}
	readFailed := func() bool {
		piece(&textPiece{f: f, bad: fmt.Errorf("read %s: %w", f.url, tb.err)})
		return false
	}
	// Wait for the first line end (or the end of the file).
	block := tb.next(nil)
	for tb.err == nil && !tb.eof && bytes.IndexByte(block, '\n') < 0 {
		block = tb.next(block)
	}
	if tb.err != nil {
		return readFailed()
	}
	block = bytes.TrimPrefix(block, utf8BOM)
	if s.opts.Format == FormatJSON {
		t := bytes.TrimLeft(block, " \t\r\n")
		for len(t) == 0 && !tb.eof && tb.err == nil {
			block = tb.next(block)
			t = bytes.TrimLeft(block, " \t\r\n")
		}
		if tb.err != nil {
			return readFailed()
		}
		if len(t) > 0 && t[0] == '[' {
			if block = tb.rest(block); tb.err != nil {
				return readFailed()
			}
			return s.splitJSONArray(f, block, piece)
		}
		line := 1
		for {
			cut := len(block)
			if !tb.eof {
				cut = bytes.LastIndexByte(block, '\n') + 1
			}
			for data := block[:cut]; len(data) > 0; {
				if ctx.Err() != nil {
					return false
				}
				end, n := cutLines(data, textPieceRows)
				if !piece(&textPiece{f: f, lines: data[:end], first: line}) {
					return false
				}
				data, line = data[end:], line+n
			}
			if tb.eof {
				return true
			}
			if block = tb.next(block[cut:]); tb.err != nil {
				return readFailed()
			}
		}
	}
	// CSV: the header, read here, unless a quote may be in it.
	if q := bytes.IndexByte(block, '"'); q >= 0 && q <= bytes.IndexByte(block, '\n') || bytes.IndexByte(block, '\n') < 0 {
		if block = tb.rest(block); tb.err != nil {
			return readFailed()
		}
		return s.splitQuotedCSV(f, block, 0, sch, piece)
	}
	r := csv.NewReader(bytes.NewReader(block))
	r.Comma = s.opts.CSVDelimiter
	r.FieldsPerRecord = -1
	header, err := r.Read()
	off := int(r.InputOffset())
	if !tb.eof && (err != nil || block[off-1] != '\n') || err == nil && bytes.IndexByte(block[:off], '"') >= 0 {
		// The header may go on past the block (blank lines before it).
		if block = tb.rest(block); tb.err != nil {
			return readFailed()
		}
		return s.splitQuotedCSV(f, block, 0, sch, piece)
	}
	if err == io.EOF {
		return true
	}
	if err != nil {
		piece(&textPiece{f: f, bad: &RecordError{File: f.url, Line: 1, Err: fmt.Errorf("malformed CSV header: %w", err)}})
		return false
	}
	headerText := block[:off:off]
	line := 1 + bytes.Count(headerText, []byte("\n"))
	block = block[off:]
	cols, extra := csvColumns(header, sch), csvExtra(header, sch)
	for {
		// Without a quote before it, every line end ends a record.
		q := bytes.IndexByte(block, '"')
		cut := len(block)
		switch {
		case q >= 0:
			cut = bytes.LastIndexByte(block[:q], '\n') + 1
		case !tb.eof:
			cut = bytes.LastIndexByte(block, '\n') + 1
		}
		for data := block[:cut]; len(data) > 0; {
			if ctx.Err() != nil {
				return false
			}
			end, n := cutLines(data, textPieceRows)
			if !piece(&textPiece{f: f, csvLines: data[:end], first: line, header: header, nf: len(header), cols: cols, extra: extra}) {
				return false
			}
			data, line = data[end:], line+n
		}
		if q >= 0 {
			// The rest is split record by record, after the header.
			rest := tb.rest(append(headerText, block[cut:]...))
			if tb.err != nil {
				return readFailed()
			}
			return s.splitQuotedCSV(f, rest, line-1-bytes.Count(headerText, []byte("\n")), sch, piece)
		}
		if tb.eof {
			return true
		}
		if block = tb.next(block[cut:]); tb.err != nil {
			return readFailed()
		}
	}
}

// textBlockBytes is how much of a streamed JSON or CSV file is read at a
// time (a block: ~11 NDJSON pieces of the flights).
const textBlockBytes = 4 << 20

// textBlocks reads a file block by block: data (the whole file at once) or
// r. eof is set once the end was read, err on a failed read.
type textBlocks struct {
	data []byte
	size int // bytes a block (at least)
	r    io.Reader
	eof  bool
	err  error
}

// next returns carry followed by the next bytes of the file, in a new
// buffer (pieces still hold the old one) of at least size bytes and twice
// len(carry), filled unless the file ends (then eof).
func (t *textBlocks) next(carry []byte) []byte {
	if t.r == nil {
		d := t.data
		t.data, t.eof = nil, true
		if len(carry) == 0 {
			return d
		}
		return append(carry, d...)
	}
	b := make([]byte, max(t.size, 2*len(carry), 1))
	n := copy(b, carry)
	for n < len(b) && !t.eof && t.err == nil {
		m, err := t.r.Read(b[n:])
		n += m
		if err == io.EOF {
			t.eof = true
		} else if err != nil {
			t.err = err
		}
	}
	return b[:n]
}

// rest returns carry followed by the rest of the file.
func (t *textBlocks) rest(carry []byte) []byte {
	for !t.eof && t.err == nil {
		carry = t.next(carry)
	}
	return carry
}

// splitJSONArray splits the records of a JSON array (data, the whole file)
// into pieces of textPieceRows records (see splitPieces).
func (s *FileSource) splitJSONArray(f *decodedFile, data []byte, piece func(*textPiece) bool) bool {
	var recs []rawRecord
	ok := true
	splitJSON(data, func(r rawRecord) bool {
		if recs = append(recs, r); len(recs) == textPieceRows {
			ok = piece(&textPiece{f: f, recs: recs})
			recs = nil
		}
		return ok
	}, func(line int, _ string, err error) bool {
		if ok = piece(&textPiece{f: f, recs: recs}); ok {
			piece(&textPiece{f: f, bad: &RecordError{File: f.url, Line: line, Err: err}})
		}
		ok = false
		return false
	})
	if ok && len(recs) > 0 {
		ok = piece(&textPiece{f: f, recs: recs})
	}
	return ok
}

// splitQuotedCSV splits CSV data (a header line, then records; base more
// lines of the file before the records than before them in data) record by
// record into pieces of textPieceRows records (see splitPieces).
func (s *FileSource) splitQuotedCSV(f *decodedFile, data []byte, base int, sch *schema.StructType, piece func(*textPiece) bool) bool {
	var p *textPiece
	ok := true
	// next is an empty piece of the header's columns (as p's, once known).
	next := func(h []string, cols []int, extra []int) *textPiece {
		return &textPiece{f: f, header: h, nf: len(h), cols: cols, extra: extra,
			fields: make([]string, 0, textPieceRows*len(h)), recLines: make([]int, 0, textPieceRows)}
	}
	splitCSV(data, s.opts.CSVDelimiter, func(h []string, r rawRecord, _ func() string) bool {
		if p == nil {
			p = next(h, csvColumns(h, sch), csvExtra(h, sch))
		}
		p.fields = append(p.fields, r.fields...)
		if p.recLines = append(p.recLines, base+r.line); len(p.recLines) == textPieceRows {
			ok = piece(p)
			p = next(p.header, p.cols, p.extra)
		}
		return ok
	}, func(line int, _ string, err error) bool {
		if p != nil && len(p.recLines) > 0 {
			ok = piece(p)
		}
		if ok {
			if line > 0 {
				line += base
			}
			if pe := (*csv.ParseError)(nil); base > 0 && errors.As(err, &pe) {
				// As the reader of the whole file has it.
				pe.StartLine, pe.Line = pe.StartLine+base, pe.Line+base
				err = fmt.Errorf("malformed CSV: %w", pe)
			}
			piece(&textPiece{f: f, bad: &RecordError{File: f.url, Line: line, Err: err}})
		}
		ok = false
		return false
	})
	if ok && p != nil && len(p.recLines) > 0 {
		ok = piece(p)
	}
	return ok
}

// cutLines returns the end of the first n lines of data (each with its
// '\n'; the last may lack one) and how many lines that is (fewer than n at
// the end of data).
func cutLines(data []byte, n int) (end, lines int) {
	for lines < n && end < len(data) {
		i := bytes.IndexByte(data[end:], '\n')
		if i < 0 {
			end = len(data)
		} else {
			end += i + 1
		}
		lines++
	}
	return end, lines
}

// convertPiece converts the records of p into p.rows, up to its first bad
// record (p.bad).
func (s *FileSource) convertPiece(p *textPiece, sch *schema.StructType, slab *rowSlab, scratch *[]jsonMember, texts *textInterner) {
	if p.bad != nil {
		return
	}
	n := len(sch.Fields)
	fail := func(line int, err error) {
		field := ""
		var fe *fieldError
		if errors.As(err, &fe) {
			field, err = fe.field, fe.err
		}
		p.bad = &RecordError{File: p.f.url, Line: line, Field: field, Err: err}
	}
	json := func(r rawRecord) bool {
		out := slab.next(n)
		v, err := s.conv.jsonRow(r.json, sch, "", scratch, out)
		if err != nil {
			slab.undo(out)
			fail(r.line, err)
			return false
		}
		p.rows = append(p.rows, v)
		return true
	}
	switch {
	case p.lines != nil:
		p.rows = make([][]any, 0, textPieceRows)
		splitJSONLines(p.lines, p.first, json, func(line int, _ string, err error) bool {
			fail(line, err)
			return false
		})
	case p.csvLines != nil:
		p.rows = make([][]any, 0, textPieceRows)
		kinds := csvKinds(sch)
		plainCSVRecords(p.csvLines, s.opts.CSVDelimiter, func(l int, rec [][]byte) bool {
			line := p.first - 1 + l
			if len(rec) != p.nf {
				fail(line, fmt.Errorf("%d fields, header has %d", len(rec), p.nf))
				return false
			}
			out := slab.next(n)
			v, err := s.conv.csvRowBytes(p.header, rec, sch, p.cols, p.extra, kinds, out, texts)
			if err != nil {
				slab.undo(out)
				fail(line, err)
				return false
			}
			p.rows = append(p.rows, v)
			return true
		})
	case p.recs != nil:
		p.rows = make([][]any, 0, len(p.recs))
		for _, r := range p.recs {
			if !json(r) {
				return
			}
		}
	default:
		p.rows = make([][]any, 0, len(p.recLines))
		for i, line := range p.recLines {
			out := slab.next(n)
			v, err := s.conv.csvRow(p.header, p.fields[i*p.nf:(i+1)*p.nf], sch, p.cols, p.extra, out)
			if err != nil {
				slab.undo(out)
				fail(line, err)
				return
			}
			p.rows = append(p.rows, v)
		}
	}
}

// parquetChunks yields the records of files (Parquet, read against sch) in
// order, in chunks of at most StreamChunkRows (parquetFeed).
func (s *FileSource) parquetChunks(ctx context.Context, files []decodedFile, sch *schema.StructType) iter.Seq2[[][]any, error] {
	rows := s.parquetChunkRows(sch)
	return parquetFeed(ctx, s, files, func(ctx context.Context, pf *parquetio.File) iter.Seq2[[][]any, error] {
		return pf.Chunks(ctx, sch, parquetio.ReadOptions{}, rows)
	})
}

// minStreamChunkRows is the fewest rows a streamed Parquet chunk is cut to
// by Options.StreamChunkBytes.
const minStreamChunkRows = 4096

// parquetChunkRows is the most rows of a streamed Parquet chunk of schema
// sch: Options.StreamChunkRows, fewer when Options.StreamChunkBytes says so.
func (s *FileSource) parquetChunkRows(sch *schema.StructType) int {
	rows := s.opts.StreamChunkRows
	if s.opts.StreamChunkBytes <= 0 || sch == nil {
		return rows
	}
	var width int64
	for _, f := range sch.Fields {
		switch f.Type.(type) {
		case *schema.StructType, *schema.ArrayType, *schema.MapType:
			width += 64
		default:
			switch f.Type {
			case schema.TypeString, schema.TypeBinary:
				width += 32
			default:
				width += 8
			}
		}
	}
	byBytes := s.opts.StreamChunkBytes / max(width, 1)
	return int(min(int64(rows), max(byBytes, minStreamChunkRows)))
}

// parquetColumns yields the records of parquetChunks column-wise
// (schema.Batch.Columns): typed vectors, no boxed value per row (timestamps
// stored in micros or millis as schema.VecMicros).
func (s *FileSource) parquetColumns(ctx context.Context, files []decodedFile, sch *schema.StructType) iter.Seq2[schema.ColumnChunk, error] {
	rows := s.parquetChunkRows(sch)
	return parquetFeed(ctx, s, files, func(ctx context.Context, pf *parquetio.File) iter.Seq2[schema.ColumnChunk, error] {
		return pf.Columns(ctx, sch, parquetio.ReadOptions{TimestampMicros: true}, rows)
	})
}

// parquetFeed yields the chunks read(pf) gives of each of files, in order.
// One goroutine, started and waited for by each iteration, decodes the
// next chunk while the consumer has the current one, so reading overlaps
// with writing; it hands a chunk over unbuffered, so that at most two
// decoded chunks are alive (with two queued, four were: ~40 MiB more peak
// RSS for the 3M flights, and no faster, since one decode keeps ahead of a
// write).
func parquetFeed[T any](ctx context.Context, s *FileSource, files []decodedFile, read func(context.Context, *parquetio.File) iter.Seq2[T, error]) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		type chunk struct {
			v   T
			err error
		}
		ctx, cancel := context.WithCancel(ctx)
		ch := make(chan chunk)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer close(ch)
			send := func(c chunk) bool {
				select {
				case ch <- c:
					return c.err == nil
				case <-ctx.Done():
					return false
				}
			}
			for _, f := range files {
				pf, err := parquetio.OpenFile(ctx, s.store, f.key, f.size)
				if err != nil {
					send(chunk{err: parquetReadError(f.url, err)})
					return
				}
				for v, err := range read(ctx, pf) {
					if err != nil {
						err = parquetReadError(f.url, err)
					}
					if !send(chunk{v, err}) {
						pf.Close()
						return
					}
				}
				pf.Close()
			}
		}()
		defer func() {
			cancel()
			for range ch { // let the producer finish
			}
			wg.Wait()
		}()
		for c := range ch {
			if !yield(c.v, c.err) || c.err != nil {
				return
			}
		}
		if err := ctx.Err(); err != nil {
			var zero T
			yield(zero, err)
		}
	}
}
