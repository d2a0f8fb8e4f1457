package txlog

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/schema"
)

// Snapshot is the log state of a table at one version, the result of Action
// Reconciliation (PROTOCOL.md, "Action Reconciliation"): protocol, metadata,
// the live add actions, tombstones, txns and domains, what writers, OPTIMIZE
// and VACUUM work from. It holds no rows: the snapshot a user reads rows
// from is reader.Snapshot (reader.OpenTable or reader.Open), which wraps
// this one (reader.Snapshot.Delta). A Snapshot never changes; it is safe for
// concurrent reads. Slices and pointers it returns must not be modified by
// callers.
type Snapshot struct {
	version  int64
	protocol Protocol
	metadata Metadata
	// files are the live adds by key; immutable, shared with the
	// snapshots advanced from this one.
	files *fileSet[Add]
	// tombs are the removes kept, by key: a map after a replay, made a
	// fileSet (tombstones, tombOnce) the first time they are listed or
	// the snapshot advanced, so that an open does not sort them.
	tombs      map[fileKey]*Remove
	tombOnce   sync.Once
	tombstones *fileSet[Remove]
	txns       map[string]Txn
	domains    map[string]*DomainMetadata
	commitInfo CommitInfo
	timestamp  time.Time
	// unknownAction is the first action of an unknown type met in the
	// commits replayed (nil: none); a checkpoint of this snapshot would
	// drop it, so Checkpoint refuses.
	unknownAction *UnknownActionError
	// checkpointVersion is the checkpoint the snapshot was built from (-1: none).
	checkpointVersion int64
	root              tableRoot
	// crc sums the live files (size, histogram, deletion vectors), once per
	// replay, for the .crc check and the next commit's .crc.
	crc checksumState
	// props are metadata.configuration parsed once.
	props TableProperties
	// tip is the commit file of version as the snapshot read it (zero:
	// not read), for Log.Update to tell it from another table's.
	tip commitFileID
}

// fileKey is the primary key of a logical file: the decoded path relative
// to the table root and the deletion vector's unique id (PROTOCOL.md, "Add
// File and Remove File").
type fileKey struct {
	path string
	dvID string
}

// Version is the table version of the snapshot.
func (s *Snapshot) Version() int64 { return s.version }

// Protocol is the table's protocol at this version.
func (s *Snapshot) Protocol() Protocol { return s.protocol }

// Metadata is the table's metadata at this version.
func (s *Snapshot) Metadata() Metadata { return s.metadata }

// Properties are the table properties of this version's metadata, parsed
// once when the snapshot was loaded (see TableProperties; invalid values
// are reported by its Err and Validate as *PropertyErrors naming this
// version).
func (s *Snapshot) Properties() TableProperties { return s.props }

// CommitInfo is the commitInfo of the commit at this version (nil when that
// commit has none or only a checkpoint remains).
func (s *Snapshot) CommitInfo() CommitInfo { return s.commitInfo }

// CheckpointVersion is the version of the checkpoint the snapshot was
// loaded from, -1 if it was replayed from commits only.
func (s *Snapshot) CheckpointVersion() int64 { return s.checkpointVersion }

// Timestamp is the commit time of this version, as Delta's
// Snapshot.timestamp: the in-commit timestamp when
// delta.enableInCommitTimestamps is true (PROTOCOL.md, "In-Commit
// Timestamps"), else the commit file's modification time (the writer's
// clock, commitInfo.timestamp, is in CommitInfo). History and SnapshotAsOf
// use the same times, monotonized over the log.
func (s *Snapshot) Timestamp() time.Time { return s.timestamp }

// Files returns the live add actions ordered by path (then DV id).
func (s *Snapshot) Files() []*Add {
	return s.files.values()
}

func compareKeys(a, b fileKey) int {
	if c := cmp.Compare(a.path, b.path); c != 0 {
		return c
	}
	return cmp.Compare(a.dvID, b.dvID)
}

// NumFiles is the number of live files.
func (s *Snapshot) NumFiles() int { return s.files.len() }

// SizeInBytes is the sum of the sizes of the live files.
func (s *Snapshot) SizeInBytes() int64 { return s.crc.sizeBytes }

// File returns the live add for a storage key (decoded path relative to the
// table root), if any.
func (s *Snapshot) File(key string) (*Add, bool) {
	return s.files.getPath(key)
}

// FileKey returns the storage key (decoded, relative to the table root) of a
// path as written in an add/remove action.
func (s *Snapshot) FileKey(rawPath string) (string, error) {
	return resolvePath(s.root, rawPath)
}

// UnknownAction returns the first action of a type this package does not
// know in the commits or V2 JSON checkpoint this snapshot replayed
// (PROTOCOL.md adds action types only with table features; reads ignore
// them), or nil. Actions in a checkpoint Parquet file are read by column, so
// unknown ones there are not seen.
// The error is an *UnknownActionError.
func (s *Snapshot) UnknownAction() error {
	if s.unknownAction == nil {
		return nil
	}
	return s.unknownAction
}

// Tombstones returns the remove actions kept as tombstones, ordered by path.
// Expired tombstones are dropped only when a checkpoint is written.
func (s *Snapshot) Tombstones() []*Remove {
	return s.tombstoneSet().values()
}

// tombstoneSet is the tombstones as a fileSet, built once.
func (s *Snapshot) tombstoneSet() *fileSet[Remove] {
	s.tombOnce.Do(func() {
		if s.tombstones == nil {
			s.tombstones = fileSetFromMap(s.tombs)
			s.tombs = nil
		}
	})
	return s.tombstones
}

// TxnVersion is the latest txn version of appID.
func (s *Snapshot) TxnVersion(appID string) (int64, bool) {
	t, ok := s.txns[appID]
	return t.Version, ok
}

// Txns maps every appId to its latest txn version.
func (s *Snapshot) Txns() map[string]int64 {
	out := make(map[string]int64, len(s.txns))
	for k, t := range s.txns {
		out[k] = t.Version
	}
	return out
}

// TxnActions returns the live txn actions ordered by appId.
func (s *Snapshot) TxnActions() []Txn {
	out := make([]Txn, 0, len(s.txns))
	for _, t := range s.txns {
		out = append(out, t)
	}
	slices.SortFunc(out, func(a, b Txn) int { return cmp.Compare(a.AppID, b.AppID) })
	return out
}

// DomainMetadata returns the live configuration of domain (removed domains
// are absent).
func (s *Snapshot) DomainMetadata(domain string) (DomainMetadata, bool) {
	d, ok := s.domains[domain]
	if !ok {
		return DomainMetadata{}, false
	}
	return *d, true
}

// Domains returns every live domainMetadata action ordered by domain.
func (s *Snapshot) Domains() []DomainMetadata {
	out := make([]DomainMetadata, 0, len(s.domains))
	for _, d := range s.domains {
		out = append(out, *d)
	}
	slices.SortFunc(out, func(a, b DomainMetadata) int { return cmp.Compare(a.Domain, b.Domain) })
	return out
}

// replayer applies actions in log order.
//
// The adds of a checkpoint are appended to ckpt, a sorted set built
// without a map or a sort, while they arrive in strictly ascending key
// order; an add below the last starts a new sorted run (runs), as at each
// row group of adds a checkpoint copies from the one before
// (checkpoint_reuse.go), and the runs are merged once at the end of the
// checkpoint (a later run's add of a key replaces an earlier one's, as in
// log order). Past ckptMaxRuns runs, or an add of a key the checkpoint
// removed before, every add read so far and every later one is an entry
// of over instead. A remove of a file of the checkpoint's runs is an entry
// of over (nil: the file was removed), merged with the set once at the end
// (files). A replayer made by Snapshot.advance edits the snapshot's sets
// instead (fed, ted).
type replayer struct {
	s        *Snapshot
	protocol *Protocol
	metadata *Metadata
	// inCheckpoint: the actions applied are a checkpoint's.
	inCheckpoint bool
	ckptOrdered  bool
	ckpt         fileSetBuilder[Add]
	runs         []*fileSet[Add] // the checkpoint's sorted runs before ckpt
	base         *fileSet[Add]   // the checkpoint's ordered adds, once read
	over         map[fileKey]*Add
	tombs        map[fileKey]*Remove
	fed          *fileSetEditor[Add]
	ted          *fileSetEditor[Remove]
	// pvs shares the partitionValues maps of the checkpoint's adds.
	pvs *mapInterner
}

func newReplayer(root tableRoot) *replayer {
	return &replayer{s: &Snapshot{
		txns:              map[string]Txn{},
		domains:           map[string]*DomainMetadata{},
		checkpointVersion: -1,
		root:              root,
	}, ckptOrdered: true, over: map[fileKey]*Add{}, tombs: map[fileKey]*Remove{}}
}

// endCheckpoint closes the checkpoint's ordered set.
func (r *replayer) endCheckpoint() {
	r.inCheckpoint = false
	if r.ckptOrdered {
		r.base = mergeRuns(append(r.runs, r.ckpt.done()))
		r.runs = nil
	}
}

// ckptMaxRuns bounds the sorted runs of a checkpoint's adds (a checkpoint
// that copies row groups has O(log files) of them).
const ckptMaxRuns = 256

// spillCheckpoint moves the ordered adds read so far into over, when an
// add arrives out of order.
func (r *replayer) spillCheckpoint() {
	r.ckptOrdered = false
	// over holds only removes (nil) of files of the runs, each after every
	// add of its key so far (addFile spills at an add of a removed key).
	removed := make(map[fileKey]bool, len(r.over))
	for k := range r.over {
		removed[k] = true
	}
	for _, run := range append(r.runs, r.ckpt.done()) {
		for k, a := range run.all() {
			if !removed[k] {
				r.over[k] = a
			}
		}
	}
	for k := range removed {
		delete(r.over, k)
	}
	r.runs = nil
}

// mergeRuns merges sorted sets into one, pairwise (O(n log runs)); of
// equal keys the one of the later run is kept.
func mergeRuns[T any](runs []*fileSet[T]) *fileSet[T] {
	for len(runs) > 1 {
		next := runs[:0:0]
		for i := 0; i < len(runs); i += 2 {
			if i+1 == len(runs) {
				next = append(next, runs[i])
			} else {
				next = append(next, mergeTwo(runs[i], runs[i+1]))
			}
		}
		runs = next
	}
	return runs[0]
}

// mergeTwo merges sorted sets a and b; b's entry wins a tie.
func mergeTwo[T any](a, b *fileSet[T]) *fileSet[T] {
	if a.len() == 0 {
		return b
	}
	if b.len() == 0 {
		return a
	}
	var out fileSetBuilder[T]
	ea, eb := a.entries(), b.entries()
	i, j := 0, 0
	for i < len(ea) && j < len(eb) {
		switch c := compareKeys(ea[i].key, eb[j].key); {
		case c < 0:
			out.add(ea[i].key, ea[i].val)
			i++
		case c > 0:
			out.add(eb[j].key, eb[j].val)
			j++
		default:
			out.add(eb[j].key, eb[j].val)
			i++
			j++
		}
	}
	for ; i < len(ea); i++ {
		out.add(ea[i].key, ea[i].val)
	}
	for ; j < len(eb); j++ {
		out.add(eb[j].key, eb[j].val)
	}
	return out.done()
}

// files returns the live adds, after the checkpoint (over is merged into
// base: the replayer can apply more actions after).
func (r *replayer) files() *fileSet[Add] {
	if len(r.over) == 0 && r.base != nil {
		return r.base
	}
	if len(r.over) <= r.base.len()/64 {
		ed := r.base.edit()
		for k, a := range r.over {
			if a == nil {
				ed.delete(k)
			} else {
				ed.put(k, a)
			}
		}
		r.base = ed.done()
	} else {
		r.base = mergeFileSet(r.base, r.over)
	}
	clear(r.over)
	return r.base
}

func (r *replayer) addFile(k fileKey, a *Add) {
	if r.fed != nil {
		r.fed.put(k, a)
		r.ted.delete(k)
		return
	}
	delete(r.tombs, k)
	if r.inCheckpoint && r.ckptOrdered {
		// over holds the removes of the runs' files: an add of one of
		// those keys after its remove is applied in log order, by over.
		_, removed := r.over[k]
		if last, ok := r.ckpt.last(); !removed && (!ok || compareKeys(last, k) < 0) {
			r.ckpt.add(k, a)
			return
		}
		if !removed && len(r.runs) < ckptMaxRuns {
			r.runs = append(r.runs, r.ckpt.done())
			r.ckpt.add(k, a)
			return
		}
		r.spillCheckpoint()
	}
	r.over[k] = a
}

func (r *replayer) removeFile(k fileKey, rm *Remove) {
	if r.fed != nil {
		r.fed.delete(k)
		r.ted.put(k, rm)
		return
	}
	r.tombs[k] = rm
	var inBase bool
	if r.inCheckpoint && r.ckptOrdered {
		inBase = r.ckpt.has(k)
		for _, run := range r.runs {
			if _, ok := run.get(k); ok {
				inBase = true
			}
		}
	} else {
		_, inBase = r.base.get(k)
	}
	if inBase {
		r.over[k] = nil
	} else {
		delete(r.over, k)
	}
}

// apply reconciles one action (PROTOCOL.md, "Action Reconciliation"). V2
// checkpoint actions and commitInfo do not take part in replay.
func (r *replayer) apply(a *Action) error {
	if a.Protocol != nil {
		r.protocol = a.Protocol
	}
	if a.MetaData != nil {
		r.metadata = a.MetaData
	}
	if a.Txn != nil {
		r.s.txns[a.Txn.AppID] = *a.Txn
	}
	if a.DomainMetadata != nil {
		if a.DomainMetadata.Removed {
			delete(r.s.domains, a.DomainMetadata.Domain)
		} else {
			r.s.domains[a.DomainMetadata.Domain] = a.DomainMetadata
		}
	}
	if a.Add != nil {
		p, err := resolvePath(r.s.root, a.Add.Path)
		if err != nil {
			return err
		}
		r.addFile(fileKey{p, a.Add.DeletionVector.UniqueID()}, a.Add)
	}
	if a.Remove != nil {
		p, err := resolvePath(r.s.root, a.Remove.Path)
		if err != nil {
			return err
		}
		r.removeFile(fileKey{p, a.Remove.DeletionVector.UniqueID()}, a.Remove)
	}
	return nil
}

// finish sets the snapshot's file sets from the replayed state.
func (r *replayer) finish() {
	r.s.files = r.files()
	r.s.tombs = r.tombs
	r.base, r.over, r.tombs = nil, nil, nil
}

// Snapshot loads the latest snapshot. ErrTableNotFound if there is no log.
func (l *Log) Snapshot(ctx context.Context) (*Snapshot, error) {
	return l.snapshot(ctx, -1)
}

// SnapshotAt loads the snapshot of version v (ErrVersionNotFound if v is not
// in the log or not reconstructible).
func (l *Log) SnapshotAt(ctx context.Context, v int64) (*Snapshot, error) {
	if v < 0 {
		return nil, fmt.Errorf("%w: %d", ErrVersionNotFound, v)
	}
	return l.snapshot(ctx, v)
}

func (l *Log) snapshot(ctx context.Context, target int64) (*Snapshot, error) {
	seg, err := l.segment(ctx, target)
	if err != nil {
		return nil, err
	}
	return l.replay(ctx, seg)
}

// replay builds a snapshot from a segment: the checkpoint, then each commit.
// Commit files are fetched concurrently (Options.ReadConcurrency) and applied
// in version order.
func (l *Log) replay(ctx context.Context, seg *segment) (*Snapshot, error) {
	r := newReplayer(l.root)
	r.s.version = seg.version
	// The .crc to check, read first (one small read) so that the replay
	// checks it as it passes that version: no second replay.
	var crcFile *checksumFile
	if seg.checksum != nil && !l.opts.SkipChecksumValidation {
		cf, err := l.readChecksum(ctx, seg.checksum.version)
		if err != nil && ctx.Err() != nil {
			return nil, ctx.Err()
		}
		crcFile = cf // nil when unreadable or unparseable: ignored, as Spark does
	}
	checkAt := func(v int64, ci CommitInfo) error {
		if crcFile == nil || seg.checksum.version != v || v == seg.version || r.protocol == nil || r.metadata == nil {
			return nil
		}
		return l.checkChecksumAt(crcFile, *seg.checksum, r, v, ci)
	}
	if seg.checkpoint != nil {
		r.s.checkpointVersion = seg.checkpoint.version
		ck := seg.checkpoint
		applyCk := func(a *Action) error {
			if len(a.Unknown) > 0 && r.s.unknownAction == nil { // a V2 JSON checkpoint
				p := CheckpointPath(ck.version)
				if len(ck.files) > 0 {
					p = ck.files[0].info.Path
				}
				r.s.unknownAction = &UnknownActionError{Action: slices.Sorted(maps.Keys(a.Unknown))[0], Path: p, Version: ck.version}
			}
			if err := r.apply(a); err != nil {
				// As for a commit file: the checkpoint holding the action is
				// corrupt (e.g. a path outside the table root), and named.
				p := CheckpointPath(ck.version)
				if len(ck.files) > 0 {
					p = ck.files[0].info.Path
				}
				return &CorruptLogError{Path: p, Version: ck.version, Err: err}
			}
			return nil
		}
		if n := seg.checkpointAdds; n > 0 {
			r.ckpt.s.chunks = make([]*fileChunk[Add], 0, n/fileChunkTarget+1)
		}
		r.inCheckpoint = true
		r.pvs = newMapInterner()
		var seed *ckptSeed // nil: nothing kept for a checkpoint this Log will not write
		if !l.opts.ReadOnly {
			seed = &ckptSeed{slot: l.ckptMemo}
		}
		if err := l.readCheckpoint(ctx, ck, r.pvs, seed, applyCk); err != nil {
			return nil, err
		}
		r.pvs = nil
		r.endCheckpoint()
		// The checkpoint's add-only row groups, for the Log's next
		// checkpoint to copy (checkpoint_reuse.go).
		if r.protocol != nil && r.metadata != nil {
			if m := seed.memo(ck.version, *r.protocol, *r.metadata); m != nil {
				l.ckptMemo.set(m)
			}
		}
		if err := checkAt(ck.version, CommitInfo{}); err != nil {
			return nil, err
		}
	}
	// Read commits in windows of ReadConcurrency files, applying in order.
	win := max(1, l.opts.ReadConcurrency)
	for start := 0; start < len(seg.commits); start += win {
		end := min(start+win, len(seg.commits))
		batch := make([][]Action, end-start)
		g, gctx := errgroup.WithContext(ctx)
		for i := start; i < end; i++ {
			lf := seg.commits[i]
			g.Go(func() error {
				var acts []Action
				err := readCommitSized(gctx, l.store, lf.info.Path, lf.version, lf.info.Size, l.opts.MaxLineBytes, func(_ int, a *Action) error {
					acts = append(acts, *a)
					return nil
				})
				batch[i-start] = acts
				return err
			})
		}
		if err := g.Wait(); err != nil {
			return nil, err
		}
		for i, acts := range batch {
			lf := seg.commits[start+i]
			var ci CommitInfo
			for j := range acts {
				if acts[j].CommitInfo != nil {
					ci = acts[j].CommitInfo
				}
				if err := r.apply(&acts[j]); err != nil {
					return nil, &CorruptLogError{Path: lf.info.Path, Version: lf.version, Err: err}
				}
				if len(acts[j].Unknown) > 0 && r.s.unknownAction == nil {
					names := slices.Sorted(maps.Keys(acts[j].Unknown))
					r.s.unknownAction = &UnknownActionError{Action: names[0], Path: lf.info.Path, Version: lf.version}
				}
				if lf.version == seg.version && acts[j].CommitInfo != nil {
					r.s.commitInfo = acts[j].CommitInfo
				}
			}
			if err := checkAt(lf.version, ci); err != nil {
				return nil, err
			}
		}
	}
	if r.protocol == nil || r.metadata == nil {
		what := "protocol"
		if r.protocol != nil {
			what = "metaData"
		}
		return nil, &CorruptLogError{Path: LogDir, Version: seg.version, Err: fmt.Errorf("no %s action up to version %d", what, seg.version)}
	}
	r.s.protocol = *r.protocol
	r.s.metadata = *r.metadata
	r.s.props = parseTableProperties(r.s.metadata.Configuration, r.s.version)
	r.finish()
	r.s.crc = computeChecksumState(r.s.files)
	// commitInfo of a version covered only by the checkpoint.
	if seg.last != nil && (seg.checkpoint != nil && seg.checkpoint.version == seg.version) {
		ci, err := l.readCommitInfo(ctx, *seg.last)
		if err != nil {
			return nil, err
		}
		r.s.commitInfo = ci
	}
	var modTime time.Time
	if seg.last != nil {
		modTime = seg.last.info.ModTime
		r.s.tip = commitFileIDOf(seg.last.info)
	} else if seg.checkpoint != nil {
		modTime = seg.checkpoint.files[0].info.ModTime
	}
	r.s.timestamp = commitTimestamp(r.s.protocol, r.s.props, r.s.commitInfo, modTime)
	if crcFile != nil && seg.checksum.version == seg.version {
		if mm := validateChecksum(crcFile, r.s); mm != nil {
			return nil, &CorruptLogError{Path: seg.checksum.info.Path, Version: seg.version, Err: mm}
		}
	}
	return r.s, nil
}

// checkChecksumAt validates the replay state as it passes version v (below
// the loaded version) against v's .crc (PROTOCOL.md, "Version Checksum
// File"). The state's sums are computed once here (the live files at v);
// ci is v's commitInfo, for the txnId check. A mismatch is a
// *CorruptLogError naming the .crc and v, whose Err is a
// *ChecksumMismatchError.
func (l *Log) checkChecksumAt(cf *checksumFile, lf logFile, r *replayer, v int64, ci CommitInfo) error {
	files := r.files()
	at := &Snapshot{version: v, files: files, txns: r.s.txns, domains: r.s.domains,
		protocol: *r.protocol, metadata: *r.metadata, commitInfo: ci,
		crc: computeChecksumState(files)}
	if mm := validateChecksum(cf, at); mm != nil {
		return &CorruptLogError{Path: lf.info.Path, Version: v, Err: mm}
	}
	return nil
}

// ictActive reports in-commit timestamps in use: the property set and the
// protocol has the inCommitTimestamp writer feature (PROTOCOL.md,
// "In-Commit Timestamps": writer version 7 with the feature). On a table
// without the feature, engines use the commit files' modification times.
func ictActive(p Protocol, props TableProperties) bool {
	return props.EnableInCommitTimestamps && p.MinWriterVersion == 7 && slices.Contains(p.WriterFeatures, FeatureInCommitTimestamp)
}

// commitTimestamp is a version's time as Delta's Snapshot.timestamp: the
// in-commit timestamp when enabled, else the commit file's modification
// time (not monotonized; History and SnapshotAsOf monotonize).
func commitTimestamp(p Protocol, props TableProperties, ci CommitInfo, modTime time.Time) time.Time {
	if ictActive(p, props) {
		if ts, ok := ci.InCommitTimestamp(); ok {
			return time.UnixMilli(ts).UTC()
		}
	}
	return modTime.UTC()
}

var errStop = errors.New("stop")

// readCommitInfo returns the first commitInfo of a commit file (nil if
// none). Only lines whose first key is "commitInfo" are decoded, so a large
// commit costs a scan, not a full JSON decode.
func (l *Log) readCommitInfo(ctx context.Context, lf logFile) (CommitInfo, error) {
	rc, err := l.store.NewRangeReader(ctx, lf.info.Path, 0, -1)
	if err != nil {
		return nil, err // the store names the op and the path
	}
	defer rc.Close()
	var ci CommitInfo
	n := 0
	err = DecodeCommitLines(rc, lf.info.Path, lf.version, l.opts.MaxLineBytes, func(line int, b []byte) error {
		n++
		// Every line is checked, so that history never shows a corrupt
		// commit as an empty one.
		if !json.Valid(b) {
			return &CorruptLogError{Path: lf.info.Path, Version: lf.version, Line: line, Err: errors.New("line is not valid JSON")}
		}
		if ci != nil {
			return nil
		}
		head := b[:min(len(b), 32)]
		if !bytes.Contains(head, []byte(`"commitInfo"`)) {
			return nil
		}
		var a Action
		if err := json.Unmarshal(b, &a); err != nil {
			return &CorruptLogError{Path: lf.info.Path, Version: lf.version, Line: line, Err: err}
		}
		if a.CommitInfo != nil {
			ci = a.CommitInfo
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return nil, err
	}
	if err == nil && n == 0 {
		return nil, &CorruptLogError{Path: lf.info.Path, Version: lf.version, Err: errEmptyCommit}
	}
	return ci, nil
}

// Schema parses the table schema of this snapshot.
func (s *Snapshot) Schema() (*schema.StructType, error) { return s.metadata.Schema() }
