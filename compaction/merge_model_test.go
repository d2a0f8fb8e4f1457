package compaction

import (
	"context"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// Model-based property test of table.Merge (issue 16): random change
// batches (inserts, updates, deletes; late, duplicate and tied sequences;
// keys whose rows move between partitions) are merged into a table
// partitioned by a non-key column, and applied to a map model with the rule
// MergeOptions documents. After every batch the table read with the reader
// equals the model; between batches the table may be OPTIMIZEd, and a batch
// may be replayed with its (appId, version), which must change nothing.
// Some changes have a null key: as in Spark's MERGE they match nothing, so
// each is inserted (several in one batch too) unless it is a delete, and
// the null-key rows of the table are never changed.
// RAPID_CHECKS=200 go test ./compaction -run TestMergeModel for more.

type mergeModelRow struct {
	part string
	v    string
	seq  int64
}

type mergeChange struct {
	id     int64
	nullID bool
	part   string
	v      string
	seq    int64
	op     string // c, u, d
	nullV  bool
	srcPos int
}

var mergeModelSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: true},
	{Name: "part", Type: schema.TypeString, Nullable: true},
	{Name: "v", Type: schema.TypeString, Nullable: true},
	{Name: "seq", Type: schema.TypeLong, Nullable: true},
	{Name: "op", Type: schema.TypeString, Nullable: true},
}}

// mergeModel is the table as the model sees it: rows by key, and the rows
// with a null key (never matched, so never changed once inserted).
type mergeModel struct {
	rows    map[int64]mergeModelRow
	nullKey []mergeModelRow
}

func (c mergeChange) modelRow() mergeModelRow {
	v := c.v
	if c.nullV {
		v = "<nil>"
	}
	return mergeModelRow{part: c.part, v: v, seq: c.seq}
}

// applyModel applies a batch to the model as MergeOptions documents it.
func applyModel(mm *mergeModel, batch []mergeChange, useSeq bool) {
	m := mm.rows
	win := map[int64]mergeChange{}
	for _, c := range batch {
		if c.nullID {
			if c.op != "d" {
				mm.nullKey = append(mm.nullKey, c.modelRow())
			}
			continue
		}
		if p, ok := win[c.id]; !ok || !useSeq || c.seq >= p.seq {
			win[c.id] = c
		}
	}
	for id, c := range win {
		row, exists := m[id]
		if exists && useSeq && c.seq <= row.seq {
			continue // stale: the table row is as new or newer
		}
		switch {
		case c.op == "d":
			delete(m, id)
		default:
			m[id] = c.modelRow()
		}
	}
}

func modelLines(mm *mergeModel) []string {
	var out []string
	for id, r := range mm.rows {
		out = append(out, fmt.Sprintf("%d|%s|%s|%d", id, r.part, r.v, r.seq))
	}
	for _, r := range mm.nullKey {
		out = append(out, fmt.Sprintf("<nil>|%s|%s|%d", r.part, r.v, r.seq))
	}
	slices.Sort(out)
	return out
}

func tableLines(t *rapid.T, ctx context.Context, st storage.Store) []string {
	snap, err := reader.Open(ctx, st.URL(), reader.WithStore(st))
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var out []string
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id", "part", "v", "seq"}}) {
		if err != nil {
			t.Fatal(err)
		}
		v := rec.Values
		out = append(out, fmt.Sprintf("%v|%v|%v|%v", v[0], v[1], v[2], v[3]))
	}
	slices.Sort(out)
	return out
}

const mergeModelDefaultChecks = 25

func setDefaultChecks(t *testing.T, n int) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if _, ok := os.LookupEnv("RAPID_CHECKS"); ok || explicit {
		return
	}
	if f := flag.Lookup("rapid.checks"); f != nil {
		old := f.Value.String()
		if err := f.Value.Set(fmt.Sprint(n)); err == nil {
			t.Cleanup(func() { _ = f.Value.Set(old) })
		}
	}
}

func TestMergeModel(t *testing.T) {
	setDefaultChecks(t, mergeModelDefaultChecks)
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		op, err := storage.NewOpener(storage.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		st, err := op.Open(ctx, "mem://merge-model-"+uuid.NewString())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		tb, err := table.OpenStore(st)
		if err != nil {
			t.Fatal(err)
		}
		// The table has no op column: it is the batch's only. In
		// deletion-vector mode merges mark rows deleted instead of
		// rewriting files.
		dvMode := rapid.Bool().Draw(t, "deletionVectors")
		var props map[string]string
		if dvMode {
			props = map[string]string{txlog.PropEnableDeletionVectors: "true"}
		}
		if _, err := tb.Merge(ctx, &schema.Batch{Schema: &schema.StructType{Fields: mergeModelSchema.Fields[:4]}},
			table.MergeOptions{Keys: []string{"id"}, PartitionColumns: []string{"part"}, Properties: props}); err != nil {
			t.Fatal(err)
		}
		useSeq := rapid.Bool().Draw(t, "useSeq")
		opts := table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'", AppID: "cdc", PartitionColumns: []string{"part"}}
		if useSeq {
			opts.SequenceBy = "seq"
		}
		model := &mergeModel{rows: map[int64]mergeModelRow{}}
		var prev *schema.Batch
		var prevVersion int64
		nBatches := rapid.IntRange(1, 8).Draw(t, "batches")
		for b := 1; b <= nBatches; b++ {
			switch rapid.IntRange(0, 5).Draw(t, "between") {
			case 0:
				// OPTIMIZE rewrites files with deletion vectors without
				// their deleted rows; the model checks none come back.
				if _, _, err := Optimize(ctx, tb, PlanOptions{}, DefaultExecOptions()); err != nil {
					t.Fatalf("optimize before batch %d: %v", b, err)
				}
			case 1:
				if prev != nil { // replay the last batch: skipped by txn
					o := opts
					o.Version = prevVersion
					res, err := tb.Merge(ctx, prev, o)
					if err != nil || !res.Skipped {
						t.Fatalf("replay of batch %d: %+v %v", prevVersion, res, err)
					}
				}
			}
			n := rapid.IntRange(0, 12).Draw(t, "n")
			var changes []mergeChange
			used := map[int64]bool{}
			for i := range n {
				c := mergeChange{
					id:     rapid.Int64Range(0, 20).Draw(t, "id"),
					part:   fmt.Sprint("p", rapid.IntRange(0, 4).Draw(t, "part")),
					v:      rapid.StringMatching(`[a-c]{0,3}`).Draw(t, "v"),
					nullV:  rapid.IntRange(0, 9).Draw(t, "nullV") == 0,
					seq:    rapid.Int64Range(0, 15).Draw(t, "seq"),
					op:     rapid.SampledFrom([]string{"c", "u", "u", "d"}).Draw(t, "op"),
					nullID: rapid.IntRange(0, 9).Draw(t, "nullID") == 0,
					srcPos: i,
				}
				if c.nullID {
					changes = append(changes, c) // never a duplicate: null matches nothing
					continue
				}
				if !useSeq && used[c.id] {
					continue // without a sequence column a batch changes a key once
				}
				used[c.id] = true
				changes = append(changes, c)
			}
			batch := &schema.Batch{Schema: mergeModelSchema}
			for _, c := range changes {
				var v any = c.v
				if c.nullV {
					v = nil
				}
				var id any = c.id
				if c.nullID {
					id = nil
				}
				batch.Rows = append(batch.Rows, []any{id, c.part, v, c.seq, c.op})
			}
			o := opts
			o.Version = int64(b)
			o.TargetFileSizeBytes = int64(rapid.SampledFrom([]int{1, 1 << 20}).Draw(t, "targetFileSize"))
			res, err := tb.Merge(ctx, batch, o)
			if err != nil {
				t.Fatalf("batch %d: %v", b, err)
			}
			before := &mergeModel{rows: maps.Clone(model.rows), nullKey: slices.Clone(model.nullKey)}
			applyModel(model, changes, useSeq)
			if dvMode && res.NumCopied != 0 {
				t.Fatalf("batch %d in deletion-vector mode copied %d rows (it marks rows deleted instead): %+v", b, res.NumCopied, res)
			}
			if got, want := tableLines(t, ctx, st), modelLines(model); !slices.Equal(got, want) {
				t.Fatalf("after batch %d (%+v)\nbefore %s\ntable  %s\nmodel  %s", b, res, strings.Join(modelLines(before), " "),
					strings.Join(got, " "), strings.Join(want, " "))
			}
			prev, prevVersion = batch, int64(b)
		}
	})
}
