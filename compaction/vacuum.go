package compaction

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// ConvertAppID is the txn appId with which converting a file-sink directory
// into a Delta table records the last converted batch (txn.version).
const ConvertAppID = "filesink-convert"

// VacuumMode chooses how VACUUM finds the files it may delete (Delta 3.3+
// VACUUM ... LITE | FULL, delta-io/delta VacuumCommand; delta-rs VacuumMode).
type VacuumMode int

const (
	// VacuumFull lists the whole table directory and deletes every file no
	// retained snapshot references: expired tombstones, and untracked files
	// (never named by the log) older than the untracked-file floor. The
	// default.
	VacuumFull VacuumMode = iota
	// VacuumLite lists nothing: it deletes only the files named by expired
	// remove actions still in the log (snapshot tombstones) that no live add
	// names. Untracked files are never touched; files whose tombstone a
	// checkpoint already dropped are left for a full VACUUM.
	VacuumLite
)

// String is Delta's keyword for the mode: "FULL" or "LITE".
func (m VacuumMode) String() string {
	if m == VacuumLite {
		return "LITE"
	}
	return "FULL"
}

// ParseVacuumMode accepts "full" and "lite" in any case (Delta's VACUUM ...
// FULL / LITE spelling included); anything else is an error matching
// ErrInvalidOptions.
func ParseVacuumMode(s string) (VacuumMode, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "full", "":
		return VacuumFull, nil
	case "lite":
		return VacuumLite, nil
	}
	return VacuumFull, fmt.Errorf("%w: vacuum mode %q: want full or lite", ErrInvalidOptions, s)
}

// DefaultUntrackedMinAge is the floor below which VACUUM never deletes an
// untracked file (one no action still in the log names), whatever the
// retention: 1 hour.
const DefaultUntrackedMinAge = time.Hour

// Operation names of the commits VACUUM records (Delta 2.3+
// DeltaOperations.VacuumStart / VacuumEnd, delta-rs VacuumStart/VacuumEnd).
const (
	OpVacuumStart = "VACUUM START"
	OpVacuumEnd   = "VACUUM END"
)

// VacuumOptions configure Vacuum. The zero value vacuums with the table's
// retention, in full mode, with the default untracked-file floor.
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
	// old versions may then lose files. It does not lower UntrackedMinAge.
	Force bool
	// UntrackedMinAge is the floor for untracked files: files that no add
	// or remove action still in the log names (the data files of a batch
	// being written, an OPTIMIZE output not committed yet, a crashed
	// writer's leftovers) are deleted only when their modification time is
	// older than now - max(Retention, UntrackedMinAge). Retention and Force
	// never lower it, so no retention setting deletes a file that a commit
	// in flight is about to name (Delta's VACUUM has that hazard below 7
	// days; delta-rs keeps recent untracked files too). Default (0):
	// DefaultUntrackedMinAge (1 hour); a shorter floor, or
	// UntrackedMinAgeZero, needs ForceUntrackedMinAge.
	UntrackedMinAge time.Duration
	// UntrackedMinAgeZero makes a zero UntrackedMinAge explicit (needs
	// ForceUntrackedMinAge): every untracked file may be deleted, so a
	// concurrent writer's commit can then name deleted files.
	UntrackedMinAgeZero bool
	// ForceUntrackedMinAge allows an UntrackedMinAge below
	// DefaultUntrackedMinAge. Use it only when no writer runs.
	ForceUntrackedMinAge bool
	// Mode is VacuumFull (default) or VacuumLite.
	Mode VacuumMode
	// DryRun lists what would be deleted, deletes nothing and commits
	// nothing.
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
		errs = append(errs, fmt.Errorf("%w: retention %s is negative", ErrInvalidOptions, o.Retention))
	}
	if o.UntrackedMinAge < 0 {
		errs = append(errs, fmt.Errorf("%w: untracked-file minimum age %s is negative", ErrInvalidOptions, o.UntrackedMinAge))
	}
	if o.Workers < 0 {
		errs = append(errs, fmt.Errorf("%w: %d workers is negative", ErrInvalidOptions, o.Workers))
	}
	if o.Mode != VacuumFull && o.Mode != VacuumLite {
		errs = append(errs, fmt.Errorf("%w: Mode %d is neither VacuumFull nor VacuumLite", ErrInvalidOptions, o.Mode))
	}
	return errors.Join(errs...)
}

// untrackedMinAge is the floor in force, or ErrUntrackedMinAgeTooShort.
func (o VacuumOptions) untrackedMinAge() (time.Duration, error) {
	floor := o.UntrackedMinAge
	if floor == 0 && !o.UntrackedMinAgeZero {
		floor = DefaultUntrackedMinAge
	}
	if floor < DefaultUntrackedMinAge && !o.ForceUntrackedMinAge {
		return 0, fmt.Errorf("%w: %s < %s; use ForceUntrackedMinAge to override", ErrUntrackedMinAgeTooShort, floor, DefaultUntrackedMinAge)
	}
	return floor, nil
}

// VacuumFile is one file VACUUM deleted (or would delete).
type VacuumFile struct {
	Path    string    `json:"path"`             // storage key relative to the table root
	Size    int64     `json:"size"`             // size in bytes
	ModTime time.Time `json:"modificationTime"` // the file's modification time in the store
}

// VacuumResult reports a VACUUM.
type VacuumResult struct {
	// Version is the snapshot version whose references were kept.
	Version int64 `json:"version"`
	// Mode is "FULL" or "LITE".
	Mode string `json:"mode"`
	// Retention applied (RetentionMs: in milliseconds, the unit of every
	// duration in lakesink's JSON output), and the cutoff (now - retention).
	Retention   time.Duration `json:"-"`
	RetentionMs int64         `json:"retentionMs"`
	Cutoff      time.Time     `json:"cutoff"` // now - Retention: files removed before it may be deleted
	// UntrackedMinAgeMs is the untracked-file floor in milliseconds, and
	// UntrackedCutoff the modification time before which an untracked file
	// may go (now - max(retention, floor)).
	UntrackedMinAge   time.Duration `json:"-"`
	UntrackedMinAgeMs int64         `json:"untrackedMinAgeMs"`
	UntrackedCutoff   time.Time     `json:"untrackedCutoff"`
	DryRun            bool          `json:"dryRun"` // nothing was deleted: the counts say what would be
	// FilesDeleted and BytesDeleted (what would be, under DryRun).
	FilesDeleted int   `json:"filesDeleted"`
	BytesDeleted int64 `json:"bytesDeleted"`
	// FilesListed is how many data-area files were examined (in lite mode:
	// expired tombstones); FilesKept of them are referenced or too young.
	FilesListed int `json:"filesListed"`
	FilesKept   int `json:"filesKept"`
	// UntrackedKept counts the kept files that only the untracked-file
	// floor saved (younger than it, named by no action in the log).
	UntrackedKept int `json:"untrackedKept"`
	// Directories is numVacuumedDirectories: the distinct directories of
	// the examined files plus the table root, as Delta counts them.
	Directories int `json:"directories"`
	// StartVersion and EndVersion are the VACUUM START and VACUUM END
	// commits (-1: none; a dry run or a VACUUM with nothing to delete
	// commits nothing).
	StartVersion int64 `json:"startVersion"`
	EndVersion   int64 `json:"endVersion"`
	// Files lists what was deleted (or would be, under DryRun).
	Files []VacuumFile `json:"files,omitempty"`
}

// Vacuum deletes the files in the table directory that no snapshot within the
// retention window references (delta-io/delta VacuumCommand.gc; PROTOCOL.md,
// "Add File and Remove File": tombstones exist so that VACUUM knows what it
// may delete).
//
// In full mode (the default):
//
//   - the directory is listed completely (every page), never descending into
//     _delta_log or any other name starting with "_" or "." unless it is a
//     partition directory "<partition column>=<value>" ("_p=1/" is one when
//     _p is a partition column; Delta's isHiddenDirectory), or _change_data;
//   - files named by a live add of the latest snapshot, or by a tombstone
//     whose deletionTimestamp is within the retention, are kept (paths from the
//     log are decoded with txlog's rules, so percent-escaped partition
//     directories match);
//   - a file named by an expired tombstone is deleted when its modification
//     time is older than now - retention;
//   - an untracked file (named by no action still in the log) is deleted
//     only when older than now - max(retention, UntrackedMinAge): a writer
//     may be about to commit it (see VacuumOptions.UntrackedMinAge);
//   - lakesink's own temporary files (storage.IsTempName: ".lakesink-tmp-*",
//     a data file or commit being written, or stranded by a writer killed
//     before its rename or link) are untracked files under that same rule,
//     in any directory but _delta_log (whose temporary files log cleanup
//     removes). Delta's VACUUM deletes the files in the table directory
//     that Delta does not manage ("untracked files") once older than the
//     retention, and skips only directories starting with "_" or "."
//     (delta-io/delta VacuumCommand.gc; Databricks SQL reference, VACUUM:
//     "removes all files from the table directory that are not managed by
//     Delta"); lakesink's temporary names start with "." only so that no
//     reader takes them for data, so they go by the untracked rule. They are
//     listed with storage.ListTemp, counted in FilesListed, FilesKept and
//     UntrackedKept, and reported in Files (so by DryRun too); no other
//     hidden name is touched;
//   - in a converted Spark file-sink directory, files that _spark_metadata
//     names are kept too, and VACUUM refuses to run (ErrUnconvertedBatches,
//     unless Force) while the log has batches the table's txn for
//     ConvertAppID does not cover yet.
//
// In lite mode (Delta's VACUUM LITE) nothing is listed: the candidates are
// the expired tombstones of the snapshot that no live add names; one that
// no longer exists is skipped.
//
// Unless DryRun, a VACUUM that has files to delete first commits VACUUM
// START (operationParameters retentionCheckEnabled, defaultRetentionMillis,
// specifiedRetentionMillis when a retention was given; operationMetrics
// numFilesToDelete, sizeOfDataToDelete), deletes, then commits VACUUM END
// (status COMPLETED with numDeletedFiles and numVacuumedDirectories, or
// FAILED when a delete failed), as Delta's VacuumCommandImpl.logVacuumStart
// and logVacuumEnd do: commits with no action but commitInfo, blind, so no
// concurrent writer conflicts with them. A VACUUM with nothing to delete
// commits nothing. If VACUUM START cannot be committed nothing is deleted.
//
// A retention below the table's delta.deletedFileRetentionDuration is refused
// with ErrRetentionTooShort unless Force is set, an untracked-file floor below
// DefaultUntrackedMinAge with ErrUntrackedMinAgeTooShort unless
// ForceUntrackedMinAge. Keys come from listing the table store or from the
// log resolved inside the table root, so nothing outside it is deleted.
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
	floor, err := opts.untrackedMinAge()
	if err != nil {
		return nil, fmt.Errorf("vacuum %s: %w", t.URL(), err)
	}
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("vacuum: %w", err) // names the table
	}
	md := snap.Metadata()
	if err := txlog.CheckWriteSupported(snap.Protocol(), md); err != nil {
		return nil, fmt.Errorf("vacuum %s: %w", t.URL(), err)
	}
	props := snap.Properties()
	if err := props.Err(txlog.PropDeletedFileRetentionDuration); err != nil {
		return nil, fmt.Errorf("vacuum %s: %w", t.URL(), err)
	}
	tableRetention := props.DeletedFileRetention
	retention := opts.Retention
	specified := retention != 0 || opts.RetainZero
	if !specified {
		retention = tableRetention
	}
	if retention < tableRetention && !opts.Force {
		return nil, fmt.Errorf("vacuum %s: %w: %s < %s (%s); use Force to override",
			t.URL(), ErrRetentionTooShort, retention, tableRetention, txlog.PropDeletedFileRetentionDuration)
	}
	now := opts.Now()
	cutoff := now.Add(-retention)
	untrackedCutoff := now.Add(-max(retention, floor))
	res := &VacuumResult{Version: snap.Version(), Mode: opts.Mode.String(), Retention: retention, RetentionMs: retention.Milliseconds(),
		Cutoff: cutoff, UntrackedMinAge: floor, UntrackedMinAgeMs: floor.Milliseconds(), UntrackedCutoff: untrackedCutoff,
		DryRun: opts.DryRun, StartVersion: -1, EndVersion: -1}

	// Files the retained snapshots reference (keep), and every file an
	// action still in the log names (tracked).
	keep := map[string]bool{}
	tracked := map[string]bool{}
	// A deletion vector file an add or tombstone names is tracked (and kept
	// with it) like the data file (Delta's VacuumCommand collects
	// DeletionVectorDescriptor.absolutePath of adds and removes).
	for _, a := range snap.Files() {
		k, err := snap.FileKey(a.Path)
		if err != nil {
			return nil, fmt.Errorf("vacuum %s: %w", t.URL(), err)
		}
		keep[k] = true
		tracked[k] = true
		dk, ok, err := dvKey(snap, a.DeletionVector)
		if err != nil {
			return nil, fmt.Errorf("vacuum %s: deletion vector of %s: %w", t.URL(), a.Path, err)
		}
		if ok {
			keep[dk] = true
			tracked[dk] = true
		}
	}
	var expired []string
	for _, r := range snap.Tombstones() {
		keys := []string{}
		if k, err := snap.FileKey(r.Path); err == nil {
			keys = append(keys, k) // outside the table: never ours to delete anyway
		}
		if dk, ok, err := dvKey(snap, r.DeletionVector); err == nil && ok {
			keys = append(keys, dk)
		}
		for _, k := range keys {
			tracked[k] = true
			// A tombstone without a deletion timestamp counts as deleted now
			// (never expired yet), as Delta's delTimestamp defaults to the
			// current time for it.
			if r.DeletionTimestamp != nil && time.UnixMilli(*r.DeletionTimestamp).Before(cutoff) {
				expired = append(expired, k)
				continue
			}
			keep[k] = true
		}
	}
	store := t.Store()
	// A converted file-sink directory: files its log names stay.
	hasSinkLog := false
	for _, err := range store.List(ctx, filesink.MetadataDir+"/", "") {
		if err != nil {
			return nil, fmt.Errorf("vacuum %s: list %s: %w", t.URL(), filesink.MetadataDir, err)
		}
		hasSinkLog = true
		break
	}
	if hasSinkLog {
		l, err := filesink.ListFiles(ctx, store, filesink.DefaultOptions())
		if err != nil {
			return nil, fmt.Errorf("vacuum %s: read %s: %w", t.URL(), filesink.MetadataDir, err)
		}
		for _, f := range l.Files {
			keep[f.Key] = true
		}
		if cv, ok := snap.TxnVersion(ConvertAppID); (!ok || cv < l.LatestBatchID) && !opts.Force {
			return nil, fmt.Errorf("vacuum %s: %w: %s is at batch %d, the table's %s txn at %d; convert first or use Force",
				t.URL(), ErrUnconvertedBatches, filesink.MetadataDir, l.LatestBatchID, ConvertAppID, cv)
		}
	}

	partCols := md.PartitionColumns
	var victims []VacuumFile
	dirs := map[string]bool{}
	if opts.Mode == VacuumLite {
		victims, err = liteVictims(ctx, t, expired, keep, partCols, res)
		if err != nil {
			return nil, err
		}
		for _, v := range victims {
			dirs[path.Dir(v.Path)] = true
		}
	} else {
		for fi, err := range store.List(ctx, "", "") {
			if err != nil {
				return nil, fmt.Errorf("vacuum %s: list: %w", t.URL(), err)
			}
			if hiddenKey(fi.Path, partCols) {
				continue
			}
			res.FilesListed++
			dirs[path.Dir(fi.Path)] = true
			switch {
			case keep[fi.Path] || !fi.ModTime.Before(cutoff):
				res.FilesKept++
				continue
			case !tracked[fi.Path] && !fi.ModTime.Before(untrackedCutoff):
				res.FilesKept++
				res.UntrackedKept++
				continue
			}
			victims = append(victims, VacuumFile{Path: fi.Path, Size: fi.Size, ModTime: fi.ModTime})
		}
		// lakesink's own temporary files, which List hides: untracked
		// files like any other (see Vacuum).
		for fi, err := range storage.ListTemp(ctx, store, "") {
			if err != nil {
				return nil, fmt.Errorf("vacuum %s: %w", t.URL(), err)
			}
			if fi.Path == txlog.LogDir || strings.HasPrefix(fi.Path, txlog.LogDir+"/") {
				continue // log cleanup's (txlog.Log.Cleanup)
			}
			res.FilesListed++
			dirs[path.Dir(fi.Path)] = true
			if !fi.ModTime.Before(untrackedCutoff) {
				res.FilesKept++
				res.UntrackedKept++
				continue
			}
			victims = append(victims, VacuumFile{Path: fi.Path, Size: fi.Size, ModTime: fi.ModTime})
		}
	}
	delete(dirs, ".")
	res.Directories = len(dirs) + 1 // + the table root, as Delta counts it
	for _, v := range victims {
		res.BytesDeleted += v.Size
	}
	res.Files = victims
	if opts.DryRun || len(victims) == 0 {
		res.FilesDeleted = len(victims)
		return res, nil
	}

	startParams := txlog.OperationParameters{
		"retentionCheckEnabled":  strconv.FormatBool(!opts.Force),
		"defaultRetentionMillis": strconv.FormatInt(tableRetention.Milliseconds(), 10),
	}
	if specified {
		startParams["specifiedRetentionMillis"] = strconv.FormatInt(retention.Milliseconds(), 10)
	}
	startMetrics := map[string]any{
		"numFilesToDelete":   strconv.Itoa(len(victims)),
		"sizeOfDataToDelete": strconv.FormatInt(res.BytesDeleted, 10),
	}
	v, err := t.Log().Begin(snap).Commit(ctx, OpVacuumStart, startParams, startMetrics)
	if err != nil {
		return res, fmt.Errorf("vacuum %s: commit %s: %w", t.URL(), OpVacuumStart, err)
	}
	res.StartVersion = v
	deleted, delErr := deleteAll(ctx, store, victims, opts.Workers)
	res.FilesDeleted = deleted
	status := "COMPLETED"
	endMetrics := map[string]any{}
	if delErr != nil {
		status = "FAILED"
	} else {
		endMetrics["numDeletedFiles"] = strconv.Itoa(deleted)
		endMetrics["numVacuumedDirectories"] = strconv.Itoa(res.Directories)
	}
	// The END commit is recorded even when ctx was cancelled during the
	// deletes, so history shows how the VACUUM ended.
	endSnap, err := t.Snapshot(context.WithoutCancel(ctx))
	if err == nil {
		v, err = t.Log().Begin(endSnap).Commit(context.WithoutCancel(ctx), OpVacuumEnd, txlog.OperationParameters{"status": status}, endMetrics)
	}
	if err == nil {
		res.EndVersion = v
	}
	if delErr != nil {
		return res, fmt.Errorf("vacuum %s: %w", t.URL(), delErr)
	}
	if err != nil {
		return res, fmt.Errorf("vacuum %s: commit %s after deleting %d files: %w", t.URL(), OpVacuumEnd, deleted, err)
	}
	return res, nil
}

// liteVictims are the expired tombstones that no live add (or file-sink
// log) names, outside hidden names. Instead of a listing, each candidate
// is checked with one Stat, so that files an earlier VACUUM deleted are
// neither reported nor counted again.
func liteVictims(ctx context.Context, t *table.Table, expired []string, keep map[string]bool, partCols []string, res *VacuumResult) ([]VacuumFile, error) {
	var out []VacuumFile
	seen := map[string]bool{}
	for _, k := range expired {
		if hiddenKey(k, partCols) || seen[k] {
			continue
		}
		seen[k] = true
		res.FilesListed++
		if keep[k] {
			res.FilesKept++
			continue
		}
		vf := VacuumFile{Path: k}
		fi, err := t.Store().Stat(ctx, k)
		if errors.Is(err, storage.ErrNotFound) {
			continue // an earlier VACUUM deleted it
		}
		if err != nil {
			return nil, fmt.Errorf("vacuum %s: %w", t.URL(), err)
		}
		vf.Size, vf.ModTime = fi.Size, fi.ModTime
		out = append(out, vf)
	}
	return out, nil
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
// deleted before the first error. A file already gone is not counted and is
// no error.
// A temporary name (storage.IsTempName) is deleted with storage.DeleteTemp,
// as Store.Delete refuses it.
func deleteAll(ctx context.Context, store storage.Store, files []VacuumFile, workers int) (int, error) {
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(workers)
	var n atomic.Int64
	for _, f := range files {
		g.Go(func() error {
			del := store.Delete
			if storage.IsTempName(path.Base(f.Path)) {
				del = func(ctx context.Context, key string) error { return storage.DeleteTemp(ctx, store, key) }
			}
			if err := del(gctx, f.Path); err != nil {
				if errors.Is(err, storage.ErrNotFound) {
					return nil // already gone (another VACUUM; lite mode does not list)
				}
				return err
			}
			n.Add(1)
			return nil
		})
	}
	err := g.Wait()
	return int(n.Load()), err
}

// dvKey is the storage key of the file holding deletion vector d, and false
// for no descriptor or an inline one (parquetio.DVFileKey; a 'p' path is
// resolved inside the table root, an error outside it, so nothing outside
// is deleted; PROTOCOL.md "Deletion Vector Descriptor Schema").
func dvKey(snap *txlog.Snapshot, d *txlog.DeletionVector) (string, bool, error) {
	if d == nil {
		return "", false, nil
	}
	return parquetio.DVFileKey(dvDescriptor(d), snap.FileKey)
}

// dvDescriptor is d for parquetio's deletion-vector helpers.
func dvDescriptor(d *txlog.DeletionVector) parquetio.DVDescriptor {
	return parquetio.DVDescriptor{StorageType: d.StorageType, PathOrInlineDV: d.PathOrInlineDV, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
}
