package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// OffsetSeqVersion is the version line of offsets/N files (Spark's
// OffsetSeqLog.VERSION).
const OffsetSeqVersion = 1

// CommitVersion is the version line lakesink writes in commits/N files.
// Reading accepts up to v2 (Spark 4's checkpoint format v2 adds
// stateUniqueIds, which a stateless query never needs).
const (
	CommitVersion       = 1
	maxCommitVersion    = 2
	serializedVoid      = "-"
	maxFileSourceLogVer = 1
)

// OffsetSeqMetadata is the second line of offsets/N (Spark's OffsetSeq.scala,
// OffsetSeqMetadata): the batch's event-time watermark, its processing
// timestamp, and the configuration pinned for the query's lifetime.
type OffsetSeqMetadata struct {
	BatchWatermarkMs int64             `json:"batchWatermarkMs"` // event-time watermark, ms since the epoch (0: none)
	BatchTimestampMs int64             `json:"batchTimestampMs"` // processing time of the batch, ms since the epoch
	Conf             map[string]string `json:"conf"`             // the spark.sql.* settings pinned for the query
}

// OffsetSeq is one offsets/N file: the end offset of every source for batch N
// (Spark's OffsetSeqLog). Offsets[i] is the serialized offset (raw JSON text)
// of source i; "" means the source had no offset yet (written as "-").
type OffsetSeq struct {
	Metadata *OffsetSeqMetadata // nil when the metadata line is empty
	Offsets  []string           // one raw offset per source
}

// MarshalOffsetSeq renders an offsets file as Spark's OffsetSeqLog.serialize
// does: "v1", the metadata JSON, then one offset per line, no trailing newline.
func MarshalOffsetSeq(seq OffsetSeq) ([]byte, error) {
	var b bytes.Buffer
	fmt.Fprintf(&b, "v%d\n", OffsetSeqVersion)
	if seq.Metadata != nil {
		md := *seq.Metadata
		if md.Conf == nil {
			md.Conf = map[string]string{}
		}
		j, err := json.Marshal(md)
		if err != nil {
			return nil, fmt.Errorf("encode offset metadata: %w", err)
		}
		b.Write(j)
	}
	for i, o := range seq.Offsets {
		b.WriteByte('\n')
		switch {
		case o == "":
			b.WriteString(serializedVoid)
		case strings.ContainsAny(o, "\n\r") || !json.Valid([]byte(o)):
			return nil, fmt.Errorf("offset of source %d is not one line of JSON: %q", i, o)
		default:
			b.WriteString(o)
		}
	}
	return b.Bytes(), nil
}

// ParseOffsetSeq parses an offsets file (OffsetSeqLog.deserialize). It needs
// the version line and the metadata line (which may be empty); every further
// line is one source's offset, "-" for none. Any line that is not valid JSON
// is reported as corruption (a truncated file ends in one).
func ParseOffsetSeq(data []byte) (OffsetSeq, int, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return OffsetSeq{}, 0, fmt.Errorf("empty file")
	}
	lines := splitLines(data)
	if err := parseVersion(lines[0], OffsetSeqVersion); err != nil {
		return OffsetSeq{}, 1, err
	}
	if len(lines) < 2 {
		return OffsetSeq{}, 1, fmt.Errorf("incomplete log file: no metadata line")
	}
	var seq OffsetSeq
	if md := strings.TrimSpace(lines[1]); md != "" {
		var m OffsetSeqMetadata
		if err := json.Unmarshal([]byte(md), &m); err != nil {
			return OffsetSeq{}, 2, fmt.Errorf("metadata: %w", err)
		}
		seq.Metadata = &m
	}
	for i, l := range lines[2:] {
		switch {
		case l == serializedVoid:
			seq.Offsets = append(seq.Offsets, "")
		case json.Valid([]byte(l)):
			seq.Offsets = append(seq.Offsets, l)
		default:
			return OffsetSeq{}, i + 3, fmt.Errorf("offset of source %d is not valid JSON: %q", i, l)
		}
	}
	return seq, 0, nil
}

// FileSourceOffset is the file source's offset: the latest batch id of its
// sources/<i> log (Spark's FileStreamSourceOffset).
type FileSourceOffset struct {
	LogOffset int64 `json:"logOffset"` // latest batch id of the sources/<i> log
}

// String renders the offset as Spark 2.2+ does: {"logOffset":N}.
func (o FileSourceOffset) String() string {
	return `{"logOffset":` + strconv.FormatInt(o.LogOffset, 10) + `}`
}

// ParseFileSourceOffset reads {"logOffset":N} and also Spark 2.1's plain
// number N (a LongOffset), as FileStreamSourceOffset.apply does.
func ParseFileSourceOffset(s string) (FileSourceOffset, error) {
	s = strings.TrimSpace(s)
	if n, err := strconv.ParseInt(s, 10, 64); err == nil {
		return FileSourceOffset{LogOffset: n}, nil
	}
	var o struct {
		LogOffset *int64 `json:"logOffset"`
	}
	if err := json.Unmarshal([]byte(s), &o); err != nil || o.LogOffset == nil {
		return FileSourceOffset{}, fmt.Errorf("not a file source offset: %q", s)
	}
	return FileSourceOffset{LogOffset: *o.LogOffset}, nil
}

// CommitMetadata is the JSON line of commits/N (Spark's CommitLog.scala,
// CommitMetadata).
type CommitMetadata struct {
	NextBatchWatermarkMs int64 `json:"nextBatchWatermarkMs"` // watermark for the next batch, ms since the epoch
}

// MarshalCommit renders a commit file: "v1", then the metadata JSON.
func MarshalCommit(c CommitMetadata) []byte {
	j, _ := json.Marshal(c) // a struct of one int64 cannot fail
	return append([]byte(fmt.Sprintf("v%d\n", CommitVersion)), j...)
}

// ParseCommit parses a commit file (CommitLog.deserialize): a version line and
// an optional JSON line ("{}" when absent, as Spark reads it).
func ParseCommit(data []byte) (CommitMetadata, int, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return CommitMetadata{}, 0, fmt.Errorf("empty file")
	}
	lines := splitLines(data)
	if err := parseVersion(lines[0], maxCommitVersion); err != nil {
		return CommitMetadata{}, 1, err
	}
	var c CommitMetadata
	if len(lines) > 1 && strings.TrimSpace(lines[1]) != "" {
		if err := json.Unmarshal([]byte(lines[1]), &c); err != nil {
			return CommitMetadata{}, 2, err
		}
	}
	return c, 0, nil
}

// Metadata is the checkpoint's metadata file (Spark's StreamMetadata):
// {"id":"<uuid>"} written once; the query id is stable across restarts.
// lakesink adds the source URL and the sink kind and URL, which Spark ignores,
// so that a restart against another source or sink is refused.
type Metadata struct {
	ID       string `json:"id"`                 // the query id (a UUID), stable across restarts
	Source   string `json:"source,omitempty"`   // the source URL (lakesink)
	SinkKind string `json:"sinkKind,omitempty"` // "delta", "filesink", ... (lakesink)
	Sink     string `json:"sink,omitempty"`     // the sink URL (lakesink)
}

// ParseMetadata parses the metadata file.
func ParseMetadata(data []byte) (Metadata, error) {
	if len(bytes.TrimSpace(data)) == 0 {
		return Metadata{}, fmt.Errorf("empty file")
	}
	var m Metadata
	if err := json.Unmarshal(bytes.TrimSpace(data), &m); err != nil {
		return Metadata{}, err
	}
	if m.ID == "" {
		return Metadata{}, fmt.Errorf("no query id")
	}
	return m, nil
}
