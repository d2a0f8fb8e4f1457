package txlog

import (
	"context"
	"errors"
	"maps"
	"slices"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// maxIncrementalCommits bounds how many commits Update reads one by one
// before it loads the latest snapshot from its checkpoint instead (a
// checkpoint is written every delta.checkpointInterval commits, 10 by
// default, so a writer this far behind reads less from the checkpoint).
const maxIncrementalCommits = 32

// Update returns the latest snapshot, read incrementally from snap: only
// the commits after snap.Version() are read, as Delta's DeltaLog.update
// and delta-kernel-rs's Snapshot::try_new_from do, not the checkpoint and
// the commits before. It costs one read and one Stat per commit after snap
// (the last read answering ErrNotFound) and one Stat of snap's commit
// file, after those reads; nothing is listed. It returns snap itself when
// no commit follows.
//
// The commit file of snap's version must still exist, checked after the
// reads: log cleanup deletes versions oldest first (PROTOCOL.md, "Metadata
// Cleanup"), so while it is there every later commit is too, and a missing
// successor means snap is the latest. When it has gone (snap older than
// delta.logRetentionDuration), when its size or modification time (to the
// second) is not the one snap read (the table was deleted and created
// again at its path), when more than a few dozen commits follow, or when
// snap is nil, Update loads the latest snapshot as Snapshot does. The
// newest .crc of the commits read is checked as a full load checks it
// (unless Options.SkipChecksumValidation). Errors are those of Snapshot.
func (l *Log) Update(ctx context.Context, snap *Snapshot) (*Snapshot, error) {
	if snap == nil {
		return l.Snapshot(ctx)
	}
	cur := snap
	var readErr error
	for n := 0; ; n++ {
		v := cur.version + 1
		p := CommitPath(v)
		data, err := l.store.Read(ctx, p)
		if errors.Is(err, storage.ErrNotFound) {
			break
		}
		if err == nil && n == maxIncrementalCommits {
			return l.Snapshot(ctx)
		}
		var acts []Action
		if err == nil {
			acts, err = ParseCommit(data, p, v, l.opts.MaxLineBytes)
		}
		var fi storage.FileInfo
		if err == nil {
			fi, err = l.store.Stat(ctx, p)
		}
		if err == nil {
			cur, err = cur.advance(v, acts, p, fi.ModTime)
		}
		if err != nil {
			readErr = err
			break
		}
		cur.tip = commitFileIDOf(fi)
	}
	// snap's commit is checked after the reads: a missing successor is the
	// end of the log only if snap's commit was still there after it (log
	// cleanup deletes oldest first, so it would have gone first), and the
	// commits read are snap's table's only if that commit is the file
	// snap read.
	fi, err := l.store.Stat(ctx, CommitPath(snap.version))
	if err != nil {
		if errors.Is(err, storage.ErrNotFound) {
			return l.Snapshot(ctx)
		}
		return nil, err // a *storage.PathError naming the commit
	}
	if !snap.tip.matches(fi) {
		// Another file than the one snap read: the table was deleted and
		// created again at its path (its later commits are not snap's).
		return l.Snapshot(ctx)
	}
	if readErr != nil {
		return nil, readErr
	}
	if cur != snap && !l.opts.SkipChecksumValidation {
		cf, err := l.readChecksum(ctx, cur.version)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if cf != nil { // unreadable or unparseable: ignored, as a full load does
			if mm := validateChecksum(cf, cur); mm != nil {
				return nil, &CorruptLogError{Path: ChecksumPath(cur.version), Version: cur.version, Err: mm}
			}
		}
	}
	return cur, nil
}

// commitFileID identifies a commit file by its size and modification time
// to the second (S3 answers a Stat, HEAD, in whole seconds and a listing
// in milliseconds), as Delta's LogSegment compares
// lastCommitFileModificationTimestamp: a table deleted and created again
// at the same path has the same version numbers but other commit files.
// The zero value is a commit file not read (a snapshot built from a
// checkpoint alone).
type commitFileID struct {
	known   bool
	size    int64
	modTime int64 // Unix seconds
}

func commitFileIDOf(fi storage.FileInfo) commitFileID {
	return commitFileID{known: true, size: fi.Size, modTime: fi.ModTime.Unix()}
}

// matches reports fi to be the commit file id was taken from.
func (id commitFileID) matches(fi storage.FileInfo) bool {
	return id.known && id == commitFileIDOf(fi)
}

// emptySnapshot is the state before version 0: no protocol, metadata or
// files (advance over version 0 gives the new table).
func emptySnapshot(root tableRoot) *Snapshot {
	r := newReplayer(root)
	r.s.version = -1
	r.finish()
	r.s.props = DefaultTableProperties()
	r.s.crc = checksumState{hist: newFileSizeHistogram()}
	return r.s
}

// advance returns the snapshot of version v: s with the actions of v's
// commit file (at path, modified at modTime) applied by Action
// Reconciliation, as a replay from s's state would build it. s is not
// changed: the file sets share every chunk the commit did not touch with
// s's (fileSetEditor; O(files/256) pointers copied, not every file), and
// the checksum sums are updated from the changed files alone.
func (s *Snapshot) advance(v int64, acts []Action, path string, modTime time.Time) (*Snapshot, error) {
	n := &Snapshot{
		version:           v,
		protocol:          s.protocol,
		metadata:          s.metadata,
		txns:              maps.Clone(s.txns),
		domains:           maps.Clone(s.domains),
		unknownAction:     s.unknownAction,
		checkpointVersion: s.checkpointVersion,
		root:              s.root,
		props:             s.props,
		crc:               s.crc,
	}
	n.crc.hist = s.crc.hist.clone()
	proto, md := s.protocol, s.metadata
	r := &replayer{s: n, protocol: &proto, metadata: &md, fed: s.files.edit(), ted: s.tombstoneSet().edit()}
	changed := map[fileKey]bool{}
	var ci CommitInfo
	for i := range acts {
		a := &acts[i]
		if err := r.apply(a); err != nil {
			return nil, &CorruptLogError{Path: path, Version: v, Err: err}
		}
		if len(a.Unknown) > 0 && n.unknownAction == nil {
			n.unknownAction = &UnknownActionError{Action: slices.Sorted(maps.Keys(a.Unknown))[0], Path: path, Version: v}
		}
		if a.CommitInfo != nil {
			ci = a.CommitInfo
		}
		var p, dv string
		switch {
		case a.Add != nil:
			p, dv = a.Add.Path, a.Add.DeletionVector.UniqueID()
		case a.Remove != nil:
			p, dv = a.Remove.Path, a.Remove.DeletionVector.UniqueID()
		default:
			continue
		}
		key, err := resolvePath(s.root, p)
		if err != nil {
			return nil, &CorruptLogError{Path: path, Version: v, Err: err}
		}
		changed[fileKey{key, dv}] = true
	}
	n.commitInfo = ci
	if r.metadata != &md || n.props.invalid != nil {
		// New properties, or the same invalid ones reported at v.
		n.props = parseTableProperties(r.metadata.Configuration, v)
	}
	n.protocol, n.metadata = *r.protocol, *r.metadata
	n.files, n.tombstones = r.fed.done(), r.ted.done()
	for k := range changed {
		if old, ok := s.files.get(k); ok {
			n.crc.account(old, -1)
		}
		if now, ok := n.files.get(k); ok {
			n.crc.account(now, 1)
		}
	}
	n.timestamp = commitTimestamp(n.protocol, n.props, n.commitInfo, modTime)
	return n, nil
}
