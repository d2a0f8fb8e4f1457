package engines

// Must-show 3: the engines write to a lakesink table (append, OPTIMIZE,
// VACUUM, checkpoint), and lakesink goes on exactly once.

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
)

const smallDDL = "id BIGINT, part STRING, v DOUBLE"

// jsonRows are a smallBatch's rows as the engine server's append takes them.
func jsonRows(b *schema.Batch) []map[string]any {
	var out []map[string]any
	for _, r := range b.Rows {
		out = append(out, map[string]any{"id": r[0], "part": r[1], "v": r[2]})
	}
	return out
}

// lakesinkGoesOn adds batch id through the sink, then replays it: the first
// commits, the replay is skipped (the txn survived what the engine did).
func lakesinkGoesOn(t *testing.T, s *sink.Delta, id int64, b *schema.Batch) {
	t.Helper()
	ctx := context.Background()
	res, err := s.AddBatch(ctx, id, b)
	if err != nil {
		t.Fatalf("lakesink batch %d after the engine: %v", id, err)
	}
	if res.Skipped {
		t.Fatalf("lakesink batch %d skipped, never written before", id)
	}
	for _, replay := range []int64{id, id - 1} {
		res, err = s.AddBatch(ctx, replay, b)
		if err != nil {
			t.Fatalf("replay of batch %d: %v", replay, err)
		}
		if !res.Skipped {
			t.Fatalf("replay of batch %d was written again: the txn did not survive", replay)
		}
	}
}

func TestEnginesWriteAndLakesinkGoesOn(t *testing.T) {
	needEngines(t, "both", "setup")
	ctx := context.Background()
	path := localURL(t, filepath.Join(t.TempDir(), "shared"))
	s, err := sink.NewDelta(ctx, path, sink.Options{QueryID: "lakesink-query", PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var want []string
	for i := int64(0); i < 3; i++ {
		b := smallBatch(int(i)*10, 10, false)
		if _, err := s.AddBatch(ctx, i, b); err != nil {
			t.Fatal(err)
		}
		want = append(want, batchRows(b)...)
	}
	next := int64(3)
	agree := func(t *testing.T, label string) {
		t.Helper()
		sameRows(t, "lakesink "+label, want, lakesinkRows(t, path))
		sameRows(t, "Spark "+label, want, engineRows(sparkRead(t, path, "delta", nil).Rows))
		sameRows(t, "delta-rs "+label, want, engineRows(rsRead(t, path, nil).Rows))
	}

	t.Run("spark", func(t *testing.T) {
		needEngines(t, "Spark", "Spark appends, OPTIMIZE, VACUUM, checkpoint; lakesink goes on exactly once")
		b := smallBatch(1000, 7, false)
		srv.must(t, map[string]any{"op": "spark_append", "path": path, "schema": smallDDL, "rows": jsonRows(b)}, nil)
		want = append(want, batchRows(b)...)
		agree(t, "after Spark append")
		srv.must(t, map[string]any{"op": "spark_delta", "what": "optimize", "path": path}, nil)
		agree(t, "after Spark OPTIMIZE")
		srv.must(t, map[string]any{"op": "spark_delta", "what": "vacuum", "path": path, "retain_hours": 0}, nil)
		agree(t, "after Spark VACUUM")
		srv.must(t, map[string]any{"op": "spark_delta", "what": "checkpoint", "path": path}, nil)
		agree(t, "after Spark checkpoint")
		nb := smallBatch(2000, 5, false)
		lakesinkGoesOn(t, s, next, nb)
		next++
		want = append(want, batchRows(nb)...)
		agree(t, "after lakesink went on")
		checkSpark(t, path, path, want)
	})
	t.Run("delta-rs", func(t *testing.T) {
		needEngines(t, "delta-rs", "delta-rs appends, optimize.compact, create_checkpoint; lakesink goes on exactly once")
		b := smallBatch(3000, 6, false)
		srv.must(t, map[string]any{"op": "rs_write", "path": path, "schema": smallDDL, "rows": jsonRows(b)}, nil)
		want = append(want, batchRows(b)...)
		agree(t, "after delta-rs append")
		srv.must(t, map[string]any{"op": "rs_maintain", "what": "compact", "path": path}, nil)
		agree(t, "after delta-rs optimize.compact")
		srv.must(t, map[string]any{"op": "rs_maintain", "what": "checkpoint", "path": path}, nil)
		agree(t, "after delta-rs create_checkpoint")
		nb := smallBatch(4000, 4, false)
		lakesinkGoesOn(t, s, next, nb)
		next++
		want = append(want, batchRows(nb)...)
		agree(t, "after lakesink went on")
		checkDeltaRS(t, path, path, want, nil)
	})
	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := snap.TxnVersion("lakesink-query"); !ok || v != next-1 {
		t.Errorf("txn lakesink-query = %d (%v), want %d", v, ok, next-1)
	}
}
