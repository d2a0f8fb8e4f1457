package compaction

import (
	"context"
	"fmt"
	"time"

	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// CheckpointResult reports a checkpoint.
type CheckpointResult struct {
	Version       int64 `json:"version"`                 // the table version the checkpoint holds
	SizeInBytes   int64 `json:"sizeInBytes,omitempty"`   // total size of the checkpoint files in bytes
	NumOfAddFiles int64 `json:"numOfAddFiles,omitempty"` // add actions in the checkpoint
	// Actions is the number of actions (rows) in the checkpoint.
	Actions int64 `json:"actions"`
}

// Checkpoint writes a checkpoint of the latest version (PROTOCOL.md,
// "Checkpoints") through txlog and updates _last_checkpoint.
func Checkpoint(ctx context.Context, t *table.Table) (*CheckpointResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("write a checkpoint: %w", err) // names the table
	}
	lc, err := t.Log().Checkpoint(ctx, snap)
	if err != nil {
		return nil, fmt.Errorf("checkpoint %s version %d: %w", t.URL(), snap.Version(), err)
	}
	res := &CheckpointResult{Version: snap.Version()}
	if lc != nil {
		res.Version = lc.Version
		res.Actions = lc.Size
		if lc.SizeInBytes != nil {
			res.SizeInBytes = *lc.SizeInBytes
		}
		if lc.NumOfAddFiles != nil {
			res.NumOfAddFiles = *lc.NumOfAddFiles
		}
	}
	return res, nil
}

// CleanupResult reports a log cleanup.
type CleanupResult struct {
	// CheckpointVersion is the checkpoint every retained version is now
	// reconstructed from (-1: nothing could be cleaned).
	CheckpointVersion int64 `json:"checkpointVersion"`
	// Cutoff: log files of commits at or before it have expired (midnight
	// UTC of now - delta.logRetentionDuration, as Delta truncates it).
	Cutoff       time.Time `json:"cutoff"`
	DryRun       bool      `json:"dryRun,omitempty"` // nothing was deleted: Files lists what would be
	FilesDeleted int       `json:"filesDeleted"`     // log files deleted (would be, under DryRun)
	Files        []string  `json:"files,omitempty"`  // their keys relative to the table root, in order
}

// CleanupLogOptions configure CleanupLog. The zero value deletes what has
// expired by the table's clock.
type CleanupLogOptions struct {
	// DryRun reports what would be deleted and deletes nothing (as
	// VacuumOptions.DryRun); the result has DryRun set.
	DryRun bool
	// Now is the clock the retention cutoff is computed from. Default: the
	// table log's clock (txlog.Options.Now, time.Now unless set).
	Now func() time.Time
}

// CleanupLog removes expired log files through txlog.Log.Cleanup
// (PROTOCOL.md, "Metadata Cleanup"): commit files, checkpoints, checksums and
// log compactions older than delta.logRetentionDuration (default 30 days)
// that precede the newest checkpoint at or before the cutoff, so every
// retained version stays readable. delta.enableExpiredLogCleanup=false turns
// it off. A table whose writer features lakesink does not support is refused
// (a *txlog.UnsupportedFeatureError), except under DryRun, which only reads.
func CleanupLog(ctx context.Context, t *table.Table, opts CleanupLogOptions) (*CleanupResult, error) {
	lo := txlog.CleanupOptions{DryRun: opts.DryRun, Now: opts.Now}
	if opts.DryRun {
		plan, err := t.Log().Cleanup(ctx, lo)
		if err != nil {
			return nil, fmt.Errorf("cleanup-log %s: %w", t.URL(), err)
		}
		return cleanupResult(plan, true), nil
	}
	// Deleting log files modifies the table: like any writer, refuse a table
	// whose writer features lakesink does not support (PROTOCOL.md, "Table
	// Features": a writer must not write to such a table).
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return cleanupResult(nil, false), fmt.Errorf("cleanup-log: %w", err) // names the table
	}
	if err := txlog.CheckWriteSupported(snap.Protocol(), snap.Metadata()); err != nil {
		return cleanupResult(nil, false), fmt.Errorf("cleanup-log %s version %d: %w", t.URL(), snap.Version(), err)
	}
	plan, err := t.Log().Cleanup(ctx, lo)
	res := cleanupResult(plan, false)
	if err != nil {
		return res, fmt.Errorf("cleanup-log %s: %w", t.URL(), err)
	}
	return res, nil
}

func cleanupResult(plan *txlog.CleanupPlan, dryRun bool) *CleanupResult {
	res := &CleanupResult{CheckpointVersion: -1, DryRun: dryRun}
	if plan == nil {
		return res
	}
	res.CheckpointVersion = plan.CheckpointVersion
	res.Cutoff = plan.Cutoff
	res.Files = plan.Delete
	res.FilesDeleted = len(plan.Delete)
	return res
}
