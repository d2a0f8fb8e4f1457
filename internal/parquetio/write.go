package parquetio

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/google/uuid"
	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/compress"
	"github.com/parquet-go/parquet-go/compress/gzip"
	"github.com/parquet-go/parquet-go/compress/lz4"
	"github.com/parquet-go/parquet-go/compress/snappy"
	"github.com/parquet-go/parquet-go/compress/uncompressed"
	"github.com/parquet-go/parquet-go/compress/zstd"
	"github.com/parquet-go/parquet-go/encoding/thrift"
	"github.com/parquet-go/parquet-go/format"
	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// WriteOptions configures WriteFiles and NewFileWriter.
type WriteOptions struct {
	// PartitionColumns are top-level columns whose values pick the Hive-style
	// directory of each row; they are not stored in the data files (as
	// Spark/Delta do). Default none.
	PartitionColumns []string
	// TargetFileSizeBytes rolls to a new file once the writer's estimated
	// size (flushed bytes plus buffered, uncompressed data) reaches it.
	// Default (0) 128 MiB.
	TargetFileSizeBytes int64
	// RowGroupSizeBytes flushes a row group once its data reaches it, as
	// parquet-go estimates it (pages already compressed plus the values not
	// yet paged), so a row group holds about this many compressed bytes, as
	// with parquet-mr's parquet.block.size. Default (0) 128 MiB.
	RowGroupSizeBytes int64
	// RowGroupRows caps the rows of a row group, so that a file of many
	// rows has row groups that readers can split between tasks and that a
	// writer holds in memory one at a time. Default (0) 1,048,576
	// (1024 * 1024), the row cap of arrow-rs's parquet writer
	// (DEFAULT_MAX_ROW_GROUP_SIZE in parquet/src/file/properties.rs), which
	// delta-rs writes with, and of pyarrow's write_table (apache/arrow#34281);
	// parquet-mr caps by bytes only (RowGroupSizeBytes). -1: no cap.
	RowGroupRows int64
	// Compression is "snappy" (default), "zstd", "gzip", "lz4" (LZ4_RAW) or
	// "none"/"uncompressed".
	Compression string
	// NumIndexedCols is how many leaf columns get statistics (Delta's
	// delta.dataSkippingNumIndexedCols). Default (0) 32; -1 = all.
	NumIndexedCols int
	// NoStats writes only numRecords in the stats.
	NoStats bool
	// PhysicalNames names the Parquet columns by their column-mapping
	// physical names and sets field ids (see SchemaOptions).
	PhysicalNames bool
	// FileName names each data file, given its 0-based sequence number in
	// the call and the codec's file-name extension (".snappy", ".zstd",
	// ".gz", ".lz4raw" or ""). Default: Delta's
	// "part-%05d-<uuid>.c000<ext>.parquet". Spark's file sink uses
	// "part-%05d-<uuid>-c%03d<ext>.parquet".
	FileName func(partIndex int, codecExt string) string
	// Workers is how many partitions are written at once, and how many
	// files are closed at once (a write of one partition writes its
	// file's columns in parallel lanes instead, one per CPU). Closing many
	// small files is mostly waiting for the store (uploads), so a
	// partitioned batch goes much faster in parallel. Default (0): 8;
	// fewer for schemas of more than 512 leaf columns, whose open files'
	// buffers would pass 256 MiB (see partitionWorkers).
	Workers int
	// KeyValueMetadata is added to every file's footer.
	KeyValueMetadata map[string]string
}

const (
	defaultTargetFileSize = 128 << 20
	defaultRowGroupSize   = 128 << 20
	defaultRowGroupRows   = 1 << 20
	defaultIndexedCols    = 32
)

// DefaultWriteOptions returns the defaults spelled out.
func DefaultWriteOptions() WriteOptions {
	return WriteOptions{
		TargetFileSizeBytes: defaultTargetFileSize,
		RowGroupSizeBytes:   defaultRowGroupSize,
		RowGroupRows:        defaultRowGroupRows,
		Compression:         "snappy",
		NumIndexedCols:      defaultIndexedCols,
	}
}

// Validate lists every invalid setting; errors wrap ErrOptions.
func (o WriteOptions) Validate() error {
	var errs []error
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: TargetFileSizeBytes %d < 0", ErrOptions, o.TargetFileSizeBytes))
	}
	if o.RowGroupSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: RowGroupSizeBytes %d < 0", ErrOptions, o.RowGroupSizeBytes))
	}
	if o.RowGroupRows < -1 {
		errs = append(errs, fmt.Errorf("%w: RowGroupRows %d < -1", ErrOptions, o.RowGroupRows))
	}
	if o.NumIndexedCols < -1 {
		errs = append(errs, fmt.Errorf("%w: NumIndexedCols %d < -1", ErrOptions, o.NumIndexedCols))
	}
	if _, _, err := codecOf(o.Compression); err != nil {
		errs = append(errs, err)
	}
	seen := map[string]bool{}
	for _, c := range o.PartitionColumns {
		if seen[c] {
			errs = append(errs, fmt.Errorf("%w: partition column %q repeated", ErrOptions, c))
		}
		seen[c] = true
	}
	return errors.Join(errs...)
}

func (o WriteOptions) withDefaults() WriteOptions {
	if o.Workers <= 0 {
		o.Workers = 8
	}
	if o.TargetFileSizeBytes == 0 {
		o.TargetFileSizeBytes = defaultTargetFileSize
	}
	if o.RowGroupSizeBytes == 0 {
		o.RowGroupSizeBytes = defaultRowGroupSize
	}
	if o.RowGroupRows == 0 {
		o.RowGroupRows = defaultRowGroupRows
	}
	if o.NumIndexedCols == 0 {
		o.NumIndexedCols = defaultIndexedCols
	}
	if o.NoStats {
		o.NumIndexedCols = 0
	}
	if o.Compression == "" {
		o.Compression = "snappy"
	}
	return o
}

// Compressions are the compression names every writer accepts (data files,
// checkpoints, OPTIMIZE, the file sink), case-insensitively: the one codec
// table is codecOf.
var Compressions = []string{"snappy", "zstd", "gzip", "lz4", "lz4_raw", "none", "uncompressed"}

// CheckCompression reports whether name is a codec writers accept ("" is
// snappy); the error wraps ErrOptions and lists the accepted names.
func CheckCompression(name string) error {
	_, _, err := codecOf(name)
	return err
}

// CompressionExtension is the file-name extension of a codec as parquet-mr
// names files (CompressionCodecName.getExtension): ".snappy", ".zstd",
// ".gz", ".lz4raw", "" for none.
func CompressionExtension(name string) (string, error) {
	_, ext, err := codecOf(name)
	return ext, err
}

// codecOf maps a compression name to parquet-go's codec and the file-name
// extension parquet-mr uses (CompressionCodecName.getExtension). Levels are
// spelled out: the zero values of parquet-go's codec structs are not the
// defaults (a zero gzip.Codec stores without compressing, and a zero
// lz4.Codec runs the unbounded-depth LZ4 HC search, ~20x slower than
// snappy); gzip uses the default level as parquet-mr does, lz4 the fast block
// compressor (LZ4_RAW as Arrow and parquet-mr write it).
func codecOf(name string) (compress.Codec, string, error) {
	switch strings.ToLower(name) {
	case "", "snappy":
		return &snappy.Codec{}, ".snappy", nil
	case "zstd":
		return &zstd.Codec{Level: zstd.DefaultLevel}, ".zstd", nil
	case "gzip":
		return &gzip.Codec{Level: gzip.DefaultCompression}, ".gz", nil
	case "lz4", "lz4_raw":
		return &lz4.Codec{Level: lz4.Fastest}, ".lz4raw", nil
	case "none", "uncompressed":
		return &uncompressed.Codec{}, "", nil
	}
	return nil, "", fmt.Errorf("%w: unknown compression %q (want one of %s)", ErrOptions, name, strings.Join(Compressions, ", "))
}

// DeltaFileName is the default FileName: "part-00000-<uuid>.c000.snappy.parquet".
func DeltaFileName(partIndex int, codecExt string) string {
	return fmt.Sprintf("part-%05d-%s.c000%s.parquet", partIndex, uuid.NewString(), codecExt)
}

// SparkFileName returns a FileName for Spark's file sink layout,
// "part-00000-<jobID>-c000.snappy.parquet" (Spark's
// HadoopMapReduceCommitProtocol.getFilename: part-%05d-<jobId><ext> with the
// -c%03d file counter of the task). jobID is one UUID per batch.
func SparkFileName(jobID string) func(partIndex int, codecExt string) string {
	return func(partIndex int, codecExt string) string {
		return fmt.Sprintf("part-%05d-%s-c000%s.parquet", partIndex, jobID, codecExt)
	}
}

// WrittenFile describes one data file written by WriteFiles (what a Delta add
// action or a file-sink log entry needs).
type WrittenFile struct {
	// Path relative to the store root, a plain (unescaped) storage key:
	// "origin=SFO/part-00000-….c000.snappy.parquet".
	Path string
	// PartitionValues: Delta-serialized partition values (nil = null).
	PartitionValues map[string]*string
	Size            int64
	NumRecords      int64
	// Stats is the Delta stats JSON (PROTOCOL.md, "Per-file Statistics").
	Stats            string
	ModificationTime time.Time
}

// WriteFiles writes the batch as Parquet data files into store, grouped by
// partition and rolled at the target size, and returns them in writing order.
// Every row is validated first: a row that does not fit the schema fails the
// call with a *RowError (errors.Is ErrRowMismatch) before anything is written.
// Files become visible one by one as they are closed; on a later error the
// files written so far are deleted (best effort) and the error returned. An
// empty batch writes nothing.
func WriteFiles(ctx context.Context, store storage.Store, batch *schema.Batch, opts WriteOptions) ([]WrittenFile, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	if batch == nil || batch.Schema == nil {
		return nil, fmt.Errorf("%w: batch has no schema", schema.ErrSchema)
	}
	if err := schema.ValidateForWrite(batch.Schema); err != nil {
		return nil, err
	}
	// Validate every row first: nothing is written if one does not fit.
	bw, err := NewBatchWriter(store, batch.Schema, opts)
	if err != nil {
		return nil, err
	}
	if err := checkArity(batch.Rows, len(batch.Schema.Fields)); err != nil {
		return nil, err
	}
	if err := validateColumns(bw.lay, batch.Rows, bw.lay.dataIdx); err != nil {
		return nil, err
	}
	if len(batch.Rows) == 0 {
		return nil, nil
	}
	// Partitions are written in parallel; the files come back in group
	// order, and each file gets its sequence number when it is created.
	bw.closeAtEnd = true
	if err := bw.write(ctx, batch.Rows, false); err != nil {
		bw.Abort(ctx)
		return nil, err
	}
	return bw.Close(ctx)
}

// pageBufferSize is the data page size the writer buffers per column.
const pageBufferSize = 64 << 10

// columnBufferBytes is about what parquet-go buffers per column of an open
// file before its first page is flushed (measured: ~32 KiB per column for a
// 65,535-column file; twice that for margin).
const columnBufferBytes = 64 << 10

// openFilesBudget bounds the column buffers of the files WriteFiles keeps
// open at once (256 MiB).
const openFilesBudget = 256 << 20

// partitionWorkers is how many partitions WriteFiles writes at once: workers,
// fewer for wide schemas so that the open files' column buffers stay within
// openFilesBudget (a 65,535-column file needs about 2 GiB of buffers for its
// first row; eight of them at once would need 16 GiB). At least one.
func partitionWorkers(workers, numCols int) int {
	return max(1, min(workers, openFilesBudget/(max(numCols, 1)*columnBufferBytes)))
}

func checkArity(rows [][]any, n int) error {
	for i, row := range rows {
		if len(row) != n {
			return &schema.RowError{Row: i, Err: fmt.Errorf("record has %d values, schema has %d fields", len(row), n)}
		}
	}
	return nil
}

// validateColumns checks every value of the data columns (column by column,
// which is faster; the lanes of p in parallel for large batches) and reports
// the failure with the lowest row index (then the lowest field).
func validateColumns(lay *layout, rows [][]any, idx []int) error {
	lanes := lay.lanes
	if len(rows) < 4*writeChunkRows {
		lanes = [][]int{nil}
	}
	firsts := make([]*schema.RowError, len(lanes))
	fieldOf := make([]int, len(lanes))
	if len(lanes) == 1 {
		// On the caller's goroutine: one of its own would first wait for
		// a P (see BatchWriter.writeGroups).
		firsts[0], fieldOf[0] = validateFields(lay.plan, rows, idx, lanes[0])
	} else {
		var eg errgroup.Group
		for k, fields := range lanes {
			eg.Go(func() error {
				firsts[k], fieldOf[k] = validateFields(lay.plan, rows, idx, fields)
				return nil
			})
		}
		_ = eg.Wait()
	}
	var first *schema.RowError
	field := 0
	for k, e := range firsts {
		if e != nil && (first == nil || e.Row < first.Row || (e.Row == first.Row && fieldOf[k] < field)) {
			first, field = e, fieldOf[k]
		}
	}
	if first != nil {
		return first
	}
	return nil
}

// validateFields checks the plan fields listed in fields (nil: all) and
// returns the failure with the lowest row index and its field, or nil.
func validateFields(p *writePlan, rows [][]any, idx []int, fields []int) (*schema.RowError, int) {
	if fields == nil {
		fields = make([]int, len(p.fields))
		for j := range fields {
			fields[j] = j
		}
	}
	var first *schema.RowError
	field := 0
	for _, j := range fields {
		n := p.fields[j]
		fi := idx[j]
		limit := len(rows)
		if first != nil {
			limit = first.Row + 1
		}
		if n.kind == nkLeaf && n.leaf != lkDec32 && n.leaf != lkDec64 && n.leaf != lkDecFixed {
			if i := firstMismatch(n, rows[:limit], fi); i >= 0 {
				fe := validate(rows[i][fi], n)
				if first == nil || i < first.Row {
					first, field = &schema.RowError{Row: i, Field: fe.at(n.name).dotted(), Err: fe.err}, j
				}
			}
			continue
		}
		for i, row := range rows[:limit] {
			if fe := validate(row[fi], n); fe != nil {
				if first == nil || i < first.Row {
					first, field = &schema.RowError{Row: i, Field: fe.at(n.name).dotted(), Err: fe.err}, j
				}
				break
			}
		}
	}
	return first, field
}

// firstMismatch is the index of the first row whose value in column fi does
// not fit the primitive leaf n, or -1.
func firstMismatch(n *wnode, rows [][]any, fi int) int {
	switch n.leaf {
	case lkString:
		return firstNot[string](rows, fi, n.optional)
	case lkLong:
		return firstNot[int64](rows, fi, n.optional)
	case lkInt:
		return firstNot[int32](rows, fi, n.optional)
	case lkDouble:
		return firstNot[float64](rows, fi, n.optional)
	case lkTimestamp, lkTimestampNTZ:
		return firstNot[time.Time](rows, fi, n.optional)
	}
	for i, row := range rows {
		if validate(row[fi], n) != nil {
			return i
		}
	}
	return -1
}

// firstNot is the first row whose value in column fi is not a T (or is a
// null in a required column), or -1.
func firstNot[T any](rows [][]any, fi int, optional bool) int {
	for i, row := range rows {
		v := row[fi]
		if v == nil {
			if !optional {
				return i
			}
			continue
		}
		if _, ok := v.(T); !ok {
			return i
		}
	}
	return -1
}

type partGroup struct {
	key    string // distinct per partition values (null apart from any string)
	values map[string]*string
	rows   []int // nil: every row of the batch (unpartitioned)
}

// partitionGroups validates and serializes partition values and groups the
// rows by partition, in order of first appearance. New groups take their
// row index slices from free (when not nil), which a streamed batch refills
// after each chunk (229 airports: 73 MiB of slices grown per 3M rows
// before).
func (l *layout) partitionGroups(batch *schema.Batch, free *[][]int) ([]*partGroup, error) {
	if len(l.partIdx) == 0 {
		if len(batch.Rows) == 0 {
			return nil, nil
		}
		return []*partGroup{{values: map[string]*string{}}}, nil
	}
	return l.partitionGroupsOf(len(batch.Rows), batch.Schema, func(i, fi int) any { return batch.Rows[i][fi] }, nil, nil, free)
}

// partitionGroupsOf is partitionGroups for n rows of schema sch (at least
// one partition column) whose field fi of row i is value(i, fi). With one
// partition column, strs (when not nil) are its values as strings, row i
// null when nulls[i] (nulls may be nil): a row whose string was seen before
// goes to its group without value being called (a columnar chunk's
// partition column is then neither boxed nor hashed as an any).
func (l *layout) partitionGroupsOf(n int, sch *schema.StructType, value func(i, fi int) any, strs []string, nulls []bool, free *[][]int) ([]*partGroup, error) {
	var groups []*partGroup
	byKey := map[string]*partGroup{}
	var key strings.Builder
	pvals := make([]*string, len(l.partIdx))
	// One partition column: rows go to their group by the value itself,
	// serialized once per distinct value (a value of a type whose == is
	// the serialized value's equality; others take the serializing path).
	var byValue map[any]*partGroup
	if len(l.partIdx) == 1 {
		byValue = map[any]*partGroup{}
	}
	var byString map[string]*partGroup
	if len(l.partIdx) == 1 && strs != nil {
		byString = map[string]*partGroup{}
	}
	var bySlot *[strSlots]strSlot
	if byString != nil {
		bySlot = new([strSlots]strSlot)
	}
	for i := range n {
		cacheString := false
		if byString != nil && (nulls == nil || !nulls[i]) {
			s := strs[i]
			slot := &bySlot[strSlotOf(s)]
			if slot.g != nil && slot.p == unsafe.StringData(s) && slot.n == len(s) {
				slot.g.rows = append(slot.g.rows, i)
				continue
			}
			if g := byString[s]; g != nil {
				*slot = strSlot{unsafe.StringData(s), len(s), g}
				g.rows = append(g.rows, i)
				continue
			}
			cacheString = true
		}
		var cacheKey any
		if byValue != nil {
			switch v := value(i, l.partIdx[0]).(type) {
			case string, int64, int32, int16, int8, bool, schema.Date:
				if g := byValue[v]; g != nil {
					g.rows = append(g.rows, i)
					continue
				}
				cacheKey = v
			}
		}
		key.Reset()
		for j, fi := range l.partIdx {
			f := sch.Fields[fi]
			v := value(i, fi)
			if v == nil && !f.Nullable {
				return nil, &schema.RowError{Row: i, Field: f.Name, Err: errNull}
			}
			s, err := SerializePartitionValue(v, f.Type)
			if err != nil {
				return nil, &schema.RowError{Row: i, Field: f.Name, Err: err}
			}
			pvals[j] = s
			if s == nil {
				key.WriteString("\x00N")
			} else {
				key.WriteString("\x00V")
				key.WriteString(*s)
			}
		}
		g := byKey[key.String()]
		if g == nil {
			g = &partGroup{key: key.String(), values: make(map[string]*string, len(l.partIdx))}
			if free != nil && len(*free) > 0 {
				g.rows = (*free)[len(*free)-1][:0]
				*free = (*free)[:len(*free)-1]
			}
			for j, fi := range l.partIdx {
				g.values[l.partKey(sch.Fields[fi])] = pvals[j]
			}
			byKey[key.String()] = g
			groups = append(groups, g)
		}
		if cacheKey != nil {
			byValue[cacheKey] = g
		}
		if cacheString {
			byString[strs[i]] = g
			bySlot[strSlotOf(strs[i])] = strSlot{unsafe.StringData(strs[i]), len(strs[i]), g}
		}
		g.rows = append(g.rows, i)
	}
	return groups, nil
}

// strSlots is the size of partitionGroupsOf's cache of string groups by
// address: the columnar reader cuts a dictionary page's strings from one
// allocation (cutStrings), so the rows of one value share its bytes, and a
// string whose data pointer and length are a slot's is that slot's value
// without hashing it (the map lookup per row was 14 ns of a chunk's serial
// split; 229 airports, 128Ki rows: BenchmarkPartitionColumnGroups).
const (
	strSlotBits = 10
	strSlots    = 1 << strSlotBits
)

// strSlot is a string's data pointer and length and the group of its value.
type strSlot struct {
	p *byte
	n int
	g *partGroup
}

// strSlotOf is the slot of partitionGroupsOf's address cache for s: a
// Fibonacci hash of its data pointer (a key's bytes are not read).
func strSlotOf(s string) int {
	return int((uint64(uintptr(unsafe.Pointer(unsafe.StringData(s)))) * 0x9E3779B97F4A7C15) >> (64 - strSlotBits))
}

// writeChunkRows is how many rows are shredded before each WriteRows call.
const writeChunkRows = 512

// layout is a compiled batch schema: data columns, partition columns, the
// Parquet schema and writer options, shared by the files of one call.
type layout struct {
	schema     *schema.StructType // full schema
	dataSchema *schema.StructType
	partIdx    []int
	partKeys   []string // PartitionValues keys, in partition column order
	dataIdx    []int
	plan       *writePlan
	pschema    *parquet.Schema
	codec      compress.Codec
	codecExt   string
	opts       WriteOptions
	// deferSync: data files are written by storage.NewDeferredWriter and
	// made durable together by the BatchWriter's Close (SyncObjects).
	deferSync bool
	// lanes splits the data fields (plan field indexes) into groups of
	// about equal work, one per CPU: each lane shreds its fields and feeds
	// their column writers on its own goroutine (columns are independent
	// until the row group is flushed).
	lanes [][]int
}

func newLayout(s *schema.StructType, opts WriteOptions) (*layout, error) {
	l := &layout{schema: s, opts: opts}
	isPart := make([]bool, len(s.Fields))
	for _, c := range opts.PartitionColumns {
		i := s.FieldIndex(c)
		if i < 0 {
			return nil, fmt.Errorf("%w: %w", schema.ErrSchema, schema.CheckPartitionColumns(s, []string{c}))
		}
		switch s.Fields[i].Type.(type) {
		case schema.PrimitiveType, schema.DecimalType:
		default:
			return nil, fmt.Errorf("%w: %w", schema.ErrSchema,
				&schema.PartitionColumnError{Problem: schema.PartitionColumnNested, Column: c, Type: schema.FormatType(s.Fields[i].Type)})
		}
		isPart[i] = true
		l.partIdx = append(l.partIdx, i)
		l.partKeys = append(l.partKeys, l.partKey(s.Fields[i]))
	}
	l.dataSchema = &schema.StructType{}
	for i, f := range s.Fields {
		if !isPart[i] {
			l.dataIdx = append(l.dataIdx, i)
			l.dataSchema.Fields = append(l.dataSchema.Fields, f)
		}
	}
	if len(l.dataSchema.Fields) == 0 {
		return nil, fmt.Errorf("%w: every column is a partition column; a data file needs at least one data column", schema.ErrSchema)
	}
	var err error
	if l.plan, err = compilePlan(l.dataSchema, opts.NumIndexedCols, opts.PhysicalNames); err != nil {
		return nil, err
	}
	if l.pschema, err = ParquetSchema(l.dataSchema, SchemaOptions{PhysicalNames: opts.PhysicalNames}); err != nil {
		return nil, err
	}
	if l.codec, l.codecExt, err = codecOf(opts.Compression); err != nil {
		return nil, err
	}
	l.lanes = splitLanes(l.plan, runtime.GOMAXPROCS(0))
	return l, nil
}

// splitLanes assigns the plan's fields to at most n lanes so that the
// heaviest lane is as light as possible. A leaf column weighs 5, a byte-array
// leaf (strings, binaries, wide decimals) 9: measured on the flights rows, a
// string column costs about 1.8x an int64 or timestamp column to shred,
// compare for stats, encode and compress. Small schemas get the best split
// by a bounded search; the rest, and any search that runs out of budget, the
// greedy split (heaviest field to the lightest lane).
func splitLanes(p *writePlan, n int) [][]int {
	n = max(1, min(n, len(p.fields)))
	weight := make([]int, len(p.fields))
	order := make([]int, len(p.fields))
	for j, f := range p.fields {
		order[j] = j
		var walk func(*wnode)
		walk = func(x *wnode) {
			if x.kind == nkLeaf {
				weight[j] += 5
				if x.leaf == lkString || x.leaf == lkBinary || x.leaf == lkDecFixed {
					weight[j] += 4
				}
				return
			}
			for _, c := range x.children {
				walk(c)
			}
		}
		walk(f)
	}
	sort.SliceStable(order, func(a, b int) bool { return weight[order[a]] > weight[order[b]] })

	// Greedy: each field, heaviest first, to the lightest lane.
	best := make([]int, len(order)) // lane of order[i]
	load := make([]int, n)
	for i, j := range order {
		k := 0
		for l := range load {
			if load[l] < load[k] {
				k = l
			}
		}
		best[i] = k
		load[k] += weight[j]
	}
	bestMax := slices.Max(load)

	// Bounded depth-first search for a lighter heaviest lane: fields in
	// weight order, a new lane opened only as the next empty one (lanes are
	// interchangeable), branches pruned at the best maximum so far.
	cur := make([]int, len(order))
	clear(load)
	budget := 200_000
	var search func(i, used, curMax int)
	search = func(i, used, curMax int) {
		if budget--; budget < 0 || curMax >= bestMax {
			return
		}
		if i == len(order) {
			bestMax = curMax
			copy(best, cur)
			return
		}
		w := weight[order[i]]
		for k := 0; k < min(used+1, n); k++ {
			load[k] += w
			cur[i] = k
			search(i+1, max(used, k+1), max(curMax, load[k]))
			load[k] -= w
		}
	}
	search(0, 0, 0)

	lanes := make([][]int, n)
	for i, j := range order {
		lanes[best[i]] = append(lanes[best[i]], j)
	}
	// A lane the search left empty takes a field from a lane with several
	// (never heavier than before; more parallel).
	for e := range lanes {
		if len(lanes[e]) > 0 {
			continue
		}
		for k := range lanes {
			if len(lanes[k]) > 1 {
				last := len(lanes[k]) - 1 // the lightest: fields went in weight order
				lanes[e], lanes[k] = lanes[k][last:], lanes[k][:last]
				break
			}
		}
	}
	for _, l := range lanes {
		sort.Ints(l)
	}
	return lanes
}

// partKey is a partition column's key in PartitionValues and its directory
// name: the physical name with column mapping (PROTOCOL.md, "Column
// Mapping": partitionValues use physical names), else the logical name.
func (l *layout) partKey(f schema.StructField) string {
	if l.opts.PhysicalNames {
		return f.PhysicalName()
	}
	return f.Name
}

// sparkRowMetadataKey is the footer key where Spark stores its schema JSON.
const sparkRowMetadataKey = "org.apache.spark.sql.parquet.row.metadata"

func (l *layout) newFileWriter(ctx context.Context, store storage.Store, path string) (*FileWriter, error) {
	return l.newFileWriterSized(ctx, store, path, dictionaryPageBytes, pageBufferSize)
}

// newFileWriterSized is newFileWriter with a column's dictionary bounded by
// dictMaxBytes (at most dictionaryPageBytes) before it falls back to PLAIN,
// and data pages of pageBytes (at most pageBufferSize).
func (l *layout) newFileWriterSized(ctx context.Context, store storage.Store, path string, dictMaxBytes, pageBytes int64) (*FileWriter, error) {
	var sw storage.Writer
	var err error
	if l.deferSync {
		sw, err = storage.NewDeferredWriter(ctx, store, path)
	} else {
		sw, err = store.NewWriter(ctx, path)
	}
	if err != nil {
		return nil, fmt.Errorf("create data file %s: %w", path, err)
	}
	cw := NewStatsLimitingWriter(sw)
	wopts := append([]parquet.WriterOption{
		l.pschema,
		// 64 KiB data pages (parquet-go's default is 256 KiB, parquet-mr's
		// 1 MiB): a lane's column buffers then stay in the CPU caches;
		// measured on the 3M flights rows, writing is ~9% faster and files
		// ~3% larger (more page headers); readers with the page index skip
		// at a finer grain.
		parquet.PageBufferSize(int(min(pageBytes, pageBufferSize))),
	}, SparkWriterOptions(l.codec)...)
	// Data files are dictionary-encoded as parquet-mr's are by default.
	wopts = append(wopts, DictionaryOptions()...)
	if dictMaxBytes < dictionaryPageBytes {
		wopts = append(wopts, parquet.DictionaryMaxBytes(dictMaxBytes))
	}
	// A file given a share of the budgets (one of many open files) writes
	// through a buffer it holds only while writing (pooledWriter).
	var pool *pooledWriter
	var out io.Writer = cw
	if pageBytes < pageBufferSize {
		pool = &pooledWriter{w: cw}
		out = pool
		wopts = append(wopts, parquet.ColumnPageBuffers(sharedPageBuffers), parquet.WriteBufferSize(0))
	}
	if !l.opts.PhysicalNames {
		if js, err := l.dataSchema.MarshalJSON(); err == nil {
			wopts = append(wopts, parquet.KeyValueMetadata(sparkRowMetadataKey, string(js)))
		}
	}
	for k, v := range l.opts.KeyValueMetadata {
		wopts = append(wopts, parquet.KeyValueMetadata(k, v))
	}
	if _, err := parquet.NewWriterConfig(wopts...); err != nil {
		_ = sw.Abort()
		return nil, fmt.Errorf("%w: writer config for %s: %v", ErrOptions, path, err)
	}
	fw := &FileWriter{
		store: store,
		path:  path,
		lay:   l,
		sw:    sw,
		cw:    cw,
		// The options, not cfg: a *WriterConfig passed as an option is
		// merged into the defaults with its booleans OR-ed, which would turn
		// the page statistics back on.
		pw:    parquet.NewWriter(out, wopts...),
		pool:  pool,
		shred: newShredder(l.plan),
	}
	fw.identity = make([]int, len(l.plan.fields))
	for i := range fw.identity {
		fw.identity[i] = i
	}
	return fw, nil
}

// sharedPageBuffers hold the compressed pages of a column chunk of a file
// given a share of a BatchWriter's page budget (many open files) until its
// row group is flushed, in 4 KiB chunks: parquet-go's default pool takes
// 32 KiB at least per column, 29 MiB for the 916 columns of the 229
// airports' files, whose pages are ~27 KiB a column in all.
var sharedPageBuffers = parquet.NewChunkBufferPool(4 << 10)

// FileWriter streams records of one schema into one Parquet data file. Use
// it to write files whose rows do not fit in memory at once (compaction);
// WriteFiles uses it for each file. Not safe for concurrent use.
type FileWriter struct {
	store      storage.Store
	path       string
	lay        *layout
	sw         storage.Writer
	cw         *StatsLimitingWriter
	pw         *parquet.Writer
	pool       *pooledWriter // when not nil, what pw writes through (pw's own buffer off): released after each row group and at Close
	shred      *shredder
	laneChunks [][][]any // per lane: the records of the chunk it shreds
	identity   []int     // 0..n-1: field indexes for records of the data schema
	groupRows  int64     // records in the current row group
	groupStart int64     // the file's estimated size when the current row group began
	// size is pw.Size() as of the end of the last segment or row-group
	// flush (writeSegment, flushRowGroup): nothing else writes to pw, so it
	// is the file's estimated size until the next. Asked of pw up to five
	// times a segment, the sum over the columns' buffers and dictionaries
	// was 3.4% of the CPU of the 3M flights by origin (229 files, a
	// segment per file per 32,768-row chunk).
	size       int64
	numRecords int64
	partValues map[string]*string
	closed     bool
	// pre, when set, holds the values of every row of the rows being
	// written, shredded in row order (one array per column, BatchWriter's
	// preShred): the lanes copy them out instead of shredding the rows.
	pre [][]parquet.Value
	// vecs, when set, are the typed vectors of a columnar chunk (vecs[j]
	// holds field j of the plan): the lanes build their rows' values from
	// them (vectorValues).
	vecs []*schema.Vector
	// serialLanes: the lanes run one after another on the caller's
	// goroutine (a BatchWriter writing several partitions at once).
	serialLanes bool
}

// NewFileWriter opens a data file at path (relative to store) for records of
// schema (data columns only: no partition columns; opts.PartitionColumns is
// ignored). The file is invisible until Close.
func NewFileWriter(ctx context.Context, store storage.Store, path string, sch *schema.StructType, opts WriteOptions) (*FileWriter, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	opts.PartitionColumns = nil
	if err := schema.ValidateForWrite(sch); err != nil {
		return nil, err
	}
	lay, err := newLayout(sch, opts)
	if err != nil {
		return nil, err
	}
	return lay.newFileWriter(ctx, store, path)
}

// SetPartitionValues sets the PartitionValues reported by Close.
func (w *FileWriter) SetPartitionValues(v map[string]*string) { w.partValues = v }

// Write validates and writes records (each with one value per schema
// field). If one does not fit, it fails with a *RowError whose Row indexes
// rows, and none of these rows is written.
func (w *FileWriter) Write(ctx context.Context, rows [][]any) error {
	if w.closed {
		return fmt.Errorf("write %s: file writer is closed", w.path)
	}
	if err := checkArity(rows, len(w.lay.plan.fields)); err != nil {
		return err
	}
	if err := validateColumns(w.lay, rows, w.identity); err != nil {
		return err
	}
	for start := 0; start < len(rows); {
		if err := ctx.Err(); err != nil {
			return err
		}
		took, err := w.writeRange(rows, nil, start, min(start+pipelineRows, len(rows)), w.identity, 0)
		if err != nil {
			return err
		}
		start += took
	}
	return nil
}

// EstimatedSize is the file's size so far: bytes flushed plus buffered data
// (uncompressed, so an upper bound).
func (w *FileWriter) EstimatedSize() int64 { return w.size }

// NumRecords is the number of records written so far.
func (w *FileWriter) NumRecords() int64 { return w.numRecords }

// pipelineRows bounds the rows of one writeRange call from FileWriter.Write
// (so that ctx is checked now and then).
const pipelineRows = 1 << 16

// maxSegmentRows bounds a segment: the rows the lanes write between two
// checks of the file and row-group sizes.
const maxSegmentRows = 16384

// segmentRows is how many rows the next segment may take: the first segment
// of a file is one chunk; later ones are sized from the bytes per row so far
// so that a segment does not overshoot the target file size or the row-group
// size by more than about one chunk, and cut short at the RowGroupRows
// boundary.
func (w *FileWriter) segmentRows(target int64) int {
	n := maxSegmentRows
	if w.numRecords == 0 {
		n = writeChunkRows
	} else {
		size := w.size
		perRow := max(size/w.numRecords, 1)
		room := int64(math.MaxInt64)
		if target > 0 {
			room = target - size
		}
		if rg := w.lay.opts.RowGroupSizeBytes; rg > 0 {
			room = min(room, rg-(size-w.groupStart))
		}
		n = int(max(min(room/perRow, int64(n)), writeChunkRows))
	}
	if rg := w.lay.opts.RowGroupRows; rg > 0 && rg-w.groupRows < int64(n) {
		n = int(max(rg-w.groupRows, 1))
	}
	return n
}

// writeRange writes validated rows [lo,hi) (row k is rows[sel[k]] when sel
// is not nil, else rows[k]; field j of the data schema is row[idx[j]]). It
// stops early, after whole segments, once the file's estimated size reaches
// target (> 0), and returns how many rows it wrote.
func (w *FileWriter) writeRange(rows [][]any, sel []int, lo, hi int, idx []int, target int64) (int, error) {
	pos := lo
	for pos < hi {
		end := min(pos+w.segmentRows(target), hi)
		if err := w.writeSegment(rows, sel, pos, end, idx); err != nil {
			return pos - lo, err
		}
		pos = end
		if target > 0 && w.size >= target {
			break
		}
	}
	return pos - lo, nil
}

// writeSegment shreds rows [lo,hi) and hands them to the column writers, each
// lane of fields on its own goroutine (started and waited for here), then
// ends the row group once it reached RowGroupSizeBytes or RowGroupRows.
func (w *FileWriter) writeSegment(rows [][]any, sel []int, lo, hi int, idx []int) error {
	lanes := w.lay.lanes
	if len(w.laneChunks) != len(lanes) {
		w.laneChunks = make([][][]any, len(lanes))
	}
	cws := w.pw.ColumnWriters()
	var err error
	if len(lanes) == 1 || hi-lo <= writeChunkRows || w.serialLanes {
		for k := range lanes {
			if err = w.writeLane(k, cws, rows, sel, lo, hi, idx); err != nil {
				break
			}
		}
	} else {
		var eg errgroup.Group
		for k := range lanes {
			eg.Go(func() error { return w.writeLane(k, cws, rows, sel, lo, hi, idx) })
		}
		err = eg.Wait()
	}
	if err != nil {
		return err
	}
	w.numRecords += int64(hi - lo)
	w.groupRows += int64(hi - lo)
	w.size = w.pw.Size()
	rgBytes, rgRows := w.lay.opts.RowGroupSizeBytes, w.lay.opts.RowGroupRows
	if (rgBytes > 0 && w.size-w.groupStart >= rgBytes) || (rgRows > 0 && w.groupRows >= rgRows) {
		return w.flushRowGroup()
	}
	return nil
}

// flushRowGroup ends the current row group (if it has rows).
func (w *FileWriter) flushRowGroup() error {
	if w.groupRows == 0 {
		return nil
	}
	if err := w.pw.Flush(); err != nil {
		return fmt.Errorf("flush row group of %s: %w", w.path, err)
	}
	if w.pool != nil {
		if err := w.pool.release(); err != nil {
			return fmt.Errorf("flush row group of %s: %w", w.path, err)
		}
	}
	w.groupRows = 0
	w.size = w.pw.Size()
	w.groupStart = w.size
	return nil
}

// bufferedBytes estimates the bytes of the current row group held in memory.
func (w *FileWriter) bufferedBytes() int64 { return w.size - w.groupStart }

// writeLane shreds the fields of lane k for rows [lo,hi), one chunk at a
// time, and writes each chunk's values to those fields' column writers
// (whole rows per column, as ColumnWriter.WriteRowValues requires).
func (w *FileWriter) writeLane(k int, cws []*parquet.ColumnWriter, rows [][]any, sel []int, lo, hi int, idx []int) error {
	fields := w.lay.lanes[k]
	if w.vecs != nil || w.pre != nil {
		return w.writeLanePre(fields, cws, sel, lo, hi)
	}
	chunk := w.laneChunks[k][:0]
	defer func() { w.laneChunks[k] = chunk[:0] }()
	for pos := lo; pos < hi; pos += writeChunkRows {
		end := min(pos+writeChunkRows, hi)
		chunk = chunk[:0]
		if sel != nil {
			for _, ri := range sel[pos:end] {
				chunk = append(chunk, rows[ri])
			}
		} else {
			chunk = append(chunk, rows[pos:end]...)
		}
		w.shred.records(chunk, idx, fields)
		clear(chunk)
		for _, j := range fields {
			f := w.lay.plan.fields[j]
			for c := f.firstCol; c < f.endCol; c++ {
				vals := w.shred.cols[c]
				w.shred.cols[c] = vals[:0]
				if _, err := cws[c].WriteRowValues(vals); err != nil {
					return fmt.Errorf("write rows to %s: %w", w.path, err)
				}
			}
		}
	}
	return nil
}

// writeLanePre is writeLane for rows whose values are at hand: a columnar
// chunk's typed vectors (w.vecs), from which each chunk's values of a
// column are built (vectorValues), statistics with them, or rows shredded
// ahead (w.pre), whose values are copied out and added to the statistics.
// Rows [lo,hi) are written (row k is sel[k] when sel is not nil). Building
// a partition's values from the 8-byte longs or 16-byte strings costs less
// than copying the 24-byte parquet.Values of a chunk shredded ahead, which
// were written to memory first: 229 airports of the 3M flights read each
// chunk's columns once per partition; an unpartitioned chunk's values then
// stay in the CPU caches from being built to being written.
func (w *FileWriter) writeLanePre(fields []int, cws []*parquet.ColumnWriter, sel []int, lo, hi int) error {
	scratch := preScratchPool.Get().(*preScratch)
	used := 0 // of scratch.vals, whose strings are cleared at the end
	defer func() {
		// Only what this call used: the whole capacity (writeChunkRows
		// values) was 12 KiB cleared per segment, a segment per file per
		// chunk of a partitioned batch.
		clear(scratch.vals[:used]) // the strings of rows
		scratch.vals = scratch.vals[:0]
		preScratchPool.Put(scratch)
	}()
	for pos := lo; pos < hi; pos += writeChunkRows {
		end := min(pos+writeChunkRows, hi)
		for _, j := range fields {
			f := w.lay.plan.fields[j]
			var vals []parquet.Value
			switch {
			case w.vecs != nil:
				buf := &scratch.nums
				if f.leaf == lkString {
					buf = &scratch.vals
				}
				vals = vectorValues(f, w.vecs[j], sel, pos, end, *buf, w.shred.statsOf(f), w.lay.plan.fastLevels)
				*buf = vals
				if buf == &scratch.vals {
					used = max(used, len(vals))
				}
			case sel != nil:
				vals = scratch.vals[:0]
				for _, ri := range sel[pos:end] {
					vals = append(vals, w.pre[f.col][ri])
				}
				scratch.vals = vals
				used = max(used, len(vals))
				w.shred.leafStats(f, vals)
			default:
				vals = w.pre[f.col][pos:end]
				w.shred.leafStats(f, vals)
			}
			if _, err := cws[f.col].WriteRowValues(vals); err != nil {
				return fmt.Errorf("write rows to %s: %w", w.path, err)
			}
		}
	}
	return nil
}

// preScratch holds the buffers writeLanePre builds or gathers one column's
// values of a chunk in: vals for any, nums only for values without a
// pointer (longs, integers, doubles, timestamps), which vectorValues then
// writes without their pointer word, so without a write barrier. Pooled,
// since a partitioned batch has many files open (229 airports: 11 MiB of
// per-file buffers before) and a lane needs one at a time.
type preScratch struct{ vals, nums []parquet.Value }

var preScratchPool = sync.Pool{New: func() any {
	return &preScratch{vals: make([]parquet.Value, 0, writeChunkRows), nums: make([]parquet.Value, 0, writeChunkRows)}
}}

// Close finishes the file, publishes it and describes it.
func (w *FileWriter) Close(ctx context.Context) (WrittenFile, error) {
	if w.closed {
		return WrittenFile{}, fmt.Errorf("close %s: already closed", w.path)
	}
	w.closed = true
	if err := w.finishParquet(); err != nil {
		_ = w.sw.Abort()
		return WrittenFile{}, fmt.Errorf("finish parquet file %s: %w", w.path, err)
	}
	if err := w.sw.Close(); err != nil {
		return WrittenFile{}, fmt.Errorf("publish data file %s: %w", w.path, err)
	}
	stats, err := statsJSON(w.lay.plan, w.shred.stats, w.numRecords)
	if err != nil {
		return WrittenFile{}, fmt.Errorf("stats of %s: %w", w.path, err)
	}
	wf := WrittenFile{
		Path:             w.path,
		PartitionValues:  w.partValues,
		Size:             w.cw.N(),
		NumRecords:       w.numRecords,
		Stats:            stats,
		ModificationTime: time.Now(),
	}
	if wf.PartitionValues == nil {
		wf.PartitionValues = map[string]*string{}
	}
	if fi, err := w.store.Stat(ctx, w.path); err == nil {
		wf.ModificationTime = fi.ModTime
		if fi.Size > 0 {
			wf.Size = fi.Size
		}
	}
	return wf, nil
}

// Abort discards the file.
func (w *FileWriter) Abort() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.pool != nil {
		w.pool.drop()
	}
	return w.sw.Abort()
}

// finishParquet finishes the file through the StatsLimitingWriter (and
// pool: what pw's Close wrote into it goes out, into the tail, before
// Finish reads the tail).
func (w *FileWriter) finishParquet() error {
	if w.pool == nil {
		return w.cw.Finish(w.pw)
	}
	return w.cw.Finish(pooledParquetWriter{w.pw, w.pool})
}

// pooledParquetWriter is a parquet writer whose output goes through pool,
// for StatsLimitingWriter.Finish: Close also releases pool.
type pooledParquetWriter struct {
	*parquet.Writer
	pool *pooledWriter
}

func (p pooledParquetWriter) Close() error {
	err := p.Writer.Close()
	if rerr := p.pool.release(); err == nil {
		err = rerr
	}
	return err
}

// writeBufferBytes is the size of a pooledWriter's buffer (parquet-go's
// default write buffer).
const writeBufferBytes = 32 << 10

// writeBuffers are the buffers of pooledWriters.
var writeBuffers = sync.Pool{New: func() any {
	b := make([]byte, 0, writeBufferBytes)
	return &b
}}

// pooledWriter buffers the writes of a file's parquet writer in a buffer
// taken from writeBuffers on its first write and given back by release
// (after each row group and at Close): parquet-go's writer holds its own
// 32 KiB buffer from its creation to its Close, 7 MiB for the 229 open
// files of the 3M flights by origin, which write only when a row group is
// flushed (one or two files at a time). Not safe for concurrent use.
type pooledWriter struct {
	w   io.Writer
	buf *[]byte
}

func (p *pooledWriter) Write(b []byte) (int, error) {
	if p.buf == nil {
		if len(b) >= writeBufferBytes {
			return p.w.Write(b)
		}
		p.buf = writeBuffers.Get().(*[]byte)
	}
	if len(*p.buf)+len(b) > cap(*p.buf) {
		if err := p.flush(); err != nil {
			return 0, err
		}
		if len(b) >= cap(*p.buf) {
			return p.w.Write(b)
		}
	}
	*p.buf = append(*p.buf, b...)
	return len(b), nil
}

// flush writes the buffered bytes out.
func (p *pooledWriter) flush() error {
	if p.buf == nil || len(*p.buf) == 0 {
		return nil
	}
	_, err := p.w.Write(*p.buf)
	*p.buf = (*p.buf)[:0]
	return err
}

// release writes the buffered bytes out and gives the buffer back.
func (p *pooledWriter) release() error {
	err := p.flush()
	p.drop()
	return err
}

// drop gives the buffer back, its bytes unwritten.
func (p *pooledWriter) drop() {
	if p.buf != nil {
		*p.buf = (*p.buf)[:0]
		writeBuffers.Put(p.buf)
		p.buf = nil
	}
}

// dictionaryPageBytes is parquet-mr's parquet.dictionary.page.size default
// (1 MiB, ParquetProperties.DEFAULT_DICTIONARY_PAGE_SIZE): a column chunk
// whose dictionary grows past it falls back to PLAIN for the rest of it.
const dictionaryPageBytes = 1 << 20

// DictionaryOptions, put after SparkWriterOptions, encode columns as Spark's
// parquet-mr does by default (parquet.enable.dictionary=true):
// RLE_DICTIONARY for every type but boolean, falling back to PLAIN for the
// rest of a column chunk once its dictionary passes 1 MiB (parquet-mr's
// FallbackValuesWriter with parquet.dictionary.page.size; parquet-go's
// DictionaryMaxBytes). Every Spark version reads dictionary-encoded version
// 1 data pages, also mixed with PLAIN pages after a fallback (parquet-mr
// writes the same). Low-cardinality columns (airport codes) then take a few
// bits a value instead of the whole string. Data files use them; checkpoints
// do not (yet).
func DictionaryOptions() []parquet.WriterOption {
	opts := []parquet.WriterOption{parquet.DictionaryMaxBytes(dictionaryPageBytes)}
	for _, k := range []parquet.Kind{parquet.Int32, parquet.Int64, parquet.Float, parquet.Double, parquet.ByteArray, parquet.FixedLenByteArray} {
		opts = append(opts, parquet.DefaultEncodingFor(k, &parquet.RLEDictionary))
	}
	return opts
}

// SparkWriterOptions are the one set of parquet-go writer options of every
// Parquet file lakesink writes (data files, OPTIMIZE's rewrites,
// checkpoints), with codec (from the codec table, CheckCompression):
// what Spark writes and every Spark/Delta version reads, version 1 data
// pages and PLAIN byte arrays (parquet-go's defaults, v2 pages and
// DELTA_LENGTH_BYTE_ARRAY, are unreadable by Spark's vectorized reader
// before 3.3, SPARK-36879, i.e. by Delta 1.x and 2.0), created_by
// lakesink, and the statistics as parquet-mr writes them
// (StatisticsOptions). Put the writer over a StatsLimitingWriter.
func SparkWriterOptions(codec compress.Codec) []parquet.WriterOption {
	return append([]parquet.WriterOption{
		parquet.Compression(codec),
		parquet.DataPageVersion(1),
		parquet.DefaultEncodingFor(parquet.ByteArray, &parquet.Plain),
		parquet.CreatedBy("lakesink", "0", ""),
	}, StatisticsOptions()...)
}

// Codec returns the parquet-go codec of a compression name (the codec
// table; "" is snappy). Errors wrap ErrOptions.
func Codec(name string) (compress.Codec, error) {
	c, _, err := codecOf(name)
	return c, err
}

// StatisticsOptions are the parquet-go writer options that make statistics
// as Spark's parquet-mr (1.11+) writes them: no statistics in data page
// headers (PARQUET-1365: the column index replaces them; parquet-go wrote
// min and max there twice, in the deprecated and the new fields), and
// column index bounds of byte arrays cut to 64 bytes, the max rounded up
// (parquet.columnindex.truncate.length). Together with a
// StatsLimitingWriter under the writer, a value is stored once however
// large it is. Pass them as options to parquet.NewWriter or
// NewGenericWriter, not inside a *parquet.WriterConfig: parquet-go merges a
// config into its defaults with booleans OR-ed, which turns the page
// statistics back on.
func StatisticsOptions() []parquet.WriterOption {
	return []parquet.WriterOption{
		parquet.DataPageStatistics(false),
		parquet.ColumnIndexSizeLimit(func([]string) int { return columnIndexTruncateLength }),
	}
}

// StatsLimitingWriter is the io.Writer to put under a parquet-go writer so
// that its footer's column chunk statistics are limited as parquet-mr
// limits them (min and max dropped past 4096 bytes; see
// limitFooterStatistics). It counts the bytes it passes on. Finish the
// parquet writer with Finish instead of its Close. Not safe for concurrent
// use.
type StatsLimitingWriter struct {
	w    io.Writer
	n    int64
	tail *bytes.Buffer
}

// NewStatsLimitingWriter wraps w.
func NewStatsLimitingWriter(w io.Writer) *StatsLimitingWriter { return &StatsLimitingWriter{w: w} }

// Write passes p on, or keeps it in memory while Finish collects the tail.
func (c *StatsLimitingWriter) Write(p []byte) (int, error) {
	if c.tail != nil {
		return c.tail.Write(p)
	}
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// N is the number of bytes written to the underlying writer.
func (c *StatsLimitingWriter) N() int64 { return c.n }

// Reset makes c a StatsLimitingWriter of w, as NewStatsLimitingWriter(w)
// (the byte count starts again at 0), for a parquet writer Reset to write
// its next file through c.
func (c *StatsLimitingWriter) Reset(w io.Writer) { *c = StatsLimitingWriter{w: w} }

// Finish flushes pw's last row group, then has pw write the file's tail
// (page indexes and footer, the only part held in memory) by its Close,
// limits the footer's statistics and writes the tail out. The footer is
// decoded and encoded again only when the metadata pw encoded (its
// File().Metadata()) has a column chunk whose statistics are over the
// limit; otherwise the tail is written as pw wrote it.
func (c *StatsLimitingWriter) Finish(pw interface {
	Flush() error
	Close() error
	File() parquet.FileView
}) error {
	if err := pw.Flush(); err != nil {
		return err
	}
	var tail bytes.Buffer
	c.tail = &tail
	err := pw.Close()
	c.tail = nil
	if err != nil {
		return err
	}
	out := tail.Bytes()
	var md *format.FileMetaData
	if f := pw.File(); f != nil {
		md = f.Metadata()
	}
	if md == nil || statisticsOverLimit(md) {
		if out, err = limitFooterStatistics(out); err != nil {
			return err
		}
	}
	_, err = c.Write(out)
	return err
}

// statisticsOverLimit reports whether a column chunk of md has statistics
// that limitFooterStatistics drops.
func statisticsOverLimit(md *format.FileMetaData) bool {
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			if statsOverLimit(&md.RowGroups[i].Columns[j].MetaData.Statistics) {
				return true
			}
		}
	}
	return false
}

// statsOverLimit: min and max together larger than maxStatisticsSize
// (parquet-mr's rule, in either the deprecated or the current fields).
func statsOverLimit(st *format.Statistics) bool {
	return len(st.MinValue)+len(st.MaxValue) > maxStatisticsSize || len(st.Min)+len(st.Max) > maxStatisticsSize
}

// columnIndexTruncateLength is parquet-mr's
// parquet.columnindex.truncate.length default: column index min/max of
// byte arrays are cut to 64 bytes (the max rounded up).
const columnIndexTruncateLength = 64

// maxStatisticsSize is parquet-mr's ParquetMetadataConverter MAX_STATS_SIZE
// (4096): column chunk statistics whose min and max together are larger
// are not written (with Spark's default parquet.statistics.truncate.length,
// no truncation), rather than truncated, because a reader may take a chunk's
// min/max for the exact values.
const maxStatisticsSize = 4096

// limitFooterStatistics takes the tail of a Parquet file as parquet-go
// wrote it (ending in the thrift FileMetaData, its 4-byte little-endian
// length and "PAR1") and drops the min/max of every column chunk whose
// statistics exceed maxStatisticsSize, as parquet-mr does (its null_count
// stays). parquet-go v0.32 copies every page's full bounds into the
// chunk's statistics and has no size limit for them, so a 30 MB value was
// stored twice more in the footer. The bytes before the footer (page
// indexes at their recorded offsets) are unchanged.
func limitFooterStatistics(tail []byte) ([]byte, error) {
	n := len(tail)
	if n < 8 || string(tail[n-4:]) != "PAR1" {
		return nil, fmt.Errorf("parquet footer: %d-byte tail without the PAR1 magic", n)
	}
	flen := int(binary.LittleEndian.Uint32(tail[n-8 : n-4]))
	if flen > n-8 {
		return nil, fmt.Errorf("parquet footer: length %d beyond the %d-byte tail", flen, n)
	}
	start := n - 8 - flen
	var md format.FileMetaData
	if err := thrift.Unmarshal(&thrift.CompactProtocol{}, tail[start:n-8], &md); err != nil {
		return nil, fmt.Errorf("parquet footer: %w", err)
	}
	changed := false
	for i := range md.RowGroups {
		for j := range md.RowGroups[i].Columns {
			st := &md.RowGroups[i].Columns[j].MetaData.Statistics
			if statsOverLimit(st) {
				st.Min, st.Max, st.MinValue, st.MaxValue = nil, nil, nil, nil
				changed = true
			}
		}
	}
	if !changed {
		return tail, nil
	}
	footer, err := thrift.Marshal(&thrift.CompactProtocol{}, &md)
	if err != nil {
		return nil, fmt.Errorf("parquet footer: %w", err)
	}
	out := make([]byte, 0, start+len(footer)+8)
	out = append(out, tail[:start]...)
	out = append(out, footer...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(footer)))
	return append(out, "PAR1"...), nil
}
