package txlog

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	"github.com/lakesink/lakesink/storage"
)

// Log is the Delta transaction log of one table. It holds no table state
// it trusts: every method reads the log anew, so a Log is safe for
// concurrent use and many processes may share one table (all coordination
// goes through the store's put-if-absent). What it keeps is the
// last checkpoint it wrote itself, or the one it last replayed a snapshot
// from when that is in the layout it writes, in memory (at most 64 MiB), to
// copy the unchanged part of it into the next one (Checkpoint), and the
// Parquet writer of its last checkpoint (its column writers and their
// scratch buffers), reset for the next one.
type Log struct {
	store    storage.Store
	opts     Options
	root     tableRoot
	bg       *background // Options.BackgroundCheckpoint
	ckptMemo *ckptMemoSlot
	// ckptWriter is the file writer of the last checkpoint, kept for the
	// next one (checkpoint_write.go).
	ckptWriter *ckptWriterSlot
}

// New returns the Log of the table rooted at store (the table root; the log
// lives under _delta_log/). Options are copied; zero fields take defaults.
func New(store storage.Store, opts Options) (*Log, error) {
	if store == nil {
		return nil, fmt.Errorf("%w: nil store", ErrInvalidOptions)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Log{store: store, opts: opts.withDefaults(), root: parseTableRoot(store.URL()), bg: &background{}, ckptMemo: &ckptMemoSlot{maxBytes: ckptMemoMaxBytes}, ckptWriter: &ckptWriterSlot{}}, nil
}

// Store returns the table root store.
func (l *Log) Store() storage.Store { return l.store }

// checkpointRef is one complete checkpoint of a version (all parts).
type checkpointRef struct {
	version int64
	kind    fileKind
	files   []logFile // multi-part: ordered by part
}

// listing is what one scan of _delta_log found.
type listing struct {
	commits     map[int64]logFile
	checksums   map[int64]logFile         // N.crc
	checkpoints map[int64][]checkpointRef // complete checkpoints only
	maxVersion  int64                     // -1: nothing
}

// list scans _delta_log from startAfter (a key; "" = from the start).
func (l *Log) list(ctx context.Context, startAfter string) (*listing, error) {
	ls := &listing{commits: map[int64]logFile{}, checksums: map[int64]logFile{}, checkpoints: map[int64][]checkpointRef{}, maxVersion: -1}
	type mpKey struct {
		v     int64
		parts int
	}
	multi := map[mpKey]map[int]logFile{}
	for fi, err := range l.store.List(ctx, LogDir+"/", startAfter) {
		if err != nil {
			return nil, err // the store names the op and the path
		}
		rest := strings.TrimPrefix(fi.Path, LogDir+"/")
		if strings.Contains(rest, "/") {
			continue // _sidecars/, _staged_commits/, ...
		}
		lf, ok := parseLogName(rest)
		if !ok {
			continue
		}
		lf.info = fi
		switch lf.kind {
		case kindCommit:
			ls.commits[lf.version] = lf
		case kindChecksum:
			ls.checksums[lf.version] = lf
		case kindCheckpointClassic, kindCheckpointV2:
			ls.checkpoints[lf.version] = append(ls.checkpoints[lf.version],
				checkpointRef{version: lf.version, kind: lf.kind, files: []logFile{lf}})
		case kindCheckpointMultiPart:
			k := mpKey{lf.version, lf.parts}
			if multi[k] == nil {
				multi[k] = map[int]logFile{}
			}
			multi[k][lf.part] = lf
		default:
			continue
		}
	}
	// multi-part checkpoints with missing parts are ignored (PROTOCOL.md,
	// "Checkpoints": readers must ignore multi-part checkpoints with missing parts).
	for k, parts := range multi {
		if len(parts) != k.parts {
			continue
		}
		ref := checkpointRef{version: k.v, kind: kindCheckpointMultiPart}
		for i := 1; i <= k.parts; i++ {
			ref.files = append(ref.files, parts[i])
		}
		ls.checkpoints[k.v] = append(ls.checkpoints[k.v], ref)
	}
	if err := l.fillListingGaps(ctx, ls); err != nil {
		return nil, err
	}
	for v := range ls.commits {
		ls.maxVersion = max(ls.maxVersion, v)
	}
	for v, refs := range ls.checkpoints {
		ls.maxVersion = max(ls.maxVersion, v)
		// prefer classic, then V2, then multi-part
		sort.SliceStable(refs, func(i, j int) bool { return refs[i].kind < refs[j].kind })
	}
	return ls, nil
}

// maxGapStats bounds the commits fillListingGaps looks up in one listing.
const maxGapStats = 64

// fillListingGaps looks up, by Stat, the commits missing between two
// listed ones (at most maxGapStats) and adds those that are there. A
// listing is not a snapshot of the directory: a local directory read
// (getdents on ext4 walks hash order) can miss a commit created while it
// runs and return a later one, and commit N+1 is only ever created after N
// (put-if-absent of the next version), so a concurrent writer's commits
// made a 4-writer append to a 10,000-version table fail with "versions not
// contiguous". A commit still missing after its Stat is a real gap, and
// segmentFor reports it. Gaps before the first listed commit are left as
// listed (log cleanup deletes the oldest commits), except those after the
// newest checkpoint below it: when the checkpoint's own commit is gone (a
// log that starts at a checkpoint, PROTOCOL.md "Checkpoints"), the commit
// right after it is the first the snapshot needs and can be the one the
// listing missed.
func (l *Log) fillListingGaps(ctx context.Context, ls *listing) error {
	if len(ls.commits) == 0 {
		return nil
	}
	first, last := int64(-1), int64(-1)
	for v := range ls.commits {
		if first < 0 || v < first {
			first = v
		}
		last = max(last, v)
	}
	from, cpv := first, int64(-1) // the first version looked for; the newest checkpoint below first
	for cv := range ls.checkpoints {
		if cv < first && cv > cpv {
			cpv, from = cv, cv+1
		}
	}
	if from == first && last-first+1 == int64(len(ls.commits)) {
		return nil
	}
	_, gaps := versionGaps(ls.commits, from, last)
	n := 0
	for _, g := range gaps {
		for v := g[0]; v <= g[1] && n < maxGapStats; v++ {
			n++
			fi, err := l.store.Stat(ctx, CommitPath(v))
			if errors.Is(err, storage.ErrNotFound) {
				continue
			}
			if err != nil {
				return err // the store names the op and the path
			}
			ls.commits[v] = logFile{info: fi, kind: kindCommit, version: v}
		}
	}
	return nil
}

// segment is what a snapshot of version is built from: an optional
// checkpoint and the commits after it, ascending and contiguous.
type segment struct {
	version    int64
	checkpoint *checkpointRef
	commits    []logFile
	// last is the commit file of version itself (may also be in commits); nil
	// when the log holds only a checkpoint for it.
	last *logFile
	// checksum is the newest .crc listed at or below version and at or
	// after the checkpoint (the replay passes its version), if any.
	checksum *logFile
	// checkpointAdds is the checkpoint's number of adds as
	// _last_checkpoint gives it (numOfAddFiles; 0: unknown), bounded by the
	// checkpoint's size: the replay sizes its maps with it.
	checkpointAdds int
}

// errNeedFullListing: a partial listing (from a checkpoint hint) did not find
// what was needed.
var errNeedFullListing = errors.New("need full listing")

// segmentFor picks the newest checkpoint at or below target (target < 0:
// latest) and the commits after it.
func (ls *listing) segmentFor(target int64, partial bool) (*segment, error) {
	if ls.maxVersion < 0 {
		if partial {
			return nil, errNeedFullListing
		}
		return nil, ErrTableNotFound
	}
	v := target
	if v < 0 {
		v = ls.maxVersion
	}
	if v > ls.maxVersion {
		return nil, fmt.Errorf("%w: %d (latest is %d)", ErrVersionNotFound, v, ls.maxVersion)
	}
	seg := &segment{version: v}
	cpv := int64(-1)
	for cv := range ls.checkpoints {
		if cv <= v && cv > cpv {
			cpv = cv
		}
	}
	if cpv >= 0 {
		ref := ls.checkpoints[cpv][0]
		seg.checkpoint = &ref
	} else if partial {
		return nil, errNeedFullListing
	}
	if cpv < 0 {
		if err := ls.truncatedBefore(v); err != nil {
			return nil, err
		}
	}
	// The work is proportional to the commits listed, not to the width of
	// the version range: a stray 20-digit name must not make us count to
	// 10^19.
	present, gaps := versionGaps(ls.commits, cpv+1, v)
	if len(gaps) > 0 {
		if cpv < 0 {
			first := int64(-1)
			for cv := range ls.commits {
				if first < 0 || cv < first {
					first = cv
				}
			}
			if first > v || first < 0 {
				return nil, fmt.Errorf("%w: %d (earliest commit is %d and no checkpoint covers it)", ErrVersionNotFound, v, first)
			}
		}
		return nil, &CorruptLogError{Path: LogDir, Version: v,
			Err: fmt.Errorf("versions not contiguous: missing %s", formatGaps(gaps))}
	}
	for _, cv := range present {
		seg.commits = append(seg.commits, ls.commits[cv])
	}
	if lf, ok := ls.commits[v]; ok {
		seg.last = &lf
	}
	// The newest .crc the replay passes through: a .crc is best effort, so
	// the latest version may lack one while an earlier one is present and
	// disagrees (a truncated commit). One before the checkpoint is not
	// checked: the replay does not pass through that state.
	for cv, lf := range ls.checksums {
		if cv <= v && cv >= max(cpv, 0) && (seg.checksum == nil || cv > seg.checksum.version) {
			seg.checksum = &lf
		}
	}
	return seg, nil
}

// versionGaps returns the versions in [from, to] that have a commit,
// ascending, and the ranges [lo, hi] of those that do not.
func versionGaps(commits map[int64]logFile, from, to int64) (present []int64, gaps [][2]int64) {
	for v := range commits {
		if v >= from && v <= to {
			present = append(present, v)
		}
	}
	slices.Sort(present)
	next := from
	for _, v := range present {
		if v > next {
			gaps = append(gaps, [2]int64{next, v - 1})
		}
		next = v + 1
	}
	if next <= to {
		gaps = append(gaps, [2]int64{next, to})
	}
	return present, gaps
}

// formatGaps writes version ranges as "1-2, 5, 7-9", at most 10 of them.
func formatGaps(gaps [][2]int64) string {
	var parts []string
	for i, g := range gaps {
		if i == 10 {
			parts = append(parts, "...")
			break
		}
		if g[0] == g[1] {
			parts = append(parts, fmt.Sprint(g[0]))
		} else {
			parts = append(parts, fmt.Sprintf("%d-%d", g[0], g[1]))
		}
	}
	return strings.Join(parts, ", ")
}

// segment builds the segment for target (< 0: latest), listing from the
// _last_checkpoint hint when it is usable and falling back to a full listing.
func (l *Log) segment(ctx context.Context, target int64) (*segment, error) {
	hint, err := l.LastCheckpointHint(ctx)
	if err != nil {
		return nil, err
	}
	if hint != nil && (target < 0 || hint.Version <= target) {
		ls, err := l.list(ctx, versionPrefix(hint.Version))
		if err != nil {
			return nil, err
		}
		seg, err := ls.segmentFor(target, true)
		if err == nil {
			seg.checkpointAdds = hintedAdds(hint, seg.checkpoint)
			return seg, nil
		}
		if !errors.Is(err, errNeedFullListing) && !errors.Is(err, ErrCorruptLog) && !errors.Is(err, ErrVersionNotFound) {
			return nil, err
		}
	}
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	return ls.segmentFor(target, false)
}

// Versions lists the versions whose commit files are in the log, ascending.
func (l *Log) Versions(ctx context.Context) ([]int64, error) {
	ls, err := l.list(ctx, "")
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(ls.commits))
	for v := range ls.commits {
		out = append(out, v)
	}
	slices.Sort(out)
	return out, nil
}

// LatestVersion returns the newest version in the log (ErrTableNotFound if
// there is none). It lists from the _last_checkpoint hint when there is one.
func (l *Log) LatestVersion(ctx context.Context) (int64, error) {
	seg, err := l.segment(ctx, -1)
	if err != nil {
		return -1, err
	}
	return seg.version, nil
}

func baseName(p string) string { return path.Base(p) }

// hintedAdds is numOfAddFiles of the hint when it describes ck, at most
// one add per 16 bytes of ck's files (a corrupt hint must not size a map
// of billions), else 0.
func hintedAdds(hint *LastCheckpoint, ck *checkpointRef) int {
	if hint == nil || ck == nil || hint.Version != ck.version || hint.NumOfAddFiles == nil || *hint.NumOfAddFiles <= 0 {
		return 0
	}
	var size int64
	for _, f := range ck.files {
		size += f.info.Size
	}
	return int(min(*hint.NumOfAddFiles, size/16))
}
