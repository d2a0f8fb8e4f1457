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
	ID        string    `json:"id"`             // the query id (stable across restarts)
	RunID     string    `json:"runId"`          // the id of this run
	Name      string    `json:"name,omitempty"` // Options.QueryName
	Timestamp time.Time `json:"timestamp"`      // trigger start
	BatchID   int64     `json:"batchId"`        // the batch id (N of offsets/N)

	NumInputRows           int64   `json:"numInputRows"`           // rows read by the batch
	InputRowsPerSecond     float64 `json:"inputRowsPerSecond"`     // rows over the time since the previous trigger
	ProcessedRowsPerSecond float64 `json:"processedRowsPerSecond"` // rows over the batch's own time

	DurationMs DurationMs `json:"durationMs"` // time in each phase

	// Recovery is "rerun" when this batch re-executes an uncommitted batch
	// found at start (offsets/N without commits/N), "" otherwise. On a rerun
	// Sink.Skipped tells the two recovery paths apart: false means the sink's
	// commit had not landed before the crash and was made now; true means it
	// had landed and the sink skipped the batch (Delta's txn / the file
	// sink's log).
	Recovery  string `json:"recovery,omitempty"`
	Recovered bool   `json:"recovered"` // Recovery != ""

	Sources []SourceProgress `json:"sources"` // one entry per source
	Sink    SinkProgress     `json:"sink"`    // the sink's part
}

// DurationMs holds the time spent in each phase of a trigger, in ms.
type DurationMs struct {
	LatestOffset     int64 `json:"latestOffset"`     // planning the end offset
	WalCommit        int64 `json:"walCommit"`        // writing offsets/N
	GetBatch         int64 `json:"getBatch"`         // reading the batch
	AddBatch         int64 `json:"addBatch"`         // the sink's write and commit
	CommitOffsets    int64 `json:"commitOffsets"`    // writing commits/N
	TriggerExecution int64 `json:"triggerExecution"` // the whole trigger
}

// SourceProgress reports one source's part of a batch.
type SourceProgress struct {
	Description            string          `json:"description"`            // the source URL
	StartOffset            json.RawMessage `json:"startOffset"`            // offset before the batch (null for the first)
	EndOffset              json.RawMessage `json:"endOffset"`              // offset after the batch
	NumInputRows           int64           `json:"numInputRows"`           // rows read
	NumInputFiles          int             `json:"numInputFiles"`          // files read (file sources)
	NumInputBytes          int64           `json:"numInputBytes"`          // bytes read
	NumBadRecords          int             `json:"numBadRecords"`          // records handed to OnBadRecord
	InputRowsPerSecond     float64         `json:"inputRowsPerSecond"`     // as Progress.InputRowsPerSecond
	ProcessedRowsPerSecond float64         `json:"processedRowsPerSecond"` // as Progress.ProcessedRowsPerSecond
}

// SinkProgress reports the sink's part: its description and the Result of
// AddBatch (batchId, skipped, version, numFiles, numBytes, numRows).
type SinkProgress struct {
	Description   string `json:"description"`   // kind[URL] of the sink
	NumOutputRows int64  `json:"numOutputRows"` // rows written (0 when skipped)
	sink.Result
}

func rawOffset(s string) json.RawMessage {
	if s == "" {
		return json.RawMessage("null")
	}
	return json.RawMessage(s)
}
