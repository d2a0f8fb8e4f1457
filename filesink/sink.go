package filesink

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
)

// Sink is Spark's FileStreamSink: each batch becomes data files in the
// output directory plus one _spark_metadata log file. It implements
// sink.Sink. Not safe for concurrent use: AddBatch calls are sequential.
type Sink struct {
	store storage.Store
	log   *Log
	opts  Options
	root  string // qualified URI of the output directory, escaped
	// newID returns the UUID of a data file name (uuid.NewString; tests
	// fix it to compare a batch byte for byte).
	newID func() string
}

var _ sink.Sink = (*Sink)(nil)

// New returns a file sink writing into store, the output directory. The
// options are validated and copied; an output mode other than append is
// ErrUnsupportedOutputMode (Spark: "Data source ... does not support
// Complete output mode"). ctx is used to check that an existing log is
// readable.
func New(ctx context.Context, store storage.Store, opts Options) (*Sink, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	root, err := rootURI(store.URL(), opts.S3Scheme)
	if err != nil {
		return nil, err
	}
	l, err := NewLog(store, opts)
	if err != nil {
		return nil, err
	}
	if _, err := l.State(ctx); err != nil {
		return nil, fmt.Errorf("open log of %s: %w", store.URL(), err)
	}
	return &Sink{store: store, log: l, opts: opts, root: root, newID: uuid.NewString}, nil
}

// Log returns the sink's _spark_metadata log.
func (s *Sink) Log() *Log { return s.log }

// AddBatch writes batch batchID (FileStreamSink.addBatch):
//
//   - batchID <= the latest logged batch: nothing is written; the result says
//     Skipped and a warning is logged ("Skipping already committed batch").
//   - batchID > latest+1: ErrBatchGap naming both.
//   - otherwise the data files are written to their final directories with
//     Spark's names, then _spark_metadata/batchID is created with
//     put-if-absent (a clash is ErrConcurrentWriter: two queries share the
//     output path). An empty batch writes a log file holding only "v1".
//   - a log whose newest file is not "v1" (a newer Spark's format) is
//     ErrUnsupportedLogVersion before any data file is written.
//
// On error nothing of the batch is committed; files written before the
// failure are orphans (see Orphans) unless they could be removed.
func (s *Sink) AddBatch(ctx context.Context, batchID int64, batch *schema.Batch) (sink.Result, error) {
	res := sink.Result{BatchID: batchID, Version: -1}
	latest, err := s.log.LatestBatchID(ctx)
	if err != nil {
		return res, fmt.Errorf("batch %d: %w", batchID, err)
	}
	if batchID <= latest {
		s.opts.Logger.Warn("filesink: skipping already committed batch",
			slog.Int64("batchId", batchID), slog.Int64("latestBatchId", latest), slog.String("path", s.store.URL()))
		res.Skipped = true
		return res, nil
	}
	if batchID != latest+1 {
		return res, fmt.Errorf("%w: batch %d arrived but %s ends at batch %d", ErrBatchGap, batchID, MetadataDir, latest)
	}
	if err := batch.Collect(); err != nil { // a streamed batch: this sink writes it whole
		return res, fmt.Errorf("batch %d: %w", batchID, err)
	}
	// Refuse a log in a newer format before writing any data file.
	if err := s.log.CheckLatestVersion(ctx); err != nil {
		return res, fmt.Errorf("batch %d: %w", batchID, err)
	}
	var files []writtenFile
	if batch != nil && len(batch.Rows) > 0 {
		files, err = s.writeData(ctx, batch)
		if err != nil {
			return res, fmt.Errorf("batch %d: %w", batchID, err)
		}
	}
	entries := make([]SinkFileStatus, 0, len(files))
	for _, f := range files {
		// Like ManifestFileCommitProtocol.commitTask: the status of the file
		// as the store reports it.
		fi, err := s.store.Stat(ctx, f.key)
		if err != nil {
			return res, fmt.Errorf("batch %d: stat data file %s: %w", batchID, f.key, err)
		}
		mod := fi.ModTime
		if mod.IsZero() {
			mod = s.opts.Now()
		}
		entries = append(entries, SinkFileStatus{
			Path:             entryURI(s.root, f.key),
			Size:             fi.Size,
			IsDir:            false,
			ModificationTime: mod.UnixMilli(),
			BlockReplication: s.opts.BlockReplication,
			BlockSize:        s.opts.BlockSize,
			Action:           ActionAdd,
		})
		res.NumBytes += fi.Size
		res.NumRows += f.rows
	}
	res.NumFiles = len(entries)
	if err := s.log.Add(ctx, batchID, entries); err != nil {
		if errors.Is(err, ErrConcurrentWriter) {
			// Another writer owns this batch: our files are named by no log.
			for _, f := range files {
				_ = s.store.Delete(context.WithoutCancel(ctx), f.key)
			}
		}
		return res, fmt.Errorf("commit batch %d: %w", batchID, err)
	}
	return res, nil
}

// writtenFile is one data file of a batch.
type writtenFile struct {
	key  string
	rows int64
}

// sparkFileName is ManifestFileCommitProtocol.newTaskTempFile's name
// "part-%05d-<uuid><ext>" with FileFormatDataWriter's "-c%03d" counter:
// each file is its own task, so the counter is 0.
func (s *Sink) sparkFileName(task int, ext string) string {
	return fmt.Sprintf("part-%05d-%s-c000%s", task, s.newID(), ext)
}

func (s *Sink) writeData(ctx context.Context, batch *schema.Batch) ([]writtenFile, error) {
	if s.opts.Format == FormatJSON {
		return s.writeJSON(ctx, batch)
	}
	wo := parquetio.DefaultWriteOptions()
	wo.PartitionColumns = s.opts.PartitionColumns
	wo.TargetFileSizeBytes = s.opts.TargetFileSizeBytes
	wo.Compression = s.opts.Compression
	wo.NoStats = true
	wo.FileName = func(part int, codecExt string) string {
		return s.sparkFileName(part, codecExt+".parquet")
	}
	written, err := parquetio.WriteFiles(ctx, s.store, batch, wo)
	if err != nil {
		return nil, err
	}
	out := make([]writtenFile, len(written))
	for i, w := range written {
		out[i] = writtenFile{key: w.Path, rows: w.NumRecords}
	}
	return out, nil
}

// writeJSON writes JSON lines files (Spark's JsonFileFormat: ".json", with
// gzip ".json.gz"), one directory per partition, rolled at the target size.
func (s *Sink) writeJSON(ctx context.Context, batch *schema.Batch) (out []writtenFile, err error) {
	sch := batch.Schema
	if sch == nil {
		return nil, fmt.Errorf("%w: batch has no schema", schema.ErrSchema)
	}
	partIdx := make([]int, 0, len(s.opts.PartitionColumns))
	skip := map[int]bool{}
	for _, c := range s.opts.PartitionColumns {
		found := -1
		for i, f := range sch.Fields {
			if f.Name == c {
				found = i
			}
		}
		if found < 0 {
			return nil, fmt.Errorf("%w: %w", schema.ErrSchema, schema.CheckPartitionColumns(sch, []string{c}))
		}
		partIdx = append(partIdx, found)
		skip[found] = true
	}
	gz := s.opts.Compression == "gzip"
	ext := ".json"
	if gz {
		ext += ".gz"
	}
	open := map[string]*jsonFile{}
	var order []string
	defer func() {
		if err != nil {
			for _, f := range open {
				_ = f.w.Abort()
			}
			for _, f := range out {
				_ = s.store.Delete(context.WithoutCancel(ctx), f.key)
			}
			out = nil
		}
	}()
	task := 0
	finish := func(dir string) error {
		f := open[dir]
		delete(open, dir)
		if err := f.close(); err != nil {
			return err
		}
		out = append(out, writtenFile{key: f.key, rows: f.rows})
		return nil
	}
	for ri, row := range batch.Rows {
		if len(row) != len(sch.Fields) {
			return nil, &schema.RowError{Row: ri, Err: fmt.Errorf("record has %d values, schema has %d fields", len(row), len(sch.Fields))}
		}
		vals := map[string]*string{}
		for _, i := range partIdx {
			v, err := parquetio.SerializePartitionValue(row[i], sch.Fields[i].Type)
			if err != nil {
				return nil, &schema.RowError{Row: ri, Field: sch.Fields[i].Name, Err: err}
			}
			vals[sch.Fields[i].Name] = v
		}
		dir := parquetio.PartitionPath(s.opts.PartitionColumns, vals)
		f := open[dir]
		if f == nil {
			key := s.sparkFileName(task, ext)
			task++
			if dir != "" {
				key = dir + "/" + key
			}
			if f, err = newJSONFile(ctx, s.store, key, gz); err != nil {
				return nil, err
			}
			open[dir] = f
			order = append(order, dir)
		}
		if err := f.writeRow(sch, row, skip); err != nil {
			return nil, &schema.RowError{Row: ri, Err: err}
		}
		if f.cw.n >= s.opts.TargetFileSizeBytes {
			if err := finish(dir); err != nil {
				return nil, err
			}
		}
	}
	for _, dir := range order {
		if open[dir] != nil {
			if err := finish(dir); err != nil {
				return nil, err
			}
		}
	}
	return out, nil
}

// hiddenName reports whether a path element is skipped when listing data
// files, as Spark's InMemoryFileIndex.shouldFilterOutPathName does: names
// starting with "." or "_" (except "_x=y" partition directories) and
// "._COPYING_" files.
func hiddenName(name string) bool {
	if strings.HasPrefix(name, ".") || strings.HasSuffix(name, "._COPYING_") {
		return true
	}
	return strings.HasPrefix(name, "_") && !strings.Contains(name, "=")
}
