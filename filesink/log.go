package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/storage"
)

// MetadataDir is the name of the log folder inside the output directory
// (FileStreamSink.metadataDir).
const MetadataDir = "_spark_metadata"

// compactSuffix marks a compaction file (CompactibleFileStreamLog.COMPACT_FILE_SUFFIX).
const compactSuffix = ".compact"

// claimSuffix marks the claim object of a streamed compaction file. Its name
// starts with "." so that Spark's batch-file filter (a name that parses as a
// number, with an optional ".compact") ignores it, like Hadoop's own
// ".N.<uuid>.tmp" files.
const claimSuffix = ".claim"

// IsCompactionBatch reports whether batchID is a compaction batch:
// (batchID+1) % compactInterval == 0 (CompactibleFileStreamLog.isCompactionBatch).
func IsCompactionBatch(batchID int64, compactInterval int) bool {
	return (batchID+1)%int64(compactInterval) == 0
}

// DeriveCompactInterval returns the interval compatible with a log whose
// only compaction file is latestCompactBatchID, given the configured
// interval: the smallest divisor of latestCompactBatchID+1 that is at least
// the configured one (CompactibleFileStreamLog.deriveCompactInterval).
func DeriveCompactInterval(defaultInterval int, latestCompactBatchID int64) int {
	n := latestCompactBatchID + 1
	d := int64(defaultInterval)
	if n <= d {
		return int(n)
	}
	if d < n/2 {
		for i := d; i <= n/2; i++ {
			if n%i == 0 {
				return int(i)
			}
		}
	}
	return int(n)
}

// batchFileKey is the key of batch batchID's log file.
func batchFileKey(batchID int64, compact bool) string {
	name := strconv.FormatInt(batchID, 10)
	if compact {
		name += compactSuffix
	}
	return MetadataDir + "/" + name
}

func claimKey(batchID int64) string {
	return MetadataDir + "/." + strconv.FormatInt(batchID, 10) + compactSuffix + claimSuffix
}

// parseBatchName parses "N" or "N.compact" (CompactibleFileStreamLog.getBatchIdFromFileName).
func parseBatchName(name string) (id int64, compact, ok bool) {
	base, compact := strings.CutSuffix(name, compactSuffix)
	if base == "" || base[0] == '+' || base[0] == '-' {
		return 0, false, false
	}
	id, err := strconv.ParseInt(base, 10, 64)
	if err != nil {
		return 0, false, false
	}
	return id, compact, true
}

func parseClaimName(name string) (int64, bool) {
	s, ok := strings.CutPrefix(name, ".")
	if !ok {
		return 0, false
	}
	s, ok = strings.CutSuffix(s, compactSuffix+claimSuffix)
	if !ok {
		return 0, false
	}
	id, _, ok := parseBatchName(s)
	return id, ok
}

// logFile is one listed log file.
type logFile struct {
	BatchID int64
	Compact bool
	Key     string
	Size    int64
	ModTime time.Time
}

// listing is the content of _spark_metadata at one moment.
type listing struct {
	files  []logFile // sorted by batch id, plain before compact
	claims []logFile
}

func (ls *listing) latest() int64 {
	if len(ls.files) == 0 {
		return -1
	}
	return ls.files[len(ls.files)-1].BatchID
}

// latestCompact returns the highest compaction batch id, or -1.
func (ls *listing) latestCompact() int64 {
	for i := len(ls.files) - 1; i >= 0; i-- {
		if ls.files[i].Compact {
			return ls.files[i].BatchID
		}
	}
	return -1
}

// file returns the log file of batch id; with both a plain and a compact
// file present, the one that the interval expects.
func (ls *listing) file(id int64, interval int) (logFile, bool) {
	i, found := slices.BinarySearchFunc(ls.files, id, func(f logFile, id int64) int {
		switch {
		case f.BatchID < id:
			return -1
		case f.BatchID > id:
			return 1
		}
		return 0
	})
	if !found {
		return logFile{}, false
	}
	f := ls.files[i]
	if i+1 < len(ls.files) && ls.files[i+1].BatchID == id && IsCompactionBatch(id, interval) {
		f = ls.files[i+1]
	}
	return f, true
}

// compactInterval infers the interval from the .compact files, as
// CompactibleFileStreamLog.compactInterval does: two or more → the distance
// of the latest two; one → DeriveCompactInterval; none → the default.
func (ls *listing) compactInterval(defaultInterval int) int {
	var ids []int64
	for i := len(ls.files) - 1; i >= 0 && len(ids) < 2; i-- {
		if ls.files[i].Compact {
			ids = append(ids, ls.files[i].BatchID)
		}
	}
	switch len(ids) {
	case 2:
		return int(ids[0] - ids[1])
	case 1:
		return DeriveCompactInterval(defaultInterval, ids[0])
	}
	return defaultInterval
}

// Log is the _spark_metadata log of one output directory (FileStreamSinkLog).
// It holds no state between calls: every call lists the log again, so
// several Log values (and processes) may read one directory at once. Writes
// (Add, Compact) must come from one query; a second writer is detected by
// the put-if-absent of the batch file and reported as ErrConcurrentWriter.
type Log struct {
	store    storage.Store // the output directory
	opts     Options
	writerID string
}

// NewLog returns the log of the output directory store. The options are
// validated and copied.
func NewLog(store storage.Store, opts Options) (*Log, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	id := opts.QueryID
	if id == "" {
		id = uuid.NewString()
	}
	return &Log{store: store, opts: opts, writerID: id}, nil
}

func (l *Log) list(ctx context.Context) (*listing, error) {
	ls := &listing{}
	for fi, err := range l.store.List(ctx, MetadataDir+"/", "") {
		if err != nil {
			return nil, err // the store names the op and the path
		}
		name := strings.TrimPrefix(fi.Path, MetadataDir+"/")
		if strings.Contains(name, "/") {
			continue
		}
		if id, ok := parseClaimName(name); ok {
			ls.claims = append(ls.claims, logFile{BatchID: id, Key: fi.Path, Size: fi.Size, ModTime: fi.ModTime})
			continue
		}
		id, compact, ok := parseBatchName(name)
		if !ok {
			continue // .crc, Hadoop temp files, anything else
		}
		ls.files = append(ls.files, logFile{BatchID: id, Compact: compact, Key: fi.Path, Size: fi.Size, ModTime: fi.ModTime})
	}
	slices.SortFunc(ls.files, func(a, b logFile) int {
		if a.BatchID != b.BatchID {
			if a.BatchID < b.BatchID {
				return -1
			}
			return 1
		}
		if a.Compact == b.Compact {
			return 0
		}
		if b.Compact {
			return -1
		}
		return 1
	})
	return ls, nil
}

// checkLatestVersion validates the version line of the newest log file, so
// that a batch is never appended to a log that a newer Spark wrote in a
// format we do not know (ErrUnsupportedLogVersion; a v1 file after a v2 one
// would mix formats). Older files are checked when they are read.
func (l *Log) checkLatestVersion(ctx context.Context, ls *listing) error {
	if len(ls.files) == 0 {
		return nil
	}
	err := readVersion(ctx, l.store, ls.files[len(ls.files)-1].Key)
	if errors.Is(err, ErrIncompleteLog) {
		return nil // an empty file (a non-atomic writer's crash) is no newer format
	}
	return err
}

// CheckLatestVersion validates the version line of the newest log file:
// ErrUnsupportedLogVersion for a newer format, *CorruptLogError for a
// malformed one, nil for an empty log.
func (l *Log) CheckLatestVersion(ctx context.Context) error {
	ls, err := l.list(ctx)
	if err != nil {
		return err
	}
	return l.checkLatestVersion(ctx, ls)
}

// LatestBatchID returns the highest batch id in the log, or -1 when the log
// is empty or absent (CompactibleFileStreamLog.getLatestBatchId).
func (l *Log) LatestBatchID(ctx context.Context) (int64, error) {
	ls, err := l.list(ctx)
	if err != nil {
		return -1, err
	}
	return ls.latest(), nil
}

// Exists reports whether the directory has a _spark_metadata log with at
// least one batch file.
func (l *Log) Exists(ctx context.Context) (bool, error) {
	id, err := l.LatestBatchID(ctx)
	return id >= 0, err
}

// LogState is the log's current state as the log files to read: the latest
// compaction file and the batch files after it (Spark's
// CompactibleFileStreamLog.allFiles reads the same). It is named LogState,
// not Snapshot: the one snapshot a user reads is reader.Snapshot (which reads
// a file-sink directory through this log).
type LogState struct {
	// LatestBatchID is the last committed batch, -1 for an empty log.
	LatestBatchID int64
	// CompactBatchID is the compaction file the state starts from, -1 if none.
	CompactBatchID int64
	// CompactInterval is the interval inferred from the .compact files.
	CompactInterval int
	// Keys are the log files to read, in order: the compaction file, then
	// every batch after it up to LatestBatchID.
	Keys []string
}

// State lists the log and returns the files of its latest state: the
// latest .compact file plus the batches after it. A missing batch in that
// range is ErrMissingLogFile.
func (l *Log) State(ctx context.Context) (*LogState, error) {
	ls, err := l.list(ctx)
	if err != nil {
		return nil, err
	}
	return l.stateOf(ls)
}

func (l *Log) stateOf(ls *listing) (*LogState, error) {
	s := &LogState{LatestBatchID: ls.latest(), CompactBatchID: ls.latestCompact(),
		CompactInterval: ls.compactInterval(l.opts.CompactInterval)}
	if s.LatestBatchID < 0 {
		return s, nil
	}
	start := int64(0)
	if s.CompactBatchID >= 0 {
		s.Keys = append(s.Keys, batchFileKey(s.CompactBatchID, true))
		start = s.CompactBatchID + 1
	}
	for id := start; id <= s.LatestBatchID; id++ {
		f, ok := ls.file(id, s.CompactInterval)
		if !ok || (f.Compact && id != s.CompactBatchID) {
			return nil, fmt.Errorf("%w: %s (latest batch %d, latest compaction %d, compactInterval %d)",
				ErrMissingLogFile, batchFileKey(id, false), s.LatestBatchID, s.CompactBatchID, s.CompactInterval)
		}
		s.Keys = append(s.Keys, f.Key)
	}
	return s, nil
}

// readFile streams the entries of one log file. latest marks the newest file
// of the log: an empty or unparsable latest file is reported as
// ErrIncompleteLog (it may be a write in progress by a non-atomic writer),
// still matching the *CorruptLogError when there is one.
func (l *Log) readFile(ctx context.Context, key string, latest bool, fn func(SinkFileStatus, []byte) error) error {
	rc, err := l.store.NewRangeReader(ctx, key, 0, -1)
	if err != nil {
		return err // the store names the op and the path
	}
	defer rc.Close()
	err = decodeLog(key, rc, fn)
	if err != nil && latest && errors.Is(err, ErrCorruptLog) {
		return fmt.Errorf("%w: %w", ErrIncompleteLog, err) // err names the file and line
	}
	return err
}

// ReadBatch returns the entries of one batch file (N or N.compact), as
// written, delete lines included.
func (l *Log) ReadBatch(ctx context.Context, batchID int64) ([]SinkFileStatus, error) {
	ls, err := l.list(ctx)
	if err != nil {
		return nil, err
	}
	f, ok := ls.file(batchID, ls.compactInterval(l.opts.CompactInterval))
	if !ok {
		return nil, fmt.Errorf("%w: batch %d has no file in %s", ErrMissingLogFile, batchID, MetadataDir)
	}
	var out []SinkFileStatus
	err = l.readFile(ctx, f.Key, batchID == ls.latest(), func(e SinkFileStatus, _ []byte) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// retained reports whether an entry survives retention at now
// (FileStreamSinkLog.shouldRetain: dropped when now - modificationTime >
// retentionMs, which is Long.MaxValue without the option).
func (l *Log) retained(e *SinkFileStatus, nowMs int64) bool {
	if l.opts.Retention == nil {
		return true
	}
	return nowMs-e.ModificationTime <= l.opts.Retention.Milliseconds()
}

// deletedPaths collects the paths of "delete" lines (legacy semantics only).
func (l *Log) deletedPaths(ctx context.Context, keys []string, latest string, extra []SinkFileStatus) (map[string]struct{}, error) {
	del := map[string]struct{}{}
	collect := func(e SinkFileStatus, _ []byte) error {
		if e.Action == ActionDelete {
			del[e.Path] = struct{}{}
		}
		return nil
	}
	for _, k := range keys {
		if err := l.readFile(ctx, k, k == latest, collect); err != nil {
			return nil, err
		}
	}
	for _, e := range extra {
		_ = collect(e, nil)
	}
	return del, nil
}

// streamEntries yields the live entries of keys (then extra), applying
// retention and, with LegacyDeleteAction, the delete lines. With the default
// (Spark 3.1+) semantics every line is yielded, whatever its action. fn gets
// the raw line of entries read from files (nil for extra).
func (l *Log) streamEntries(ctx context.Context, keys []string, latest string, extra []SinkFileStatus, fn func(SinkFileStatus, []byte) error) error {
	nowMs := l.opts.Now().UnixMilli()
	var del map[string]struct{}
	if l.opts.LegacyDeleteAction {
		var err error
		if del, err = l.deletedPaths(ctx, keys, latest, extra); err != nil {
			return err
		}
	}
	n := 0
	emit := func(e SinkFileStatus, raw []byte) error {
		if n++; n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if !l.retained(&e, nowMs) {
			return nil
		}
		if del != nil {
			if _, gone := del[e.Path]; gone {
				return nil
			}
		}
		return fn(e, raw)
	}
	for _, k := range keys {
		if err := l.readFile(ctx, k, k == latest, emit); err != nil {
			return err
		}
	}
	for _, e := range extra {
		if err := emit(e, nil); err != nil {
			return err
		}
	}
	return nil
}

// Entries yields the entries of the log's latest state in log order
// (CompactibleFileStreamLog.allFiles), streaming: memory does not grow with
// the log. If a file vanishes before the first entry is yielded (a
// concurrent cleanup after a newer compaction), the log is listed again and
// the read restarts, as Spark does; once entries have been yielded, a
// vanished file is an error (AllFiles retries from scratch instead).
func (l *Log) Entries(ctx context.Context) iter.Seq2[SinkFileStatus, error] {
	return func(yield func(SinkFileStatus, error) bool) {
		stop := errors.New("stop")
		var err error
		for attempt := 0; attempt < 3; attempt++ {
			var snap *LogState
			if snap, err = l.State(ctx); err != nil {
				break
			}
			if len(snap.Keys) == 0 {
				return
			}
			yielded := false
			err = l.streamEntries(ctx, snap.Keys, snap.Keys[len(snap.Keys)-1], nil, func(e SinkFileStatus, _ []byte) error {
				yielded = true
				if !yield(e, nil) {
					return stop
				}
				return nil
			})
			if errors.Is(err, stop) {
				return
			}
			if yielded || !errors.Is(err, storage.ErrNotFound) {
				break
			}
		}
		if err != nil {
			yield(SinkFileStatus{}, err)
		}
	}
}

// AllFiles returns the entries of the log's latest state (see Entries),
// retrying from scratch if a file vanishes during the read.
func (l *Log) AllFiles(ctx context.Context) ([]SinkFileStatus, error) {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		var snap *LogState
		if snap, err = l.State(ctx); err != nil {
			return nil, err
		}
		if len(snap.Keys) == 0 {
			return nil, nil
		}
		var out []SinkFileStatus
		err = l.streamEntries(ctx, snap.Keys, snap.Keys[len(snap.Keys)-1], nil, func(e SinkFileStatus, _ []byte) error {
			out = append(out, e)
			return nil
		})
		if err == nil {
			return out, nil
		}
		if !errors.Is(err, storage.ErrNotFound) {
			return nil, err
		}
	}
	return nil, err
}

// Add commits batch batchID with its entries: a compaction file when
// IsCompactionBatch(batchID, interval), else a plain batch file, created with
// put-if-absent (HDFSMetadataLog.addNewBatchByStream). batchID must be the
// next batch (latest+1), else ErrBatchGap (or ErrConcurrentWriter if it is
// already logged). Afterwards, with DeleteExpiredLog, old log files are
// deleted (see DeleteExpiredLog).
func (l *Log) Add(ctx context.Context, batchID int64, entries []SinkFileStatus) error {
	ls, err := l.list(ctx)
	if err != nil {
		return err
	}
	latest := ls.latest()
	switch {
	case batchID <= latest:
		return fmt.Errorf("%w: batch %d is already in %s (latest batch %d)", ErrConcurrentWriter, batchID, MetadataDir, latest)
	case batchID != latest+1:
		return fmt.Errorf("%w: batch %d arrived but the log ends at batch %d", ErrBatchGap, batchID, latest)
	}
	if err := l.checkLatestVersion(ctx, ls); err != nil {
		return err
	}
	interval := ls.compactInterval(l.opts.CompactInterval)
	if IsCompactionBatch(batchID, interval) {
		if _, err := l.compact(ctx, ls, batchID, interval, entries, false); err != nil {
			return err
		}
	} else {
		data, err := EncodeLog(entries)
		if err != nil {
			return err
		}
		if err := l.putIfAbsent(ctx, batchFileKey(batchID, false), data); err != nil {
			return err
		}
	}
	if l.opts.DeleteExpiredLog {
		// The batch is committed: a failed cleanup must not report the batch
		// as failed (sink.Sink: on error nothing is committed). The files are
		// deleted after a later batch.
		if _, err := l.deleteExpired(ctx, batchID, interval); err != nil {
			l.opts.Logger.Warn("filesink: deleting expired log files failed",
				"batchId", batchID, "error", err.Error())
		}
	}
	return nil
}

// putIfAbsent creates a log file. A lost race means another writer:
// ErrConcurrentWriter. An unknown outcome is resolved by reading back.
func (l *Log) putIfAbsent(ctx context.Context, key string, data []byte) error {
	err := l.store.PutIfAbsent(ctx, key, data)
	switch {
	case err == nil:
		return nil
	case errors.Is(err, storage.ErrAlreadyExists):
		return fmt.Errorf("%w: %s already exists (are two queries using output path %s?): %w",
			ErrConcurrentWriter, key, l.store.URL(), err)
	case errors.Is(err, storage.ErrCommitStateUnknown):
		got, rerr := l.store.Read(ctx, key)
		if rerr == nil && bytes.Equal(got, data) {
			return nil
		}
		return fmt.Errorf("create %s: %w", key, err)
	}
	return fmt.Errorf("create %s: %w", key, err)
}

// CompactResult reports a compaction.
type CompactResult struct {
	BatchID        int64  // the compaction batch
	Key            string // its file
	EntriesWritten int64  // entries in the compaction file
	Streamed       bool   // written with the streaming (claim) path
}

// compact writes batchID.compact: the entries of the previous compaction
// file and of the batches since (getValidBatchesBeforeCompactionBatch), then
// entries, filtered by retention (and legacy deletes). Every source is read
// line by line. rewrite replaces an existing compaction file (CompactLog).
func (l *Log) compact(ctx context.Context, ls *listing, batchID int64, interval int, entries []SinkFileStatus, rewrite bool) (CompactResult, error) {
	res := CompactResult{BatchID: batchID, Key: batchFileKey(batchID, true)}
	var keys []string
	var estimate int64
	if rewrite {
		f, ok := ls.file(batchID, interval)
		if !ok || !f.Compact {
			return res, fmt.Errorf("%w: %s", ErrMissingLogFile, res.Key)
		}
		keys, estimate = []string{f.Key}, f.Size
	} else {
		for id := max(0, batchID-int64(interval)); id < batchID; id++ {
			f, ok := ls.file(id, interval)
			if !ok {
				return res, fmt.Errorf("%w: %s does not exist when compacting batch %d (compactInterval %d)",
					ErrMissingLogFile, batchFileKey(id, IsCompactionBatch(id, interval)), batchID, interval)
			}
			keys = append(keys, f.Key)
			estimate += f.Size
		}
	}
	for i := range entries {
		estimate += int64(len(entries[i].Path)) + 160
	}
	write := func(w io.Writer) error {
		enc := newLogEncoder(w)
		err := l.streamEntries(ctx, keys, "", entries, func(e SinkFileStatus, raw []byte) error {
			if raw != nil {
				return enc.addRaw(raw)
			}
			return enc.add(&e)
		})
		if err != nil {
			return err
		}
		res.EntriesWritten = enc.count
		return enc.flush()
	}
	if estimate <= l.opts.MaxInMemoryCompactBytes {
		var buf bytes.Buffer
		if err := write(&buf); err != nil {
			return res, fmt.Errorf("compact batch %d: %w", batchID, err)
		}
		if rewrite {
			if err := l.store.Put(ctx, res.Key, buf.Bytes()); err != nil {
				return res, fmt.Errorf("rewrite %s: %w", res.Key, err)
			}
			return res, nil
		}
		return res, l.putIfAbsent(ctx, res.Key, buf.Bytes())
	}
	res.Streamed = true
	if !rewrite {
		if err := l.claim(ctx, batchID); err != nil {
			return res, err
		}
	}
	w, err := l.store.NewWriter(ctx, res.Key)
	if err != nil {
		return res, fmt.Errorf("create %s: %w", res.Key, err)
	}
	cw := &countWriter{w: w}
	if err := write(cw); err != nil {
		_ = w.Abort()
		return res, fmt.Errorf("compact batch %d: %w", batchID, err)
	}
	if err := w.Close(); err != nil {
		// The answer may be lost after the object was published: we hold the
		// claim, so an object of exactly our size is ours.
		if fi, serr := l.store.Stat(ctx, res.Key); serr == nil && fi.Size == cw.n && !rewrite {
			return res, nil
		}
		return res, fmt.Errorf("publish %s: %w", res.Key, err)
	}
	return res, nil
}

// claim takes the right to stream batchID.compact: a put-if-absent of
// ".N.compact.claim" holding the writer id. Our own claim (a retry, or a
// restart with the same QueryID) is taken over; anyone else's is
// ErrConcurrentWriter.
func (l *Log) claim(ctx context.Context, batchID int64) error {
	key := claimKey(batchID)
	err := l.store.PutIfAbsent(ctx, key, []byte(l.writerID))
	if err == nil {
		return nil
	}
	if !errors.Is(err, storage.ErrAlreadyExists) && !errors.Is(err, storage.ErrCommitStateUnknown) {
		return fmt.Errorf("claim %s: %w", key, err)
	}
	owner, rerr := l.store.Read(ctx, key)
	if rerr != nil {
		return fmt.Errorf("claim %s: %w (read back: %w)", key, err, rerr)
	}
	if string(owner) != l.writerID {
		return fmt.Errorf("%w: %s is claimed by writer %q, not %q (are two queries using output path %s?)",
			ErrConcurrentWriter, key, owner, l.writerID, l.store.URL())
	}
	// Our own claim; the compaction file itself must still be absent.
	if _, serr := l.store.Stat(ctx, batchFileKey(batchID, true)); serr == nil {
		return fmt.Errorf("%w: %s already exists", ErrConcurrentWriter, batchFileKey(batchID, true))
	} else if !errors.Is(serr, storage.ErrNotFound) {
		return serr
	}
	return nil
}

// DeleteExpired deletes old log files as CompactibleFileStreamLog.deleteExpiredLog
// does after batch currentBatchID: when compactInterval <= current+1-MinBatchesToRetain,
// every file (and claim) of a batch before the compaction batch that keeps
// MinBatchesToRetain batches readable, and only if it is older than
// CleanupDelay. The latest compaction file and everything after it are never
// deleted. It returns the deleted keys.
func (l *Log) deleteExpired(ctx context.Context, currentBatchID int64, interval int) ([]string, error) {
	if int64(interval) > currentBatchID+1-int64(l.opts.MinBatchesToRetain) {
		return nil, nil
	}
	minBatchID := currentBatchID + 1 - int64(l.opts.MinBatchesToRetain)
	minCompactionBatchID := minBatchID - minBatchID%int64(interval) - 1
	ls, err := l.list(ctx)
	if err != nil {
		return nil, err
	}
	if lc := ls.latestCompact(); lc < minCompactionBatchID {
		minCompactionBatchID = lc // never delete the latest compaction file
	}
	expired := l.opts.Now().Add(-l.opts.CleanupDelay)
	var deleted []string
	for _, f := range append(slices.Clone(ls.files), ls.claims...) {
		if f.BatchID >= minCompactionBatchID || f.ModTime.After(expired) {
			continue
		}
		if err := l.store.Delete(ctx, f.Key); err != nil {
			return deleted, fmt.Errorf("delete expired log file %s: %w", f.Key, err)
		}
		deleted = append(deleted, f.Key)
	}
	return deleted, nil
}
