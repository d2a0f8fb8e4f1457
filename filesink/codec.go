package filesink

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"

	"github.com/lakesink/lakesink/storage"
)

// LogVersion is the only _spark_metadata format version: the first line of
// every log file is "v1" (FileStreamSinkLog.VERSION).
const LogVersion = 1

// Actions of a SinkFileStatus (FileStreamSinkLog.ADD_ACTION; "delete" is a
// legacy action that Spark up to 3.0 honoured and Spark 3.1+ ignores).
const (
	ActionAdd    = "add"
	ActionDelete = "delete"
)

// SinkFileStatus is one line of a _spark_metadata log file: the status of a
// data file written by the sink. The field order is Spark's (case class
// SinkFileStatus in FileStreamSinkLog.scala), and the JSON encoding keeps it.
type SinkFileStatus struct {
	// Path is the fully qualified, URL-escaped URI of the file, as Hadoop's
	// Path.toUri.toString prints it (file:///abs/dir/part-..., s3a://bucket/...).
	Path string `json:"path"`
	// Size in bytes.
	Size int64 `json:"size"`
	// IsDir is always false for files written by the sink.
	IsDir bool `json:"isDir"`
	// ModificationTime in milliseconds since the Unix epoch.
	ModificationTime int64 `json:"modificationTime"`
	// BlockReplication is the HDFS replication (1 for local files and S3).
	BlockReplication int `json:"blockReplication"`
	// BlockSize is the file system block size (33554432 for local and S3A).
	BlockSize int64 `json:"blockSize"`
	// Action is "add" (or the legacy "delete").
	Action string `json:"action"`
}

// appendEntry appends the JSON encoding of e, as json4s writes it: fields
// in declaration order, no spaces, no HTML escaping, no trailing newline.
func appendEntry(buf *bytes.Buffer, e *SinkFileStatus) error {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(e); err != nil {
		return fmt.Errorf("encode entry %q: %w", e.Path, err)
	}
	// Encode terminates with '\n'; Spark's lines have none.
	buf.Truncate(buf.Len() - 1)
	if bytes.Contains(buf.Bytes(), []byte(`\u202`)) {
		unescapeLineSeparators(buf)
	}
	return nil
}

// unescapeLineSeparators undoes encoding/json's escaping of U+2028 and
// U+2029 (which it applies even without HTML escaping): Jackson writes them
// raw. Only real escapes are undone, i.e. a "\u2028" preceded by an even
// number of backslashes; an escaped backslash followed by "u2028" is text.
func unescapeLineSeparators(buf *bytes.Buffer) {
	in := bytes.Clone(buf.Bytes())
	buf.Reset()
	for i := 0; i < len(in); i++ {
		if in[i] != '\\' {
			buf.WriteByte(in[i])
			continue
		}
		if i+5 < len(in) && in[i+1] == 'u' && string(in[i+2:i+5]) == "202" && (in[i+5] == '8' || in[i+5] == '9') {
			if in[i+5] == '8' {
				buf.WriteString("\u2028")
			} else {
				buf.WriteString("\u2029")
			}
			i += 5
			continue
		}
		// Any other escape: copy it whole (two bytes), so that an escaped
		// backslash is never taken for the start of an escape.
		buf.WriteByte(in[i])
		if i+1 < len(in) {
			buf.WriteByte(in[i+1])
			i++
		}
	}
}

// EncodeLog returns the bytes of one log file: the version line "v1", then
// one JSON object per entry, each preceded by '\n', with no trailing newline
// (CompactibleFileStreamLog.serialize). An empty batch is just "v1".
func EncodeLog(entries []SinkFileStatus) ([]byte, error) {
	var buf bytes.Buffer
	w := newLogEncoder(&buf)
	for i := range entries {
		if err := w.add(&entries[i]); err != nil {
			return nil, err
		}
	}
	if err := w.flush(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// logEncoder streams a log file to w: the version line first, then entries.
type logEncoder struct {
	w       *bufio.Writer
	line    bytes.Buffer
	started bool
	count   int64
}

func newLogEncoder(w io.Writer) *logEncoder {
	return &logEncoder{w: bufio.NewWriterSize(w, 64<<10)}
}

func (le *logEncoder) header() error {
	if le.started {
		return nil
	}
	le.started = true
	_, err := le.w.WriteString("v" + strconv.Itoa(LogVersion))
	return err
}

func (le *logEncoder) add(e *SinkFileStatus) error {
	if err := le.header(); err != nil {
		return err
	}
	le.line.Reset()
	le.line.WriteByte('\n')
	if err := appendEntry(&le.line, e); err != nil {
		return err
	}
	le.count++
	_, err := le.w.Write(le.line.Bytes())
	return err
}

// addRaw writes an already encoded line verbatim (a line read from a log
// file; re-encoding a canonical line yields the same bytes).
func (le *logEncoder) addRaw(line []byte) error {
	if err := le.header(); err != nil {
		return err
	}
	le.count++
	if err := le.w.WriteByte('\n'); err != nil {
		return err
	}
	_, err := le.w.Write(line)
	return err
}

func (le *logEncoder) flush() error {
	if err := le.header(); err != nil {
		return err
	}
	return le.w.Flush()
}

// DecodeLog parses a whole log file (see decodeLog).
func DecodeLog(path string, data []byte) ([]SinkFileStatus, error) {
	var out []SinkFileStatus
	err := decodeLog(path, bytes.NewReader(data), func(e SinkFileStatus, _ []byte) error {
		out = append(out, e)
		return nil
	})
	return out, err
}

// decodeLog streams the entries of one log file to fn, line by line, so that
// a compaction file of any size is read in bounded memory. fn also gets the
// raw line, valid only during the call.
//
// The first line must be "v<N>" with N <= 1 (MetadataVersionUtil.validateVersion):
// a higher version is ErrUnsupportedLogVersion, a malformed one ErrCorruptLog.
// An empty file is ErrIncompleteLog ("Incomplete log file"). Spark writes no
// trailing newline; one trailing newline (hand-made files) and "\r\n" line
// ends are accepted. Any other line that is not a JSON object with a
// non-empty "path" is a *CorruptLogError naming the line.
func decodeLog(path string, r io.Reader, fn func(SinkFileStatus, []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	lineNo := 0
	var long []byte // accumulates a line longer than the buffer
	pendingEmpty := false
	for {
		chunk, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			if len(long)+len(chunk) > MaxLogLineBytes {
				return &CorruptLogError{Path: path, Line: lineNo + 1,
					Err: fmt.Errorf("line longer than %d bytes", MaxLogLineBytes)}
			}
			long = appendDoubling(long, chunk)
			continue
		}
		if err != nil && !errors.Is(err, io.EOF) {
			return fmt.Errorf("read log %s: %w", path, err)
		}
		atEOF := err != nil
		line := chunk
		if long != nil {
			long = appendDoubling(long, chunk)
			line = long
		}
		if len(line) == 0 && atEOF {
			// End of the file right after a '\n' (or an empty file).
			break
		}
		if pendingEmpty {
			// An empty line that was not the last one.
			return &CorruptLogError{Path: path, Line: lineNo, Err: errors.New("empty line")}
		}
		lineNo++
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if len(line) > MaxLogLineBytes {
			return &CorruptLogError{Path: path, Line: lineNo,
				Err: fmt.Errorf("line longer than %d bytes", MaxLogLineBytes)}
		}
		if lineNo == 1 {
			if err := validateVersion(path, line); err != nil {
				return err
			}
		} else if len(line) == 0 {
			pendingEmpty = true
		} else {
			e, err := decodeEntry(line)
			if err != nil {
				return &CorruptLogError{Path: path, Line: lineNo, Err: err}
			}
			if err := fn(e, line); err != nil {
				return err
			}
		}
		long = long[:0]
		if long != nil && cap(long) > 1<<20 {
			long = nil
		}
		if atEOF {
			break
		}
	}
	if lineNo == 0 {
		return fmt.Errorf("%w: %s is empty", ErrIncompleteLog, path)
	}
	return nil
}

// validateVersion checks the version line (MetadataVersionUtil.validateVersion).
// MaxLogLineBytes bounds one line of a _spark_metadata file (64 MiB, as
// txlog.DefaultMaxLineBytes for Delta commits). A longer line is a
// *CorruptLogError naming the file and line, found after reading at most
// this many bytes of it: a SinkFileStatus line is a few hundred bytes, and
// Spark's reader (a BufferedReader's readLine) would buffer a line of any
// length until it runs out of memory.
const MaxLogLineBytes = 64 << 20

// appendDoubling appends chunk to buf, doubling the capacity when it must
// grow (append's 1.25× growth for large slices would leave several
// near-full copies of a long line as garbage at once).
func appendDoubling(buf, chunk []byte) []byte {
	if need := len(buf) + len(chunk); need > cap(buf) {
		nb := make([]byte, len(buf), max(2*cap(buf), need, 64<<10))
		copy(nb, buf)
		buf = nb
	}
	return append(buf, chunk...)
}

// readVersion reads the version line of log file key (its first 32 bytes at
// most) and validates it like decodeLog.
func readVersion(ctx context.Context, store storage.Store, key string) error {
	rc, err := store.NewRangeReader(ctx, key, 0, 32)
	if err != nil {
		return err // the store names the op and the path
	}
	defer rc.Close()
	head, err := io.ReadAll(io.LimitReader(rc, 32))
	if err != nil {
		return fmt.Errorf("read log %s: %w", key, err)
	}
	if len(head) == 0 {
		return fmt.Errorf("%w: %s is empty", ErrIncompleteLog, key)
	}
	line, _, _ := bytes.Cut(head, []byte("\n"))
	return validateVersion(key, bytes.TrimSuffix(line, []byte("\r")))
}

func validateVersion(path string, line []byte) error {
	if len(line) < 2 || line[0] != 'v' {
		return &CorruptLogError{Path: path, Line: 1,
			Err: fmt.Errorf("failed to read correct log version from %q", truncateForError(line))}
	}
	v, err := strconv.Atoi(string(line[1:]))
	if err != nil || v <= 0 {
		return &CorruptLogError{Path: path, Line: 1,
			Err: fmt.Errorf("failed to read correct log version from %q", truncateForError(line))}
	}
	if v > LogVersion {
		return fmt.Errorf("%w: %s is v%d, maximum supported log version is v%d (written by a newer Spark)",
			ErrUnsupportedLogVersion, path, v, LogVersion)
	}
	return nil
}

func decodeEntry(line []byte) (SinkFileStatus, error) {
	if len(line) == 0 || line[0] != '{' {
		return SinkFileStatus{}, fmt.Errorf("not a JSON object: %q", truncateForError(line))
	}
	var e SinkFileStatus
	if err := json.Unmarshal(line, &e); err != nil {
		return SinkFileStatus{}, err
	}
	if e.Path == "" {
		return SinkFileStatus{}, errors.New(`missing "path"`)
	}
	return e, nil
}

func truncateForError(b []byte) string {
	if len(b) > 64 {
		return string(b[:64]) + "..."
	}
	return string(b)
}
