package txlog

import (
	"cmp"
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// CleanupPlan is what Cleanup deletes (or would, under DryRun) (PROTOCOL.md, "Metadata
// Cleanup").
type CleanupPlan struct {
	// Cutoff is midnight UTC of the day now - delta.logRetentionDuration.
	Cutoff time.Time
	// CheckpointVersion is the cutOffCheckpoint: the newest complete
	// checkpoint not newer than the newest commit at or before Cutoff.
	// -1 when there is none (nothing to delete).
	CheckpointVersion int64
	// Delete lists the keys to delete, oldest version first, then the
	// expired sidecars, then the stranded temporary files (see Cleanup).
	Delete []string
}

// CleanupOptions configure Cleanup. The zero value deletes what has expired
// by the log's clock.
type CleanupOptions struct {
	// DryRun computes the plan and deletes nothing.
	DryRun bool
	// Now is the clock the cutoff is computed from. Default: the log's
	// Options.Now.
	Now func() time.Time
}

// TempMinAge is the least age (by modification time) of a temporary file
// in _delta_log (storage.IsTempName) that Cleanup deletes, whatever the
// log retention: a commit being staged or a checkpoint being written is
// younger.
const TempMinAge = time.Hour

// planCleanup computes what Cleanup deletes at now, deleting nothing: the
// expired log files, then the temporary files under _delta_log/ (a commit
// or checkpoint a killed writer staged) modified before both Cutoff and
// now - TempMinAge.
func (l *Log) planCleanup(ctx context.Context, now time.Time) (*CleanupPlan, error) {
	plan, err := l.planExpired(ctx, now)
	if err != nil || plan.Cutoff.IsZero() {
		return plan, err // disabled: nothing at all is deleted
	}
	tempCut := plan.Cutoff
	if c := now.Add(-TempMinAge); c.Before(tempCut) {
		tempCut = c
	}
	for fi, err := range storage.ListTemp(ctx, l.store, LogDir+"/") {
		if err != nil {
			return nil, err // the store names the op and the path
		}
		if fi.ModTime.Before(tempCut) {
			plan.Delete = append(plan.Delete, fi.Path)
		}
	}
	return plan, nil
}

// planExpired is planCleanup without the temporary files.
func (l *Log) planExpired(ctx context.Context, now time.Time) (*CleanupPlan, error) {
	snap, err := l.Snapshot(ctx)
	if err != nil {
		return nil, err
	}
	props := snap.Properties()
	plan := &CleanupPlan{CheckpointVersion: -1}
	// Delta's MetadataCleanup reads both with DeltaConfig.fromMetaData,
	// which throws on an invalid value: so does this.
	if err := props.Err(PropEnableExpiredLogCleanup, PropLogRetentionDuration); err != nil {
		return nil, err
	}
	if !props.EnableExpiredLogCleanup {
		return plan, nil
	}
	cut := now.Add(-props.LogRetention).UTC()
	plan.Cutoff = time.Date(cut.Year(), cut.Month(), cut.Day(), 0, 0, 0, 0, time.UTC)

	var files []logFile
	cutoffCommit := int64(-1)
	complete := map[int64]bool{}
	for fi, err := range l.store.List(ctx, LogDir+"/", "") {
		if err != nil {
			return nil, err // the store names the op and the path
		}
		rest := strings.TrimPrefix(fi.Path, LogDir+"/")
		if strings.Contains(rest, "/") {
			continue
		}
		lf, ok := parseLogName(rest)
		if !ok {
			continue
		}
		lf.info = fi
		files = append(files, lf)
	}
	// The cutoff commit is found on the commit times monotonized (a time
	// not after the previous commit's is taken as that + 1 ms), as Delta's
	// BufferingLogDeletionIterator adjusts them and as History and time
	// travel see them: one commit file with a clock behind the others'
	// (or an old modification time) must not expire the newer commits
	// before it.
	var commits []logFile
	for _, lf := range files {
		if lf.kind == kindCommit {
			commits = append(commits, lf)
		}
	}
	slices.SortFunc(commits, func(a, b logFile) int { return cmp.Compare(a.version, b.version) })
	ms := make([]int64, len(commits))
	for i, lf := range commits {
		ms[i] = lf.info.ModTime.UnixMilli()
	}
	monotonize(ms)
	for i, lf := range commits {
		if ms[i] <= plan.Cutoff.UnixMilli() {
			cutoffCommit = lf.version
		}
	}
	if cutoffCommit < 0 {
		return plan, nil
	}
	// complete checkpoints, as the snapshot loader sees them
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	for v := range ls.checkpoints {
		complete[v] = true
	}
	for v := range complete {
		if v <= cutoffCommit && v > plan.CheckpointVersion && v <= snap.Version() {
			plan.CheckpointVersion = v
		}
	}
	if plan.CheckpointVersion < 0 {
		return plan, nil
	}
	cpv := plan.CheckpointVersion
	for _, lf := range files {
		switch lf.kind {
		case kindCommit, kindCheckpointClassic, kindCheckpointMultiPart, kindCheckpointV2, kindChecksum:
			if lf.version < cpv {
				plan.Delete = append(plan.Delete, lf.info.Path)
			}
		case kindCompaction:
			if lf.version <= cpv {
				plan.Delete = append(plan.Delete, lf.info.Path)
			}
		}
	}
	slices.Sort(plan.Delete) // zero-padded names: lexical order is version order
	sidecars, err := l.expiredSidecars(ctx, ls, cpv, now)
	if err != nil {
		return nil, err
	}
	plan.Delete = append(plan.Delete, sidecars...)
	return plan, nil
}

// expiredSidecars lists the sidecar files that no checkpoint at or after
// cpv references and that are older than a day before midnight UTC.
func (l *Log) expiredSidecars(ctx context.Context, ls *listing, cpv int64, now time.Time) ([]string, error) {
	type sc struct {
		path string
		mod  time.Time
	}
	var all []sc
	for fi, err := range l.store.List(ctx, SidecarDir+"/", "") {
		if err != nil {
			return nil, err
		}
		all = append(all, sc{fi.Path, fi.ModTime})
	}
	if len(all) == 0 {
		return nil, nil
	}
	referenced := map[string]bool{}
	for v, refs := range ls.checkpoints {
		if v < cpv {
			continue
		}
		for _, ref := range refs {
			for _, lf := range ref.files {
				collect := func(a *Action) error {
					if a.Sidecar != nil {
						if name, err := resolveSidecar(a.Sidecar.Path); err == nil {
							referenced[name] = true
						}
					}
					return nil
				}
				var err error
				if lf.kind == kindCheckpointV2 && lf.format == "json" {
					err = readCommit(ctx, l.store, lf.info.Path, lf.version, l.opts.MaxLineBytes, func(_ int, a *Action) error { return collect(a) })
				} else {
					err = l.readParquetActions(ctx, lf.info.Path, lf.version, lf.info.Size, nil, nil, collect)
				}
				if err != nil {
					return nil, err
				}
			}
		}
	}
	u := now.UTC()
	keepAfter := time.Date(u.Year(), u.Month(), u.Day(), 0, 0, 0, 0, time.UTC).Add(-24 * time.Hour)
	var out []string
	for _, f := range all {
		if !referenced[f.path] && f.mod.Before(keepAfter) {
			out = append(out, f.path)
		}
	}
	return out, nil
}

// Cleanup deletes expired log files (PROTOCOL.md, "Metadata Cleanup"), oldest
// first, so an interrupted cleanup leaves a log whose retained part is still
// complete: commit, checkpoint and checksum files of versions before the
// cutOffCheckpoint, and log compaction files starting at or before it. The
// cutOffCheckpoint and its commit file, and everything after, are kept, so
// every retained version stays reconstructible. Commit times are the commit
// files' modification times, monotonized over the log as History has them
// (as Delta's cleanup adjusts them: a commit whose time is not after the
// previous one's counts as the previous + 1 ms). Sidecar files in
// _delta_log/_sidecars are deleted when no retained checkpoint references
// them and they are older than one day before midnight UTC (steps 4 and 5).
// Temporary files under _delta_log/ (storage.IsTempName: commits and
// checkpoints that a writer killed before its link or rename stranded;
// PROTOCOL.md leaves such files to the writer, Delta's VACUUM never
// enters _delta_log) are deleted when modified before both the cutoff and
// now - TempMinAge; no other file is touched.
// With o.DryRun it returns the plan and deletes nothing. An invalid
// delta.enableExpiredLogCleanup or delta.logRetentionDuration is
// ErrInvalidProperty naming the key.
func (l *Log) Cleanup(ctx context.Context, o CleanupOptions) (*CleanupPlan, error) {
	if l.opts.ReadOnly && !o.DryRun {
		return nil, fmt.Errorf("log cleanup: %w", ErrReadOnly)
	}
	now := l.opts.Now
	if o.Now != nil {
		now = o.Now
	}
	plan, err := l.planCleanup(ctx, now())
	if err != nil || o.DryRun {
		return plan, err
	}
	for _, p := range plan.Delete {
		del := l.store.Delete
		if storage.IsTempName(path.Base(p)) {
			del = func(ctx context.Context, key string) error { return storage.DeleteTemp(ctx, l.store, key) }
		}
		if err := del(ctx, p); err != nil {
			return plan, fmt.Errorf("log cleanup: %w", err)
		}
	}
	return plan, nil
}
