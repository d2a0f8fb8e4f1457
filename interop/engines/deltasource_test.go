package engines

// Issue 21 against Spark: a Delta table as a streaming source. Spark's
// DeltaSource reads what lakesink wrote (OPTIMIZE commits give no rows),
// lakesink's Delta source reads what Spark's streaming sink writes, and the
// offsets each writes into offsets/N (DeltaSourceOffset JSON) are read by
// the other's parser.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/stream/checkpoint"
	"github.com/lakesink/lakesink/stream/delta"
	"github.com/lakesink/lakesink/table"
)

// sparkOffset is one offsets/N of a checkpoint as Spark parses it
// (engine server spark_offsets: OffsetSeqLog, DeltaSourceOffset.apply).
type sparkOffset struct {
	BatchID           json.Number `json:"batchId"`
	Serialized        string      `json:"serialized"`
	ReservoirID       string      `json:"reservoirId"`
	ReservoirVersion  json.Number `json:"reservoirVersion"`
	Index             json.Number `json:"index"`
	IsInitialSnapshot bool        `json:"isInitialSnapshot"`
	JSON              string      `json:"json"`
	BaseIndex         json.Number `json:"baseIndex"`
}

func sparkOffsets(t *testing.T, cp, reservoirID string) []sparkOffset {
	t.Helper()
	var out []sparkOffset
	srv.must(t, map[string]any{"op": "spark_offsets", "checkpoint": cp, "reservoir_id": reservoirID}, &out)
	return out
}

// lakesinkOffsets parses every offsets/N of a checkpoint directory with
// lakesink's parsers (stream/checkpoint, then stream/delta for source 0).
func lakesinkOffsets(t *testing.T, cp string) map[int64]delta.Offset {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(cp, "offsets"))
	if err != nil {
		t.Fatal(err)
	}
	out := map[int64]delta.Offset{}
	for _, e := range ents {
		n, err := strconv.ParseInt(e.Name(), 10, 64)
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(cp, "offsets", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		seq, line, err := checkpoint.ParseOffsetSeq(b)
		if err != nil {
			t.Fatalf("lakesink parse of %s/offsets/%d (line %d): %v", cp, n, line, err)
		}
		if len(seq.Offsets) != 1 {
			t.Fatalf("%s/offsets/%d: %d sources", cp, n, len(seq.Offsets))
		}
		o, err := delta.ParseOffset(seq.Offsets[0])
		if err != nil {
			t.Fatalf("lakesink parse of %s/offsets/%d: %v", cp, n, err)
		}
		out[n] = o
	}
	return out
}

// sameOffsets: for every offsets/N both parsers read the same position
// (Delta's in-memory BASE_INDEX is the -1 the file holds); it returns how
// many offsets were compared.
func sameOffsets(t *testing.T, who string, lk map[int64]delta.Offset, sp []sparkOffset) int {
	t.Helper()
	if len(sp) != len(lk) {
		t.Errorf("%s: Spark parsed %d offsets files, lakesink %d", who, len(sp), len(lk))
	}
	for _, s := range sp {
		b, _ := s.BatchID.Int64()
		o, ok := lk[b]
		if !ok {
			t.Errorf("%s: offsets/%d parsed by Spark only", who, b)
			continue
		}
		idx := s.Index.String()
		if idx == s.BaseIndex.String() {
			idx = strconv.Itoa(delta.BaseIndex)
		}
		got := fmt.Sprintf("%s v%s i%s start=%v", s.ReservoirID, s.ReservoirVersion, idx, s.IsInitialSnapshot)
		want := fmt.Sprintf("%s v%d i%d start=%v", o.ReservoirID, o.ReservoirVersion, o.Index, o.IsStartingVersion)
		if got != want {
			t.Errorf("%s: offsets/%d (%s): Spark reads %s, lakesink %s", who, b, s.Serialized, got, want)
		}
	}
	return len(sp)
}

func tableID(t *testing.T, path string) string {
	t.Helper()
	ctx := context.Background()
	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	return snap.Metadata().ID
}

// TestSparkReadStreamOfLakesinkTable: Spark's readStream.format("delta")
// over a table lakesink wrote, with lakesink compact (OPTIMIZE,
// dataChange=false) commits in its history, into a Delta table: once from
// the latest snapshot (isStartingVersion) and once from version 0
// (startingVersion: every commit, OPTIMIZEs included), into Spark's parquet
// file sink; each query runs availableNow twice (before and after more
// lakesink batches and a second compact) on one checkpoint, with
// maxFilesPerTrigger 4 (several batches, offsets inside a version). Each
// output holds exactly lakesink's rows.
// Spark's real offsets/N files are then read by lakesink's parsers with the
// same positions as Spark's own parser.
func TestSparkReadStreamOfLakesinkTable(t *testing.T) {
	needEngines(t, "Spark", "Spark readStream.format(\"delta\") over a lakesink table with OPTIMIZE commits: exactly lakesink's rows; Spark's offsets read by lakesink")
	ctx := context.Background()
	dir := t.TempDir()
	path := localURL(t, filepath.Join(dir, "bronze"))
	s, err := sink.NewDelta(ctx, path, sink.Options{QueryID: "bronze-query", PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	batch := func(from, to int64) {
		for i := from; i < to; i++ {
			if _, err := s.AddBatch(ctx, i, smallBatch(int(i)*6, 6, false)); err != nil {
				t.Fatal(err)
			}
		}
	}
	batch(0, 3)
	cli(t, "compact", path)
	batch(3, 4)

	type query struct{ name, out, cp string }
	queries := []struct {
		query
		opts map[string]any
	}{
		{query{"snapshot", filepath.Join(dir, "out-snapshot"), filepath.Join(dir, "cp-snapshot")}, map[string]any{"maxFilesPerTrigger": 4}},
		{query{"from-version-0", filepath.Join(dir, "out-v0"), filepath.Join(dir, "cp-v0")}, map[string]any{"startingVersion": 0, "maxFilesPerTrigger": 4}},
	}
	run := func() {
		for _, q := range queries {
			var rep struct {
				Exception *string `json:"exception"`
			}
			srv.must(t, map[string]any{"op": "spark_stream_start", "name": "ds-" + q.name,
				"source":      map[string]any{"kind": "delta", "path": path, "options": q.opts},
				"sink_format": "parquet", "path": q.out, "checkpoint": q.cp, "available_now": true}, &rep)
			if rep.Exception != nil {
				t.Fatalf("Spark delta-source query %s: %s", q.name, *rep.Exception)
			}
		}
	}
	run()
	for _, q := range queries {
		sameRows(t, "Spark's delta source ("+q.name+") after the first run vs lakesink's rows", lakesinkRows(t, path), engineRows(sparkRead(t, q.out, "parquet", nil).Rows))
	}
	batch(4, 6)
	cli(t, "compact", path)
	run()
	want := lakesinkRows(t, path)
	var h []string
	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	entries, err := tb.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		h = append(h, e.CommitInfo.Operation())
	}
	if n := strings.Count(strings.Join(h, ","), "OPTIMIZE"); n != 2 {
		t.Fatalf("bronze history %v: %d OPTIMIZE commits, want 2", h, n)
	}
	for _, q := range queries {
		sameRows(t, "Spark's delta source ("+q.name+") vs lakesink's rows", want, engineRows(sparkRead(t, q.out, "parquet", nil).Rows))
		// Spark's own offsets/N, parsed by lakesink.
		n := sameOffsets(t, "Spark's checkpoint "+q.name, lakesinkOffsets(t, q.cp), sparkOffsets(t, q.cp, tableID(t, path)))
		t.Logf("%s: %d of Spark's offsets files read alike by lakesink and Spark", q.name, n)
	}
}

// TestSparkBronzeLakesinkSilver: a Spark streaming query (a JSON file
// source the test feeds, into bronze through Delta's streaming sink) runs
// while `lakesink ingest --format delta --source bronze` streams bronze
// into silver, and Spark OPTIMIZEs bronze in between; at the end silver
// holds every bronze row exactly once (= every fed row). Then Spark's
// OffsetSeqLog and DeltaSourceOffset parse every offsets/N lakesink wrote,
// with the positions lakesink's parser reads and the same JSON text.
func TestSparkBronzeLakesinkSilver(t *testing.T) {
	needEngines(t, "Spark", "Spark streaming writes bronze while lakesink ingest --format delta streams it into silver; lakesink's offsets read by Spark's parser")
	dir := t.TempDir()
	bronze, silver := localURL(t, filepath.Join(dir, "bronze")), localURL(t, filepath.Join(dir, "silver"))
	src, spcp, lkcp := filepath.Join(dir, "src"), filepath.Join(dir, "spcp"), filepath.Join(dir, "lkcp")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	feed := &feeder{dir: src, prefix: "b", writer: "spark", interval: 3 * time.Second}
	stopFeed := make(chan struct{})
	var fed sync.WaitGroup
	fed.Add(1)
	go func() { defer fed.Done(); feed.run(stopFeed) }()
	feedStopped := false
	stopFeeding := func() {
		if !feedStopped {
			feedStopped = true
			close(stopFeed)
			fed.Wait()
		}
	}
	defer stopFeeding()
	srv.must(t, map[string]any{"op": "spark_stream_start", "name": "bronze",
		"source":      map[string]any{"kind": "json", "path": src, "schema": "id STRING, writer STRING"},
		"sink_format": "delta", "path": bronze, "checkpoint": spcp, "trigger_ms": 2000}, nil)
	sparkStopped := false
	stopSpark := func() *string {
		var rep struct {
			Exception *string `json:"exception"`
		}
		sparkStopped = true
		srv.must(t, map[string]any{"op": "spark_stream_stop", "name": "bronze"}, &rep)
		return rep.Exception
	}
	defer func() {
		if !sparkStopped {
			stopSpark()
		}
	}()
	waitFor := func(what string, cond func() bool) {
		t.Helper()
		giveUp := time.After(concurrentGiveUp)
		for !cond() {
			select {
			case <-giveUp:
				t.Fatalf("gave up (%v) waiting for %s; load %s%s", concurrentGiveUp, what, loadAvg(), srv.logTail())
			case <-time.After(2 * time.Second):
			}
		}
	}
	exists := func(p string) bool { _, err := os.Stat(p); return err == nil }
	waitFor("Spark's first bronze commit", func() bool { return exists(filepath.Join(bronze, "_delta_log", "00000000000000000001.json")) })

	ingestArgs := []string{"ingest", "--format", "delta", "--source", bronze, "--checkpoint", lkcp, "--table", silver, "--max-files-per-trigger", "2", "--quiet"}
	ingest := exec.Command(lakesinkBin, append(ingestArgs, "--trigger", "interval=1s")...)
	var ingestErr strings.Builder
	ingest.Stderr = &ingestErr
	if err := ingest.Start(); err != nil {
		t.Fatal(err)
	}
	ingestDone := false
	defer func() {
		if !ingestDone {
			_ = ingest.Process.Kill()
			_ = ingest.Wait()
		}
	}()
	countRows := func(p string) int {
		if !exists(filepath.Join(p, "_delta_log")) {
			return 0
		}
		return len(lakesinkRows(t, p))
	}
	waitFor("lakesink's first silver rows", func() bool { return countRows(silver) > 0 })
	srv.must(t, map[string]any{"op": "spark_delta", "what": "optimize", "path": bronze}, nil) // dataChange=false: no rows downstream
	stopFeeding()
	ids, err := feed.written()
	if err != nil {
		t.Fatal(err)
	}
	waitFor(fmt.Sprintf("Spark to write all %d fed rows to bronze", len(ids)), func() bool { return countRows(bronze) >= len(ids) })
	if exc := stopSpark(); exc != nil {
		t.Fatalf("Spark bronze query: %s", *exc)
	}
	waitFor("lakesink to stream all bronze rows into silver", func() bool { return countRows(silver) >= len(ids) })
	if err := ingest.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	err = ingest.Wait()
	ingestDone = true
	var ee *exec.ExitError
	if err != nil && !(errors.As(err, &ee) && ee.ExitCode() == 130) {
		t.Fatalf("lakesink ingest --format delta: %v\n%s", err, ingestErr.String())
	}
	cli(t, append(ingestArgs, "--trigger", "available-now")...) // nothing left: no duplicate either

	var want []string
	for _, id := range ids {
		want = append(want, canon(map[string]any{"id": id, "writer": "spark"}))
	}
	bronzeRows := engineRows(sparkRead(t, bronze, "delta", nil).Rows)
	sameRows(t, "bronze (Spark's read) vs fed rows", want, bronzeRows)
	sameRows(t, "silver (lakesink's read) vs bronze", bronzeRows, lakesinkRows(t, silver))
	sameRows(t, "silver (Spark's read) vs bronze", bronzeRows, engineRows(sparkRead(t, silver, "delta", nil).Rows))
	var ops []string
	for _, e := range viewOf(t, bronze).history {
		ops = append(ops, e.CommitInfo.Operation())
	}
	if !strings.Contains(strings.Join(ops, ","), "OPTIMIZE") {
		t.Errorf("bronze history has no OPTIMIZE: %v", ops)
	}
	t.Logf("bronze: %d rows, %d versions (%v); load %s", len(bronzeRows), len(ops), ops, loadAvg())

	// lakesink's offsets/N, parsed by Spark: the same positions, and the
	// JSON Delta would write for them is lakesink's text.
	lk := lakesinkOffsets(t, lkcp)
	sp := sparkOffsets(t, lkcp, tableID(t, bronze))
	n := sameOffsets(t, "lakesink's checkpoint", lk, sp)
	for _, s := range sp {
		if s.JSON != s.Serialized {
			b, _ := s.BatchID.Int64()
			t.Errorf("offsets/%d: lakesink wrote %s, Delta re-serializes it as %s", b, s.Serialized, s.JSON)
		}
	}
	if n == 0 {
		t.Fatal("lakesink wrote no offsets")
	}
	t.Logf("%d of lakesink's offsets files read alike by Spark and lakesink", n)
	// Spark refuses lakesink's offsets for another table (its reservoirId check).
	var ans []sparkOffset
	if err := srv.call(map[string]any{"op": "spark_offsets", "checkpoint": lkcp, "reservoir_id": "00000000-0000-0000-0000-000000000000"}, &ans); err == nil {
		t.Errorf("Spark read lakesink's offsets as another table's: %v", ans)
	}
}
