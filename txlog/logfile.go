package txlog

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/lakesink/lakesink/storage"
)

// LogDir is the log directory under the table root (PROTOCOL.md, "Delta Log
// Entries").
const LogDir = "_delta_log"

// LastCheckpointPath is the _last_checkpoint file (PROTOCOL.md, "Last
// Checkpoint File").
const LastCheckpointPath = LogDir + "/_last_checkpoint"

// DefaultMaxLineBytes bounds one JSON line of a commit file (64 MiB). A longer
// line is reported as *CorruptLogError instead of being buffered: Spark's own
// writers never come close (an add with statistics for thousands of columns
// is a few hundred KiB).
const DefaultMaxLineBytes = 64 << 20

// CommitPath is the key of the commit file of version v: _delta_log/%020d.json.
func CommitPath(v int64) string { return fmt.Sprintf("%s/%020d.json", LogDir, v) }

// CheckpointPath is the key of the classic checkpoint of version v:
// _delta_log/%020d.checkpoint.parquet (PROTOCOL.md, "Classic checkpoint").
func CheckpointPath(v int64) string { return fmt.Sprintf("%s/%020d.checkpoint.parquet", LogDir, v) }

// versionPrefix is the listing start-after key that makes a listing begin
// with the files of version v (every file of v sorts after it).
func versionPrefix(v int64) string { return fmt.Sprintf("%s/%020d", LogDir, v) }

// fileKind classifies a file of _delta_log.
type fileKind int

const (
	kindOther fileKind = iota
	kindCommit
	kindCheckpointClassic
	kindCheckpointMultiPart
	kindCheckpointV2
	kindCompaction
	kindChecksum
)

// logFile is a parsed _delta_log file name.
type logFile struct {
	info    storage.FileInfo
	kind    fileKind
	version int64
	part    int    // multi-part: 1-based part number
	parts   int    // multi-part: number of parts
	endVer  int64  // compaction: end version
	format  string // v2 checkpoint: "json" or "parquet"
}

// parseLogName parses the base name of a _delta_log file (PROTOCOL.md,
// "Checkpoint Naming Scheme", "Log Compaction Files").
func parseLogName(name string) (logFile, bool) {
	var lf logFile
	if len(name) < 21 || name[20] != '.' {
		return lf, false
	}
	v, err := parseVersion(name[:20])
	if err != nil {
		return lf, false
	}
	lf.version = v
	rest := name[21:]
	switch {
	case rest == "json":
		lf.kind = kindCommit
	case rest == "crc":
		lf.kind = kindChecksum
	case rest == "checkpoint.parquet":
		lf.kind = kindCheckpointClassic
	case strings.HasPrefix(rest, "checkpoint."):
		mid := strings.TrimPrefix(rest, "checkpoint.")
		// multi-part: %010d.%010d.parquet
		if p := strings.Split(mid, "."); len(p) == 3 && p[2] == "parquet" && len(p[0]) == 10 && len(p[1]) == 10 {
			part, err1 := strconv.Atoi(p[0])
			parts, err2 := strconv.Atoi(p[1])
			if err1 != nil || err2 != nil || part < 1 || parts < 1 || part > parts {
				return lf, false
			}
			lf.kind, lf.part, lf.parts = kindCheckpointMultiPart, part, parts
			return lf, true
		}
		// V2 UUID-named: <uuid>.json|parquet
		if u, ok := strings.CutSuffix(mid, ".json"); ok && u != "" && !strings.Contains(u, ".") {
			lf.kind, lf.format = kindCheckpointV2, "json"
			return lf, true
		}
		if u, ok := strings.CutSuffix(mid, ".parquet"); ok && u != "" && !strings.Contains(u, ".") {
			lf.kind, lf.format = kindCheckpointV2, "parquet"
			return lf, true
		}
		return lf, false
	case strings.HasSuffix(rest, ".compacted.json") && len(rest) == 20+len(".compacted.json"):
		end, err := parseVersion(rest[:20])
		if err != nil || end <= v {
			return lf, false
		}
		lf.kind, lf.endVer = kindCompaction, end
	default:
		return lf, false
	}
	return lf, true
}

func parseVersion(s string) (int64, error) {
	if len(s) != 20 {
		return 0, fmt.Errorf("version %q is not 20 digits", s)
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("version %q is not numeric", s)
		}
	}
	return strconv.ParseInt(s, 10, 64)
}

// EncodeCommit encodes actions as a commit file: one JSON object per line,
// every line terminated by '\n' (PROTOCOL.md, "Delta Log Entries").
func EncodeCommit(actions []Action) ([]byte, error) {
	var buf bytes.Buffer
	for i := range actions {
		b, err := actions[i].MarshalJSON()
		if err != nil {
			return nil, fmt.Errorf("encode action %d: %w", i, err)
		}
		if bytes.Equal(b, []byte("{}")) {
			return nil, fmt.Errorf("%w: action %d is empty", ErrInvalidTransaction, i)
		}
		buf.Write(b)
		buf.WriteByte('\n')
	}
	return buf.Bytes(), nil
}

// DecodeCommit reads a commit (or V2 JSON checkpoint) stream and calls fn for
// each action in file order. Blank lines are skipped; the last line may lack
// its newline. Errors in the data are *CorruptLogError naming path, version
// and the 1-based line; errors returned by fn are returned unchanged.
// maxLine <= 0 means DefaultMaxLineBytes.
func DecodeCommit(r io.Reader, path string, version int64, maxLine int, fn func(line int, a *Action) error) error {
	return decodeCommit(r, path, version, maxLine, -1, fn)
}

// decodeCommit is DecodeCommit of a stream of size bytes (< 0: unknown).
func decodeCommit(r io.Reader, path string, version int64, maxLine int, size int64, fn func(line int, a *Action) error) error {
	return decodeCommitLines(r, path, version, maxLine, func(line int, b []byte) error {
		var a Action
		if err := json.Unmarshal(b, &a); err != nil {
			return &CorruptLogError{Path: path, Version: version, Line: line, Err: err}
		}
		return fn(line, &a)
	}, nil, size)
}

// DecodeCommitLines splits a commit stream into its non-blank lines
// (trimmed; valid only during the call), bounding each at maxLine bytes
// (without its newline): a longer line is a *CorruptLogError naming the file,
// version and line, reported after reading at most maxLine bytes of it.
// The cost is linear in the stream whatever the reader's chunk size (a
// bufio.Scanner rescans the whole partial line after every Read, which is
// quadratic for a long line arriving in small network reads), and the
// memory is one line plus a 64 KiB read buffer.
func DecodeCommitLines(r io.Reader, path string, version int64, maxLine int, fn func(line int, b []byte) error) error {
	return decodeCommitLines(r, path, version, maxLine, fn, nil, -1)
}

// readBufferSize is the read buffer for a stream of size bytes (< 0:
// unknown): 64 KiB, or less for a smaller file, so that a replay of
// thousands of small commits does not allocate 64 KiB for each.
func readBufferSize(size int64) int {
	if size < 0 || size >= 64<<10 {
		return 64 << 10
	}
	return max(int(size)+1, 512)
}

// lineWork counts the bytes DecodeCommitLines handles: searched for '\n'
// (each fragment bufio.Reader.ReadSlice returns, whose search covers only
// the bytes it has not searched yet) and copied into the long-line buffer
// (appends and regrowths). The test of linear cost compares it with the
// input size instead of timing the call.
type lineWork struct{ searched, copied int64 }

func decodeCommitLines(r io.Reader, path string, version int64, maxLine int, fn func(line int, b []byte) error, work *lineWork, size int64) error {
	if work == nil {
		work = new(lineWork)
	}
	if maxLine <= 0 {
		maxLine = DefaultMaxLineBytes
	}
	br := bufio.NewReaderSize(r, readBufferSize(size))
	var long []byte // a line longer than br's buffer, accumulated
	line := 0
	for {
		frag, err := br.ReadSlice('\n')
		work.searched += int64(len(frag))
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(frag) > maxLine {
				return &CorruptLogError{Path: path, Version: version, Line: line + 1,
					Err: fmt.Errorf("line longer than %d bytes", maxLine)}
			}
			long = appendDoubling(long, frag, maxLine, work)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read %s: %w", path, err)
		}
		if len(frag) == 0 && len(long) == 0 && err != nil {
			return nil // EOF after the last newline
		}
		line++
		b := frag
		if long != nil {
			long = appendDoubling(long, frag, maxLine+1, work)
			b = long
		}
		if len(bytes.TrimSuffix(b, []byte("\n"))) > maxLine {
			return &CorruptLogError{Path: path, Version: version, Line: line,
				Err: fmt.Errorf("line longer than %d bytes", maxLine)}
		}
		if t := bytes.TrimSpace(b); len(t) > 0 {
			if ferr := fn(line, t); ferr != nil {
				return ferr
			}
		}
		long = nil
		if err != nil {
			return nil // EOF: a last line without a newline
		}
	}
}

// appendDoubling appends frag to buf, doubling the capacity when it must
// grow (at most to limit unless more is needed): append's 1.25× growth for
// large slices would leave several near-full copies of a long line as
// garbage at once.
func appendDoubling(buf, frag []byte, limit int, work *lineWork) []byte {
	need := len(buf) + len(frag)
	work.copied += int64(len(frag))
	if need > cap(buf) {
		work.copied += int64(len(buf))
		c := max(2*cap(buf), 64<<10)
		c = max(min(c, limit), need)
		nb := make([]byte, len(buf), c)
		copy(nb, buf)
		buf = nb
	}
	return append(buf, frag...)
}

// ParseCommit decodes a whole commit file held in memory.
func ParseCommit(data []byte, path string, version int64, maxLine int) ([]Action, error) {
	var out []Action
	// The read buffer is the data's size, not 64 KiB: a writer parses each
	// commit it reads or writes.
	err := decodeCommit(bytes.NewReader(data), path, version, maxLine, int64(len(data)), func(_ int, a *Action) error {
		out = append(out, *a)
		return nil
	})
	return out, err
}

// errEmptyCommit: a commit file without a single action. No Delta writer
// writes one (every commit holds at least its commitInfo, PROTOCOL.md
// "Delta Log Entries"); a 0-byte N.json is a truncated commit.
var errEmptyCommit = errors.New("empty commit file: no action (truncated?)")

// readCommit streams commit file path through DecodeCommit. A file without
// any action is a *CorruptLogError (errEmptyCommit).
func readCommit(ctx context.Context, st storage.Store, path string, version int64, maxLine int, fn func(line int, a *Action) error) error {
	return readCommitSized(ctx, st, path, version, -1, maxLine, fn)
}

// readCommitSized is readCommit of a file of size bytes as listed (< 0:
// unknown), which sizes the read buffer.
func readCommitSized(ctx context.Context, st storage.Store, path string, version, size int64, maxLine int, fn func(line int, a *Action) error) error {
	rc, err := st.NewRangeReader(ctx, path, 0, -1)
	if err != nil {
		return err // the store names the op and the path
	}
	defer rc.Close()
	n := 0
	err = decodeCommit(rc, path, version, maxLine, size, func(line int, a *Action) error {
		n++
		return fn(line, a)
	})
	if err == nil && n == 0 {
		return &CorruptLogError{Path: path, Version: version, Err: errEmptyCommit}
	}
	return err
}

// ReadCommit reads and decodes the commit file of version v.
func (l *Log) ReadCommit(ctx context.Context, v int64) ([]Action, error) {
	var out []Action
	err := readCommit(ctx, l.store, CommitPath(v), v, l.opts.MaxLineBytes, func(_ int, a *Action) error {
		out = append(out, *a)
		return nil
	})
	if errors.Is(err, storage.ErrNotFound) {
		return nil, fmt.Errorf("%w: %d: %w", ErrVersionNotFound, v, err)
	}
	return out, err
}

// maxLastCheckpointBytes bounds what is read of _last_checkpoint (1 MiB).
const maxLastCheckpointBytes = 1 << 20

// LastCheckpoint is the content of _delta_log/_last_checkpoint (PROTOCOL.md,
// "Last Checkpoint File Schema").
type LastCheckpoint struct {
	Version       int64  `json:"version"`                 // the version of the latest checkpoint
	Size          int64  `json:"size"`                    // number of actions in the checkpoint
	Parts         *int   `json:"parts,omitempty"`         // number of parts of a multi-part checkpoint, nil for one file
	SizeInBytes   *int64 `json:"sizeInBytes,omitempty"`   // total size of the checkpoint files in bytes, nil when absent
	NumOfAddFiles *int64 `json:"numOfAddFiles,omitempty"` // number of add actions in the checkpoint, nil when absent
	// CheckpointSchema is the checkpoint's Parquet schema as Spark's
	// StructType JSON, kept raw; nil when absent.
	CheckpointSchema json.RawMessage `json:"checkpointSchema,omitempty"`
	// Checksum is the MD5 of the file's canonical JSON without this field
	// (PROTOCOL.md, "JSON checksum"), "" when absent.
	Checksum string `json:"checksum,omitempty"`
	// V2Checkpoint describes a V2 checkpoint (its path, size and sidecars),
	// kept raw; nil for a classic checkpoint.
	V2Checkpoint json.RawMessage            `json:"v2Checkpoint,omitempty"`
	Extra        map[string]json.RawMessage `json:"-"` // unknown fields, kept raw and re-encoded
}

// ParseLastCheckpoint decodes a _last_checkpoint file. Anything but a JSON
// object with a non-negative version is a *CorruptLogError.
func ParseLastCheckpoint(data []byte) (*LastCheckpoint, error) {
	var lc LastCheckpoint
	var probe map[string]json.RawMessage
	corrupt := func(err error) error {
		return &CorruptLogError{Path: LastCheckpointPath, Version: -1, Err: err}
	}
	if err := json.Unmarshal(bytes.TrimSpace(data), &probe); err != nil {
		return nil, corrupt(err)
	}
	if _, ok := probe["version"]; !ok {
		return nil, corrupt(errors.New("no version"))
	}
	if err := json.Unmarshal(data, &lc); err != nil {
		return nil, corrupt(err)
	}
	if lc.Version < 0 {
		return nil, corrupt(fmt.Errorf("negative version %d", lc.Version))
	}
	if lc.Parts != nil && *lc.Parts < 1 {
		return nil, corrupt(fmt.Errorf("invalid parts %d", *lc.Parts))
	}
	return &lc, nil
}

// LastCheckpointHint returns the _last_checkpoint hint (PROTOCOL.md, "Last
// Checkpoint File"), or nil when it is absent or unusable (a corrupt hint
// only costs a full listing: STYLE.md, pebble atomicfs marker). Other I/O
// errors are returned. A hint older than the newest checkpoint
// (Snapshot.CheckpointVersion) is stale: left by a crash between writing a
// checkpoint and its hint; Checkpoint rewrites it (compaction's Service
// checkpoints again when it finds one).
//
// At most maxLastCheckpointBytes are read: a larger file is no hint we can
// use (Spark's is a few hundred bytes, a few KiB with a checkpointSchema),
// and must not be buffered whole.
func (l *Log) LastCheckpointHint(ctx context.Context) (*LastCheckpoint, error) {
	rc, err := l.store.NewRangeReader(ctx, LastCheckpointPath, 0, maxLastCheckpointBytes+1)
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err // the store names the op and the path
	}
	data, err := io.ReadAll(io.LimitReader(rc, maxLastCheckpointBytes+1))
	rc.Close()
	if errors.Is(err, storage.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", LastCheckpointPath, err)
	}
	if len(data) > maxLastCheckpointBytes {
		return nil, nil
	}
	lc, err := ParseLastCheckpoint(data)
	if err != nil {
		return nil, nil
	}
	return lc, nil
}
