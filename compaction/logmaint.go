package compaction

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// CheckpointResult reports a checkpoint.
type CheckpointResult struct {
	Version       int64 `json:"version"`
	SizeInBytes   int64 `json:"sizeInBytes,omitempty"`
	NumOfAddFiles int64 `json:"numOfAddFiles,omitempty"`
	// Actions is the number of actions (rows) in the checkpoint.
	Actions int64 `json:"actions"`
}

// Checkpoint writes a checkpoint of the latest version (PROTOCOL.md,
// "Checkpoints") through txlog and updates _last_checkpoint.
func Checkpoint(ctx context.Context, t *table.Table) (*CheckpointResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("compaction: checkpoint %s: %w", t.URL(), err)
	}
	lc, err := t.Log().Checkpoint(ctx, snap)
	if err != nil {
		return nil, fmt.Errorf("compaction: checkpoint %s version %d: %w", t.URL(), snap.Version(), err)
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
	CheckpointVersion int64     `json:"checkpointVersion"`
	Retention         string    `json:"retention"`
	Cutoff            time.Time `json:"cutoff"`
	FilesDeleted      int       `json:"filesDeleted"`
	Files             []string  `json:"files,omitempty"`
}

// CleanupLog removes expired log files as Delta's MetadataCleanup does
// (PROTOCOL.md, "Metadata Cleanup"): with cutoff = now -
// delta.logRetentionDuration (default 30 days), it picks the newest classic
// checkpoint whose version was committed before the cutoff and deletes the
// commit files, checkpoints, checksums and log compactions of the versions
// below it whose files are older than the cutoff. Every version committed
// after the cutoff stays readable: it is reconstructed from that checkpoint
// plus the commits that follow. _last_checkpoint, V2 checkpoints and sidecars
// are never deleted here; delta.enableExpiredLogCleanup=false turns it off.
//
// This is a stand-in until txlog exposes log cleanup itself; it uses only the
// file names of PROTOCOL.md.
func CleanupLog(ctx context.Context, t *table.Table, now time.Time) (*CleanupResult, error) {
	snap, err := t.Snapshot(ctx)
	if err != nil {
		return nil, fmt.Errorf("compaction: cleanup-log %s: %w", t.URL(), err)
	}
	if v, ok := snap.Metadata().Configuration["delta.enableExpiredLogCleanup"]; ok && strings.EqualFold(strings.TrimSpace(v), "false") {
		return &CleanupResult{CheckpointVersion: -1}, nil
	}
	retention, err := LogRetention(snap.Metadata())
	if err != nil {
		return nil, fmt.Errorf("compaction: cleanup-log %s: %w", t.URL(), err)
	}
	cutoff := now.Add(-retention)
	res := &CleanupResult{CheckpointVersion: -1, Retention: retention.String(), Cutoff: cutoff}
	type logFile struct {
		key     string
		version int64 // for compactions: the end version
		kind    string
		modTime time.Time
	}
	var files []logFile
	commitTime := map[int64]time.Time{}
	ckpts := map[int64]bool{}
	st := t.Store()
	for fi, err := range st.List(ctx, txlog.LogDir+"/", "") {
		if err != nil {
			return nil, fmt.Errorf("compaction: cleanup-log %s: list: %w", t.URL(), err)
		}
		name := strings.TrimPrefix(fi.Path, txlog.LogDir+"/")
		if strings.Contains(name, "/") {
			continue // _sidecars/ and anything else nested
		}
		v, kind := parseLogName(name)
		if kind == "" {
			continue
		}
		files = append(files, logFile{key: fi.Path, version: v, kind: kind, modTime: fi.ModTime})
		switch kind {
		case "commit":
			commitTime[v] = fi.ModTime
		case "checkpoint":
			ckpts[v] = true
		}
	}
	// The newest classic checkpoint of an expired version.
	for v := range ckpts {
		ct, ok := commitTime[v]
		if ok && !ct.After(cutoff) && v > res.CheckpointVersion {
			res.CheckpointVersion = v
		}
	}
	if res.CheckpointVersion < 0 {
		return res, nil
	}
	for _, f := range files {
		if f.version >= res.CheckpointVersion || f.modTime.After(cutoff) {
			continue
		}
		if err := st.Delete(ctx, f.key); err != nil {
			return res, fmt.Errorf("compaction: cleanup-log %s: %w", t.URL(), err)
		}
		res.FilesDeleted++
		res.Files = append(res.Files, f.key)
	}
	return res, nil
}

// parseLogName classifies a _delta_log file name (PROTOCOL.md, "Delta Log
// Entries", "Checkpoints", "Log Compaction Files", "Version Checksum File"):
// commit %020d.json, classic checkpoint %020d.checkpoint.parquet, multi-part
// %020d.checkpoint.%010d.%010d.parquet ("multipart"), %020d.crc ("crc"),
// %020d.%020d.compacted.json ("compacted", version = end). V2 checkpoints and
// anything else yield "".
func parseLogName(name string) (int64, string) {
	if len(name) < 21 || name[20] != '.' {
		return 0, ""
	}
	v, err := strconv.ParseInt(name[:20], 10, 64)
	if err != nil {
		return 0, ""
	}
	rest := name[21:]
	switch {
	case rest == "json":
		return v, "commit"
	case rest == "crc":
		return v, "crc"
	case rest == "checkpoint.parquet":
		return v, "checkpoint"
	case strings.HasPrefix(rest, "checkpoint.") && strings.Count(rest, ".") == 3 && strings.HasSuffix(rest, ".parquet"):
		parts := strings.Split(rest, ".")
		if len(parts[1]) == 10 && len(parts[2]) == 10 {
			return v, "multipart"
		}
	case strings.HasSuffix(rest, ".compacted.json") && len(rest) == 20+len(".compacted.json"):
		end, err := strconv.ParseInt(rest[:20], 10, 64)
		if err == nil {
			return end, "compacted"
		}
	}
	return 0, ""
}
