package txlog

import (
	"slices"
	"sync"
	"unsafe"

	"github.com/parquet-go/parquet-go"
)

// Column-wise writing of a V1 checkpoint (the counterpart of
// checkpoint_columns.go).
//
// A checkpoint has one row per action, each action in its own optional
// column group of ckptRow's schema (PROTOCOL.md, "Checkpoint Schema").
// parquet-go's GenericWriter[ckptRow] converts each row field by field
// through reflection, allocating a ckptRow of pointers for every action
// first; here each action appends its values straight to the leaf columns
// (the other groups' leaves get a null), and every batchRows rows the
// pending values of each leaf go to its ColumnWriter. Rows are cut into
// the same 64-row writes the GenericWriter makes, so pages and row groups
// end at the same rows and the file is byte for byte the one the row writer
// wrote (TestCheckpointShredderMatchesRowWriter).

// ckptBatchRows is the GenericWriter's rows per internal write
// (ConcurrentRowGroupWriter.writeRows, maxRowsPerWrite): a column's page is
// cut after the batch that fills its buffer.
const ckptBatchRows = 64

// ckptLeaves are the leaf column indexes of ckptRow's schema the shredder
// writes, looked up by path once.
type ckptLeaves struct {
	n int // number of leaves
	// [lo, hi) leaf range of each top-level group
	txnLo, txnHi, addLo, addHi, rmLo, rmHi, mdLo, mdHi, protoLo, protoHi, domLo, domHi int

	txnAppID, txnVersion, txnLastUpdated int

	addPath, addPVKey, addPVValue, addSize, addModTime, addDataChange, addTagKey, addTagValue int
	addDV                                                                                     ckptDVLeaves
	addBaseRowID, addDefaultRowCV, addClustering, addStats                                    int

	rmPath, rmDelTS, rmDataChange, rmExtended, rmPVKey, rmPVValue, rmSize, rmTagKey, rmTagValue int
	rmDV                                                                                        ckptDVLeaves
	rmBaseRowID, rmDefaultRowCV                                                                 int

	mdID, mdName, mdDescription, mdProvider, mdOptKey, mdOptValue, mdSchema, mdPartCols, mdConfKey, mdConfValue, mdCreated int

	protoReader, protoWriter, protoReaderFeatures, protoWriterFeatures int

	domDomain, domConfig, domRemoved int
}

type ckptDVLeaves struct{ storage, path, offset, size, cardinality int }

var ckptWriteLeaves = sync.OnceValue(func() *ckptLeaves {
	s := parquet.SchemaOf(ckptRow{})
	col := func(path ...string) int {
		leaf, ok := s.Lookup(path...)
		if !ok {
			// ckptRow's schema is static: every checkpoint test would fail
			// on the -1 index, so no error path is needed here.
			return -1
		}
		return leaf.ColumnIndex
	}
	group := func(name string) (lo, hi int) {
		lo, hi = -1, -1
		for i, p := range s.Columns() {
			if p[0] == name {
				if lo < 0 {
					lo = i
				}
				hi = i + 1
			}
		}
		return lo, hi // -1, -1 for a group ckptRow lacks (static; see col)
	}
	dv := func(g string) ckptDVLeaves {
		return ckptDVLeaves{col(g, "deletionVector", "storageType"), col(g, "deletionVector", "pathOrInlineDv"),
			col(g, "deletionVector", "offset"), col(g, "deletionVector", "sizeInBytes"), col(g, "deletionVector", "cardinality")}
	}
	c := &ckptLeaves{n: len(s.Columns())}
	c.txnLo, c.txnHi = group("txn")
	c.addLo, c.addHi = group("add")
	c.rmLo, c.rmHi = group("remove")
	c.mdLo, c.mdHi = group("metaData")
	c.protoLo, c.protoHi = group("protocol")
	c.domLo, c.domHi = group("domainMetadata")
	c.txnAppID, c.txnVersion, c.txnLastUpdated = col("txn", "appId"), col("txn", "version"), col("txn", "lastUpdated")
	c.addPath, c.addPVKey, c.addPVValue = col("add", "path"), col("add", "partitionValues", "key_value", "key"), col("add", "partitionValues", "key_value", "value")
	c.addSize, c.addModTime, c.addDataChange = col("add", "size"), col("add", "modificationTime"), col("add", "dataChange")
	c.addTagKey, c.addTagValue = col("add", "tags", "key_value", "key"), col("add", "tags", "key_value", "value")
	c.addDV = dv("add")
	c.addBaseRowID, c.addDefaultRowCV = col("add", "baseRowId"), col("add", "defaultRowCommitVersion")
	c.addClustering, c.addStats = col("add", "clusteringProvider"), col("add", "stats")
	c.rmPath, c.rmDelTS, c.rmDataChange, c.rmExtended = col("remove", "path"), col("remove", "deletionTimestamp"), col("remove", "dataChange"), col("remove", "extendedFileMetadata")
	c.rmPVKey, c.rmPVValue = col("remove", "partitionValues", "key_value", "key"), col("remove", "partitionValues", "key_value", "value")
	c.rmSize = col("remove", "size")
	c.rmTagKey, c.rmTagValue = col("remove", "tags", "key_value", "key"), col("remove", "tags", "key_value", "value")
	c.rmDV = dv("remove")
	c.rmBaseRowID, c.rmDefaultRowCV = col("remove", "baseRowId"), col("remove", "defaultRowCommitVersion")
	c.mdID, c.mdName, c.mdDescription = col("metaData", "id"), col("metaData", "name"), col("metaData", "description")
	c.mdProvider = col("metaData", "format", "provider")
	c.mdOptKey, c.mdOptValue = col("metaData", "format", "options", "key_value", "key"), col("metaData", "format", "options", "key_value", "value")
	c.mdSchema, c.mdPartCols = col("metaData", "schemaString"), col("metaData", "partitionColumns", "list", "element")
	c.mdConfKey, c.mdConfValue = col("metaData", "configuration", "key_value", "key"), col("metaData", "configuration", "key_value", "value")
	c.mdCreated = col("metaData", "createdTime")
	c.protoReader, c.protoWriter = col("protocol", "minReaderVersion"), col("protocol", "minWriterVersion")
	c.protoReaderFeatures, c.protoWriterFeatures = col("protocol", "readerFeatures", "list", "element"), col("protocol", "writerFeatures", "list", "element")
	c.domDomain, c.domConfig, c.domRemoved = col("domainMetadata", "domain"), col("domainMetadata", "configuration"), col("domainMetadata", "removed")
	return c
})

// ckptShredder turns checkpoint actions into the leaf values of ckptRow's
// schema, as the GenericWriter does: an optional field's nil (or, for
// strings toCkptRow leaves out, empty) value is a null at its parent's
// definition level, a map's entries go in key order, a nil map or list is
// null and an empty one present with no entries. Strings are passed to the
// column buffers without a copy (they copy what they keep).
type ckptShredder struct {
	c    *ckptLeaves
	cols [][]parquet.Value // pending values of each leaf, but for its run of nulls
	// A leaf's pending values end with run[c] nulls at definition level
	// runDef[c], kept as a count: most leaves of most rows are nulls of an
	// absent group, written from nullRuns without building them one by one.
	run, runDef []int
	rows        int      // pending rows
	keys        []string // scratch: sorted map keys
}

// ckptNullRuns[col][def] is ckptBatchRows nulls of leaf col at level def
// (shared, read-only), built on first use.
var ckptNullRuns = sync.OnceValue(func() [][][]parquet.Value {
	c := ckptWriteLeaves()
	runs := make([][][]parquet.Value, c.n)
	for col := range runs {
		runs[col] = make([][]parquet.Value, ckptMaxDef+1)
		for def := range runs[col] {
			r := make([]parquet.Value, ckptBatchRows)
			for i := range r {
				r[i] = parquet.Value{}.Level(0, def, col)
			}
			runs[col][def] = r
		}
	}
	return runs
})

// ckptMaxDef is the deepest definition level of ckptRow's schema
// (metaData.format.options.key_value.value).
const ckptMaxDef = 5

func newCkptShredder() *ckptShredder {
	c := ckptWriteLeaves()
	return &ckptShredder{c: c, cols: make([][]parquet.Value, c.n), run: make([]int, c.n), runDef: make([]int, c.n)}
}

// endRun moves leaf col's run of nulls into its pending values.
func (s *ckptShredder) endRun(col int) {
	if n := s.run[col]; n > 0 {
		s.cols[col] = append(s.cols[col], ckptNullRuns()[col][s.runDef[col]][:n]...)
		s.run[col] = 0
	}
}

// add appends a non-null value (or a null inside a map or list) to col.
func (s *ckptShredder) add(col int, v parquet.Value) {
	if s.run[col] > 0 {
		s.endRun(col)
	}
	s.cols[col] = append(s.cols[col], v)
}

func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

// null appends a null of a row (repetition level 0) at def.
func (s *ckptShredder) null(col, def int) {
	if s.run[col] > 0 && s.runDef[col] != def {
		s.endRun(col)
	}
	s.runDef[col] = def
	s.run[col]++
}

func (s *ckptShredder) nulls(lo, hi, def int) {
	for c := lo; c < hi; c++ {
		s.null(c, def)
	}
}

// str writes a present string at definition level def.
func (s *ckptShredder) str(col int, v string, def int) {
	s.add(col, parquet.ByteArrayValue(bytesOf(v)).Level(0, def, col))
}

// nonEmptyStr writes v, or a null when it is empty (toCkptRow leaves those out).
func (s *ckptShredder) nonEmptyStr(col int, v string, def int) {
	if v == "" {
		s.null(col, def-1)
		return
	}
	s.str(col, v, def)
}

func (s *ckptShredder) i64(col int, v int64, def int) {
	s.add(col, parquet.Int64Value(v).Level(0, def, col))
}

func (s *ckptShredder) i32(col int, v int32, def int) {
	s.add(col, parquet.Int32Value(v).Level(0, def, col))
}

func (s *ckptShredder) boolean(col int, v bool, def int) {
	s.add(col, parquet.BooleanValue(v).Level(0, def, col))
}

// optional writes *v with write at definition level def, or a null at
// def-1 (its group present, the field absent) when v is nil.
func optional[T any](s *ckptShredder, col int, v *T, def int, write func(*ckptShredder, int, T, int)) {
	if v == nil {
		s.null(col, def-1)
		return
	}
	write(s, col, *v, def)
}

// sortedKeys returns the keys of m in order (parquet-go writes map entries
// sorted by key).
func sortedKeys[V any](s *ckptShredder, m map[string]V) []string {
	s.keys = s.keys[:0]
	for k := range m {
		s.keys = append(s.keys, k)
	}
	slices.Sort(s.keys)
	return s.keys
}

// ptrMap writes the optional MAP<string, string> m whose map group is
// present at definition level def (key_value at def+1, a present value at
// def+2); nil is a null at def-1.
func (s *ckptShredder) ptrMap(kc, vc int, m map[string]*string, def int) {
	if m == nil {
		s.null(kc, def-1)
		s.null(vc, def-1)
		return
	}
	if len(m) == 0 {
		s.null(kc, def)
		s.null(vc, def)
		return
	}
	for i, k := range sortedKeys(s, m) {
		rep := min(i, 1)
		s.add(kc, parquet.ByteArrayValue(bytesOf(k)).Level(rep, def+1, kc))
		if v := m[k]; v != nil {
			s.add(vc, parquet.ByteArrayValue(bytesOf(*v)).Level(rep, def+2, vc))
		} else {
			s.add(vc, parquet.Value{}.Level(rep, def+1, vc))
		}
	}
}

// strMap is ptrMap for a map of present values.
func (s *ckptShredder) strMap(kc, vc int, m map[string]string, def int) {
	if m == nil {
		s.null(kc, def-1)
		s.null(vc, def-1)
		return
	}
	if len(m) == 0 {
		s.null(kc, def)
		s.null(vc, def)
		return
	}
	for i, k := range sortedKeys(s, m) {
		rep := min(i, 1)
		s.add(kc, parquet.ByteArrayValue(bytesOf(k)).Level(rep, def+1, kc))
		s.add(vc, parquet.ByteArrayValue(bytesOf(m[k])).Level(rep, def+2, vc))
	}
}

// list writes the optional LIST<string> l (required elements) whose list
// group is present at def; nil is a null at def-1.
func (s *ckptShredder) list(col int, l []string, def int) {
	switch {
	case l == nil:
		s.null(col, def-1)
	case len(l) == 0:
		s.null(col, def)
	default:
		for i, e := range l {
			s.add(col, parquet.ByteArrayValue(bytesOf(e)).Level(min(i, 1), def+1, col))
		}
	}
}

func (s *ckptShredder) dv(c ckptDVLeaves, d *DeletionVector) {
	if d == nil {
		for _, col := range []int{c.storage, c.path, c.offset, c.size, c.cardinality} {
			s.null(col, 1)
		}
		return
	}
	s.str(c.storage, d.StorageType, 3)
	s.str(c.path, d.PathOrInlineDV, 3)
	optional(s, c.offset, d.Offset, 3, (*ckptShredder).i32)
	s.i32(c.size, d.SizeInBytes, 3)
	s.i64(c.cardinality, d.Cardinality, 3)
}

// row appends one action as a checkpoint row, with toCkptRow's mapping of
// the action's fields to the checkpoint's.
func (s *ckptShredder) row(a *Action) {
	c := s.c
	if t := a.Txn; t != nil {
		s.str(c.txnAppID, t.AppID, 2)
		s.i64(c.txnVersion, t.Version, 2)
		optional(s, c.txnLastUpdated, t.LastUpdated, 2, (*ckptShredder).i64)
	} else {
		s.nulls(c.txnLo, c.txnHi, 0)
	}
	if x := a.Add; x != nil {
		s.str(c.addPath, x.Path, 2)
		pv := x.PartitionValues
		if pv == nil {
			pv = map[string]*string{}
		}
		s.ptrMap(c.addPVKey, c.addPVValue, pv, 2)
		s.i64(c.addSize, x.Size, 2)
		s.i64(c.addModTime, x.ModificationTime, 2)
		s.boolean(c.addDataChange, x.DataChange, 2)
		s.strMap(c.addTagKey, c.addTagValue, x.Tags, 2)
		s.dv(c.addDV, x.DeletionVector)
		optional(s, c.addBaseRowID, x.BaseRowID, 2, (*ckptShredder).i64)
		optional(s, c.addDefaultRowCV, x.DefaultRowCommitVersion, 2, (*ckptShredder).i64)
		s.nonEmptyStr(c.addClustering, x.ClusteringProvider, 2)
		s.nonEmptyStr(c.addStats, x.Stats, 2)
	} else {
		s.nulls(c.addLo, c.addHi, 0)
	}
	if x := a.Remove; x != nil {
		s.str(c.rmPath, x.Path, 2)
		optional(s, c.rmDelTS, x.DeletionTimestamp, 2, (*ckptShredder).i64)
		s.boolean(c.rmDataChange, x.DataChange, 2)
		optional(s, c.rmExtended, x.ExtendedFileMetadata, 2, (*ckptShredder).boolean)
		s.ptrMap(c.rmPVKey, c.rmPVValue, x.PartitionValues, 2)
		optional(s, c.rmSize, x.Size, 2, (*ckptShredder).i64)
		s.strMap(c.rmTagKey, c.rmTagValue, x.Tags, 2)
		s.dv(c.rmDV, x.DeletionVector)
		optional(s, c.rmBaseRowID, x.BaseRowID, 2, (*ckptShredder).i64)
		optional(s, c.rmDefaultRowCV, x.DefaultRowCommitVersion, 2, (*ckptShredder).i64)
	} else {
		s.nulls(c.rmLo, c.rmHi, 0)
	}
	if m := a.MetaData; m != nil {
		s.str(c.mdID, m.ID, 2)
		s.nonEmptyStr(c.mdName, m.Name, 2)
		s.nonEmptyStr(c.mdDescription, m.Description, 2)
		s.str(c.mdProvider, m.Format.Provider, 3)
		opts := m.Format.Options
		if opts == nil {
			opts = map[string]string{}
		}
		s.strMap(c.mdOptKey, c.mdOptValue, opts, 3)
		s.str(c.mdSchema, m.SchemaString, 2)
		pc := m.PartitionColumns
		if pc == nil {
			pc = []string{}
		}
		s.list(c.mdPartCols, pc, 2)
		conf := m.Configuration
		if conf == nil {
			conf = map[string]string{}
		}
		s.strMap(c.mdConfKey, c.mdConfValue, conf, 2)
		optional(s, c.mdCreated, m.CreatedTime, 2, (*ckptShredder).i64)
	} else {
		s.nulls(c.mdLo, c.mdHi, 0)
	}
	if p := a.Protocol; p != nil {
		s.i32(c.protoReader, int32(p.MinReaderVersion), 2)
		s.i32(c.protoWriter, int32(p.MinWriterVersion), 2)
		s.list(c.protoReaderFeatures, p.ReaderFeatures, 2)
		s.list(c.protoWriterFeatures, p.WriterFeatures, 2)
	} else {
		s.nulls(c.protoLo, c.protoHi, 0)
	}
	if d := a.DomainMetadata; d != nil {
		s.str(c.domDomain, d.Domain, 2)
		s.str(c.domConfig, d.Configuration, 2)
		s.boolean(c.domRemoved, d.Removed, 2)
	} else {
		s.nulls(c.domLo, c.domHi, 0)
	}
	s.rows++
}

// write hands the pending rows to the column writers, one leaf at a time.
func (s *ckptShredder) write(cws []*parquet.ColumnWriter) error {
	if s.rows == 0 {
		return nil
	}
	runs := ckptNullRuns()
	for c, vals := range s.cols {
		if len(vals) == 0 {
			// nothing but nulls: the shared run
			vals = runs[c][s.runDef[c]][:s.run[c]]
			s.run[c] = 0
		} else {
			s.endRun(c)
			vals = s.cols[c]
		}
		if _, err := cws[c].WriteRowValues(vals); err != nil {
			return err
		}
		if len(s.cols[c]) > 0 {
			clear(s.cols[c]) // drop the references to the actions' strings
			s.cols[c] = s.cols[c][:0]
		}
	}
	s.rows = 0
	return nil
}
