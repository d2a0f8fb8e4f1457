package stream

import (
	"encoding/json"
	"time"

	"github.com/lakesink/lakesink/sink"
)

// Progress reports one micro-batch, shaped like Spark's
// StreamingQueryProgress (id, runId, name, timestamp, batchId, numInputRows,
// inputRowsPerSecond, processedRowsPerSecond, durationMs, sources, sink),
// plus the recovery marker lakesink adds.
type Progress struct {
	ID        string    `json:"id"`
	RunID     string    `json:"runId"`
	Name      string    `json:"name,omitempty"`
	Timestamp time.Time `json:"timestamp"` // trigger start
	BatchID   int64     `json:"batchId"`

	NumInputRows           int64   `json:"numInputRows"`
	InputRowsPerSecond     float64 `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64 `json:"processedRowsPerSecond"`

	DurationMs DurationMs `json:"durationMs"`

	// Recovery is "rerun" when this batch re-executes an uncommitted batch
	// found at start (offsets/N without commits/N), "" otherwise. On a rerun
	// Sink.Skipped tells the two recovery paths apart: false means the sink's
	// commit had not landed before the crash and was made now; true means it
	// had landed and the sink skipped the batch (Delta's txn / the file
	// sink's log).
	Recovery  string `json:"recovery,omitempty"`
	Recovered bool   `json:"recovered"`

	Sources []SourceProgress `json:"sources"`
	Sink    SinkProgress     `json:"sink"`
}

// DurationMs holds the time spent in each phase of a trigger, in ms.
type DurationMs struct {
	LatestOffset     int64 `json:"latestOffset"`
	WalCommit        int64 `json:"walCommit"`
	GetBatch         int64 `json:"getBatch"`
	AddBatch         int64 `json:"addBatch"`
	CommitOffsets    int64 `json:"commitOffsets"`
	TriggerExecution int64 `json:"triggerExecution"`
}

// SourceProgress reports one source's part of a batch.
type SourceProgress struct {
	Description            string          `json:"description"`
	StartOffset            json.RawMessage `json:"startOffset"`
	EndOffset              json.RawMessage `json:"endOffset"`
	NumInputRows           int64           `json:"numInputRows"`
	NumInputFiles          int             `json:"numInputFiles"`
	NumInputBytes          int64           `json:"numInputBytes"`
	NumBadRecords          int             `json:"numBadRecords"`
	InputRowsPerSecond     float64         `json:"inputRowsPerSecond"`
	ProcessedRowsPerSecond float64         `json:"processedRowsPerSecond"`
}

// SinkProgress reports the sink's part: its description and the Result of
// AddBatch (batchId, skipped, version, numFiles, numBytes, numRows).
type SinkProgress struct {
	Description   string `json:"description"`
	NumOutputRows int64  `json:"numOutputRows"`
	sink.Result
}

func rawOffset(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}
