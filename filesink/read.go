package filesink

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// File is one live data file of an output directory.
type File struct {
	// Key is the file's path relative to the output directory (unescaped),
	// e.g. "country=FR/part-00000-<uuid>-c000.snappy.parquet".
	Key string
	// Size in bytes and modification time, from the log entry (or the listing).
	Size             int64
	ModificationTime time.Time // from the log entry (or the listing)
	// Partition holds the column=value pairs discovered from Key's
	// directories, in order; nil values are nulls (__HIVE_DEFAULT_PARTITION__).
	// Empty when the directories are not Hive-style.
	Partition []schema.PartitionValue
	// Entry is the log entry naming the file; nil when listed without the log.
	Entry *SinkFileStatus
}

// Listing is the content of an output directory.
type Listing struct {
	// FromLog: the files come from _spark_metadata (else from listing).
	FromLog bool
	// LatestBatchID is the latest logged batch (-1 without a log).
	LatestBatchID int64
	// Files are the live data files, in log order (or key order).
	Files []File
}

// Open opens the output directory at url (see storage.Open) and lists its
// live files (see ListFiles).
func Open(ctx context.Context, url string, opts Options) (*Listing, error) {
	st, err := storage.Open(ctx, url)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", url, err)
	}
	defer st.Close()
	return ListFiles(ctx, st, opts)
}

// HasLog reports whether the output directory store has a _spark_metadata
// folder, i.e. is a file-sink directory to be read through its log
// (FileStreamSink.hasMetadata).
func HasLog(ctx context.Context, store storage.Store) (bool, error) {
	return hasMetadataDir(ctx, store)
}

// hasMetadataDir reports whether _spark_metadata has any object
// (FileStreamSink.hasMetadata: the folder exists).
func hasMetadataDir(ctx context.Context, store storage.Store) (bool, error) {
	for _, err := range store.List(ctx, MetadataDir+"/", "") {
		if err != nil {
			return false, err // the store names the op and the path
		}
		return true, nil
	}
	return false, nil
}

// ListFiles returns the live data files of the output directory store. With
// a _spark_metadata folder they come from the log (MetadataLogFileIndex),
// never from listing data directories: the latest compaction plus later
// batches, with retention and the delete semantics of opts. A path named
// twice (Spark 3.1+ lists a legacy delete line too) is listed once. A log
// path outside the directory is ErrPathOutsideRoot. Without a log, or with
// opts.IgnoreLog, the directory is listed as Spark's InMemoryFileIndex does,
// skipping names that start with "_" or ".".
func ListFiles(ctx context.Context, store storage.Store, opts Options) (*Listing, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	root, err := parseStoreURL(store.URL())
	if err != nil {
		return nil, err
	}
	useLog := false
	if !opts.IgnoreLog {
		if useLog, err = hasMetadataDir(ctx, store); err != nil {
			return nil, err
		}
	}
	if !useLog {
		files, err := listDataFiles(ctx, store)
		if err != nil {
			return nil, err
		}
		out := &Listing{LatestBatchID: -1}
		for _, fi := range files {
			out.Files = append(out.Files, File{Key: fi.Path, Size: fi.Size, ModificationTime: fi.ModTime,
				Partition: partitionOf(fi.Path)})
		}
		return out, nil
	}
	l, err := NewLog(store, opts)
	if err != nil {
		return nil, err
	}
	snap, err := l.State(ctx)
	if err != nil {
		return nil, err
	}
	entries, err := l.AllFiles(ctx)
	if err != nil {
		return nil, err
	}
	out := &Listing{FromLog: true, LatestBatchID: snap.LatestBatchID}
	seen := map[string]bool{}
	for i := range entries {
		e := &entries[i]
		if e.IsDir {
			continue
		}
		key, err := resolveLogPath(root, e.Path)
		if err != nil {
			return nil, err
		}
		if seen[key] {
			continue
		}
		seen[key] = true
		out.Files = append(out.Files, File{Key: key, Size: e.Size, ModificationTime: time.UnixMilli(e.ModificationTime),
			Partition: partitionOf(key), Entry: e})
	}
	return out, nil
}

// partitionOf parses the Hive-style directories of key; nil if they are not.
func partitionOf(key string) []schema.PartitionValue {
	dir := path.Dir(key)
	if dir == "." {
		return nil
	}
	kv, err := parquetio.ParsePartitionPath(dir)
	if err != nil {
		return nil
	}
	return kv
}

// listDataFiles lists every object of the directory except hidden ones
// (any path element starting with "_" or ".", as Spark skips them), which
// excludes _spark_metadata and _delta_log.
func listDataFiles(ctx context.Context, store storage.Store) ([]storage.FileInfo, error) {
	var out []storage.FileInfo
	for fi, err := range store.List(ctx, "", "") {
		if err != nil {
			return nil, fmt.Errorf("list %s: %w", store.URL(), err)
		}
		hidden := false
		for _, el := range strings.Split(fi.Path, "/") {
			if hiddenName(el) {
				hidden = true
				break
			}
		}
		if !hidden {
			out = append(out, fi)
		}
	}
	return out, nil
}

// loggedKeys returns the keys of every data file named by the log's
// current state (add lines; delete lines too under the Spark 3.1+
// semantics, where they are listed).
func loggedKeys(ctx context.Context, store storage.Store, opts Options) (map[string]bool, error) {
	ls, err := ListFiles(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	if !ls.FromLog {
		return nil, fmt.Errorf("%w: %s has no %s log, so every file would be an orphan", ErrMissingLogFile, store.URL(), MetadataDir)
	}
	keys := make(map[string]bool, len(ls.Files))
	for _, f := range ls.Files {
		keys[f.Key] = true
	}
	return keys, nil
}

// Orphans lists the data files of the output directory that the log does
// not name (files of failed tasks and crashed batches) and that are older
// than olderThan at opts.Now (the clock, default time.Now, as in every
// lakesink Options struct). A file younger than that is never listed: it may
// belong to a batch being written. Hidden files and folders (_spark_metadata,
// _delta_log, ".x") are never listed. A directory without a log is an error
// (ErrMissingLogFile), not a directory full of orphans. Entries dropped from
// the log by retention are no longer named, so their files are orphans.
func Orphans(ctx context.Context, store storage.Store, olderThan time.Duration, opts Options) ([]storage.FileInfo, error) {
	opts.IgnoreLog = false
	named, err := loggedKeys(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	files, err := listDataFiles(ctx, store)
	if err != nil {
		return nil, err
	}
	cutoff := opts.withDefaults().Now().Add(-olderThan)
	var out []storage.FileInfo
	for _, fi := range files {
		if named[fi.Path] || fi.ModTime.After(cutoff) {
			continue
		}
		out = append(out, fi)
	}
	return out, nil
}

// DeleteOrphans deletes files found by Orphans. It reads the log again
// first and skips any file that a batch committed in the meantime names.
// It returns the keys deleted.
func DeleteOrphans(ctx context.Context, store storage.Store, orphans []storage.FileInfo, opts Options) ([]string, error) {
	opts.IgnoreLog = false
	named, err := loggedKeys(ctx, store, opts)
	if err != nil {
		return nil, err
	}
	var deleted []string
	var errs []error
	for _, fi := range orphans {
		if named[fi.Path] || hiddenPath(fi.Path) {
			continue
		}
		if err := store.Delete(ctx, fi.Path); err != nil {
			errs = append(errs, fmt.Errorf("delete orphan %s: %w", fi.Path, err))
			continue
		}
		deleted = append(deleted, fi.Path)
	}
	return deleted, errors.Join(errs...)
}

func hiddenPath(p string) bool {
	for _, el := range strings.Split(p, "/") {
		if hiddenName(el) {
			return true
		}
	}
	return false
}

// CompactLog compacts the log of the output directory now, outside a batch:
// it rewrites the latest compaction file applying the retention (and, with
// LegacyDeleteAction, the delete lines), then deletes expired log files as
// after a batch. It adds no batch and creates no compaction file at a batch
// that is not a compaction batch, since Spark locates compaction files by
// their batch id; a log without a compaction file yet is only cleaned up.
// Run it only while no query writes the directory.
func CompactLog(ctx context.Context, store storage.Store, opts Options) (CompactResult, []string, error) {
	l, err := NewLog(store, opts)
	if err != nil {
		return CompactResult{}, nil, err
	}
	ls, err := l.list(ctx)
	if err != nil {
		return CompactResult{}, nil, err
	}
	interval := ls.compactInterval(l.opts.CompactInterval)
	res := CompactResult{BatchID: -1}
	if lc := ls.latestCompact(); lc >= 0 {
		if res, err = l.compact(ctx, ls, lc, interval, nil, true); err != nil {
			return res, nil, err
		}
	}
	latest := ls.latest()
	if latest < 0 {
		return res, nil, nil
	}
	deleted, err := l.deleteExpired(ctx, latest, interval)
	return res, deleted, err
}
