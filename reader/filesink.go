package reader

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

// openFileSink reads the live files of a Spark file-sink directory from its
// _spark_metadata log (FileStreamSinkLog.allFiles). The schema is the first
// data file's Parquet schema, or for JSON lines files (filesink.IsJSONFile,
// as the sink's json format writes them) the schema Spark's spark.read.json
// infers from all of them (filesink.InferJSONSchema), plus the partition
// columns found in the file paths (Spark's partition discovery: Hive-style
// "col=value" directories, types inferred as long, double, date, timestamp
// or string). A directory whose live files mix JSON and Parquet is refused
// (ErrCorruptFile): Spark reads a directory with one format.
func openFileSink(ctx context.Context, store storage.Store, o openOptions) (*Snapshot, error) {
	lopts := filesink.DefaultOptions()
	fl, err := filesink.NewLog(store, lopts)
	if err != nil {
		return nil, fmt.Errorf("open file-sink log %s: %w", store.URL(), err)
	}
	latest, err := fl.LatestBatchID(ctx)
	if err != nil {
		return nil, fmt.Errorf("open file-sink log %s: %w", store.URL(), err)
	}
	entries, err := fl.AllFiles(ctx)
	if err != nil {
		return nil, fmt.Errorf("read file-sink log %s: %w", store.URL(), err)
	}
	// Reconcile by path: the last entry for a path wins; legacy "delete"
	// entries remove the path only when asked (Spark <= 3.0).
	type entry struct {
		e   filesink.SinkFileStatus
		key string
	}
	byKey := map[string]int{}
	var live []entry
	for _, e := range entries {
		if e.IsDir {
			continue
		}
		key, err := txlog.ResolvePath(store.URL(), e.Path)
		if err != nil {
			return nil, fmt.Errorf("%w: file-sink log of %s: %w", ErrCorruptFile, store.URL(), err)
		}
		if e.Action == filesink.ActionDelete {
			if o.legacyDel {
				if i, ok := byKey[key]; ok {
					live[i].key = ""
				}
			}
			continue
		}
		if i, ok := byKey[key]; ok {
			live[i] = entry{e, key}
			continue
		}
		byKey[key] = len(live)
		live = append(live, entry{e, key})
	}
	live = slices.DeleteFunc(live, func(x entry) bool { return x.key == "" })
	slices.SortFunc(live, func(a, b entry) int { return strings.Compare(a.key, b.key) })

	// Partition columns and values from the paths.
	var partCols []string
	rawParts := make([]map[string]*string, len(live))
	for i, x := range live {
		kvs, err := parquetio.ParsePartitionPath(path.Dir(x.key))
		if err != nil || path.Dir(x.key) == "." {
			kvs = nil
		}
		rawParts[i] = map[string]*string{}
		var cols []string
		for _, kv := range kvs {
			rawParts[i][kv.Column] = kv.Value
			cols = append(cols, kv.Column)
		}
		if i == 0 {
			partCols = cols
		} else if !slices.Equal(cols, partCols) {
			return nil, fmt.Errorf("%w: %s: file %s has partition columns %v, others %v", ErrCorruptFile, store.URL(), x.key, cols, partCols)
		}
	}
	partTypes := make([]schema.DataType, len(partCols))
	for j, c := range partCols {
		vals := make([]*string, len(live))
		for i := range live {
			vals[i] = rawParts[i][c]
		}
		partTypes[j] = inferPartitionType(vals)
	}

	jsonFiles := 0
	for _, x := range live {
		if filesink.IsJSONFile(x.key) {
			jsonFiles++
		}
	}
	if jsonFiles > 0 && jsonFiles < len(live) {
		return nil, fmt.Errorf("%w: %s: %d of its %d live files are JSON, the others not: a file-sink directory holds one format", ErrCorruptFile, store.URL(), jsonFiles, len(live))
	}
	sch := &schema.StructType{}
	if len(live) > 0 {
		var fs *schema.StructType
		if jsonFiles > 0 {
			keys := make([]string, len(live))
			for i, x := range live {
				keys[i] = x.key
			}
			if fs, err = filesink.InferJSONSchema(ctx, store, keys); err != nil {
				return nil, fmt.Errorf("%s: %w", store.URL(), err)
			}
		} else {
			f, err := parquetio.OpenFile(ctx, store, live[0].key, live[0].e.Size)
			if err != nil {
				return nil, fmt.Errorf("%s: %w", store.URL(), err)
			}
			fs = f.Schema()
			f.Close()
		}
		for _, fld := range fs.Fields {
			if !slices.Contains(partCols, fld.Name) {
				sch.Fields = append(sch.Fields, fld)
			}
		}
	}
	for j, c := range partCols {
		sch.Fields = append(sch.Fields, schema.StructField{Name: c, Type: partTypes[j], Nullable: true})
	}
	s := &Snapshot{store: store, kind: KindFileSink, version: latest, schema: sch, partitions: partCols, mapping: MappingNone, sinkJSON: jsonFiles > 0}
	for i, x := range live {
		f := File{Path: x.e.Path, Key: x.key, Size: x.e.Size, ModificationTime: time.UnixMilli(x.e.ModificationTime).UTC(), NumRecords: -1}
		if len(partCols) > 0 {
			f.PartitionValues = map[string]any{}
			for j, c := range partCols {
				v, err := expr.ParsePartitionValue(rawParts[i][c], partTypes[j])
				if err != nil {
					return nil, fmt.Errorf("%w: %s: file %s: %w", ErrCorruptFile, store.URL(), x.key, err)
				}
				f.PartitionValues[c] = v
			}
		}
		s.sinkFiles = append(s.sinkFiles, f)
	}
	return s, nil
}

// inferPartitionType is a simplified form of Spark's partition column type
// inference (PartitioningUtils.inferPartitionColumnValue): long if every
// non-null value is an integer, then double, date, timestamp, else string.
func inferPartitionType(vals []*string) schema.DataType {
	all := func(ok func(string) bool) bool {
		for _, v := range vals {
			if v != nil && *v != "" && !ok(*v) {
				return false
			}
		}
		return true
	}
	nonNull := false
	for _, v := range vals {
		nonNull = nonNull || (v != nil && *v != "")
	}
	switch {
	case !nonNull:
		return schema.TypeString
	case all(func(s string) bool { _, err := strconv.ParseInt(s, 10, 64); return err == nil }):
		return schema.TypeLong
	case all(func(s string) bool {
		_, err := strconv.ParseFloat(s, 64)
		return err == nil && strings.ContainsAny(s, "0123456789")
	}):
		return schema.TypeDouble
	case all(func(s string) bool { _, err := expr.ParseDate(s); return err == nil && len(s) == 10 }):
		return schema.TypeDate
	case all(func(s string) bool { _, err := expr.ParseTimestamp(s); return err == nil && len(s) > 10 }):
		return schema.TypeTimestamp
	}
	return schema.TypeString
}
