package compaction

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// ConvertAppID is the txn appId with which converting a file-sink directory
// into a Delta table records the last converted batch (txn.version).
const ConvertAppID = "filesink-convert"

// VacuumOptions configure Vacuum. The zero value vacuums with the table's
// retention.
type VacuumOptions struct {
	// Retention: files unreferenced for longer than this are deleted.
	// Default (0): the table property delta.deletedFileRetentionDuration,
	// else 7 days. Use RetainZero for an explicit zero retention (needs Force).
	Retention time.Duration
	// RetainZero makes a zero Retention explicit (VACUUM ... RETAIN 0 HOURS).
	RetainZero bool
	// Force allows a retention shorter than the table's (Delta's
	// spark.databricks.delta.retentionDurationCheck.enabled=false), and a
	// VACUUM of a file-sink directory with unconverted batches. Readers of
	// old versions and writers still writing files may then lose files.
	Force bool
	// DryRun lists what would be deleted and deletes nothing.
	DryRun bool
	// Workers deletes this many files at once. Default (0): 8.
	Workers int
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// Validate lists every invalid field.
func (o VacuumOptions) Validate() error {
	var errs []error
	if o.Retention < 0 {
		errs = append(errs, fmt.Errorf("%w: Retention %s < 0", ErrInvalidOptions, o.Retention))
	}
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: Workers %d < 0", ErrInvalidOptions, o.Workers))
	}
	return errors.Join(errs...)
}

// VacuumFile is one file VACUUM deleted (or would delete).
type VacuumFile struct {
	Path    string    `json:"path"` // storage key relative to the table root
	Size    int64     `json:"size"`
	ModTime time.Time `json:"modificationTime"`
}

// VacuumResult reports a VACUUM.
type VacuumResult struct {
	// Version is the snapshot version whose references were kept.
	Version int64 `json:"version"`
	// Retention applied (RetentionMs: in milliseconds, the unit of every
	// duration in lakesink's JSON output), and the cutoff (now - retention).
	Retention   time.Duration `json:"-"`
	RetentionMs int64         `json:"retentionMs"`
	Cutoff      time.Time     `json:"cutoff"`
	DryRun      bool          `json:"dryRun"`
	// FilesDeleted and BytesDeleted (what would be, under DryRun).
	FilesDeleted int   `json:"filesDeleted"`
	BytesDeleted int64 `json:"bytesDeleted"`
	// FilesListed is how many data-area files were examined; FilesKept of
	// them are referenced or too young.
	FilesListed int `json:"filesListed"`
	FilesKept   int `json:"filesKept"`
	// Files lists what was deleted (or would be, under DryRun).
	Files []VacuumFile `json:"files,omitempty"`
}

// Vacuum deletes the files in the table directory that no snapshot within the
// retention window references (delta-io/delta VacuumCommand.gc; PROTOCOL.md,
// "Add File and Remove File": tombstones exist so that VACUUM knows what it
// may delete):
//
//   - the directory is listed completely (every page), never descending into
//     _delta_log or any other name starting with "_" or "." unless it is a
//     partition directory "<partition column>=<value>" ("_p=1/" is one when
//     _p is a partition column; Delta's isHiddenDirectory), or _change_data;
//   - files named by a live add of the latest snapshot, or by a tombstone
//     whose deletionTimestamp is within the retention, are kept (paths from the
//     log are decoded with txlog's rules, so percent-escaped partition
//     directories match);
//   - every other file whose modification time is older than now - retention
//     is deleted; younger files (a writer may be about to commit them) stay;
//   - in a converted Spark file-sink directory, files that _spark_metadata
//     names are kept too, and VACUUM refuses to run (ErrUnconvertedBatches,
//     unless Force) while the log has batches the table's txn for
//     ConvertAppID does not cover yet.
//
// A retention below the table's delta.deletedFileRetentionDuration is refused
// with ErrRetentionTooShort unless Force is set. Keys come from listing the
// table store, so nothing outside the table root can be deleted.
func Vacuum(ctx context.Context, t *table.Table, opts VacuumOptions) (*VacuumResult, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Workers == 0 {
		opts.Workers = 8
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("compaction: vacuum %s: %w", t.URL(), err)
	}
	md := snap.Metadata()
	if err := txlog.CheckWriteSupported(snap.Protocol(), md); err != nil {
		return nil, fmt.Errorf("compaction: vacuum %s: %w", t.URL(), err)
	}
	tableRetention, err := DeletedFileRetention(md)
	if err != nil {
		return nil, fmt.Errorf("compaction: vacuum %s: %w", t.URL(), err)
	}
	retention := opts.Retention
	if retention == 0 && !opts.RetainZero {
		retention = tableRetention
	}
	if retention < tableRetention && !opts.Force {
		return nil, fmt.Errorf("compaction: vacuum %s: %w: %s < %s (%s); use Force to override",
			t.URL(), ErrRetentionTooShort, retention, tableRetention, PropDeletedFileRetentionDuration)
	}
	now := opts.Now()
	cutoff := now.Add(-retention)
	res := &VacuumResult{Version: snap.Version(), Retention: retention, RetentionMs: retention.Milliseconds(), Cutoff: cutoff, DryRun: opts.DryRun}

	// Files the retained snapshots reference.
	keep := map[string]bool{}
	for _, a := range snap.Files() {
		if a.DeletionVector != nil {
			return nil, fmt.Errorf("compaction: vacuum %s: %w: file %s has a deletion vector", t.URL(), txlog.ErrUnsupportedFeature, a.Path)
		}
		k, err := snap.FileKey(a.Path)
		if err != nil {
			return nil, fmt.Errorf("compaction: vacuum %s: %w", t.URL(), err)
		}
		keep[k] = true
	}
	for _, r := range snap.Tombstones() {
		if r.DeletionVector != nil {
			return nil, fmt.Errorf("compaction: vacuum %s: %w: tombstone %s has a deletion vector", t.URL(), txlog.ErrUnsupportedFeature, r.Path)
		}
		// A tombstone without a deletion timestamp counts as deleted now
		// (never expired yet), as Delta's delTimestamp defaults to the
		// current time for it.
		if r.DeletionTimestamp != nil && time.UnixMilli(*r.DeletionTimestamp).Before(cutoff) {
			continue
		}
		k, err := snap.FileKey(r.Path)
		if err != nil {
			continue // outside the table: never ours to delete anyway
		}
		keep[k] = true
	}
	store := t.Store()
	// A converted file-sink directory: files its log names stay.
	hasSinkLog := false
	for _, err := range store.List(ctx, filesink.MetadataDir+"/", "") {
		if err != nil {
			return nil, fmt.Errorf("compaction: vacuum %s: list %s: %w", t.URL(), filesink.MetadataDir, err)
		}
		hasSinkLog = true
		break
	}
	if hasSinkLog {
		l, err := filesink.ListFiles(ctx, store, filesink.DefaultOptions())
		if err != nil {
			return nil, fmt.Errorf("compaction: vacuum %s: read %s: %w", t.URL(), filesink.MetadataDir, err)
		}
		for _, f := range l.Files {
			keep[f.Key] = true
		}
		if cv, ok := snap.TxnVersion(ConvertAppID); (!ok || cv < l.LatestBatchID) && !opts.Force {
			return nil, fmt.Errorf("compaction: vacuum %s: %w: %s is at batch %d, the table's %s txn at %d; convert first or use Force",
				t.URL(), ErrUnconvertedBatches, filesink.MetadataDir, l.LatestBatchID, ConvertAppID, cv)
		}
	}

	partCols := md.PartitionColumns
	var victims []VacuumFile
	for fi, err := range store.List(ctx, "", "") {
		if err != nil {
			return nil, fmt.Errorf("compaction: vacuum %s: list: %w", t.URL(), err)
		}
		if hiddenKey(fi.Path, partCols) {
			continue
		}
		res.FilesListed++
		if keep[fi.Path] || !fi.ModTime.Before(cutoff) {
			res.FilesKept++
			continue
		}
		victims = append(victims, VacuumFile{Path: fi.Path, Size: fi.Size, ModTime: fi.ModTime})
	}
	for _, v := range victims {
		res.BytesDeleted += v.Size
	}
	res.Files = victims
	if opts.DryRun {
		res.FilesDeleted = len(victims)
		return res, nil
	}
	deleted, err := deleteAll(ctx, store, victims, opts.Workers)
	res.FilesDeleted = deleted
	if err != nil {
		return res, fmt.Errorf("compaction: vacuum %s: %w", t.URL(), err)
	}
	return res, nil
}

// hiddenKey reports whether a listed key lies in (or is) a hidden name that
// VACUUM must not touch: any path element starting with "_" or "." that is not
// a partition directory "<col>=..." of a partition column, nor _change_data
// (delta-io/delta DeltaFileOperations.isHiddenDirectory). _delta_log is
// always hidden.
func hiddenKey(key string, partCols []string) bool {
	if key == txlog.LogDir || strings.HasPrefix(key, txlog.LogDir+"/") {
		return true
	}
	elems := strings.Split(key, "/")
	for i, e := range elems {
		if !strings.HasPrefix(e, "_") && !strings.HasPrefix(e, ".") {
			continue
		}
		if i < len(elems)-1 && (e == "_change_data" || isPartitionDir(e, partCols)) {
			continue
		}
		return true
	}
	return false
}

// isPartitionDir: "name=value" where name (unescaped) is a partition column.
func isPartitionDir(e string, partCols []string) bool {
	name, _, ok := strings.Cut(e, "=")
	if !ok {
		return false
	}
	name = parquetio.UnescapePathName(name)
	for _, c := range partCols {
		if c == name {
			return true
		}
	}
	return false
}

// deleteAll deletes files with bounded parallelism; it returns how many were
// deleted before the first error.
func deleteAll(ctx context.Context, store interface {
	Delete(ctx context.Context, path string) error
}, files []VacuumFile, workers int) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var n atomic.Int64
	for _, f := range files {
		g.Go(func() error {
			if err := store.Delete(gctx, f.Path); err != nil {
				return err
			}
			n.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return int(n.Load()), err
}
