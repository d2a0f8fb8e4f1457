package table_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// TestMergeCrashPoints crashes one merge batch at every named crash point
// (docs/crash-points.md), before and after each durable step, on a table
// partitioned by part: the batch rewrites files in two partitions, deletes
// a row, and inserts into a third. After each crash the table reopened
// without faults is the state before or after the batch (after exactly when
// the commit landed, and whenever Merge reported success); a rerun with the
// same (appId, version) then ends in the after state with one commit for
// the batch: no row lost, none doubled, no deleted row back.
func TestMergeCrashPoints(t *testing.T) {
	t.Run("copy-on-write", func(t *testing.T) { mergeCrashPoints(t, nil) })
	// Deletion vector files are data-file points: invisible until committed.
	t.Run("deletion vectors", func(t *testing.T) {
		mergeCrashPoints(t, map[string]string{txlog.PropEnableDeletionVectors: "true"})
	})
}

func mergeCrashPoints(t *testing.T, props map[string]string) {
	ctx := context.Background()
	template := t.TempDir()
	{
		st, err := storage.Open(ctx, template)
		if err != nil {
			t.Fatal(err)
		}
		tb, _ := table.OpenStore(st)
		if _, err := tb.Merge(ctx, &schema.Batch{Schema: kvSchema()}, table.MergeOptions{Keys: []string{"id"}, PartitionColumns: []string{"part"}, Properties: props}); err != nil {
			t.Fatal(err)
		}
		createKV(t, tb, true, 6) // ids 0..5 in p0, p1
		st.Close()
	}
	op := schema.StructField{Name: "op", Type: schema.TypeString, Nullable: true}
	batch := &schema.Batch{Schema: kvSchema(op), Rows: [][]any{
		{int64(1), "p1", "new", int64(2), "u"},
		{int64(2), "p0", nil, int64(2), "d"},
		{int64(4), "p0", "moved", int64(2), "u"},
		{int64(7), "p2", "ins", int64(2), "c"},
	}}
	opts := table.MergeOptions{Keys: []string{"id"}, SequenceBy: "seq", DeleteWhen: "op = 'd'", AppID: "cdc", Version: 1}
	newBase := func(t *testing.T) (storage.Store, *table.Table) {
		dir := filepath.Join(t.TempDir(), "table")
		if err := os.CopyFS(dir, os.DirFS(template)); err != nil {
			t.Fatal(err)
		}
		base, err := storage.Open(ctx, dir) // a plain path: the subtest name holds "#"
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { base.Close() })
		tb, _ := table.OpenStore(base)
		return base, tb
	}
	base, btb := newBase(t)
	before := state(t, btb)
	rec, _ := faultstore.New(base, faultstore.DefaultOptions())
	rtb, _ := table.OpenStore(rec)
	if _, err := rtb.Merge(ctx, batch, opts); err != nil {
		t.Fatal(err)
	}
	after := state(t, btb)
	if want := "0:p0:old:1 1:p1:new:2 3:p1:old:1 4:p0:moved:2 5:p1:old:1 7:p2:ins:2"; after != want {
		t.Fatalf("after state %s, want %s", after, want)
	}
	points := rec.Points()
	if err := faultstore.CheckPoints(points, faultstore.PointDataFile, faultstore.PointCommit, faultstore.PointChecksum); err != nil {
		t.Fatal(err)
	}
	crashes := faultstore.Crashes(points)
	if len(crashes) < 6 { // three partitions written, one commit
		t.Fatalf("points %v", points)
	}
	for _, c := range crashes {
		t.Run(c.String(), func(t *testing.T) {
			base, tb := newBase(t)
			fs, _ := faultstore.New(base, faultstore.DefaultOptions())
			if err := c.Arm(fs); err != nil {
				t.Fatal(err)
			}
			ftb, _ := table.OpenStore(fs)
			_, err := ftb.Merge(ctx, batch, opts)
			if !fs.Crashed() {
				t.Fatalf("the crash point was not reached (err %v)", err)
			}
			if err != nil && !errors.Is(err, faultstore.ErrInjected) {
				t.Fatalf("error without an injected cause: %v", err)
			}
			got := state(t, tb)
			landed := got == after
			if !landed && got != before {
				t.Fatalf("table is neither before nor after the merge:\n%s", got)
			}
			if err == nil && !landed {
				t.Fatalf("Merge reported success, but the table is before the merge")
			}
			// the commit landed when the crash came after it, or at the .crc
			// written after it
			wantLanded := c.Point.Name == faultstore.PointCommit && c.Mode == faultstore.FailAfter ||
				c.Point.Name == faultstore.PointChecksum
			if landed != wantLanded {
				t.Fatalf("landed=%v, want %v", landed, wantLanded)
			}
			res, err := tb.Merge(ctx, batch, opts)
			if err != nil {
				t.Fatalf("rerun: %v", err)
			}
			if res.Skipped != landed {
				t.Fatalf("rerun skipped=%v, landed=%v", res.Skipped, landed)
			}
			if got := state(t, tb); got != after {
				t.Fatalf("after rerun %s, want %s", got, after)
			}
			if s, err := tb.Snapshot(ctx); err != nil {
				t.Fatal(err)
			} else if s.Version() != 2 {
				t.Fatalf("version %d, want 2 (one commit for the merge)", s.Version())
			}
		})
	}
}
