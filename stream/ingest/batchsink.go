package ingest

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// lazySink builds the sink once the query id is known (it lives in the
// checkpoint's metadata file, opened by the driver): build runs from
// stream.Options.CheckFresh, before the first batch.
type lazySink struct {
	build            func(ctx context.Context, queryID string, fresh bool) (sink.Sink, error)
	afterCommitDelay time.Duration
	rejects          *rejects // nil without Options.BadRecordsTable
	chk              storage.Store
	transform        func(*schema.Batch) (*schema.Batch, error) // CDCFormat: change events to change rows

	mu      sync.Mutex
	sink    sink.Sink
	queryID string
}

// checkFresh is stream.Options.CheckFresh.
func (l *lazySink) checkFresh(ctx context.Context, queryID string, fresh bool) error {
	s, err := l.build(ctx, queryID, fresh)
	if err != nil {
		return err
	}
	l.mu.Lock()
	l.sink, l.queryID = s, queryID
	l.mu.Unlock()
	return nil
}

// AddBatch writes the batch's rejects (if any), then the batch.
func (l *lazySink) AddBatch(ctx context.Context, batchID int64, b *schema.Batch) (sink.Result, error) {
	l.mu.Lock()
	s := l.sink
	l.mu.Unlock()
	if s == nil {
		return sink.Result{}, fmt.Errorf("sink used before the checkpoint was opened")
	}
	if l.rejects != nil {
		// The batch's rejects first, in their own table with their own txn:
		// a replayed batch (same files, same rejects) writes them once.
		if err := l.rejects.flush(ctx, l.queryID, batchID); err != nil {
			return sink.Result{}, err
		}
	}
	if l.transform != nil {
		var err error
		if b, err = l.transform(b); err != nil {
			return sink.Result{}, fmt.Errorf("batch %d: %w", batchID, err)
		}
	}
	res, err := s.AddBatch(ctx, batchID, b)
	if err == nil && l.afterCommitDelay > 0 {
		// Test hook (Options.AfterCommitDelay): widens the window between
		// the sink's commit and commits/N.
		t := time.NewTimer(l.afterCommitDelay)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
		}
	}
	return res, err
}

// batchParameters is sink.Options.BatchParameters: the batch's source end
// offset from the checkpoint, recorded in its commit.
func (l *lazySink) batchParameters(ctx context.Context) func(batchID int64) txlog.OperationParameters {
	return func(batchID int64) txlog.OperationParameters {
		if end := batchEndOffset(ctx, l.chk, batchID); end != "" {
			return txlog.OperationParameters{paramSourceEndOffset: end}
		}
		return nil
	}
}

// rejectsSchema is the schema of the bad-records table.
var rejectsSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "batchId", Type: schema.TypeLong, Nullable: false},
	{Name: "file", Type: schema.TypeString, Nullable: true},
	{Name: "line", Type: schema.TypeLong, Nullable: true},
	{Name: "field", Type: schema.TypeString, Nullable: true},
	{Name: "reason", Type: schema.TypeString, Nullable: true},
	{Name: "record", Type: schema.TypeString, Nullable: true},
}}

// rejects collects the records of the batch being read that do not fit the
// schema and writes them to a quarantine Delta table, committed with its own
// txn {appId: <queryId>-bad-records, version: batchId} (the rejects-table
// pattern): a batch replayed after a crash writes its rejects once.
type rejects struct {
	table *table.Table
	mu    sync.Mutex
	rows  [][]any
}

// add is source.Options.OnBadRecord.
func (r *rejects) add(b source.BadRecord) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, []any{nil, b.File, int64(b.Line), b.Field, b.Reason, b.Raw})
	return nil
}

// flush writes the collected rejects as batch batchID.
func (r *rejects) flush(ctx context.Context, queryID string, batchID int64) error {
	r.mu.Lock()
	rows := r.rows
	r.rows = nil
	r.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	for _, row := range rows {
		row[0] = batchID
	}
	_, err := r.table.Write(ctx, &schema.Batch{Schema: rejectsSchema, Rows: rows}, table.WriteOptions{
		AppID: queryID + "-bad-records", Version: batchID, Operation: "STREAMING UPDATE",
		OperationParameters: txlog.OperationParameters{"outputMode": "Append", "queryId": queryID, "epochId": fmt.Sprint(batchID), "badRecords": "true"},
	})
	if err != nil {
		return fmt.Errorf("write %d rejected records of batch %d to %s: %w", len(rows), batchID, r.table.URL(), err)
	}
	return nil
}
