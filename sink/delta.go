package sink

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// OutputMode is a streaming output mode (Spark's OutputMode).
type OutputMode string

const (
	// Append adds each batch's rows.
	Append OutputMode = "append"
	// Complete replaces the whole table with each batch's rows, in one commit.
	Complete OutputMode = "complete"
	// Update merges each batch into the table by Options.MergeKeys (Spark's
	// foreachBatch + MERGE INTO pattern; Delta's DeltaSink itself refuses
	// update mode): table.Merge with txn{QueryID, batchID} in the same commit.
	Update OutputMode = "update"
)

// Options configure the Delta sink.
type Options struct {
	// QueryID is the streaming query's id, stable across restarts (the
	// stream driver passes the id from its checkpoint's metadata file). It is
	// the txn appId. Required.
	QueryID string
	// OutputMode: Append (default), Complete, or Update (requires
	// MergeKeys).
	OutputMode OutputMode
	// MergeKeys, SequenceBy, DeleteWhen and UpdateColumns configure Update
	// mode (table.MergeOptions Keys, SequenceBy, DeleteWhen, UpdateColumns).
	// MergeKeys is required in Update mode and refused in the others.
	MergeKeys     []string
	SequenceBy    string
	DeleteWhen    string
	UpdateColumns []string
	// LastRowWins: several rows of one key in a batch are resolved by the
	// last (table.MergeOptions.LastRowWins), for change feeds in log order.
	LastRowWins bool
	// PartitionColumns of a table the sink creates (ignored for an existing
	// table, whose metaData decides).
	PartitionColumns []string
	// Properties of a table the sink creates.
	Properties map[string]string
	// TargetFileSizeBytes rolls data files at this size. Default (0): the
	// table property delta.targetFileSize, else 128 MiB.
	TargetFileSizeBytes int64
	// RowGroupSizeBytes bounds a Parquet row group. Default (0): 128 MiB.
	RowGroupSizeBytes int64
	// Compression of data files: snappy (default), zstd, gzip, lz4, none.
	Compression string
	// MergeSchema adds new nullable columns of a batch to the table schema.
	MergeSchema bool
	// OperationParameters are added to each commit's
	// commitInfo.operationParameters (e.g. the source URL of a query, so
	// that a new query over the same source can be recognised); strings
	// are written as they are, other values as JSON text.
	OperationParameters txlog.OperationParameters
	// BatchParameters, when set, returns extra commitInfo.operationParameters
	// for one batch (e.g. the source's end offsets of that batch, so that a
	// lost checkpoint can be rebuilt from the table). Its keys override
	// OperationParameters; the built-in outputMode, queryId and epochId win.
	BatchParameters func(batchID int64) txlog.OperationParameters
	// Now is the clock. Default time.Now.
	Now func() time.Time
}

// DefaultOptions returns the defaults documented on each field.
func DefaultOptions() Options {
	return Options{OutputMode: Append, Compression: "snappy", Now: time.Now}
}

// Validate lists every invalid field.
func (o Options) Validate() error {
	var errs []error
	if strings.TrimSpace(o.QueryID) == "" {
		errs = append(errs, fmt.Errorf("%w: QueryID is required (the txn appId)", ErrInvalidOptions))
	}
	switch o.OutputMode {
	case "", Append, Complete:
		if len(o.MergeKeys) > 0 || o.SequenceBy != "" || o.DeleteWhen != "" || len(o.UpdateColumns) > 0 || o.LastRowWins {
			errs = append(errs, fmt.Errorf("%w: merge keys, sequence, delete predicate and update columns apply to update mode only", ErrInvalidOptions))
		}
	case Update:
		if len(o.MergeKeys) == 0 {
			errs = append(errs, fmt.Errorf("%w: update mode needs MergeKeys (the key columns each batch is merged by)", ErrInvalidOptions))
		}
	default:
		errs = append(errs, fmt.Errorf("%w: %q", ErrUnsupportedOutputMode, o.OutputMode))
	}
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: TargetFileSizeBytes %d < 0", ErrInvalidOptions, o.TargetFileSizeBytes))
	}
	if o.RowGroupSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: RowGroupSizeBytes %d < 0", ErrInvalidOptions, o.RowGroupSizeBytes))
	}
	if err := (table.WriteOptions{Compression: o.Compression}).Validate(); err != nil {
		errs = append(errs, fmt.Errorf("%w: %w", ErrInvalidOptions, err))
	}
	return errors.Join(errs...)
}

// Delta is the Delta streaming sink. It implements Sink.
type Delta struct {
	table *table.Table
	owned bool
	opts  Options
}

var _ Sink = (*Delta)(nil)

// NewDelta opens (or, at the first batch, creates) the Delta table at url.
// Errors: ErrInvalidOptions, ErrUnsupportedOutputMode, storage errors.
func NewDelta(ctx context.Context, url string, opts Options) (*Delta, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	t, err := table.Open(ctx, url)
	if err != nil {
		return nil, err
	}
	d := NewDeltaTable(t, opts)
	d.owned = true
	return d, nil
}

// NewDeltaTable is NewDelta on an opened table; the caller keeps ownership of
// t. Options are validated at the first AddBatch.
func NewDeltaTable(t *table.Table, opts Options) *Delta {
	o := opts
	if o.OutputMode == "" {
		o.OutputMode = Append
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	o.PartitionColumns = slices.Clone(o.PartitionColumns)
	return &Delta{table: t, opts: o}
}

// Table is the sink's table.
func (d *Delta) Table() *table.Table { return d.table }

// Close releases the table if NewDelta opened it.
func (d *Delta) Close() error {
	if d.owned {
		return d.table.Close()
	}
	return nil
}

// AddBatch writes batch batchID (DeltaSink.addBatch): if the table's txn
// version for the query id is >= batchID the batch is skipped; otherwise its
// files are written and committed with add actions (dataChange=true, stats),
// txn{appId: QueryID, version: batchID}, and commitInfo operation "STREAMING
// UPDATE" with outputMode, queryId and epochId. Complete mode also removes
// every live file in the same commit. An empty batch commits only its txn.
//
// Errors are *BatchError naming the table and batch, wrapping the cause
// (*schema.RowError for a row that does not fit: nothing is committed).
func (d *Delta) AddBatch(ctx context.Context, batchID int64, batch *schema.Batch) (Result, error) {
	if err := d.opts.Validate(); err != nil {
		return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: err}
	}
	if batchID < 0 {
		return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: fmt.Errorf("%w: negative batch id", ErrInvalidOptions)}
	}
	mode := table.Append
	outputMode := "Append"
	if d.opts.OutputMode == Complete {
		mode, outputMode = table.Overwrite, "Complete"
	}
	params := txlog.OperationParameters{}
	maps.Copy(params, d.opts.OperationParameters)
	if d.opts.BatchParameters != nil {
		maps.Copy(params, d.opts.BatchParameters(batchID))
	}
	if d.opts.OutputMode == Update {
		outputMode = "Update"
	}
	params["outputMode"] = outputMode
	params["queryId"] = d.opts.QueryID
	params["epochId"] = strconv.FormatInt(batchID, 10)
	if batch == nil {
		batch = &schema.Batch{}
	}
	if d.opts.OutputMode == Update {
		// A merge needs every row at once.
		if err := batch.Collect(); err != nil {
			return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: err}
		}
		return d.mergeBatch(ctx, batchID, batch, params)
	}
	res, err := d.table.Write(ctx, batch, table.WriteOptions{
		Mode:                mode,
		AppID:               d.opts.QueryID,
		Version:             batchID,
		PartitionColumns:    d.opts.PartitionColumns,
		Properties:          d.opts.Properties,
		MergeSchema:         d.opts.MergeSchema,
		TargetFileSizeBytes: d.opts.TargetFileSizeBytes,
		RowGroupSizeBytes:   d.opts.RowGroupSizeBytes,
		Compression:         d.opts.Compression,
		Operation:           "STREAMING UPDATE",
		OperationParameters: params,
		Now:                 d.opts.Now,
	})
	if err != nil {
		return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: err}
	}
	return Result{BatchID: batchID, Skipped: res.Skipped, Version: res.Version, NumFiles: res.NumFiles, NumBytes: res.NumBytes, NumRows: res.NumRows}, nil
}

// mergeBatch is AddBatch in Update mode: one table.Merge whose commit
// (operation MERGE) holds txn{QueryID, batchID}.
func (d *Delta) mergeBatch(ctx context.Context, batchID int64, batch *schema.Batch, params txlog.OperationParameters) (Result, error) {
	if batch.Schema == nil {
		snap, err := d.table.Snapshot(ctx)
		if err != nil {
			return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: fmt.Errorf("%w: an empty batch without a schema cannot create the table", ErrInvalidOptions)}
		}
		s, err := snap.Schema()
		if err != nil {
			return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: err}
		}
		batch = &schema.Batch{Schema: s}
	}
	res, err := d.table.Merge(ctx, batch, table.MergeOptions{
		Keys:                d.opts.MergeKeys,
		SequenceBy:          d.opts.SequenceBy,
		DeleteWhen:          d.opts.DeleteWhen,
		UpdateColumns:       d.opts.UpdateColumns,
		LastRowWins:         d.opts.LastRowWins,
		AppID:               d.opts.QueryID,
		Version:             batchID,
		PartitionColumns:    d.opts.PartitionColumns,
		Properties:          d.opts.Properties,
		TargetFileSizeBytes: d.opts.TargetFileSizeBytes,
		RowGroupSizeBytes:   d.opts.RowGroupSizeBytes,
		Compression:         d.opts.Compression,
		OperationParameters: params,
		Now:                 d.opts.Now,
	})
	if err != nil {
		return Result{}, &BatchError{Table: d.table.URL(), BatchID: batchID, Err: err}
	}
	return Result{BatchID: batchID, Skipped: res.Skipped, Version: res.Version, NumFiles: res.NumFilesAdded, NumBytes: res.NumBytesAdded,
		NumRows: res.NumInserted + res.NumUpdated, NumInserted: res.NumInserted, NumUpdated: res.NumUpdated, NumDeleted: res.NumDeleted,
		NumRemovedFiles: res.NumFilesRemoved}, nil
}

// Txn is one txn action of AddTxnBatch: txn{appId: AppID, version:
// Version}, committed only while the table's version for AppID is still
// Read (NoTxn: none).
type Txn = table.Txn

// NoTxn is Txn.Read for an appId the table has no txn for.
const NoTxn = table.NoTxn

// ErrTxnMismatch: AddTxnBatch continued from a txn version the table no
// longer has; another writer wrote that appId (a *table.TxnMismatchError
// names it).
var ErrTxnMismatch = table.ErrTxnMismatch

// TxnVersions returns the txn version of every appId with the given prefix
// in the table's latest snapshot, and that snapshot's version; a table that
// does not exist yet has none (version -1).
func (d *Delta) TxnVersions(ctx context.Context, prefix string) (map[string]int64, int64, error) {
	exists, err := d.table.Exists(ctx)
	if err != nil || !exists {
		return map[string]int64{}, -1, err
	}
	snap, err := d.table.Snapshot(ctx)
	if err != nil {
		return nil, -1, err
	}
	out := map[string]int64{}
	for app, v := range snap.Txns() {
		if strings.HasPrefix(app, prefix) {
			out[app] = v
		}
	}
	return out, snap.Version(), nil
}

// AddTxnBatch appends batch in ONE commit with one txn action per entry of
// txns (kafka-delta-ingest's one txn per Kafka partition, whose version is
// the last offset written), each checked against the version it continues
// from (table.WriteOptions.Txns). Unlike AddBatch it never skips: a stale
// Read fails with ErrTxnMismatch and commits nothing, so the caller drops
// the records of that appId and resumes after the table's version. The
// commit is a "STREAMING UPDATE" with outputMode Append, Options.QueryID as
// queryId, and OperationParameters plus params. Options.OutputMode must be
// Append. Errors are *BatchError with BatchID -1.
func (d *Delta) AddTxnBatch(ctx context.Context, batch *schema.Batch, txns []Txn, params txlog.OperationParameters) (Result, error) {
	fail := func(err error) (Result, error) {
		return Result{}, &BatchError{Table: d.table.URL(), BatchID: -1, Err: err}
	}
	if err := d.opts.Validate(); err != nil {
		return fail(err)
	}
	if d.opts.OutputMode != Append {
		return fail(fmt.Errorf("%w: AddTxnBatch appends; output mode %q", ErrUnsupportedOutputMode, d.opts.OutputMode))
	}
	p := txlog.OperationParameters{}
	maps.Copy(p, d.opts.OperationParameters)
	maps.Copy(p, params)
	p["outputMode"] = "Append"
	p["queryId"] = d.opts.QueryID
	if batch == nil {
		batch = &schema.Batch{}
	}
	res, err := d.table.Write(ctx, batch, table.WriteOptions{
		Txns:                txns,
		PartitionColumns:    d.opts.PartitionColumns,
		Properties:          d.opts.Properties,
		MergeSchema:         d.opts.MergeSchema,
		TargetFileSizeBytes: d.opts.TargetFileSizeBytes,
		RowGroupSizeBytes:   d.opts.RowGroupSizeBytes,
		Compression:         d.opts.Compression,
		Operation:           "STREAMING UPDATE",
		OperationParameters: p,
		Now:                 d.opts.Now,
	})
	if err != nil {
		return fail(err)
	}
	return Result{BatchID: -1, Version: res.Version, NumFiles: res.NumFiles, NumBytes: res.NumBytes, NumRows: res.NumRows}, nil
}
