package table

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/txlog"
)

// MergeOptions configure Table.Merge: an upsert of a batch of changes keyed
// by Keys, Spark's
//
//	MERGE INTO t USING s ON t.k = s.k [AND ...]
//	WHEN MATCHED AND <DeleteWhen> [AND s.seq > t.seq] THEN DELETE
//	WHEN MATCHED [AND s.seq > t.seq] THEN UPDATE SET <UpdateColumns>
//	WHEN NOT MATCHED AND NOT <DeleteWhen> THEN INSERT *
//
// (delta-io/delta MergeIntoCommand) with the batch deduplicated by key first.
type MergeOptions struct {
	// Keys are the merge key columns: top-level, primitive columns of both
	// the table and the batch. Required. A source row with a null in a key
	// column matches no table row, as in Spark, where t.k = s.k is null
	// for it and the row goes to the NOT MATCHED clause: it is inserted
	// (unless DeleteWhen holds for it: then it does nothing), and table
	// rows with a null key are never changed. Such rows are not
	// deduplicated (null equals nothing, another null included), so two of
	// them in one batch are both inserted; Delta's rule against several
	// source rows for one key concerns rows that match a target row
	// (DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE), which
	// these never do. Inserting one into a NOT NULL key column of the table
	// fails with ErrNullKey, as Spark's insert fails
	// (DELTA_NOT_NULL_CONSTRAINT_VIOLATED).
	Keys []string
	// SequenceBy is an optional column of the table and the batch (a number,
	// date, timestamp or string) ordering the changes of one key: within the
	// batch the row with the highest sequence wins (later rows win ties), and
	// a change is applied to a table row only if its sequence is greater
	// than the row's (a null sequence is lower than any other), so a late,
	// older change never overwrites a newer row. Without it, two rows with
	// the same key in one batch are refused with ErrDuplicateKey, as Delta's
	// MERGE refuses several source rows matching one target row
	// (DELTA_MULTIPLE_SOURCE_ROW_MATCHING_TARGET_ROW_IN_MERGE).
	SequenceBy string
	// LastRowWins resolves several rows with one key in a batch without a
	// sequence column (or with tied sequences) by taking the last, instead
	// of refusing them: for a batch in log order, such as a Debezium topic
	// partition's or a file's change events.
	LastRowWins bool
	// DeleteWhen is an optional predicate over the batch's columns in the
	// syntax of package expr (e.g. "op = 'd'"): a winning change for which
	// it is true deletes the key's rows; for a key not in the table it does
	// nothing. Columns only the batch has (such as op) are not written to
	// the table.
	DeleteWhen string
	// UpdateColumns are the columns a matched change sets (Delta's UPDATE SET
	// c = s.c); the others keep the table row's values. Default: every table
	// column the batch has (UPDATE SET *). Inserts always take every column
	// the batch has, nulls for the others.
	UpdateColumns []string
	// AppID and Version make the merge idempotent (Delta's txnAppId and
	// txnVersion; PROTOCOL.md, "Transaction Identifiers"): the commit holds
	// txn{AppID, Version}, and a merge whose Version is at or below the
	// table's txn version for AppID is skipped.
	AppID   string
	Version int64
	// PartitionColumns and Properties are used only when the merge creates
	// the table (its schema is then the batch's).
	PartitionColumns []string
	Properties       map[string]string
	// TargetFileSizeBytes, RowGroupSizeBytes and Compression are as in
	// WriteOptions (defaults: delta.targetFileSize or 128 MiB; the Parquet
	// writer's row group size, 128 MiB; snappy).
	TargetFileSizeBytes int64
	RowGroupSizeBytes   int64
	Compression         string
	// MaxAttempts bounds how many times the merge is planned and written:
	// after a logical conflict with a concurrent commit (a file it read or
	// rewrote was removed, e.g. by OPTIMIZE; a file that may hold its keys
	// was added) it re-plans from the winning snapshot. Default 5.
	MaxAttempts int
	// OperationParameters are added to commitInfo.operationParameters (e.g.
	// a streaming query's queryId, epochId and source offsets); Delta's own
	// MERGE parameters take precedence.
	OperationParameters txlog.OperationParameters
	// Now is the clock (default time.Now).
	Now func() time.Time

	beforeCommit func() // tests: runs once, before the first commit attempt
}

// MergeResult reports one Merge. Row counts follow Delta's MERGE
// operationMetrics.
type MergeResult struct {
	// Skipped: the (AppID, Version) was already committed; nothing written.
	Skipped bool `json:"skipped"`
	// Version is the committed version (the table's version when skipped
	// or when there was nothing to commit).
	Version int64 `json:"version"`
	// NumSourceRows: rows in the batch; NumSourceChanges: after
	// deduplication by key.
	NumSourceRows    int64 `json:"numSourceRows"`
	NumSourceChanges int64 `json:"numSourceChanges"`
	NumInserted      int64 `json:"numInserted"` // changes that inserted a row (no row had the key)
	NumUpdated       int64 `json:"numUpdated"`  // changes that replaced a row with the key
	NumDeleted       int64 `json:"numDeleted"`  // changes that deleted the row with the key
	// NumCopied: unchanged rows rewritten with the files they were in.
	NumCopied int64 `json:"numCopied"`
	// NumStale: changes not applied because the table row's sequence was
	// equal or newer.
	NumStale int64 `json:"numStale"`
	// NumFilesScanned: files whose key columns were read (their partition
	// values and key statistics could not rule them out).
	NumFilesScanned int   `json:"numFilesScanned"`
	NumFilesAdded   int   `json:"numFilesAdded"`   // data files the commit added
	NumFilesRemoved int   `json:"numFilesRemoved"` // data files the commit removed
	NumBytesAdded   int64 `json:"numBytesAdded"`   // total size of the added files in bytes
	NumBytesRemoved int64 `json:"numBytesRemoved"` // total size of the removed files in bytes
	// NumDeletionVectorsAdded, ...Updated and ...Removed count deletion
	// vectors written for files without one, written to replace one, and
	// dropped with a file whose every row is deleted (deletion-vector mode).
	NumDeletionVectorsAdded   int `json:"numDeletionVectorsAdded"`
	NumDeletionVectorsUpdated int `json:"numDeletionVectorsUpdated"` // see NumDeletionVectorsAdded
	NumDeletionVectorsRemoved int `json:"numDeletionVectorsRemoved"` // see NumDeletionVectorsAdded
	// NumFilesInTable: live files of the snapshot the merge read.
	NumFilesInTable int `json:"numFilesInTable"`
	// Attempts: how many times the merge was planned (1 without conflicts).
	Attempts int `json:"attempts"`
}

// DefaultMergeAttempts is MergeOptions.MaxAttempts' default.
const DefaultMergeAttempts = 5

// Merge applies batch to the table as one MERGE commit (see MergeOptions
// for the semantics): every remove (dataChange=true) of a rewritten file,
// every add and the txn in ONE commit, with commitInfo.operation "MERGE" and
// Delta's operationParameters (predicate, matchedPredicates,
// notMatchedPredicates, notMatchedBySourcePredicates) and operationMetrics
// (numSourceRows, numTargetRowsInserted, numTargetRowsUpdated,
// numTargetRowsDeleted, numTargetRowsCopied, numOutputRows,
// numTargetFilesAdded, numTargetFilesRemoved, ...).
//
// Copy-on-write: files are pruned by the key columns' partition values and
// min/max statistics (PROTOCOL.md, "Per-file Statistics"); of the files
// left, only the key and sequence columns are read; a file with a row the
// batch changes is rewritten without it, and changed and inserted rows go to
// new files with stats as for appends. Deletion vectors: on a table with
// delta.enableDeletionVectors=true and the deletionVectors feature, a file
// with a changed row is not rewritten: the row is marked deleted in a new
// deletion vector of the file. The property without the feature in the
// protocol gives copy-on-write and no protocol change, as in Delta (see
// deletionVectorsOn); Merge never changes the protocol or the metadata of
// an existing table.
//
// Isolation: the commit records the files it read and a read predicate
// ("may hold one of the batch's keys") and runs at Serializable, so a
// concurrent commit that removes a file it read (ConcurrentDeleteRead; a
// concurrent OPTIMIZE included) or adds a file that may hold one of its keys,
// blind appends included (ConcurrentAppend), conflicts; the merge then
// re-plans on the new snapshot, at most MaxAttempts times. This is Delta's
// ConflictChecker with Serializable rather than Delta's default
// WriteSerializable (DeltaConfigs.ISOLATION_LEVEL), which lets a concurrent
// blind append of one of the merged keys through and leaves the key twice.
//
// Errors: ErrDuplicateKey, ErrNullKey, ErrInvalidOptions (an unknown or
// nested key column, a bad DeleteWhen), ErrSchemaMismatch, ErrUnsupportedMode
// (files with deletion vectors, an append-only table), txlog errors; a
// conflict left after MaxAttempts matches txlog.ErrConcurrentModification.
func (t *Table) Merge(ctx context.Context, batch *schema.Batch, o MergeOptions) (MergeResult, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = DefaultMergeAttempts
	}
	if len(o.Keys) == 0 {
		return MergeResult{}, fmt.Errorf("%w: merge into %s: no key columns", ErrInvalidOptions, t.URL())
	}
	if batch == nil || batch.Schema == nil {
		return MergeResult{}, fmt.Errorf("%w: merge into %s: a batch with a schema is required", ErrInvalidOptions, t.URL())
	}
	// A batch with two columns of one name (case-insensitively, as Delta
	// resolves names) would let the delete predicate read one and the row
	// keep the other: refused, like any schema a write refuses.
	if err := schema.ValidateForWrite(batch.Schema); err != nil {
		return MergeResult{}, fmt.Errorf("merge into %s: batch schema: %w", t.URL(), err)
	}
	if err := t.CheckConditionalWrites(ctx); err != nil {
		return MergeResult{}, err
	}
	var lastErr error
	for attempt := 1; attempt <= o.MaxAttempts; attempt++ {
		snap, err := t.log.Snapshot(ctx)
		var newTable []txlog.Action
		if errors.Is(err, txlog.ErrTableNotFound) {
			// Version 0 is the merge's own commit: protocol and metaData
			// with the batch's adds, so a batch the merge refuses leaves
			// no table behind.
			snap = nil
			if newTable, err = newTableActions(mergeCreateOptions(batch, o), o.Now()); err != nil {
				return MergeResult{}, fmt.Errorf("merge into %s: create the table: %w", t.URL(), err)
			}
		}
		if err != nil {
			return MergeResult{}, fmt.Errorf("merge into %s: %w", t.URL(), err)
		}
		res, err := t.mergeOnce(ctx, snap, newTable, batch, o)
		o.beforeCommit = nil
		res.Attempts = attempt
		var ce *txlog.ConflictError
		if err == nil || !(errors.As(err, &ce) || newTable != nil && errors.Is(err, txlog.ErrTableExists)) {
			return res, err
		}
		if o.AppID != "" {
			if s2, err2 := t.log.Snapshot(ctx); err2 == nil {
				if tv, ok := s2.TxnVersion(o.AppID); ok && o.Version <= tv {
					return MergeResult{Skipped: true, Version: s2.Version(), Attempts: attempt}, nil
				}
			}
		}
		lastErr = err
	}
	return MergeResult{Attempts: o.MaxAttempts}, fmt.Errorf("merge into %s after %d attempts: %w", t.URL(), o.MaxAttempts, lastErr)
}

// mergeCreateOptions are those of a table a merge creates: the batch's
// schema less the columns only DeleteWhen reads (they describe the change,
// like an op column, not the row), unless they are keys, the sequence or
// partition columns. A concurrent creator winning is fine: the merge then
// goes into its table.
func mergeCreateOptions(batch *schema.Batch, o MergeOptions) CreateOptions {
	sch := batch.Schema
	if o.DeleteWhen != "" {
		if e, err := expr.Parse(o.DeleteWhen); err == nil {
			drop := map[string]bool{}
			for _, c := range expr.Columns(e) {
				if len(c.Path) == 1 {
					drop[strings.ToLower(c.Path[0])] = true
				}
			}
			for _, k := range append(append(slices.Clone(o.Keys), o.SequenceBy), o.PartitionColumns...) {
				delete(drop, strings.ToLower(k))
			}
			sch = &schema.StructType{}
			for _, f := range batch.Schema.Fields {
				if !drop[strings.ToLower(f.Name)] {
					sch.Fields = append(sch.Fields, f)
				}
			}
		}
	}
	return CreateOptions{Schema: sch, PartitionColumns: o.PartitionColumns, Properties: o.Properties}
}

// mergePlan is one merge's view of the table and the batch.
type mergePlan struct {
	schema   *schema.StructType
	partCols []string
	isPart   []bool // per table column
	keyIdx   []int  // table column index of each key
	seqIdx   int    // table column index of SequenceBy, -1 without
	updIdx   []int  // table columns an update sets
	srcIdx   []int  // per table column: batch column index, -1 when absent
	changes  map[string]*change
	order    []string  // keys in first-arrival order
	nullKey  []*change // rows with a null key: each unmatched, never deduplicated
	keyVals  [][]any   // per key column: the changes' distinct values, sorted
	keySets  []map[string]bool
	pred     *expr.Predicate
}

// change is the winning source row of one key.
type change struct {
	row    []any // table layout (srcIdx applied)
	seq    any
	delete bool
	srcRow int
	hit    bool // matched a table row
}

// MergeOptionError is a MergeOptions field that the table or the batch
// cannot have: a key or sequence column missing from either or of a nested
// type, an update column missing from either, or a DeleteWhen predicate
// that does not parse or bind to the batch's schema (Err, an expr error).
// Errors carrying it match ErrInvalidOptions.
type MergeOptionError struct {
	Option  string   // the field: "Keys", "SequenceBy", "UpdateColumns" or "DeleteWhen"
	Column  string   // the column named (DeleteWhen: the predicate)
	Problem string   // what is wrong with Column: MergeColumnNotInTable, MergeColumnNotInBatch, "has the nested type ..." or "is not in both the table and the batch"
	Columns []string // the table's columns, in order
	Err     error    // DeleteWhen: the parse or bind error
}

// MergeOptionError.Problem of a column the table, or the batch, lacks.
const (
	// MergeColumnNotInTable: the column is not in the table's schema.
	MergeColumnNotInTable = "is not in the table"
	// MergeColumnNotInBatch: the column is in the table but not in the
	// batch merged.
	MergeColumnNotInBatch = "is not in the batch"
)

// Error implements error: `merge key column "k" is not in the table`,
// `sequence column ...`, `update column ...` or "delete predicate: <Err>".
func (e *MergeOptionError) Error() string {
	role := map[string]string{"Keys": "merge key", "SequenceBy": "sequence", "UpdateColumns": "update"}[e.Option]
	if e.Option == "DeleteWhen" {
		return fmt.Sprintf("delete predicate: %v", e.Err)
	}
	return fmt.Sprintf("%s column %q %s", role, e.Column, e.Problem)
}

// Unwrap returns Err (DeleteWhen), for errors.Is and errors.As.
func (e *MergeOptionError) Unwrap() error { return e.Err }

// ErrDuplicateKey: a merge batch without a sequence column holds several
// rows with the same key (the message names the key and the rows).
var ErrDuplicateKey = errors.New("several source rows with the same merge key")

// ErrNullKey: a merge batch row with a null key column would be inserted
// into a table whose key column is NOT NULL.
var ErrNullKey = errors.New("null merge key")

func (t *Table) planMerge(proto txlog.Protocol, md txlog.Metadata, props txlog.TableProperties, batch *schema.Batch, o MergeOptions) (*mergePlan, error) {
	if err := txlog.CheckWriteSupported(proto, md); err != nil {
		return nil, err
	}
	if err := props.Err(txlog.PropAppendOnly); err != nil {
		return nil, err
	}
	if props.AppendOnly {
		return nil, fmt.Errorf("%w: merge into an append-only table (delta.appendOnly=true)", ErrUnsupportedMode)
	}
	sch, err := md.Schema()
	if err != nil {
		return nil, err
	}
	p := &mergePlan{schema: sch, partCols: md.PartitionColumns, seqIdx: -1, changes: map[string]*change{}}
	p.isPart = make([]bool, len(sch.Fields))
	for i, f := range sch.Fields {
		p.isPart[i] = slices.ContainsFunc(p.partCols, func(c string) bool { return strings.EqualFold(c, f.Name) })
	}
	p.srcIdx = make([]int, len(sch.Fields))
	for i, f := range sch.Fields {
		p.srcIdx[i] = batch.Schema.FieldIndex(f.Name)
		if j := p.srcIdx[i]; j >= 0 && !sameType(batch.Schema.Fields[j].Type, f.Type) {
			return nil, fmt.Errorf("%w: column %q is %s in the batch and %s in the table", ErrSchemaMismatch, f.Name, batch.Schema.Fields[j].Type.TypeName(), f.Type.TypeName())
		}
	}
	bad := func(option, name, problem string, err error) error {
		e := &MergeOptionError{Option: option, Column: name, Problem: problem, Err: err}
		for _, f := range sch.Fields {
			e.Columns = append(e.Columns, f.Name)
		}
		return fmt.Errorf("%w: %w", ErrInvalidOptions, e)
	}
	col := func(option, name string) (int, error) {
		i := sch.FieldIndex(name)
		if i < 0 {
			return -1, bad(option, name, MergeColumnNotInTable, nil)
		}
		if p.srcIdx[i] < 0 {
			return -1, bad(option, name, MergeColumnNotInBatch, nil)
		}
		switch sch.Fields[i].Type.(type) {
		case schema.PrimitiveType, schema.DecimalType:
		default:
			return -1, bad(option, name, "has the nested type "+sch.Fields[i].Type.TypeName(), nil)
		}
		return i, nil
	}
	for _, k := range o.Keys {
		i, err := col("Keys", k)
		if err != nil {
			return nil, err
		}
		if slices.Contains(p.keyIdx, i) {
			return nil, fmt.Errorf("%w: merge key %q given twice", ErrInvalidOptions, k)
		}
		p.keyIdx = append(p.keyIdx, i)
	}
	if o.SequenceBy != "" {
		if p.seqIdx, err = col("SequenceBy", o.SequenceBy); err != nil {
			return nil, err
		}
	}
	if len(o.UpdateColumns) == 0 {
		for i := range sch.Fields {
			if p.srcIdx[i] >= 0 {
				p.updIdx = append(p.updIdx, i)
			}
		}
	} else {
		for _, c := range o.UpdateColumns {
			i := sch.FieldIndex(c)
			if i < 0 || p.srcIdx[i] < 0 {
				return nil, bad("UpdateColumns", c, "is not in both the table and the batch", nil)
			}
			p.updIdx = append(p.updIdx, i)
		}
	}
	if o.DeleteWhen != "" {
		if p.pred, err = expr.ParseAndBind(o.DeleteWhen, batch.Schema); err != nil {
			return nil, bad("DeleteWhen", o.DeleteWhen, "", err)
		}
	}
	// Deduplicate by key: the highest sequence wins, later rows win ties.
	for r, src := range batch.Rows {
		if len(src) != len(batch.Schema.Fields) {
			return nil, &schema.RowError{Row: r, Err: fmt.Errorf("%w: row has %d values for %d columns", schema.ErrRowMismatch, len(src), len(batch.Schema.Fields))}
		}
		row := make([]any, len(sch.Fields))
		for i, j := range p.srcIdx {
			if j >= 0 {
				row[i] = src[j]
			}
		}
		c := &change{row: row, srcRow: r}
		if p.seqIdx >= 0 {
			c.seq = row[p.seqIdx]
		}
		if p.pred != nil {
			c.delete = p.pred.EvalRow(src) == expr.True
		}
		if nk := p.nullKeyColumn(row); nk >= 0 {
			// Not matched: inserted unless a delete (WHEN NOT MATCHED AND
			// NOT <DeleteWhen> THEN INSERT), whatever other rows hold.
			if !c.delete && !sch.Fields[nk].Nullable {
				return nil, fmt.Errorf("%w: batch row %d: key column %q is null and NOT NULL in the table", ErrNullKey, r, sch.Fields[nk].Name)
			}
			p.nullKey = append(p.nullKey, c)
			continue
		}
		k := p.key(row)
		prev, dup := p.changes[k]
		switch {
		case !dup:
			p.order = append(p.order, k)
			p.changes[k] = c
		case p.seqIdx < 0 && o.LastRowWins:
			p.changes[k] = c
		case p.seqIdx < 0:
			return nil, fmt.Errorf("%w: key %s is in batch rows %d and %d (without a sequence column each key may change once per batch)",
				ErrDuplicateKey, p.keyText(row), prev.srcRow, r)
		case seqCompare(c.seq, prev.seq) >= 0:
			p.changes[k] = c
		}
	}
	p.keyVals = make([][]any, len(p.keyIdx))
	p.keySets = make([]map[string]bool, len(p.keyIdx))
	for n, i := range p.keyIdx {
		p.keySets[n] = map[string]bool{}
		for _, k := range p.order {
			v := p.changes[k].row[i]
			s := encodeValue(v)
			if !p.keySets[n][s] {
				p.keySets[n][s] = true
				p.keyVals[n] = append(p.keyVals[n], v)
			}
		}
		slices.SortFunc(p.keyVals[n], func(a, b any) int { c, _ := expr.CompareValues(a, b); return c })
	}
	return p, nil
}

func sameType(a, b schema.DataType) bool { return schema.TypesEqual(a, b) }

// seqCompare orders sequence values, null lowest.
func seqCompare(a, b any) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		return -1
	case b == nil:
		return 1
	}
	c, _ := expr.CompareValues(a, b)
	return c
}

// nullKeyColumn is the table index of a key column that is null in row, or
// -1 when every key column has a value.
func (p *mergePlan) nullKeyColumn(row []any) int {
	for _, i := range p.keyIdx {
		if row[i] == nil {
			return i
		}
	}
	return -1
}

// key encodes the key columns of a table-layout row.
func (p *mergePlan) key(row []any) string {
	var b strings.Builder
	for _, i := range p.keyIdx {
		s := encodeValue(row[i])
		b.WriteString(strconv.Itoa(len(s)))
		b.WriteByte(':')
		b.WriteString(s)
	}
	return b.String()
}

// keyText renders a key for messages: id=42, region='eu'.
func (p *mergePlan) keyText(row []any) string {
	parts := make([]string, len(p.keyIdx))
	for n, i := range p.keyIdx {
		v := row[i]
		s := fmt.Sprint(v)
		switch x := v.(type) {
		case string:
			s = "'" + strings.ReplaceAll(x, "'", "''") + "'"
		case time.Time:
			s = x.UTC().Format(time.RFC3339Nano)
		case schema.Decimal:
			s = decimalText(x)
		}
		parts[n] = p.schema.Fields[i].Name + "=" + s
	}
	return strings.Join(parts, ", ")
}

// encodeValue is a canonical text of a key value: equal values of one
// column type encode equally, whatever the source (batch or file).
func encodeValue(v any) string {
	switch x := v.(type) {
	case nil:
		return "n"
	case string:
		return "s" + x
	case []byte:
		return "b" + string(x)
	case bool:
		return "o" + strconv.FormatBool(x)
	case int64:
		return "i" + strconv.FormatInt(x, 10)
	case int32:
		return "i" + strconv.FormatInt(int64(x), 10)
	case int16:
		return "i" + strconv.FormatInt(int64(x), 10)
	case int8:
		return "i" + strconv.FormatInt(int64(x), 10)
	case int:
		return "i" + strconv.Itoa(x)
	case float64:
		return "f" + strconv.FormatFloat(x, 'g', -1, 64)
	case float32:
		return "f" + strconv.FormatFloat(float64(x), 'g', -1, 32)
	case schema.Date:
		return "d" + strconv.Itoa(int(x))
	case time.Time:
		return "t" + strconv.FormatInt(x.UnixMicro(), 10)
	case schema.Decimal:
		return "m" + decimalText(x)
	}
	return fmt.Sprintf("%T:%v", v, v)
}

func decimalText(d schema.Decimal) string {
	if d.Unscaled == nil {
		return "0"
	}
	r := new(big.Rat).SetFrac(d.Unscaled, new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(d.Scale)), nil))
	return r.RatString()
}

// mayHold reports whether a file may hold one of the batch's keys: for each
// key column, a partition value among the keys' values, or a [min, max]
// statistics range that one of them falls in. Conservative: missing or
// unreadable statistics never rule a file out.
func (p *mergePlan) mayHold(a *txlog.Add) bool {
	if len(p.order) == 0 {
		return false
	}
	var st *expr.Stats
	statsRead := false
	for n, i := range p.keyIdx {
		f := p.schema.Fields[i]
		if p.isPart[i] {
			raw, ok := partitionValue(a.PartitionValues, f.Name)
			if !ok {
				continue
			}
			v, err := expr.ParsePartitionValue(raw, f.Type)
			if err != nil {
				continue
			}
			if v == nil || !p.keySets[n][encodeValue(v)] {
				return false
			}
			continue
		}
		if !statsRead {
			st, _ = expr.ParseStats(a.Stats)
			statsRead = true
		}
		if st == nil || f.TypeChanged() {
			// A widened key column's statistics may be in its older
			// type (PROTOCOL.md "Type Widening"): not used.
			continue
		}
		d := st.Domain([]string{f.PhysicalName()}, f.Type)
		if d.NumRecords >= 0 && d.NullCount >= 0 && d.NullCount == d.NumRecords {
			return false // only nulls: no key matches
		}
		if !inRange(p.keyVals[n], d) {
			return false
		}
	}
	return true
}

func partitionValue(pv map[string]*string, name string) (*string, bool) {
	if v, ok := pv[name]; ok {
		return v, true
	}
	for k, v := range pv {
		if strings.EqualFold(k, name) {
			return v, true
		}
	}
	return nil, false
}

// inRange: one of the sorted values may lie within d's bounds.
func inRange(vals []any, d expr.Domain) bool {
	lo := 0
	if d.Min != nil {
		var ok bool
		lo, ok = slices.BinarySearchFunc(vals, d.Min, func(v, m any) int {
			c, okc := expr.CompareValues(v, m)
			if !okc {
				return 1
			}
			return c
		})
		_ = ok
	}
	if lo >= len(vals) {
		return false
	}
	if d.Max == nil {
		return true
	}
	v := vals[lo]
	c, ok := expr.CompareValues(v, d.Max)
	if !ok || c <= 0 {
		return true
	}
	if d.MaxPrefix {
		s, ok1 := v.(string)
		m, ok2 := d.Max.(string)
		return ok1 && ok2 && strings.HasPrefix(s, m)
	}
	return false
}

// applies: a change with sequence seq replaces a table row with sequence
// rowSeq (always without a sequence column).
func (p *mergePlan) applies(c *change, rowSeq any) bool {
	return p.seqIdx < 0 || seqCompare(c.seq, rowSeq) > 0
}

// dataSchema is the table schema without partition columns, and the table
// column index of each of its fields.
func (p *mergePlan) dataSchema(only func(i int) bool) (*schema.StructType, []int) {
	s := &schema.StructType{}
	var idx []int
	for i, f := range p.schema.Fields {
		if p.isPart[i] || (only != nil && !only(i)) {
			continue
		}
		s.Fields = append(s.Fields, f)
		idx = append(idx, i)
	}
	return s, idx
}

// readRows reads a file's rows in table layout: the columns chosen by only
// (nil: all) from the file, partition columns from the add action; other
// columns are nil.
func (t *Table) readRows(ctx context.Context, snap *txlog.Snapshot, p *mergePlan, a *txlog.Add, only func(i int) bool) ([][]any, error) {
	key, err := snap.FileKey(a.Path)
	if err != nil {
		return nil, err
	}
	want, idx := p.dataSchema(only)
	var rows [][]any
	if len(want.Fields) > 0 {
		f, err := parquetio.OpenFile(ctx, t.store, key, a.Size)
		if err != nil {
			return nil, err
		}
		data, err := f.ReadAll(ctx, want, parquetio.ReadOptions{})
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", key, err)
		}
		rows = make([][]any, len(data))
		for r, d := range data {
			row := make([]any, len(p.schema.Fields))
			for j, i := range idx {
				row[i] = d[j]
			}
			rows[r] = row
		}
	} else {
		n, ok := numRecordsOf(a.Stats)
		if !ok {
			f, err := parquetio.OpenFile(ctx, t.store, key, a.Size)
			if err != nil {
				return nil, err
			}
			n = f.NumRows()
			f.Close()
		}
		rows = make([][]any, n)
		for r := range rows {
			rows[r] = make([]any, len(p.schema.Fields))
		}
	}
	for i, f := range p.schema.Fields {
		if !p.isPart[i] || (only != nil && !only(i)) {
			continue
		}
		raw, _ := partitionValue(a.PartitionValues, f.Name)
		v, err := expr.ParsePartitionValue(raw, f.Type)
		if err != nil {
			return nil, fmt.Errorf("%w: %s: partition value of %q: %w", txlog.ErrCorruptLog, a.Path, f.Name, err)
		}
		for _, row := range rows {
			row[i] = v
		}
	}
	return rows, nil
}

func numRecordsOf(stats string) (int64, bool) {
	st, err := expr.ParseStats(stats)
	if err != nil || st == nil || st.NumRecords == nil {
		return 0, false
	}
	return *st.NumRecords, true
}

// mergeOnce plans and commits the merge on snap, or, with snap nil, into
// the new table that newTable (its protocol and metaData actions) creates
// in the same commit.
func (t *Table) mergeOnce(ctx context.Context, snap *txlog.Snapshot, newTable []txlog.Action, batch *schema.Batch, o MergeOptions) (MergeResult, error) {
	var (
		version = int64(-1)
		proto   txlog.Protocol
		md      txlog.Metadata
		live    []*txlog.Add
		at      = "a new table"
	)
	var props txlog.TableProperties
	if snap != nil {
		version, proto, md, live, props = snap.Version(), snap.Protocol(), snap.Metadata(), snap.Files(), snap.Properties()
		at = fmt.Sprintf("version %d", version)
	} else {
		for _, a := range newTable {
			if a.Protocol != nil {
				proto = *a.Protocol
			}
			if a.MetaData != nil {
				md = *a.MetaData
			}
		}
		props, _ = txlog.ParseTableProperties(md.Configuration) // validated by newTableActions
	}
	res := MergeResult{Version: version, NumSourceRows: int64(len(batch.Rows)), NumFilesInTable: len(live)}
	if o.AppID != "" && snap != nil {
		if v, ok := snap.TxnVersion(o.AppID); ok && o.Version <= v {
			return MergeResult{Skipped: true, Version: version, NumFilesInTable: len(live)}, nil
		}
	}
	wrap := func(err error) error {
		return fmt.Errorf("merge into %s at %s: %w", t.URL(), at, err)
	}
	p, err := t.planMerge(proto, md, props, batch, o)
	if err != nil {
		return res, wrap(err)
	}
	res.NumSourceChanges = int64(len(p.order) + len(p.nullKey))

	// 1. Prune, then read the key (and sequence) columns of what is left.
	// Rows an existing deletion vector deletes are not there.
	dvMode := deletionVectorsOn(proto, props)
	keyOrSeq := func(i int) bool { return slices.Contains(p.keyIdx, i) || i == p.seqIdx }
	var scanned, touched []*txlog.Add
	oldDV := map[*txlog.Add]*parquetio.DeletionVector{}
	for _, a := range live {
		if !p.mayHold(a) {
			continue
		}
		dv, err := t.loadDV(ctx, snap, a)
		if err != nil {
			return res, wrap(err)
		}
		oldDV[a] = dv
		scanned = append(scanned, a)
		rows, err := t.readRows(ctx, snap, p, a, keyOrSeq)
		if err != nil {
			return res, wrap(err)
		}
		for r, row := range rows {
			if dv.Contains(int64(r)) {
				continue
			}
			if c, ok := p.changes[p.key(row)]; ok {
				var rs any
				if p.seqIdx >= 0 {
					rs = row[p.seqIdx]
				}
				if p.applies(c, rs) {
					touched = append(touched, a)
					break
				}
			}
		}
	}
	res.NumFilesScanned = len(scanned)

	// 2. Each touched file: copy-on-write rewrites it without its changed
	// rows; in deletion-vector mode the changed rows are marked deleted in a
	// new deletion vector of the same file. Changed rows go to new files.
	var out [][]any
	newDV := map[*txlog.Add]*parquetio.DeletionVector{}
	for _, a := range touched {
		rows, err := t.readRows(ctx, snap, p, a, nil)
		if err != nil {
			return res, wrap(err)
		}
		old := oldDV[a]
		var ndv *parquetio.DeletionVector
		if dvMode {
			ndv = parquetio.NewDeletionVector()
			for r := range rows {
				if old.Contains(int64(r)) {
					ndv.Add(int64(r))
				}
			}
			newDV[a] = ndv
		}
		for r, row := range rows {
			if old.Contains(int64(r)) {
				continue
			}
			c, ok := p.changes[p.key(row)]
			var rs any
			if ok && p.seqIdx >= 0 {
				rs = row[p.seqIdx]
			}
			switch {
			case !ok || !p.applies(c, rs):
				if ok {
					c.hit = true
					res.NumStale++
				}
				if !dvMode {
					out = append(out, row)
					res.NumCopied++
				}
				continue
			}
			c.hit = true
			if dvMode {
				ndv.Add(int64(r))
			}
			if c.delete {
				res.NumDeleted++
				continue
			}
			nr := slices.Clone(row)
			for _, i := range p.updIdx {
				nr[i] = c.row[i]
			}
			out = append(out, nr)
			res.NumUpdated++
		}
	}
	// Keys matched in scanned-but-untouched files are stale changes.
	if len(scanned) > len(touched) {
		isTouched := map[*txlog.Add]bool{}
		for _, a := range touched {
			isTouched[a] = true
		}
		for _, a := range scanned {
			if isTouched[a] {
				continue
			}
			rows, err := t.readRows(ctx, snap, p, a, keyOrSeq)
			if err != nil {
				return res, wrap(err)
			}
			for r, row := range rows {
				if oldDV[a].Contains(int64(r)) {
					continue
				}
				if c, ok := p.changes[p.key(row)]; ok && !c.hit {
					c.hit = true
					res.NumStale++
				}
			}
		}
	}
	for _, k := range p.order {
		c := p.changes[k]
		if c.hit || c.delete {
			continue
		}
		out = append(out, c.row)
		res.NumInserted++
	}
	for _, c := range p.nullKey {
		if !c.delete {
			out = append(out, c.row)
			res.NumInserted++
		}
	}

	// 3. Write the new files.
	wopts, err := dataFileOptions(props, p.partCols, o.TargetFileSizeBytes, o.RowGroupSizeBytes, o.Compression)
	if err != nil {
		return res, wrap(err)
	}
	var files []parquetio.WrittenFile
	if len(out) > 0 {
		files, err = parquetio.WriteFiles(ctx, t.store, &schema.Batch{Schema: p.schema, Rows: out}, wopts)
		if err != nil {
			return res, wrap(err)
		}
	}

	// Deletion vector files, one per touched file that keeps live rows.
	newDesc := map[*txlog.Add]*txlog.DeletionVector{}
	var dvKeys []string
	for _, a := range touched {
		ndv := newDV[a]
		if ndv == nil {
			continue
		}
		if n, ok := numRecordsOf(a.Stats); ok && ndv.Cardinality() >= n {
			continue // every row deleted: the file is removed
		}
		desc, key, err := t.writeDV(ctx, ndv)
		if err != nil {
			return res, wrap(err)
		}
		newDesc[a], dvKeys = desc, append(dvKeys, key)
		if a.DeletionVector == nil {
			res.NumDeletionVectorsAdded++
		} else {
			res.NumDeletionVectorsUpdated++
		}
	}

	// 4. One commit: removes, adds, txn.
	now := o.Now().UnixMilli()
	tx := t.log.Begin(snap)
	tx.Add(newTable...)
	tx.SetIsolation(txlog.Serializable)
	for _, a := range scanned {
		tx.ReadFiles(a.Path)
	}
	tx.ReadPredicate(p.mayHold)
	for _, a := range touched {
		size := a.Size
		ext := true
		ts := now
		tx.Add(txlog.Action{Remove: &txlog.Remove{
			Path: a.Path, DeletionTimestamp: &ts, DataChange: true, ExtendedFileMetadata: &ext,
			PartitionValues: a.PartitionValues, Size: &size, Stats: a.Stats, Tags: a.Tags,
			DeletionVector: a.DeletionVector, BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
		}})
		if d := newDesc[a]; d != nil {
			// The same file again, with its new deletion vector (PROTOCOL.md,
			// "Deletion Vectors": remove the old add, add it back with the DV).
			tx.Add(txlog.Action{Add: &txlog.Add{
				Path: a.Path, PartitionValues: nonNilMap(a.PartitionValues), Size: a.Size, ModificationTime: a.ModificationTime,
				DataChange: true, Stats: looseStats(a.Stats), Tags: a.Tags, DeletionVector: d,
				BaseRowID: a.BaseRowID, DefaultRowCommitVersion: a.DefaultRowCommitVersion,
			}})
			continue
		}
		if a.DeletionVector != nil && dvMode {
			res.NumDeletionVectorsRemoved++
		}
		res.NumFilesRemoved++
		res.NumBytesRemoved += a.Size
	}
	for _, f := range files {
		tx.Add(txlog.Action{Add: &txlog.Add{
			Path:             txlog.EncodePath(f.Path),
			PartitionValues:  nonNilMap(f.PartitionValues),
			Size:             f.Size,
			ModificationTime: f.ModificationTime.UnixMilli(),
			DataChange:       true,
			Stats:            f.Stats,
		}})
		res.NumFilesAdded++
		res.NumBytesAdded += f.Size
	}
	if o.AppID != "" {
		tx.ReadTxn(o.AppID)
		lu := now
		tx.Add(txlog.Action{Txn: &txlog.Txn{AppID: o.AppID, Version: o.Version, LastUpdated: &lu}})
	}
	if len(tx.Actions()) == 0 {
		return res, nil // nothing changes and no txn to record
	}
	if o.beforeCommit != nil {
		o.beforeCommit()
	}
	params := maps.Clone(o.OperationParameters)
	if params == nil {
		params = txlog.OperationParameters{}
	}
	maps.Copy(params, p.operationParameters(o))
	v, err := tx.Commit(ctx, "MERGE", params, res.operationMetrics())
	if err != nil {
		var ce *txlog.ConflictError
		if errors.As(err, &ce) || errors.Is(err, txlog.ErrTableExists) {
			// Never committed: our files are unreferenced; delete them (best
			// effort, VACUUM collects what is left) before re-planning.
			dctx := context.WithoutCancel(ctx)
			for _, f := range files {
				_ = t.store.Delete(dctx, f.Path)
			}
			for _, k := range dvKeys {
				_ = t.store.Delete(dctx, k)
			}
		}
		return res, wrap(err)
	}
	res.Version = v
	return res, nil
}

// operationParameters are Delta's for MERGE (DeltaOperations.Merge):
// predicate, matchedPredicates, notMatchedPredicates and
// notMatchedBySourcePredicates, JSON text as Spark writes them.
func (p *mergePlan) operationParameters(o MergeOptions) txlog.OperationParameters {
	var on []string
	for _, i := range p.keyIdx {
		n := quoteIdent(p.schema.Fields[i].Name)
		on = append(on, "(t."+n+" = s."+n+")")
	}
	cond := strings.Join(on, " AND ")
	newer := ""
	if p.seqIdx >= 0 {
		n := quoteIdent(p.schema.Fields[p.seqIdx].Name)
		newer = "(s." + n + " > t." + n + ")"
	}
	type mp struct {
		Predicate  string `json:"predicate,omitempty"`
		ActionType string `json:"actionType"`
	}
	var matched, notMatched []mp
	and := func(a, b string) string {
		switch {
		case a == "":
			return b
		case b == "":
			return a
		}
		return a + " AND " + b
	}
	if p.pred != nil {
		matched = append(matched, mp{Predicate: and("("+p.pred.String()+")", newer), ActionType: "delete"})
		notMatched = append(notMatched, mp{Predicate: "(NOT (" + p.pred.String() + "))", ActionType: "insert"})
	} else {
		notMatched = append(notMatched, mp{ActionType: "insert"})
	}
	matched = append(matched, mp{Predicate: newer, ActionType: "update"})
	return txlog.OperationParameters{
		"predicate":                    jsonString([]string{cond}),
		"matchedPredicates":            jsonString(matched),
		"notMatchedPredicates":         jsonString(notMatched),
		"notMatchedBySourcePredicates": "[]",
	}
}

func quoteIdent(s string) string {
	for _, r := range s {
		if !(r == '_' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9') {
			return "`" + strings.ReplaceAll(s, "`", "``") + "`"
		}
	}
	return s
}

// operationMetrics are Delta's MERGE metrics (MergeIntoCommandBase metrics).
func (r MergeResult) operationMetrics() map[string]any {
	i := func(n int64) string { return strconv.FormatInt(n, 10) }
	return map[string]any{
		"numSourceRows":                          i(r.NumSourceRows),
		"numTargetRowsInserted":                  i(r.NumInserted),
		"numTargetRowsUpdated":                   i(r.NumUpdated),
		"numTargetRowsMatchedUpdated":            i(r.NumUpdated),
		"numTargetRowsNotMatchedBySourceUpdated": "0",
		"numTargetRowsDeleted":                   i(r.NumDeleted),
		"numTargetRowsMatchedDeleted":            i(r.NumDeleted),
		"numTargetRowsNotMatchedBySourceDeleted": "0",
		"numTargetRowsCopied":                    i(r.NumCopied),
		"numOutputRows":                          i(r.NumInserted + r.NumUpdated + r.NumCopied),
		"numTargetFilesAdded":                    strconv.Itoa(r.NumFilesAdded),
		"numTargetFilesRemoved":                  strconv.Itoa(r.NumFilesRemoved),
		"numTargetChangeFilesAdded":              "0",
		"numTargetBytesAdded":                    i(r.NumBytesAdded),
		"numTargetBytesRemoved":                  i(r.NumBytesRemoved),
		"numTargetDeletionVectorsAdded":          strconv.Itoa(r.NumDeletionVectorsAdded),
		"numTargetDeletionVectorsRemoved":        strconv.Itoa(r.NumDeletionVectorsRemoved),
		"numTargetDeletionVectorsUpdated":        strconv.Itoa(r.NumDeletionVectorsUpdated),
	}
}

// deletionVectorsOn: the table merges with deletion vectors
// (delta.enableDeletionVectors=true and the deletionVectors writer feature),
// Delta's DeletionVectorUtils.deletionVectorsWritable. A table whose
// property was set without the feature (by a writer that did not upgrade
// the protocol; Delta itself upgrades it in the commit that sets the
// property, OptimisticTransactionImpl.updateMetadata with
// Protocol.upgradeProtocolFromMetadataForExistingTable) is merged
// copy-on-write, its protocol unchanged, as Delta's MERGE does: a MERGE
// that changes no metadata does not upgrade the protocol.
func deletionVectorsOn(proto txlog.Protocol, props txlog.TableProperties) bool {
	return props.EnableDeletionVectors && slices.Contains(proto.WriterFeatures, txlog.FeatureDeletionVectors)
}

// looseStats marks a file's stats as no longer tight (PROTOCOL.md, "Per-file
// Statistics": tightBounds=false once a deletion vector removes rows; the
// bounds still hold, numRecords counts the physical rows).
func looseStats(stats string) string {
	if stats == "" {
		return ""
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stats), &m); err != nil {
		return stats
	}
	m["tightBounds"] = json.RawMessage("false")
	b, err := json.Marshal(m)
	if err != nil {
		return stats
	}
	return string(b)
}

// loadDV reads the deletion vector of a file (nil without one;
// parquetio.LoadDV). Errors wrap txlog.ErrCorruptLog and name the file.
func (t *Table) loadDV(ctx context.Context, snap *txlog.Snapshot, a *txlog.Add) (*parquetio.DeletionVector, error) {
	d := a.DeletionVector
	if d == nil {
		return nil, nil
	}
	desc := parquetio.DVDescriptor{StorageType: d.StorageType, PathOrInlineDV: d.PathOrInlineDV, Offset: d.Offset, SizeInBytes: d.SizeInBytes, Cardinality: d.Cardinality}
	dv, err := parquetio.LoadDV(ctx, t.store, desc, snap.FileKey)
	if err != nil {
		return nil, fmt.Errorf("%w: deletion vector %s of %s: %w", txlog.ErrCorruptLog, d.UniqueID(), a.Path, err)
	}
	return dv, nil
}

// writeDV writes dv as deletion_vector_<uuid>.bin under the table root and
// returns its descriptor: storageType 'u', the Z85-encoded UUID, offset 1
// (PROTOCOL.md, "Deletion Vector Descriptor Schema", "Deletion Vector File
// Storage Format").
func (t *Table) writeDV(ctx context.Context, dv *parquetio.DeletionVector) (*txlog.DeletionVector, string, error) {
	data, err := dv.MarshalBinary()
	if err != nil {
		return nil, "", err
	}
	id := uuid.New()
	enc, err := parquetio.Z85Encode(id[:])
	if err != nil {
		return nil, "", err
	}
	key := parquetio.DVFileName(id)
	if err := t.store.Put(ctx, key, parquetio.EncodeDVFile(data)); err != nil {
		return nil, "", fmt.Errorf("write deletion vector %s: %w", key, err)
	}
	off := int32(1)
	return &txlog.DeletionVector{StorageType: "u", PathOrInlineDV: enc, Offset: &off, SizeInBytes: int32(len(data)), Cardinality: dv.Cardinality()}, key, nil
}
