package checkpoint

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/lakesink/lakesink/storage"
)

const compactSuffix = ".compact"

// DefaultCompactInterval is Spark's default
// spark.sql.streaming.fileSource.log.compactInterval.
const DefaultCompactInterval = 10

// FileEntry is one line of the file source log (Spark's
// FileStreamSource.FileEntry): the file's URL-encoded path, its modification
// time in ms since the epoch, and the source log batch that took it.
type FileEntry struct {
	Path      string `json:"path"`      // the file's URL, URL-encoded
	Timestamp int64  `json:"timestamp"` // modification time, ms since the epoch
	BatchID   int64  `json:"batchId"`   // the source log batch that took the file
}

// FileSourceLog is the file source's log under sources/<i>/ (Spark's
// FileStreamSourceLog over CompactibleFileStreamLog): one file per source
// batch ("v1" and one FileEntry JSON per line), and every compactInterval
// batches a "N.compact" file holding all entries so far. Its batch ids are
// the source's own log offsets, not the query's batch ids.
//
// After each compaction, files of batches more than MinBatchesToRetain
// behind, and older than the compact file before them, are deleted (Spark's
// fileSource.log.deletion, deleteExpiredLog, without the cleanup delay that
// eventually consistent S3 listings once needed); their entries stay in the
// compact files, where Get finds them. Methods are safe for use by one
// goroutine at a time.
type FileSourceLog struct {
	store           storage.Store
	defaultInterval int

	// MinBatchesToRetain is how many recent batches keep their own file
	// (spark.sql.streaming.minBatchesToRetain). Default 100; < 0 keeps all.
	MinBatchesToRetain int

	once     sync.Once
	interval int
	initErr  error
}

// NewFileSourceLog opens the log rooted at store (sources/<i>). The compact
// interval is derived from existing .compact files as Spark does
// (CompactibleFileStreamLog.compactInterval), else defaultInterval (<= 0:
// DefaultCompactInterval).
func NewFileSourceLog(store storage.Store, defaultInterval int) *FileSourceLog {
	if defaultInterval <= 0 {
		defaultInterval = DefaultCompactInterval
	}
	return &FileSourceLog{store: store, defaultInterval: defaultInterval, MinBatchesToRetain: 100}
}

// CompactInterval returns the interval in use (derived on first use).
func (l *FileSourceLog) CompactInterval(ctx context.Context) (int, error) {
	l.once.Do(func() { l.interval, l.initErr = l.deriveInterval(ctx) })
	return l.interval, l.initErr
}

// deriveInterval: two or more .compact files give the distance between the
// latest two; one gives a compatible interval (deriveCompactInterval); none
// the default.
func (l *FileSourceLog) deriveInterval(ctx context.Context) (int, error) {
	var compacts []int64
	for fi, err := range l.store.List(ctx, "", "") {
		if err != nil {
			return 0, fmt.Errorf("list source log: %w", err)
		}
		if id, compact, ok := batchIDFromName(fi.Path); ok && compact {
			compacts = append(compacts, id)
		}
	}
	sortInt64s(compacts)
	switch n := len(compacts); {
	case n >= 2:
		return int(compacts[n-1] - compacts[n-2]), nil
	case n == 1:
		return deriveCompactInterval(l.defaultInterval, int(compacts[0])), nil
	}
	return l.defaultInterval, nil
}

// deriveCompactInterval finds an interval compatible with the one compact
// file latest (CompactibleFileStreamLog.deriveCompactInterval).
func deriveCompactInterval(def, latest int) int {
	n := latest + 1
	if n <= def {
		return n
	}
	if def < n/2 {
		for i := def; i <= n/2; i++ {
			if n%i == 0 {
				return i
			}
		}
	}
	return n
}

func isCompactionBatch(id int64, interval int) bool { return (id+1)%int64(interval) == 0 }

func (l *FileSourceLog) pathOf(id int64, interval int) string {
	if isCompactionBatch(id, interval) {
		return strconv.FormatInt(id, 10) + compactSuffix
	}
	return strconv.FormatInt(id, 10)
}

// LatestBatchID returns the highest batch id in the log; ok is false when the
// log is empty.
func (l *FileSourceLog) LatestBatchID(ctx context.Context) (int64, bool, error) {
	latest := int64(-1)
	for fi, err := range l.store.List(ctx, "", "") {
		if err != nil {
			return -1, false, fmt.Errorf("list source log: %w", err)
		}
		if id, _, ok := batchIDFromName(fi.Path); ok && id > latest {
			latest = id
		}
	}
	return latest, latest >= 0, nil
}

// readFile reads and parses one log file; ErrNotFound passes through.
func (l *FileSourceLog) readFile(ctx context.Context, name string) ([]FileEntry, error) {
	data, err := l.store.Read(ctx, name)
	if err != nil {
		return nil, err
	}
	entries, line, err := ParseFileSourceLog(data)
	if err != nil {
		return nil, &CorruptFileError{Path: l.store.URL() + "/" + name, Line: line, Err: err,
			Hint: "the file source log is damaged; restore it from a backup (deleting it would re-read or skip the files it lists)"}
	}
	return entries, nil
}

// ParseFileSourceLog parses one source log file: "v1" then one FileEntry per
// line. line is the 1-based line of an error.
func ParseFileSourceLog(data []byte) ([]FileEntry, int, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return nil, 0, fmt.Errorf("empty file")
	}
	lines := splitLines(data)
	if err := parseVersion(lines[0], maxFileSourceLogVer); err != nil {
		return nil, 1, err
	}
	out := make([]FileEntry, 0, len(lines)-1)
	for i, ln := range lines[1:] {
		var e struct {
			Path      *string `json:"path"`
			Timestamp int64   `json:"timestamp"`
			BatchID   *int64  `json:"batchId"`
		}
		if err := json.Unmarshal([]byte(ln), &e); err != nil {
			return nil, i + 2, err
		}
		if e.Path == nil || e.BatchID == nil {
			return nil, i + 2, fmt.Errorf("entry without path or batchId: %q", ln)
		}
		out = append(out, FileEntry{Path: *e.Path, Timestamp: e.Timestamp, BatchID: *e.BatchID})
	}
	return out, 0, nil
}

// MarshalFileSourceLog renders one source log file as Spark does ("v1", then
// one JSON entry per line, no trailing newline).
func MarshalFileSourceLog(entries []FileEntry) []byte {
	var b bytes.Buffer
	b.WriteString("v1")
	for _, e := range entries {
		j, _ := json.Marshal(e) // strings and ints only
		b.WriteByte('\n')
		b.Write(j)
	}
	return b.Bytes()
}

// Get returns the entries of source batch id: its own file, or for a
// compaction batch the entries of N.compact whose batchId is id. If the
// batch's file was deleted (by Spark's log cleanup), the entries are looked up
// in the next compact files.
func (l *FileSourceLog) Get(ctx context.Context, id int64) ([]FileEntry, error) {
	interval, err := l.CompactInterval(ctx)
	if err != nil {
		return nil, err
	}
	name := l.pathOf(id, interval)
	entries, err := l.readFile(ctx, name)
	if errors.Is(err, storage.ErrNotFound) {
		latest, ok, lerr := l.LatestBatchID(ctx)
		if lerr != nil {
			return nil, lerr
		}
		// Look in the compact files after id, oldest first.
		found := false
		for c := (id+int64(interval)+1)/int64(interval)*int64(interval) - 1; ok && c <= latest; c += int64(interval) {
			ce, cerr := l.readFile(ctx, l.pathOf(c, interval))
			if errors.Is(cerr, storage.ErrNotFound) {
				continue
			}
			if cerr != nil {
				return nil, cerr
			}
			entries, found = ce, true
			break
		}
		if !found {
			return nil, fmt.Errorf("%w: source log batch %d (%s/%s)", ErrMissingBatch, id, l.store.URL(), name)
		}
	} else if err != nil {
		return nil, fmt.Errorf("read source log %s: %w", name, err)
	}
	out := entries[:0:0]
	for _, e := range entries {
		if e.BatchID == id {
			out = append(out, e)
		}
	}
	return out, nil
}

// Range returns the entries of source batches start..end (both inclusive), in
// batch order (FileStreamSourceLog.get). Every batch must exist.
func (l *FileSourceLog) Range(ctx context.Context, start, end int64) ([]FileEntry, error) {
	var out []FileEntry
	for id := start; id <= end; id++ {
		e, err := l.Get(ctx, id)
		if err != nil {
			return nil, err
		}
		out = append(out, e...)
	}
	return out, nil
}

// AllFiles returns every entry of the log: the latest compact file and the
// batch files after it (CompactibleFileStreamLog.allFiles).
func (l *FileSourceLog) AllFiles(ctx context.Context) ([]FileEntry, error) {
	interval, err := l.CompactInterval(ctx)
	if err != nil {
		return nil, err
	}
	latest, ok, err := l.LatestBatchID(ctx)
	if err != nil || !ok {
		return nil, err
	}
	start := max(0, (latest+1)/int64(interval)*int64(interval)-1)
	var out []FileEntry
	for id := start; id <= latest; id++ {
		name := l.pathOf(id, interval)
		e, err := l.readFile(ctx, name)
		if err != nil {
			if errors.Is(err, storage.ErrNotFound) {
				return nil, fmt.Errorf("%w: %s/%s (latest source batch %d, compact interval %d)", ErrMissingBatch, l.store.URL(), name, latest, interval)
			}
			return nil, err
		}
		out = append(out, e...)
	}
	return out, nil
}

// Add writes source batch id with put-if-absent. A compaction batch
// (every interval-th) writes N.compact with all entries of the previous
// compact file, the batches since, and entries.
func (l *FileSourceLog) Add(ctx context.Context, id int64, entries []FileEntry) error {
	interval, err := l.CompactInterval(ctx)
	if err != nil {
		return err
	}
	all := entries
	if isCompactionBatch(id, interval) {
		var prev []FileEntry
		for b := max(0, id-int64(interval)); b < id; b++ {
			e, err := l.readFile(ctx, l.pathOf(b, interval))
			if err != nil {
				return fmt.Errorf("compact source log batch %d (interval %d): read batch %d: %w", id, interval, b, err)
			}
			prev = append(prev, e...)
		}
		all = append(prev, entries...)
	}
	name := l.pathOf(id, interval)
	data := MarshalFileSourceLog(all)
	err = l.store.PutIfAbsent(ctx, name, data)
	if errors.Is(err, storage.ErrCommitStateUnknown) {
		// The answer was lost: the file is ours if it holds our bytes.
		if got, rerr := l.store.Read(ctx, name); rerr == nil {
			if bytes.Equal(got, data) {
				return nil
			}
			err = storage.ErrAlreadyExists
		}
	}
	if err != nil {
		if errors.Is(err, storage.ErrAlreadyExists) {
			return fmt.Errorf("%w: source log %s/%s already exists: %w", ErrCheckpointInUse, l.store.URL(), name, err)
		}
		return fmt.Errorf("write source log %s: %w", name, err)
	}
	if isCompactionBatch(id, interval) {
		return l.deleteExpired(ctx, id, interval)
	}
	return nil
}

// deleteExpired removes the files of batches before the compaction batch
// that precedes batch current+1-MinBatchesToRetain
// (CompactibleFileStreamLog.deleteExpiredLog).
func (l *FileSourceLog) deleteExpired(ctx context.Context, current int64, interval int) error {
	if l.MinBatchesToRetain < 0 || int64(interval) > current+1-int64(l.MinBatchesToRetain) {
		return nil
	}
	minBatch := current + 1 - int64(l.MinBatchesToRetain)
	minCompaction := minBatch - minBatch%int64(interval) - 1
	var doomed []string
	for fi, err := range l.store.List(ctx, "", "") {
		if err != nil {
			return fmt.Errorf("list source log for cleanup: %w", err)
		}
		if id, _, ok := batchIDFromName(fi.Path); ok && id < minCompaction {
			doomed = append(doomed, fi.Path)
		}
	}
	for _, p := range doomed {
		if err := l.store.Delete(ctx, p); err != nil {
			return fmt.Errorf("delete expired source log %s: %w", p, err)
		}
	}
	return nil
}
