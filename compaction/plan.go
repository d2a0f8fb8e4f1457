package compaction

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/lakesink/lakesink/expr"
	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/txlog"
)

// PlanOptions configure NewPlan. The zero value plans the whole table with
// the table's target size.
type PlanOptions struct {
	// TargetFileSizeBytes is the size bins are packed up to. Default (0): the
	// table property delta.targetFileSize, else 128 MiB.
	TargetFileSizeBytes int64
	// MinFileSizeBytes: only files smaller than this are compacted (Delta's
	// spark.databricks.delta.optimize.minFileSize). Default (0): the target
	// size.
	MinFileSizeBytes int64
	// Where limits the run to partitions matching a predicate over partition
	// columns only, e.g. "origin = 'SFO' AND day >= '2024-01-01'" (syntax of
	// expr). Default "": every partition.
	Where string
	// Partitions, when non-empty, limits the run to these partition
	// directories (as PartitionPath renders them, e.g. "origin=SFO"; "" is the
	// unpartitioned table). It combines with Where. Default: all.
	Partitions []string
	// MaxBins caps the number of bins of one run (the first bins in plan
	// order are kept). Default (0): no cap.
	MaxBins int
	// MaxBytes caps the input bytes of one run: bins are taken in plan order
	// while their total stays within it (at least one bin is always taken).
	// Default (0): no cap.
	MaxBytes int64
}

// Validate lists every invalid field.
func (o PlanOptions) Validate() error {
	var errs []error
	if o.TargetFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: target file size %d bytes is negative", ErrInvalidOptions, o.TargetFileSizeBytes))
	}
	if o.MinFileSizeBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: minimum file size %d bytes is negative", ErrInvalidOptions, o.MinFileSizeBytes))
	}
	if o.MaxBins < 0 {
		errs = append(errs, fmt.Errorf("%w: maximum bins %d is negative", ErrInvalidOptions, o.MaxBins))
	}
	if o.MaxBytes < 0 {
		errs = append(errs, fmt.Errorf("%w: maximum bytes %d is negative", ErrInvalidOptions, o.MaxBytes))
	}
	return errors.Join(errs...)
}

// Bin is a group of files of one partition that OPTIMIZE rewrites together.
type Bin struct {
	// Partition is the partition directory ("origin=SFO"; "" unpartitioned).
	Partition string `json:"partition"`
	// PartitionValues of every file of the bin (Delta-serialized; nil: null).
	PartitionValues map[string]*string `json:"partitionValues"`
	// Files are the add actions of the inputs, smallest first.
	Files []*txlog.Add `json:"files"`
	// Bytes is the total size of the inputs.
	Bytes int64 `json:"bytes"`
	// Rows is the total numRecords of the inputs from their stats (-1 when
	// a file has no numRecords).
	Rows int64 `json:"rows"`
}

// Plan is what one OPTIMIZE run will rewrite. It is the output of the pure
// function NewPlan and the input of Execute; --dry-run prints it.
type Plan struct {
	// TableID is the metaData.id of the table the plan was made for.
	TableID string `json:"tableId"`
	// ReadVersion is the snapshot version the plan was made from.
	ReadVersion int64 `json:"readVersion"`
	// TargetFileSizeBytes is the effective target size.
	TargetFileSizeBytes int64 `json:"targetFileSizeBytes"`
	// MinFileSizeBytes is the effective small-file threshold.
	MinFileSizeBytes int64 `json:"minFileSizeBytes"`
	// Where is the partition filter ("" none).
	Where string `json:"where,omitempty"`
	// Bins to rewrite, ordered by partition directory then by position.
	Bins []Bin `json:"bins"`
	// NumFiles and Bytes total the inputs of Bins.
	NumFiles int   `json:"numFiles"`
	Bytes    int64 `json:"bytes"`
	// ConsideredFiles is the number of live files in the selected partitions;
	// SkippedBins counts bins left for a later run by MaxBins/MaxBytes.
	ConsideredFiles int `json:"consideredFiles"`
	SkippedBins     int `json:"skippedBins"`

	snap *txlog.Snapshot // the snapshot the plan was made from, nil when decoded
}

// Snapshot is the snapshot the plan was made from (nil for a plan decoded from
// JSON; Execute then loads ReadVersion).
func (p *Plan) Snapshot() *txlog.Snapshot { return p.snap }

// NewPlan groups the live files of snap into bins (Delta's OPTIMIZE
// bin-packing, delta-io/delta OptimizeTableCommand.scala): per partition, the
// files smaller than MinFileSizeBytes are sorted by size (then path) and
// packed greedily into bins of at most TargetFileSizeBytes; bins holding a
// single file are dropped (rewriting it changes nothing). Partitions are
// ordered by their directory, so the plan is deterministic. NewPlan does no
// I/O.
//
// A file with a deletion vector is rewritten whatever its size (a bin of
// it alone is kept), without its deleted rows. Tables whose features
// lakesink cannot write are refused (txlog.ErrUnsupportedFeature).
func NewPlan(snap *txlog.Snapshot, opts PlanOptions) (*Plan, error) {
	if snap == nil {
		return nil, fmt.Errorf("%w: nil snapshot", ErrInvalidOptions)
	}
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	md := snap.Metadata()
	if err := txlog.CheckWriteSupported(snap.Protocol(), md); err != nil {
		return nil, fmt.Errorf("plan version %d: %w", snap.Version(), err)
	}
	// CheckWriteSupported also covers the reader features; deletion
	// vectors are applied by Execute (not refused as CheckReadSupported does).
	target := opts.TargetFileSizeBytes
	if target == 0 {
		props := snap.Properties()
		if err := props.Err(txlog.PropTargetFileSize); err != nil {
			return nil, fmt.Errorf("plan version %d: %w", snap.Version(), err)
		}
		target = props.TargetFileSizeBytes
	}
	minSize := opts.MinFileSizeBytes
	if minSize == 0 {
		minSize = target
	}
	sch, err := md.Schema()
	if err != nil {
		return nil, fmt.Errorf("plan version %d: %w", snap.Version(), err)
	}
	filter, err := partitionFilter(opts.Where, sch, md.PartitionColumns)
	if err != nil {
		return nil, err
	}

	type part struct {
		dir    string
		values map[string]*string
		files  []*txlog.Add
	}
	parts := map[string]*part{}
	considered := 0
	for _, a := range snap.Files() {
		if filter != nil {
			ok, err := filter.matches(a.PartitionValues)
			if err != nil {
				return nil, fmt.Errorf("plan: file %s: %w", a.Path, err)
			}
			if !ok {
				continue
			}
		}
		dir := parquetio.PartitionPath(md.PartitionColumns, a.PartitionValues)
		if len(opts.Partitions) > 0 && !slices.Contains(opts.Partitions, dir) {
			continue
		}
		considered++
		// A file with a deletion vector is always rewritten, with its
		// deleted rows dropped (Delta's OPTIMIZE picks files with DVs
		// whatever their size: OptimizeTableCommand, DeletionVectorUtils).
		if a.Size >= minSize && a.DeletionVector == nil {
			continue
		}
		// Bins are keyed by the partition values themselves, not by the
		// directory: a null value and the literal string
		// "__HIVE_DEFAULT_PARTITION__" share a directory but are different
		// partitions, and must never be merged.
		key := partitionKey(dir, md.PartitionColumns, a.PartitionValues)
		p := parts[key]
		if p == nil {
			p = &part{dir: dir, values: a.PartitionValues}
			parts[key] = p
		}
		p.files = append(p.files, a)
	}
	dirs := make([]string, 0, len(parts))
	for d := range parts {
		dirs = append(dirs, d)
	}
	slices.Sort(dirs)

	plan := &Plan{
		TableID:             md.ID,
		ReadVersion:         snap.Version(),
		TargetFileSizeBytes: target,
		MinFileSizeBytes:    minSize,
		Where:               opts.Where,
		ConsideredFiles:     considered,
		snap:                snap,
	}
	var all []Bin
	for _, d := range dirs {
		p := parts[d]
		slices.SortFunc(p.files, func(a, b *txlog.Add) int {
			return cmp.Or(cmp.Compare(a.Size, b.Size), strings.Compare(a.Path, b.Path))
		})
		var cur Bin
		flush := func() {
			if len(cur.Files) > 1 || len(cur.Files) == 1 && cur.Files[0].DeletionVector != nil {
				all = append(all, cur)
			}
			cur = Bin{}
		}
		for _, f := range p.files {
			if len(cur.Files) > 0 && cur.Bytes+f.Size > target {
				flush()
			}
			if len(cur.Files) == 0 {
				cur = Bin{Partition: p.dir, PartitionValues: p.values}
			}
			cur.Files = append(cur.Files, f)
			cur.Bytes += f.Size
		}
		flush()
	}
	for i := range all {
		b := &all[i]
		b.Rows = 0
		for _, f := range b.Files {
			n, ok := numRecords(f.Stats)
			if !ok {
				b.Rows = -1
				break
			}
			b.Rows += n
			if f.DeletionVector != nil {
				b.Rows -= f.DeletionVector.Cardinality
			}
		}
		if opts.MaxBins > 0 && len(plan.Bins) >= opts.MaxBins ||
			opts.MaxBytes > 0 && len(plan.Bins) > 0 && plan.Bytes+b.Bytes > opts.MaxBytes {
			plan.SkippedBins = len(all) - i
			break
		}
		plan.Bins = append(plan.Bins, *b)
		plan.NumFiles += len(b.Files)
		plan.Bytes += b.Bytes
	}
	if plan.Bins == nil {
		plan.Bins = []Bin{}
	}
	return plan, nil
}

// partFilter evaluates a predicate over partition values.
type partFilter struct {
	pred *expr.Predicate
	cols []*expr.BoundColumn
}

// partitionFilter parses where and checks that it names partition columns
// only (Delta: "Predicate references non-partition column").
func partitionFilter(where string, sch *schema.StructType, partCols []string) (*partFilter, error) {
	if strings.TrimSpace(where) == "" {
		return nil, nil
	}
	pred, err := expr.ParseAndBind(where, sch)
	if err != nil {
		return nil, fmt.Errorf("%w: %q: %w", ErrPredicate, where, err)
	}
	cols := pred.Columns()
	for _, c := range cols {
		isPart := false
		for _, pc := range partCols {
			if len(c.Path) == 1 && strings.EqualFold(c.Path[0], pc) {
				isPart = true
			}
		}
		if !isPart {
			return nil, fmt.Errorf("%w: %q: column %s is not a partition column (partition columns: %v)", ErrPredicate, where, c.Name(), partCols)
		}
	}
	return &partFilter{pred: pred, cols: cols}, nil
}

func (f *partFilter) matches(pv map[string]*string) (bool, error) {
	vals := make([]any, len(f.cols))
	for i, c := range f.cols {
		var raw *string
		for k, v := range pv {
			if strings.EqualFold(k, c.Path[0]) {
				raw = v
			}
		}
		v, err := expr.ParsePartitionValue(raw, c.Type)
		if err != nil {
			return false, err
		}
		vals[i] = v
	}
	return f.pred.Matches(func(i int) any { return vals[i] }), nil
}

// partitionKey identifies a partition by its directory and its exact values
// (null distinct from every string).
func partitionKey(dir string, cols []string, values map[string]*string) string {
	var b strings.Builder
	b.WriteString(dir)
	for _, c := range cols {
		b.WriteByte(0)
		if v := values[c]; v == nil {
			b.WriteByte('N')
		} else {
			b.WriteByte('V')
			b.WriteString(*v)
		}
	}
	return b.String()
}
