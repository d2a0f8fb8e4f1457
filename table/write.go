package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"strconv"
	"time"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/txlog"
)

// Mode is how a write treats the table's existing files.
type Mode string

const (
	// Append adds the batch's files to the table.
	Append Mode = "append"
	// Overwrite removes every live file and adds the batch's files in ONE
	// commit (Delta's complete output mode / overwrite save mode): readers see
	// the old contents or the new, never an empty table in between.
	Overwrite Mode = "overwrite"
)

// WriteOptions configure one Write. The zero value appends without a txn.
type WriteOptions struct {
	// Mode: Append (default) or Overwrite.
	Mode Mode
	// AppID and Version make the write idempotent (Delta's txnAppId and
	// txnVersion writer options; PROTOCOL.md, "Transaction Identifiers"): the
	// commit carries txn{appId: AppID, version: Version}, and a write whose
	// Version is <= the table's txn version for AppID is skipped
	// (WriteResult.Skipped) without writing anything. AppID "" disables it.
	AppID   string
	Version int64
	// Txns are further txn actions of the same commit, for a writer that
	// tracks several streams in one commit (kafka-delta-ingest: one appId
	// per Kafka partition, version = the last offset written; PROTOCOL.md
	// "Transaction Identifiers" allows any number of txn actions per
	// commit, one per appId). Unlike AppID they never turn the write into a
	// skip: each names the table's version it continues from (Txn.Read),
	// and the write fails with a *TxnMismatchError, committing nothing, when
	// the table's version for that appId is another one, whether before the
	// write or after a concurrent commit. AppIDs must be distinct and
	// differ from AppID.
	Txns []Txn
	// PartitionColumns of a table that the write creates (ignored when the
	// table exists; its metaData decides).
	PartitionColumns []string
	// Properties of a table that the write creates.
	Properties map[string]string
	// MergeSchema adds the batch's new nullable columns to the table schema
	// (a metaData action in the same commit). Without it a new column is
	// ErrSchemaMismatch.
	MergeSchema bool
	// TargetFileSizeBytes rolls data files at this size. 0: the table
	// property delta.targetFileSize, else 128 MiB.
	TargetFileSizeBytes int64
	// RowGroupSizeBytes bounds a Parquet row group. 0: 128 MiB.
	RowGroupSizeBytes int64
	// Compression codec of data files: snappy (default), zstd, gzip, lz4, none.
	Compression string
	// Operation is commitInfo.operation. Default "WRITE".
	Operation string
	// OperationParameters are merged into commitInfo.operationParameters
	// (over the WRITE operation's own mode and partitionBy).
	OperationParameters txlog.OperationParameters
	// Now is the clock for modificationTime, deletionTimestamp and
	// txn.lastUpdated. Default time.Now.
	Now func() time.Time
}

// Validate lists every invalid field: an unknown Mode or Compression (the
// codecs of every lakesink writer: snappy, zstd, gzip, lz4, none), a
// negative size, a Txn without an appId. Errors wrap ErrInvalidOptions
// (ErrUnsupportedMode for the mode).
func (o WriteOptions) Validate() error {
	var errs []error
	if o.Mode != "" && o.Mode != Append && o.Mode != Overwrite {
		errs = append(errs, fmt.Errorf("%w: %q", ErrUnsupportedMode, o.Mode))
	}
	if err := parquetio.CheckCompression(o.Compression); err != nil {
		errs = append(errs, fmt.Errorf("%w: Compression: %w", ErrInvalidOptions, err))
	}
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: TargetFileSizeBytes %d < 0", ErrInvalidOptions, o.TargetFileSizeBytes))
	}
	if o.RowGroupSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: RowGroupSizeBytes %d < 0", ErrInvalidOptions, o.RowGroupSizeBytes))
	}
	return errors.Join(errs...)
}

// NoTxn is Txn.Read for an appId the table has no txn for.
const NoTxn int64 = -1

// Txn is one txn action of WriteOptions.Txns: txn{appId: AppID, version:
// Version}, committed only if the table's txn version for AppID is still
// Read (NoTxn: none).
type Txn struct {
	AppID   string
	Version int64
	Read    int64
}

// TxnMismatchError: the table's txn version for AppID is Have (NoTxn:
// none), not the Want a write's Txns continued from; another writer wrote
// that appId. errors.Is(err, ErrTxnMismatch) holds.
type TxnMismatchError struct {
	Table      string // the table's URL
	AppID      string
	Want, Have int64
	// Version of the snapshot that showed Have.
	Version int64
}

// Error implements error.
func (e *TxnMismatchError) Error() string {
	show := func(v int64) string {
		if v == NoTxn {
			return "none"
		}
		return strconv.FormatInt(v, 10)
	}
	return fmt.Sprintf("table %s: txn of appId %s is at version %s in table version %d, but the write continues from %s",
		e.Table, e.AppID, show(e.Have), e.Version, show(e.Want))
}

// Is makes errors.Is(err, ErrTxnMismatch) hold.
func (e *TxnMismatchError) Is(target error) bool { return target == ErrTxnMismatch }

// checkTxns returns a *TxnMismatchError for the first of txns whose Read is
// not snap's version for its appId.
func (t *Table) checkTxns(snap *txlog.Snapshot, txns []Txn) error {
	for _, x := range txns {
		have := NoTxn
		var version int64 = -1
		if snap != nil {
			version = snap.Version()
			if v, ok := snap.TxnVersion(x.AppID); ok {
				have = v
			}
		}
		if have != x.Read {
			return &TxnMismatchError{Table: t.URL(), AppID: x.AppID, Want: x.Read, Have: have, Version: version}
		}
	}
	return nil
}

// WriteResult reports what Write did.
type WriteResult struct {
	// Skipped: (AppID, Version) was already committed; nothing was written.
	Skipped bool
	// Version committed, or for a skipped write the version of the snapshot
	// that showed the txn.
	Version  int64
	NumFiles int   // data files written
	NumBytes int64 // their total size in bytes
	NumRows  int64 // rows written
	// NumRemovedFiles by an Overwrite.
	NumRemovedFiles int
}

// Write writes batch to the table in ONE commit: its data files first, then
// their add actions together with the txn action (when AppID is set) and, for
// Overwrite, a remove of every file live in the snapshot it read. A table that
// does not exist is created by the same commit (version 0), with the batch's
// schema. Conflicts are resolved by the log's optimistic retry
// (txlog.Transaction.Commit); a concurrent writer that committed the same
// (AppID, Version) first turns this write into a skip.
//
// Errors: *schema.RowError (a row that does not fit; nothing written),
// ErrSchemaMismatch, txlog.ErrUnsupportedFeature (a writer feature we do not
// honour), *txlog.ConflictError, txlog.ErrCommitStateUnknown. On error no
// commit names the files written; they are invisible and VACUUM removes them.
func (t *Table) Write(ctx context.Context, batch *schema.Batch, o WriteOptions) (WriteResult, error) {
	if o.Mode == "" {
		o.Mode = Append
	}
	if o.Mode != Append && o.Mode != Overwrite {
		return WriteResult{}, fmt.Errorf("%w: %q", ErrUnsupportedMode, o.Mode)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.Operation == "" {
		o.Operation = "WRITE"
	}
	if batch == nil {
		batch = &schema.Batch{}
	}
	if batch.Schema == nil && (len(batch.Rows) > 0 || batch.Chunks != nil) {
		return WriteResult{}, fmt.Errorf("%w: batch of %d rows without a schema", ErrInvalidOptions, len(batch.Rows))
	}
	seen := map[string]bool{o.AppID: o.AppID != ""}
	for _, x := range o.Txns {
		if x.AppID == "" || seen[x.AppID] || x.Version < 0 || x.Read < NoTxn {
			return WriteResult{}, fmt.Errorf("%w: Txns: appId %q version %d read %d (want distinct non-empty appIds, versions >= 0)",
				ErrInvalidOptions, x.AppID, x.Version, x.Read)
		}
		seen[x.AppID] = true
	}

	if err := t.CheckConditionalWrites(ctx); err != nil {
		return WriteResult{}, err
	}
	snap, err := t.writeSnapshot(ctx)
	if err != nil && !errors.Is(err, txlog.ErrTableNotFound) {
		return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
	}
	if err != nil {
		snap = nil
	}
	if snap != nil && o.AppID != "" {
		if v, ok := snap.TxnVersion(o.AppID); ok && o.Version <= v {
			return WriteResult{Skipped: true, Version: snap.Version()}, nil
		}
	}
	if err := t.checkTxns(snap, o.Txns); err != nil {
		return WriteResult{}, err
	}

	var (
		newTable  []txlog.Action
		sch       *schema.StructType
		partCols  []string
		props     txlog.TableProperties
		mdChanged *txlog.Metadata
	)
	if snap == nil && batch.Schema == nil {
		return WriteResult{}, fmt.Errorf("%w: table %s does not exist and an empty batch without a schema cannot create it", ErrInvalidOptions, t.URL())
	}
	if batch.Schema == nil {
		md := snap.Metadata()
		s, err := md.Schema()
		if err != nil {
			return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
		}
		batch = &schema.Batch{Schema: s}
	}
	if snap == nil {
		newTable, err = newTableActions(CreateOptions{Schema: batch.Schema, PartitionColumns: o.PartitionColumns, Properties: o.Properties}, o.Now())
		if err != nil {
			return WriteResult{}, fmt.Errorf("create %s: %w", t.URL(), err)
		}
		sch, partCols = batch.Schema, o.PartitionColumns
		props, _ = txlog.ParseTableProperties(o.Properties) // validated by newTableActions
	} else {
		if err := txlog.CheckWriteSupported(snap.Protocol(), snap.Metadata(), writeHonours...); err != nil {
			return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
		}
		md := snap.Metadata()
		if sch, err = md.Schema(); err != nil {
			return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
		}
		partCols, props = md.PartitionColumns, snap.Properties()
		merged, changed, err := fitSchema(sch, batch.Schema, o.MergeSchema)
		if err != nil {
			return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
		}
		if changed && props.ColumnMappingMode != txlog.ColumnMappingNone {
			return WriteResult{}, fmt.Errorf("write %s: %w: new columns for a table with column mapping (delta.columnMapping.mode=%s) need physical names and ids, which lakesink does not assign yet: add them with ALTER TABLE ... ADD COLUMNS first",
				t.URL(), ErrSchemaMismatch, props.ColumnMappingMode)
		}
		if changed {
			js, err := merged.MarshalJSON()
			if err != nil {
				return WriteResult{}, fmt.Errorf("write %s: encode merged schema: %w", t.URL(), err)
			}
			md.SchemaString = string(js)
			mdChanged = &md
			sch = merged
		}
		if o.Mode == Overwrite && props.AppendOnly {
			return WriteResult{}, fmt.Errorf("write %s: %w: overwrite of an append-only table (delta.appendOnly=true)", t.URL(), ErrUnsupportedMode)
		}
	}
	wopts, err := dataFileOptions(props, partCols, o.TargetFileSizeBytes, o.RowGroupSizeBytes, o.Compression)
	if err != nil {
		return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
	}
	// PROTOCOL.md "Writer Requirements for Column Mapping": data files of a
	// table in name or id mode name their columns by physical name, with
	// field ids; partitionValues and stats use physical names too.
	wopts.PhysicalNames = snap != nil && props.ColumnMappingMode != txlog.ColumnMappingNone
	constraints := o.Properties
	if snap != nil {
		constraints = snap.Metadata().Configuration
	}
	checks, err := bindConstraints(constraints, sch)
	if err != nil {
		return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
	}
	var idcols []*identityColumn
	if snap != nil {
		if idcols, err = bindIdentity(sch); err != nil {
			return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
		}
	}
	files, err := t.writeFiles(ctx, batch, sch, wopts, checks, idcols)
	if err != nil {
		return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
	}
	// PROTOCOL.md "Identity Columns": the high-water mark moves to the last
	// value generated, in the metaData action of the same commit.
	if withHWM, changed := withHighWaterMarks(sch, idcols); changed {
		js, err := withHWM.MarshalJSON()
		if err != nil {
			return WriteResult{}, fmt.Errorf("write %s: encode schema: %w", t.URL(), err)
		}
		md := snap.Metadata()
		if mdChanged != nil {
			md = *mdChanged
		}
		md.SchemaString = string(js)
		mdChanged = &md
	}

	now := o.Now().UnixMilli()
	tx := t.log.Begin(snap)
	tx.Honour(writeHonours...)
	tx.Add(newTable...)
	defer func() {
		// The snapshot our commit produced; after a failed commit the one
		// held stays (a committed state: the next write reads only the
		// commits after it, the winners included).
		t.hold(tx.PostCommitSnapshot())
	}()
	if mdChanged != nil {
		tx.Add(txlog.Action{MetaData: mdChanged})
	}
	res := WriteResult{NumFiles: len(files)}
	for _, f := range files {
		res.NumBytes += f.Size
		res.NumRows += f.NumRecords
		tx.Add(txlog.Action{Add: &txlog.Add{
			Path:             txlog.EncodePath(f.Path),
			PartitionValues:  nonNilMap(f.PartitionValues),
			Size:             f.Size,
			ModificationTime: f.ModificationTime.UnixMilli(),
			DataChange:       true,
			Stats:            f.Stats,
		}})
	}
	if o.Mode == Overwrite && snap != nil {
		tx.ReadWholeTable()
		for _, a := range snap.Files() {
			size := a.Size
			ext := true
			ts := now
			tx.Add(txlog.Action{Remove: &txlog.Remove{
				Path: a.Path, DeletionTimestamp: &ts, DataChange: true, ExtendedFileMetadata: &ext,
				PartitionValues: a.PartitionValues, Size: &size, Stats: a.Stats, Tags: a.Tags,
				DeletionVector: a.DeletionVector, BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
			}})
			res.NumRemovedFiles++
		}
	}
	if o.AppID != "" {
		tx.ReadTxn(o.AppID)
		lu := now
		tx.Add(txlog.Action{Txn: &txlog.Txn{AppID: o.AppID, Version: o.Version, LastUpdated: &lu}})
	}
	for _, x := range o.Txns {
		tx.ReadTxn(x.AppID) // a concurrent txn for it is a conflict, not a retry
		lu := now
		tx.Add(txlog.Action{Txn: &txlog.Txn{AppID: x.AppID, Version: x.Version, LastUpdated: &lu}})
	}

	params := txlog.OperationParameters{}
	if o.Operation == "WRITE" {
		params["mode"] = map[Mode]string{Append: "Append", Overwrite: "Overwrite"}[o.Mode]
		params["partitionBy"] = jsonString(partCols)
	}
	maps.Copy(params, o.OperationParameters)
	metrics := map[string]any{
		"numFiles":       strconv.Itoa(res.NumFiles),
		"numOutputRows":  strconv.FormatInt(res.NumRows, 10),
		"numOutputBytes": strconv.FormatInt(res.NumBytes, 10),
	}
	if o.Mode == Overwrite {
		metrics["numRemovedFiles"] = strconv.Itoa(res.NumRemovedFiles)
	}
	v, err := tx.Commit(ctx, o.Operation, params, metrics)
	if err != nil && snap == nil && errors.Is(err, txlog.ErrTableExists) {
		// Another writer created the table first: write again as an append
		// to the table it created (its schema and partitioning decide; our
		// files are left unreferenced for VACUUM).
		return t.Write(ctx, batch, o)
	}
	if err != nil {
		// A concurrent writer with the same appId may have committed this
		// version first: that is a skip, not a failure (two sinks with one
		// query id never write a batch twice).
		var ce *txlog.ConflictError
		if (len(o.Txns) > 0 || o.AppID != "") && errors.As(err, &ce) {
			// The winners are read again from snap (only the commits
			// after it, as the next write will).
			if s2, err2 := t.writeSnapshot(ctx); err2 == nil {
				if merr := t.checkTxns(s2, o.Txns); merr != nil {
					return WriteResult{}, merr
				}
				if tv, ok := s2.TxnVersion(o.AppID); o.AppID != "" && ok && o.Version <= tv {
					return WriteResult{Skipped: true, Version: s2.Version()}, nil
				}
			}
		}
		return WriteResult{}, fmt.Errorf("write %s: %w", t.URL(), err)
	}
	res.Version = v
	return res, nil
}

func nonNilMap(m map[string]*string) map[string]*string {
	if m == nil {
		return map[string]*string{}
	}
	return m
}

// jsonString renders v as a JSON string value, as Spark writes operation
// parameters such as partitionBy ("[\"origin\"]").
func jsonString(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	if string(b) == "null" {
		return "[]"
	}
	return string(b)
}

// dataFileOptions are the parquetio options of a write's data files from
// the table properties (delta.dataSkippingNumIndexedCols, and
// delta.targetFileSize unless targetBytes overrides it). An invalid value
// of either is the *txlog.PropertyError, as Delta's writers fail reading it
// (DeltaConfig.fromMetaData).
func dataFileOptions(props txlog.TableProperties, partCols []string, targetBytes, rowGroupBytes int64, compression string) (parquetio.WriteOptions, error) {
	keys := []string{txlog.PropDataSkippingNumIndexedCols}
	if targetBytes == 0 {
		keys = append(keys, txlog.PropTargetFileSize)
		targetBytes = props.TargetFileSizeBytes
	}
	if err := props.Err(keys...); err != nil {
		return parquetio.WriteOptions{}, err
	}
	return parquetio.WriteOptions{
		PartitionColumns:    partCols,
		TargetFileSizeBytes: targetBytes,
		RowGroupSizeBytes:   rowGroupBytes,
		Compression:         compression,
		NumIndexedCols:      props.DataSkippingNumIndexedCols,
	}, nil
}

// writeFiles writes the rows of batch, conformed to the table schema sch, as
// data files: a batch in memory through parquetio.WriteFiles (every row
// validated before anything is written), a streamed one (batch.Chunks) chunk
// by chunk through a parquetio.BatchWriter, whose files are deleted again if
// a later chunk fails (none of them is committed either way).
func (t *Table) writeFiles(ctx context.Context, batch *schema.Batch, sch *schema.StructType, wopts parquetio.WriteOptions,
	checks []constraint, idcols []*identityColumn) ([]parquetio.WrittenFile, error) {
	if batch.Chunks == nil {
		rows, err := conform(batch, sch)
		if err != nil {
			return nil, err
		}
		if rows.Rows, err = fillIdentity(idcols, rows.Rows, 0); err != nil {
			return nil, err
		}
		if err := checkRows(checks, rows.Rows, 0); err != nil {
			return nil, err
		}
		if len(rows.Rows) == 0 {
			return nil, nil
		}
		return parquetio.WriteFiles(ctx, t.store, rows, wopts)
	}
	bw, err := parquetio.NewBatchWriter(t.store, sch, wopts)
	if err != nil {
		return nil, err
	}
	if batch.Columns != nil && len(checks) == 0 && len(idcols) == 0 && sameFields(batch.Schema, sch) && bw.WritesColumns() {
		// The columnar pass-through: the source's typed columns go to the
		// column writers as they are (no record per row).
		for c, err := range batch.Columns {
			if err == nil {
				err = bw.WriteColumns(ctx, c)
			}
			if err != nil {
				bw.Abort(ctx)
				return nil, err
			}
		}
		return bw.Close(ctx)
	}
	base := 0
	for chunk, err := range batch.Chunks {
		if err == nil {
			var rows *schema.Batch
			if rows, err = conform(&schema.Batch{Schema: batch.Schema, Rows: chunk}, sch); err == nil {
				if rows.Rows, err = fillIdentity(idcols, rows.Rows, base); err == nil {
					if err = checkRows(checks, rows.Rows, base); err == nil {
						err = bw.Write(ctx, rows.Rows)
					}
				}
			} else if re := (*schema.RowError)(nil); errors.As(err, &re) {
				re.Row += base
			}
		}
		if err != nil {
			bw.Abort(ctx)
			return nil, err
		}
		base += len(chunk)
	}
	return bw.Close(ctx)
}
