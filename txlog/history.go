package txlog

import (
	"context"
	"fmt"
	"slices"
	"time"
)

// CommitEntry is one version of the table's history.
type CommitEntry struct {
	Version    int64
	Timestamp  time.Time // see Snapshot.Timestamp
	CommitInfo CommitInfo
}

// History returns up to limit (<= 0: all) commits, newest first, with their
// commitInfo. Timestamps follow Snapshot.Timestamp with the latest
// metadata's in-commit-timestamp setting.
func (l *Log) History(ctx context.Context, limit int) ([]CommitEntry, error) {
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	if len(ls.commits) == 0 {
		return nil, ErrTableNotFound
	}
	versions := make([]int64, 0, len(ls.commits))
	for v := range ls.commits {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	slices.Reverse(versions)
	if limit > 0 && len(versions) > limit {
		versions = versions[:limit]
	}
	out := make([]CommitEntry, 0, len(versions))
	for _, v := range versions {
		lf := ls.commits[v]
		ci, err := l.readCommitInfo(ctx, lf)
		if err != nil {
			return nil, err
		}
		out = append(out, CommitEntry{Version: v, CommitInfo: ci, Timestamp: entryTimestamp(ci, lf)})
	}
	return out, nil
}

// entryTimestamp: inCommitTimestamp if present (only written when enabled),
// else commitInfo.timestamp, else the file's modification time.
func entryTimestamp(ci CommitInfo, lf logFile) time.Time {
	if ts, ok := ci.InCommitTimestamp(); ok {
		return time.UnixMilli(ts).UTC()
	}
	if ts, ok := ci.Timestamp(); ok {
		return time.UnixMilli(ts).UTC()
	}
	return lf.info.ModTime.UTC()
}

// SnapshotAsOf loads the latest snapshot whose commit timestamp is at or
// before ts (Delta's "TIMESTAMP AS OF"). Commit timestamps are taken as
// monotonic (Delta guarantees it for in-commit timestamps and adjusts file
// times to be monotonic); a binary search reads O(log n) commitInfos.
// ErrTimestampOutOfRange when ts is before the first retained commit, or
// after the latest commit: as Delta's DeltaHistoryManager
// (timestampGreaterThanLatestCommit) and Delta Kernel refuse it, since a
// commit landing before ts would change the answer (time travel must be
// repeatable); read the latest snapshot, or use the latest commit's
// timestamp.
func (l *Log) SnapshotAsOf(ctx context.Context, ts time.Time) (*Snapshot, error) {
	// Commit timestamps are milliseconds; compare at that precision, as
	// Delta does (Timestamp.getTime).
	ts = ts.Truncate(time.Millisecond)
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	if ls.maxVersion < 0 {
		return nil, ErrTableNotFound
	}
	versions := make([]int64, 0, len(ls.commits))
	for v := range ls.commits {
		versions = append(versions, v)
	}
	slices.Sort(versions)
	var firstErr error
	tsOf := func(i int) time.Time {
		lf := ls.commits[versions[i]]
		ci, err := l.readCommitInfo(ctx, lf)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return entryTimestamp(ci, lf)
	}
	// smallest index whose timestamp is after ts
	lo, hi := 0, len(versions)
	for lo < hi {
		mid := (lo + hi) / 2
		if tsOf(mid).After(ts) {
			hi = mid
		} else {
			lo = mid + 1
		}
	}
	if firstErr != nil {
		return nil, firstErr
	}
	if lo == 0 {
		first := "none"
		if len(versions) > 0 {
			first = tsOf(0).Format(time.RFC3339Nano)
		}
		return nil, fmt.Errorf("%w: %s is before the first commit (%s)", ErrTimestampOutOfRange, ts.Format(time.RFC3339Nano), first)
	}
	if lo == len(versions) {
		if last := tsOf(lo - 1); ts.After(last) {
			return nil, fmt.Errorf("%w: %s is after the latest commit (version %d at %s); use a timestamp at or before it, or read the latest snapshot",
				ErrTimestampOutOfRange, ts.Format(time.RFC3339Nano), versions[lo-1], last.Format(time.RFC3339Nano))
		}
	}
	return l.SnapshotAt(ctx, versions[lo-1])
}
