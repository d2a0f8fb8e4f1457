package ingest

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/checkpoint"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/table"
)

// Operation parameters of each STREAMING UPDATE commit of an ingest into a
// Delta table: the source URL (every commit) and the raw end offset of
// source 0 for that batch, as written to offsets/N before the batch ran.
// With them a lost checkpoint can be rebuilt from the table
// (Options.RecoverCheckpointFromTable), as delta-io's kafka-delta-ingest
// keeps its Kafka offsets in the table itself.
const (
	paramSourceURL       = "sourceUrl"
	paramSourceEndOffset = "sourceEndOffset"
)

// batchEndOffset returns the raw offset of source 0 in the checkpoint's
// offsets/<batchID> (written BEFORE the batch runs, so it exists when the sink
// commits), or "" when it cannot be read: the parameter is informational for
// the commit and a missing one only makes recovery refuse later.
func batchEndOffset(ctx context.Context, chk storage.Store, batchID int64) string {
	data, err := chk.Read(ctx, "offsets/"+strconv.FormatInt(batchID, 10))
	if err != nil {
		return ""
	}
	seq, _, err := checkpoint.ParseOffsetSeq(data)
	if err != nil || len(seq.Offsets) == 0 {
		return ""
	}
	return seq.Offsets[0]
}

// recoveredBatch is what the table says about the last batch of a source.
type recoveredBatch struct {
	Version   int64
	QueryID   string
	BatchID   int64
	EndOffset string
	Timestamp int64
}

// findRecoverableBatch returns the newest STREAMING UPDATE commit of the table
// whose sourceUrl is sourceURL, with its queryId, epochId and sourceEndOffset.
func findRecoverableBatch(ctx context.Context, t *table.Table, sourceURL string) (recoveredBatch, error) {
	exists, err := t.Exists(ctx)
	if err != nil {
		return recoveredBatch{}, err
	}
	if !exists {
		return recoveredBatch{}, fmt.Errorf("%w: table %s does not exist", ErrCannotRecover, t.URL())
	}
	hist, err := t.History(ctx, 0) // newest first
	if err != nil {
		return recoveredBatch{}, err
	}
	for _, c := range hist {
		if op := c.CommitInfo.Operation(); op != "STREAMING UPDATE" && op != "MERGE" { // MERGE: update mode
			continue
		}
		params := c.CommitInfo.StringMap("operationParameters")
		if params[paramSourceURL] != sourceURL {
			continue
		}
		end, epoch, qid := params[paramSourceEndOffset], params["epochId"], params["queryId"]
		batchID, perr := strconv.ParseInt(epoch, 10, 64)
		if end == "" || qid == "" || perr != nil || batchID < 0 {
			return recoveredBatch{}, fmt.Errorf("%w: version %d of %s is the newest commit of source %s but records no %s "+
				"(written by an older lakesink?): the end offsets of its batch are unknown",
				ErrCannotRecover, c.Version, t.URL(), sourceURL, paramSourceEndOffset)
		}
		ts, _ := c.CommitInfo.Timestamp()
		return recoveredBatch{Version: c.Version, QueryID: qid, BatchID: batchID, EndOffset: end, Timestamp: ts}, nil
	}
	return recoveredBatch{}, fmt.Errorf("%w: table %s has no STREAMING UPDATE commit with %s for source %s",
		ErrCannotRecover, t.URL(), paramSourceEndOffset, sourceURL)
}

// Files of the Kafka source's directory sources/0 (stream/kafka/source.go:
// initialFile and plannedFile, with KafkaSourceInitialOffsetWriter's
// encoding). A local stand-in until stream/kafka exports a way to seed them.
const (
	kafkaInitialFile = "0"
	kafkaPlannedFile = "lakesink-kafka-planned.json"
)

// recoverCheckpointFromTable rebuilds a lost checkpoint from the table: the
// metadata file with the query id of the newest commit of sourceURL,
// offsets/N with that commit's sourceEndOffset, commits/N, and the Kafka
// source's sources/0 files, so that the query continues at batch N+1 with the
// same query id (the table's txn {appId, version} still guards against
// duplicates). Only the Kafka source: its offsets are self-contained, while
// the file source's offset names a batch of its log of taken files
// (sources/0/N), which the table does not hold.
func recoverCheckpointFromTable(ctx context.Context, chk storage.Store, t *table.Table, kafkaIn bool, sourceURL string) (Recovered, error) {
	if !kafkaIn {
		return Recovered{}, fmt.Errorf("%w: recovery from the table supports the Kafka source only: "+
			"the file source's log of taken files is not in the table", ErrCannotRecover)
	}
	for _, err := range chk.List(ctx, "offsets/", "") {
		if err != nil {
			return Recovered{}, err
		}
		return Recovered{}, fmt.Errorf("%w: checkpoint %s already has offsets: it is not lost; run without recovering it",
			ErrCannotRecover, chk.URL())
	}
	rb, err := findRecoverableBatch(ctx, t, sourceURL)
	if err != nil {
		return Recovered{}, err
	}
	end, err := kafka.ParseOffsets(rb.EndOffset)
	if err != nil {
		return Recovered{}, fmt.Errorf("%w: version %d of %s: %s: %w", ErrCannotRecover, rb.Version, t.URL(), paramSourceEndOffset, err)
	}
	// The metadata file may exist from a run that was refused (no offsets):
	// nothing depends on its query id yet, so it is replaced.
	meta, err := json.Marshal(checkpoint.Metadata{ID: rb.QueryID, Source: sourceURL, SinkKind: "delta", Sink: t.URL()})
	if err != nil {
		return Recovered{}, err
	}
	if err := chk.Put(ctx, "metadata", meta); err != nil {
		return Recovered{}, fmt.Errorf("recover checkpoint %s: write metadata: %w", chk.URL(), err)
	}
	cp, err := checkpoint.Open(ctx, chk, checkpoint.Metadata{Source: sourceURL, SinkKind: "delta", Sink: t.URL()}, false)
	if err != nil {
		return Recovered{}, fmt.Errorf("recover checkpoint %s: %w", chk.URL(), err)
	}
	if cp.QueryID() != rb.QueryID {
		return Recovered{}, fmt.Errorf("%w: checkpoint %s: query id %s after writing %s (another process is using it?)",
			ErrCannotRecover, chk.URL(), cp.QueryID(), rb.QueryID)
	}
	// The source's own files first: the offsets and commit files make the
	// checkpoint look complete, so they are written last.
	src := cp.SourceDir(0)
	if err := src.Put(ctx, kafkaInitialFile, append([]byte("\x00v1\n"), end.String()...)); err != nil {
		return Recovered{}, fmt.Errorf("recover checkpoint %s: write sources/0/%s: %w", chk.URL(), kafkaInitialFile, err)
	}
	if err := src.Put(ctx, kafkaPlannedFile, []byte(end.String())); err != nil {
		return Recovered{}, fmt.Errorf("recover checkpoint %s: write sources/0/%s: %w", chk.URL(), kafkaPlannedFile, err)
	}
	seq := checkpoint.OffsetSeq{
		Metadata: &checkpoint.OffsetSeqMetadata{BatchTimestampMs: rb.Timestamp, Conf: map[string]string{}},
		Offsets:  []string{end.String()},
	}
	if err := cp.WriteOffsets(ctx, rb.BatchID, seq); err != nil {
		return Recovered{}, fmt.Errorf("recover checkpoint %s: %w", chk.URL(), err)
	}
	if err := cp.WriteCommit(ctx, rb.BatchID, checkpoint.CommitMetadata{}); err != nil {
		return Recovered{}, fmt.Errorf("recover checkpoint %s: %w", chk.URL(), err)
	}
	return Recovered{Checkpoint: chk.URL(), Table: t.URL(), QueryID: rb.QueryID, BatchID: rb.BatchID,
		TableVersion: rb.Version, EndOffset: rb.EndOffset}, nil
}
