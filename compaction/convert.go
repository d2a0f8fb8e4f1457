package compaction

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// ConvertOptions configure Convert.
type ConvertOptions struct {
	// FileSink options for reading _spark_metadata (Retention,
	// LegacyDeleteAction). Default: filesink.DefaultOptions().
	FileSink *filesink.Options
	// PartitionTypes gives the Delta type of partition columns by name.
	// Columns not listed are inferred from their values over the files
	// (Spark's partition type inference, reduced to integer, long and
	// string; an all-null column is string).
	PartitionTypes map[string]schema.DataType
	// Now is the clock (commit timestamps, table creation). Default time.Now.
	Now func() time.Time
}

// ConvertResult reports a Convert.
type ConvertResult struct {
	// Version committed (-1: nothing to do).
	Version int64 `json:"version"`
	// Created: the commit created the Delta table.
	Created bool `json:"created"`
	// FromBatch and ToBatch are the file-sink batches converted (exclusive,
	// inclusive); ToBatch is the txn version written.
	FromBatch int64 `json:"fromBatch"`
	ToBatch   int64 `json:"toBatch"`
	NumFiles  int   `json:"numFiles"` // data files added to the Delta table by the commit
	NumBytes  int64 `json:"numBytes"` // their total size in bytes
}

// Convert publishes a Spark file-sink directory as a Delta table in place:
// _delta_log beside _spark_metadata, add actions with relative paths for the
// files the file-sink log names (never files found by listing). It is
// incremental and idempotent: each run adds the files of the batches logged
// since the previous run, in ONE commit carrying txn{appId: ConvertAppID,
// version: latest batch} (PROTOCOL.md, "Transaction Identifiers"), so a
// repeated run is a no-op and two concurrent runs conflict. The first run
// also creates the table (protocol and metaData in the same commit), with the
// schema of the first file's footer plus the partition columns discovered
// from its directories. Each added file carries stats {"numRecords"} from its
// footer.
//
// The files of a compaction batch (N.compact) cannot be told apart from the
// earlier batches it repeats; for such a batch the files neither live in the
// table nor tombstoned are added.
func Convert(ctx context.Context, t *table.Table, opts ConvertOptions) (*ConvertResult, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	fo := filesink.DefaultOptions()
	if opts.FileSink != nil {
		fo = *opts.FileSink
	}
	fail := func(err error) (*ConvertResult, error) {
		return nil, fmt.Errorf("convert %s: %w", t.URL(), err)
	}
	st := t.Store()
	listing, err := filesink.ListFiles(ctx, st, fo)
	if err != nil {
		return fail(err)
	}
	if !listing.FromLog {
		return fail(fmt.Errorf("%w: no %s", ErrNotFileSink, filesink.MetadataDir))
	}
	snap, err := t.Snapshot(ctx)
	if err != nil && !errors.Is(err, txlog.ErrTableNotFound) {
		return nil, fmt.Errorf("convert: %w", err) // names the table
	}
	res := &ConvertResult{Version: -1, FromBatch: -1, ToBatch: listing.LatestBatchID}
	if snap != nil {
		if v, ok := snap.TxnVersion(ConvertAppID); ok {
			res.FromBatch = v
		}
	}
	if res.FromBatch >= listing.LatestBatchID {
		return res, nil
	}

	// Which logged files are new.
	sl, err := filesink.NewLog(st, fo)
	if err != nil {
		return fail(err)
	}
	newURIs := map[string]bool{}
	byState := false // a compaction batch: fall back to the table state
	if snap != nil {
		ls, err := sl.State(ctx)
		if err != nil {
			return fail(err)
		}
		for b := res.FromBatch + 1; b <= listing.LatestBatchID; b++ {
			if ls.CompactInterval > 0 && filesink.IsCompactionBatch(b, ls.CompactInterval) {
				byState = true
				continue
			}
			entries, err := sl.ReadBatch(ctx, b)
			if err != nil {
				return fail(err)
			}
			for _, e := range entries {
				newURIs[e.Path] = true
			}
		}
	}
	var files []filesink.File
	for _, f := range listing.Files {
		if snap != nil {
			if _, live := snap.File(f.Key); live {
				continue
			}
			if byState {
				if tombstoned(snap, f.Key) {
					continue
				}
			} else if f.Entry != nil && !newURIs[f.Entry.Path] {
				continue
			}
		}
		if !strings.HasSuffix(f.Key, ".parquet") {
			return fail(fmt.Errorf("%w: %s is not a Parquet file", ErrNotFileSink, f.Key))
		}
		files = append(files, f)
	}

	tx := t.Log().Begin(snap)
	now := opts.Now()
	var partCols []string
	if snap == nil {
		if len(files) == 0 {
			return fail(fmt.Errorf("%w: the log names no files to take a schema from", ErrNotFileSink))
		}
		md, proto, err := convertMetadata(ctx, t, files, opts.PartitionTypes, now)
		if err != nil {
			return fail(err)
		}
		tx.Add(txlog.Action{Protocol: proto}, txlog.Action{MetaData: md})
		partCols = md.PartitionColumns
		res.Created = true
	} else {
		partCols = snap.Metadata().PartitionColumns
	}
	for _, f := range files {
		pv := map[string]*string{}
		for _, kv := range f.Partition {
			pv[kv.Column] = kv.Value
		}
		for _, c := range partCols {
			if _, ok := pv[c]; !ok {
				return fail(fmt.Errorf("%w: %s is not in a partition directory of %s", ErrNotFileSink, f.Key, c))
			}
		}
		if filesink.IsJSONFile(f.Key) {
			// Delta data files are Parquet (PROTOCOL.md "Data Files").
			return fail(fmt.Errorf("%w: %s is a JSON data file: a JSON file sink cannot become a Delta table in place", ErrNotFileSink, f.Key))
		}
		pf, err := parquetio.OpenFile(ctx, st, f.Key, f.Size)
		if err != nil {
			return fail(err)
		}
		n := pf.NumRows()
		pf.Close()
		size := f.Size
		if f.Entry != nil && f.Entry.Size > 0 {
			size = f.Entry.Size
		}
		tx.Add(txlog.Action{Add: &txlog.Add{
			Path:             txlog.EncodePath(f.Key),
			PartitionValues:  pv,
			Size:             size,
			ModificationTime: f.ModificationTime.UnixMilli(),
			DataChange:       true,
			Stats:            `{"numRecords":` + strconv.FormatInt(n, 10) + `}`,
		}})
		res.NumFiles++
		res.NumBytes += size
	}
	lu := now.UnixMilli()
	tx.ReadTxn(ConvertAppID)
	tx.Add(txlog.Action{Txn: &txlog.Txn{AppID: ConvertAppID, Version: listing.LatestBatchID, LastUpdated: &lu}})
	v, err := tx.Commit(ctx, "CONVERT", txlog.OperationParameters{
		"numFiles":        strconv.Itoa(res.NumFiles),
		"partitionedBy":   jsonList(partCols),
		"collectStats":    "false",
		"sourceFormat":    "parquet",
		"fileSinkBatchId": strconv.FormatInt(listing.LatestBatchID, 10),
	}, map[string]any{
		"numConvertedFiles": strconv.Itoa(res.NumFiles),
	})
	if err != nil {
		return fail(err)
	}
	res.Version = v
	return res, nil
}

func tombstoned(snap *txlog.Snapshot, key string) bool {
	for _, r := range snap.Tombstones() {
		if k, err := snap.FileKey(r.Path); err == nil && k == key {
			return true
		}
	}
	return false
}

// convertMetadata builds the protocol and metaData of a converted table: the
// first file's schema followed by the partition columns in directory order.
func convertMetadata(ctx context.Context, t *table.Table, files []filesink.File, types map[string]schema.DataType, now time.Time) (*txlog.Metadata, *txlog.Protocol, error) {
	first := files[0]
	pf, err := parquetio.OpenFile(ctx, t.Store(), first.Key, first.Size)
	if err != nil {
		return nil, nil, err
	}
	fileSchema := pf.Schema()
	pf.Close()
	sch := &schema.StructType{Fields: append([]schema.StructField(nil), fileSchema.Fields...)}
	var partCols []string
	for _, kv := range first.Partition {
		partCols = append(partCols, kv.Column)
		typ, ok := types[kv.Column]
		if !ok {
			typ = inferPartitionType(files, kv.Column)
		}
		sch.Fields = append(sch.Fields, schema.StructField{Name: kv.Column, Type: typ, Nullable: true})
	}
	js, err := sch.MarshalJSON()
	if err != nil {
		return nil, nil, err
	}
	created := now.UnixMilli()
	md := &txlog.Metadata{
		ID:               uuid.NewString(),
		Format:           txlog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString:     string(js),
		PartitionColumns: partCols,
		Configuration:    map[string]string{},
		CreatedTime:      &created,
	}
	if partCols == nil {
		md.PartitionColumns = []string{}
	}
	proto := txlog.NewTableProtocol(md.SchemaString)
	return md, &proto, nil
}

// inferPartitionType is Spark's partition type inference reduced to integer,
// long and string (PartitioningUtils.inferPartitionColumnValue).
func inferPartitionType(files []filesink.File, col string) schema.DataType {
	typ := schema.DataType(schema.TypeInteger)
	seen := false
	for _, f := range files {
		for _, kv := range f.Partition {
			if kv.Column != col || kv.Value == nil {
				continue
			}
			seen = true
			if _, err := strconv.ParseInt(*kv.Value, 10, 32); err == nil {
				continue
			}
			if _, err := strconv.ParseInt(*kv.Value, 10, 64); err == nil {
				typ = schema.TypeLong
				continue
			}
			return schema.TypeString
		}
	}
	if !seen {
		return schema.TypeString
	}
	return typ
}

func jsonList(cols []string) string {
	if cols == nil {
		cols = []string{}
	}
	b, err := json.Marshal(cols)
	if err != nil {
		return "[]"
	}
	return string(b)
}
