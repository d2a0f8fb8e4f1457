package txlog

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"time"
)

// CommitEntry is one version of the table's history.
type CommitEntry struct {
	Version    int64      // the commit's version
	Timestamp  time.Time  // monotonized modification time or inCommitTimestamp: see History
	CommitInfo CommitInfo // the commit's commitInfo action; empty when it has none
}

// History returns up to limit (<= 0: all) commits, newest first, with their
// commitInfo. Each Timestamp is the one time travel uses (see
// SnapshotAsOf): the commit file's modification time, monotonized over the
// whole log as Delta's DeltaHistoryManager.getHistory does for DESCRIBE
// HISTORY (a commit whose time is not after the previous one's is taken as
// the previous + 1 ms), or the commit's inCommitTimestamp from the version
// in-commit timestamps were enabled at. The commit's own clock stays in
// CommitInfo ("timestamp").
func (l *Log) History(ctx context.Context, limit int) ([]CommitEntry, error) {
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	if len(ls.commits) == 0 {
		return nil, ErrTableNotFound
	}
	tl, err := l.newTimeline(ctx, ls)
	if err != nil {
		return nil, err
	}
	n := len(tl.versions)
	first := 0
	if limit > 0 && n > limit {
		first = n - limit
	}
	out := make([]CommitEntry, 0, n-first)
	for i := n - 1; i >= first; i-- {
		v := tl.versions[i]
		ci, err := l.readCommitInfo(ctx, ls.commits[v])
		if err != nil {
			return nil, err
		}
		ms := tl.mod[i]
		if i >= tl.ictIndex {
			if ts, ok := ci.InCommitTimestamp(); ok {
				ms = ts
			}
		}
		out = append(out, CommitEntry{Version: v, CommitInfo: ci, Timestamp: time.UnixMilli(ms).UTC()})
	}
	return out, nil
}

// timeline holds the commit times time travel searches (delta-io/delta
// DeltaHistoryManager): the listed versions ascending and their
// modification times in milliseconds, monotonized (monotonizeCommitTimestamps:
// a time not after the previous one's becomes the previous + 1 ms), and
// the index from which in-commit timestamps apply.
type timeline struct {
	versions []int64
	mod      []int64
	// ictIndex is the index of the first version whose time is its
	// inCommitTimestamp (len(versions): none). PROTOCOL.md "In-Commit
	// Timestamps": with delta.enableInCommitTimestamps=true, from
	// delta.inCommitTimestampEnablementVersion on (version 0 when the
	// property is absent: enabled at creation).
	ictIndex int
	// ictStart is the enablement timestamp (ms) when the table property
	// gives it, else -1 (read the commit at ictIndex).
	ictStart int64
}

// monotonize applies Delta's monotonizeCommitTimestamps in place.
func monotonize(ms []int64) {
	for i := 1; i < len(ms); i++ {
		if ms[i] <= ms[i-1] {
			ms[i] = ms[i-1] + 1
		}
	}
}

// newTimeline builds the timeline of a listing. The modification times come
// with the listing; in-commit timestamps are detected from the latest
// commit's commitInfo, and the enablement properties are read from the
// latest version's .crc when there is a usable one, else from its snapshot.
func (l *Log) newTimeline(ctx context.Context, ls *listing) (*timeline, error) {
	tl := &timeline{ictStart: -1}
	for v := range ls.commits {
		tl.versions = append(tl.versions, v)
	}
	slices.Sort(tl.versions)
	tl.mod = make([]int64, len(tl.versions))
	for i, v := range tl.versions {
		tl.mod[i] = ls.commits[v].info.ModTime.UnixMilli()
	}
	monotonize(tl.mod)
	tl.ictIndex = len(tl.versions)
	if len(tl.versions) == 0 {
		return tl, nil
	}
	latest := tl.versions[len(tl.versions)-1]
	ci, err := l.readCommitInfo(ctx, ls.commits[latest])
	if err != nil {
		return nil, err
	}
	if _, ok := ci.InCommitTimestamp(); !ok {
		return tl, nil // writers with in-commit timestamps enabled write one in every commit
	}
	var meta *Metadata
	var proto *Protocol
	if _, ok := ls.checksums[latest]; ok {
		if cf, err := l.readChecksum(ctx, latest); err == nil && cf.Metadata != nil && cf.Protocol != nil {
			meta, proto = cf.Metadata, cf.Protocol
		}
	}
	if meta == nil {
		snap, err := l.SnapshotAt(ctx, latest)
		if err != nil {
			return nil, err
		}
		m, p := snap.Metadata(), snap.Protocol()
		meta, proto = &m, &p
	}
	props := parseTableProperties(meta.Configuration, latest)
	if !ictActive(*proto, props) {
		return tl, nil
	}
	// The enablement version and timestamp (Long values; unset or invalid:
	// in-commit timestamps from version 0).
	from := max(props.InCommitTimestampEnablementVersion, 0)
	tl.ictStart = props.InCommitTimestampEnablementTimestamp
	tl.ictIndex, _ = slices.BinarySearch(tl.versions, from)
	return tl, nil
}

// SnapshotAsOf loads the latest snapshot whose commit timestamp is at or
// before ts (Delta's "TIMESTAMP AS OF"; DeltaHistoryManager.getActiveCommitAtTime).
// Commit timestamps are those of History: the commit files' modification
// times monotonized over the log (a commit whose time is not after the
// previous one's is taken as the previous + 1 ms, so that writers with
// skewed clocks cannot make a version's time precede an earlier one's), or,
// with delta.enableInCommitTimestamps=true, each commit's inCommitTimestamp
// from the enablement version on (PROTOCOL.md "In-Commit Timestamps": a
// time at or after delta.inCommitTimestampEnablementTimestamp is searched
// among the in-commit timestamps, an earlier one among the modification
// times before the enablement version). Modification times come with the
// listing; in-commit timestamps are found by a binary search reading
// O(log n) commitInfos. ts is compared at millisecond precision, as Delta
// does. ErrTimestampOutOfRange when ts is before the first retained commit,
// or after the latest commit: as DeltaHistoryManager
// (TemporallyUnstableInputException) and Delta Kernel refuse it, since a
// commit landing before ts would change the answer (time travel must be
// repeatable); read the latest snapshot, or use the latest commit's
// timestamp.
func (l *Log) SnapshotAsOf(ctx context.Context, ts time.Time) (*Snapshot, error) {
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	if ls.maxVersion < 0 {
		return nil, ErrTableNotFound
	}
	tl, err := l.newTimeline(ctx, ls)
	if err != nil {
		return nil, err
	}
	v, err := l.versionAsOf(ctx, ls, tl, ts)
	if err != nil {
		return nil, err
	}
	return l.SnapshotAt(ctx, v)
}

// versionAsOf searches the timeline for the latest version at or before ts.
func (l *Log) versionAsOf(ctx context.Context, ls *listing, tl *timeline, ts time.Time) (int64, error) {
	t := ts.UnixMilli() // commit times are milliseconds (Timestamp.getTime)
	n := len(tl.versions)
	var firstErr error
	tsOf := func(i int) int64 {
		if i >= tl.ictIndex {
			ci, err := l.readCommitInfo(ctx, ls.commits[tl.versions[i]])
			if err != nil && firstErr == nil {
				firstErr = err
			}
			if ict, ok := ci.InCommitTimestamp(); ok {
				return ict
			}
		}
		return tl.mod[i]
	}
	lo, hi := 0, tl.ictIndex
	if tl.ictIndex < n {
		start := tl.ictStart
		if start < 0 {
			start = tsOf(tl.ictIndex)
		}
		if t >= start {
			lo, hi = tl.ictIndex, n
		}
	}
	// the smallest index in [lo, hi) whose time is after t
	idx := lo + sort.Search(hi-lo, func(j int) bool { return tsOf(lo+j) > t })
	if firstErr != nil {
		return -1, firstErr
	}
	format := func(ms int64) string { return time.UnixMilli(ms).UTC().Format(time.RFC3339Nano) }
	if idx == 0 {
		first := "none"
		if n > 0 {
			first = format(tsOf(0))
		}
		return -1, fmt.Errorf("%w: %s is before the first commit (%s)", ErrTimestampOutOfRange, ts.UTC().Format(time.RFC3339Nano), first)
	}
	if idx == n {
		if last := tsOf(n - 1); t > last {
			return -1, fmt.Errorf("%w: %s is after the latest commit (version %d at %s); use a timestamp at or before it, or read the latest snapshot",
				ErrTimestampOutOfRange, ts.UTC().Format(time.RFC3339Nano), tl.versions[n-1], format(last))
		}
	}
	return tl.versions[idx-1], nil
}
