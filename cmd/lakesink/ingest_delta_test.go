package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// writeEvents writes one NDJSON file of ids [from, from+n) into dir.
func writeEvents(t *testing.T, dir string, from, n int) {
	t.Helper()
	var b strings.Builder
	for i := from; i < from+n; i++ {
		fmt.Fprintf(&b, "{\"id\":%d,\"day\":\"d%d\"}\n", i, i%2)
	}
	if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("ev-%05d.json", from)), []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// tableIDs reads the id column of a Delta table, sorted.
func tableIDs(t *testing.T, url string) []int64 {
	t.Helper()
	snap, err := reader.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var ids []int64
	for rec, err := range snap.Rows(context.Background(), reader.ReadOptions{Columns: []string{"id"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Values[0].(int64))
	}
	slices.Sort(ids)
	return ids
}

func idRange(n int) []int64 {
	out := make([]int64, n)
	for i := range out {
		out[i] = int64(i)
	}
	return out
}

// TestIngestFromDeltaTable: files -> bronze (lakesink ingest, partitioned)
// -> silver (lakesink ingest --format delta), with a restart and an
// OPTIMIZE of bronze in between: silver holds every bronze row exactly
// once. A MERGE that deletes on bronze fails the silver query naming its
// version; --skip-change-commits skips it and the stream goes on.
func TestIngestFromDeltaTable(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	toBronze := func() {
		t.Helper()
		if _, e, code := runCLI(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk-bronze"), "--table", bronze,
			"--partition-by", "day", "--max-files-per-trigger", "1", "-q"); code != 0 {
			t.Fatalf("ingest into bronze: exit %d: %s", code, e)
		}
	}
	toSilver := func(extra ...string) (string, int) {
		t.Helper()
		args := append([]string{"ingest", "--format", "delta", "--source", bronze, "--checkpoint", filepath.Join(dir, "chk-silver"),
			"--table", silver, "--max-files-per-trigger", "2", "-q"}, extra...)
		_, e, code := runCLI(t, args...)
		return e, code
	}
	for i := range 3 {
		writeEvents(t, src, i*10, 10)
	}
	toBronze()
	if e, code := toSilver(); code != 0 {
		t.Fatalf("first silver run: exit %d: %s", code, e)
	}
	if got := tableIDs(t, silver); !slices.Equal(got, idRange(30)) {
		t.Fatalf("silver after the first run: %v", got)
	}

	writeEvents(t, src, 30, 10)
	writeEvents(t, src, 40, 10)
	toBronze()
	if _, e, code := runCLI(t, "compact", bronze, "-q"); code != 0 {
		t.Fatalf("compact bronze: exit %d: %s", code, e)
	}
	hist, _, _ := runCLI(t, "history", bronze, "--json")
	if !strings.Contains(hist, "OPTIMIZE") {
		t.Fatalf("bronze has no OPTIMIZE commit (the test would prove nothing): %s", hist)
	}
	writeEvents(t, src, 50, 10)
	toBronze()
	if e, code := toSilver(); code != 0 {
		t.Fatalf("second silver run: exit %d: %s", code, e)
	}
	if got := tableIDs(t, silver); !slices.Equal(got, idRange(60)) {
		t.Fatalf("silver after OPTIMIZE and a restart: %v (want 0..59 once each)", got)
	}
	if got := tableIDs(t, bronze); !slices.Equal(got, idRange(60)) {
		t.Fatalf("bronze: %v", got)
	}

	// A MERGE deleting one row: a change commit.
	ctx := context.Background()
	bt, err := table.Open(ctx, bronze)
	if err != nil {
		t.Fatal(err)
	}
	defer bt.Close()
	del := &schema.Batch{Schema: &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong, Nullable: true}, {Name: "op", Type: schema.TypeString, Nullable: true}}},
		Rows: [][]any{{int64(3), "d"}}}
	res, err := bt.Merge(ctx, del, table.MergeOptions{Keys: []string{"id"}, DeleteWhen: "op = 'd'"})
	if err != nil {
		t.Fatal(err)
	}
	writeEvents(t, src, 60, 10)
	toBronze()
	e, code := toSilver()
	if code == 0 || !strings.Contains(e, fmt.Sprintf("version %d ", res.Version)) || !strings.Contains(e, "--skip-change-commits") {
		t.Fatalf("after a MERGE on bronze: exit %d %q; want an error naming version %d and --skip-change-commits", code, e, res.Version)
	}
	if e, code := toSilver("--skip-change-commits"); code != 0 {
		t.Fatalf("--skip-change-commits: exit %d: %s", code, e)
	}
	if got := tableIDs(t, silver); !slices.Equal(got, idRange(70)) {
		t.Fatalf("silver after skipping the MERGE: %v (want 0..69: the delete is not streamed, the later append is)", got)
	}
}

// A Delta table streams into a file-sink directory too.
func TestIngestFromDeltaTableIntoFileSink(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	writeEvents(t, src, 0, 10)
	writeEvents(t, src, 10, 10)
	bronze, out := filepath.Join(dir, "bronze"), filepath.Join(dir, "out")
	if _, e, code := runCLI(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk-b"), "--table", bronze, "-q"); code != 0 {
		t.Fatalf("ingest into bronze: exit %d: %s", code, e)
	}
	if _, e, code := runCLI(t, "ingest", "--format", "delta", "--source", bronze, "--checkpoint", filepath.Join(dir, "chk-o"),
		"--file-sink", out, "--where", "id >= 5", "--columns", "id", "-q"); code != 0 {
		t.Fatalf("ingest into the file sink: exit %d: %s", code, e)
	}
	got := tableIDs(t, out)
	if want := idRange(20)[5:]; !slices.Equal(got, want) {
		t.Fatalf("file sink rows %v, want %v", got, want)
	}
}

// The Delta source flags are refused with another --format.
func TestDeltaSourceFlagsNeedFormatDelta(t *testing.T) {
	dir := t.TempDir()
	_, e, code := runCLI(t, "ingest", "--source", dir, "--checkpoint", filepath.Join(dir, "c"), "--table", filepath.Join(dir, "t"), "--skip-change-commits")
	if code == 0 || !strings.Contains(e, "--skip-change-commits applies to --format delta") {
		t.Fatalf("exit %d %q", code, e)
	}
}

// TestIngestFromDeltaTableUpdateMode: bronze holds change rows (id, name,
// op, seq); silver streams them with --output-mode update --merge-key id
// --sequence-by seq --delete-when "op = 'd'". A restart after a batch whose
// silver commit landed but whose commits/N did not (commits/N deleted, as
// a kill between the two leaves it) reruns that batch with exactly its
// bronze files although bronze grew meanwhile: the sink skips it (its txn
// is in silver) and the next batch applies the new changes, a delete
// included. Silver ends equal to the model, with one commit per batch.
func TestIngestFromDeltaTableUpdateMode(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	chkSilver := filepath.Join(dir, "chk-silver")
	changes := func(name string, lines ...string) {
		t.Helper()
		if err := os.WriteFile(filepath.Join(src, name), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if _, e, code := runCLI(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk-bronze"), "--table", bronze, "-q"); code != 0 {
			t.Fatalf("ingest into bronze: exit %d: %s", code, e)
		}
	}
	type summary struct{ batches, skipped float64 }
	toSilver := func() summary {
		t.Helper()
		out, e, code := runCLI(t, "ingest", "--format", "delta", "--source", bronze, "--checkpoint", chkSilver, "--table", silver,
			"--output-mode", "update", "--merge-key", "id", "--sequence-by", "seq", "--delete-when", "op = 'd'", "--json")
		if code != 0 {
			t.Fatalf("silver: exit %d: %s", code, e)
		}
		objs := jsonLines(t, out)
		last := objs[len(objs)-1]
		return summary{last["batches"].(float64), last["skippedBatches"].(float64)}
	}
	silverRows := func() []string {
		t.Helper()
		snap, err := reader.Open(context.Background(), silver)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		if _, ok := snap.Schema().Field("op"); ok {
			t.Fatalf("silver has the op column: %v", snap.Schema())
		}
		var rows []string
		for rec, err := range snap.Rows(context.Background(), reader.ReadOptions{Columns: []string{"id", "name", "seq"}}) {
			if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, fmt.Sprintf("%v|%v|%v", rec.Values...))
		}
		slices.Sort(rows)
		return rows
	}
	silverVersion := func() int64 {
		t.Helper()
		snap, err := reader.Open(context.Background(), silver)
		if err != nil {
			t.Fatal(err)
		}
		defer snap.Close()
		return snap.Version()
	}

	changes("c1.json", `{"id":1,"name":"a","op":"c","seq":1}`, `{"id":2,"name":"b","op":"c","seq":2}`, `{"id":1,"name":"a2","op":"u","seq":3}`)
	changes("c2.json", `{"id":3,"name":"c","op":"c","seq":4}`)
	if s := toSilver(); s.batches != 1 || s.skipped != 0 {
		t.Fatalf("first silver run: %+v, want 1 batch", s)
	}
	if got, want := silverRows(), []string{"1|a2|3", "2|b|2", "3|c|4"}; !slices.Equal(got, want) {
		t.Fatalf("silver after the first run: %v, want %v", got, want)
	}
	v1 := silverVersion()

	// The crash window: silver's commit of batch 0 landed, commits/0 did not.
	if err := os.Remove(filepath.Join(chkSilver, "commits", "0")); err != nil {
		t.Fatal(err)
	}
	changes("c3.json", `{"id":2,"name":"b","op":"d","seq":5}`, `{"id":3,"name":"c2","op":"u","seq":6}`, `{"id":4,"name":"d","op":"c","seq":7}`)
	if s := toSilver(); s.batches != 2 || s.skipped != 1 {
		t.Fatalf("restart: %+v, want 2 batches, the rerun of batch 0 skipped", s)
	}
	if got, want := silverRows(), []string{"1|a2|3", "3|c2|6", "4|d|7"}; !slices.Equal(got, want) {
		t.Fatalf("silver after the restart: %v, want %v (id 2 deleted, id 3 updated, id 4 inserted)", got, want)
	}
	if v := silverVersion(); v != v1+1 {
		t.Fatalf("silver version %d after the restart, want %d: one commit for the one new batch", v, v1+1)
	}
	// A restart with nothing new commits nothing.
	if s := toSilver(); s.batches != 0 {
		t.Fatalf("run with nothing new: %+v, want no batch", s)
	}
	if v := silverVersion(); v != v1+1 {
		t.Fatalf("silver version %d after a run with nothing new, want %d", v, v1+1)
	}
}

// TestIngestFromDeltaTableAddedColumn: a column added to bronze (ingest
// --merge-schema) under a running silver query (--trigger interval) stops
// it with an error naming the version, the column and both schemas, as
// Spark's DeltaSource does; the restart reads the new column, and silver
// takes it with --merge-schema (refused, naming the column, without):
// every row once, the older ones with a null in the new column.
func TestIngestFromDeltaTableAddedColumn(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	toBronze := func(extra ...string) {
		t.Helper()
		args := append([]string{"ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk-bronze"), "--table", bronze, "-q"}, extra...)
		if _, e, code := runCLI(t, args...); code != 0 {
			t.Fatalf("ingest into bronze: exit %d: %s", code, e)
		}
	}
	silverArgs := []string{"ingest", "--format", "delta", "--source", bronze, "--checkpoint", filepath.Join(dir, "chk-silver"), "--table", silver, "-q"}
	os.WriteFile(filepath.Join(src, "a.json"), []byte(`{"id":1,"name":"a"}`+"\n"), 0o644)
	toBronze()

	type result struct {
		stderr string
		code   int
	}
	running := make(chan result, 1)
	go func() {
		_, e, code := runCLI(t, append(slices.Clone(silverArgs), "--trigger", "interval=50ms")...)
		running <- result{e, code}
	}()
	// Wait for the running query's first batch (the starting snapshot).
	deadline := time.After(time.Minute)
	for {
		if snap, err := reader.Open(context.Background(), silver); err == nil {
			snap.Close()
			break
		}
		select {
		case r := <-running:
			t.Fatalf("the interval query stopped before its first batch: exit %d: %s", r.code, r.stderr)
		case <-deadline:
			t.Fatal("the interval query wrote no batch in a minute")
		case <-time.After(20 * time.Millisecond):
		}
	}
	os.WriteFile(filepath.Join(src, "b.json"), []byte(`{"id":2,"name":"b","extra":"x"}`+"\n"), 0o644)
	toBronze("--merge-schema")
	var r result
	select {
	case r = <-running:
	case <-deadline:
		t.Fatal("the running query did not stop at the schema change")
	}
	for _, want := range []string{"schema changed", "version 1 ", `"extra"`, "struct<id:long,name:string>", "struct<id:long,name:string,extra:string>", "restart the query"} {
		if r.code != 1 || !strings.Contains(r.stderr, want) {
			t.Fatalf("running query: exit %d %q; want exit 1 naming %s", r.code, r.stderr, want)
		}
	}

	// The restart reads the new column; silver needs --merge-schema to take it.
	if _, e, code := runCLI(t, silverArgs...); code != 1 || !strings.Contains(e, `"extra"`) {
		t.Fatalf("restart without --merge-schema: exit %d %q; want exit 1 naming the column", code, e)
	}
	if _, e, code := runCLI(t, append(slices.Clone(silverArgs), "--merge-schema")...); code != 0 {
		t.Fatalf("restart with --merge-schema: exit %d: %s", code, e)
	}
	snap, err := reader.Open(context.Background(), silver)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var rows []string
	for rec, err := range snap.Rows(context.Background(), reader.ReadOptions{Columns: []string{"id", "name", "extra"}}) {
		if err != nil {
			t.Fatal(err)
		}
		rows = append(rows, fmt.Sprintf("%v|%v|%v", rec.Values...))
	}
	slices.Sort(rows)
	if want := []string{"1|a|<nil>", "2|b|x"}; !slices.Equal(rows, want) {
		t.Fatalf("silver rows %v, want %v", rows, want)
	}
}

// An OPTIMIZE of the source (lakesink compact: removes and adds with
// dataChange=false) gives the downstream query no rows: the run after it
// reads nothing, and silver keeps each row once.
func TestIngestFromDeltaTableOptimizeGivesNoRows(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	for i := range 4 {
		writeEvents(t, src, i*5, 5)
	}
	if _, e, code := runCLI(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk-b"), "--table", bronze,
		"--max-files-per-trigger", "1", "-q"); code != 0 {
		t.Fatalf("ingest into bronze: exit %d: %s", code, e)
	}
	toSilver := func() float64 {
		t.Helper()
		out, e, code := runCLI(t, "ingest", "--format", "delta", "--source", bronze, "--checkpoint", filepath.Join(dir, "chk-s"),
			"--table", silver, "--json")
		if code != 0 {
			t.Fatalf("silver: exit %d: %s", code, e)
		}
		objs := jsonLines(t, out)
		return objs[len(objs)-1]["numInputRows"].(float64)
	}
	if n := toSilver(); n != 20 {
		t.Fatalf("first silver run read %v rows, want 20", n)
	}
	out, e, code := runCLI(t, "compact", bronze, "--json")
	if objs := jsonLines(t, out); code != 0 || objs[len(objs)-1]["numRemovedFiles"].(float64) < 2 {
		t.Fatalf("compact bronze: exit %d %s %s; want files rewritten (the test proves nothing otherwise)", code, out, e)
	}
	if n := toSilver(); n != 0 {
		t.Fatalf("the silver run after OPTIMIZE read %v rows, want 0", n)
	}
	if got := tableIDs(t, silver); !slices.Equal(got, idRange(20)) {
		t.Fatalf("silver: %v, want 0..19 once each", got)
	}
}
