package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func writeFile(t *testing.T, path, data string) string {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

func mergeScanLines(t *testing.T, url string) []string {
	t.Helper()
	out, stderr, code := runCLI(t, "scan", url)
	if code != 0 {
		t.Fatalf("scan: %d %s", code, stderr)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	slices.Sort(lines)
	return lines
}

// TestMergeCommand: `lakesink merge` upserts one file by key with a
// sequence and a delete predicate; a rerun of the same --app-id/--version
// is skipped; --json reports the row counts.
func TestMergeCommand(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "t")
	c1 := writeFile(t, filepath.Join(dir, "c1.json"), `{"id":1,"part":"a","v":"x","seq":1,"op":"c"}
{"id":2,"part":"b","v":"y","seq":1,"op":"c"}
{"id":3,"part":"a","v":"z","seq":1,"op":"c"}
`)
	c2 := writeFile(t, filepath.Join(dir, "c2.json"), `{"id":1,"part":"b","v":"x2","seq":2,"op":"u"}
{"id":2,"part":"b","v":null,"seq":2,"op":"d"}
{"id":3,"part":"a","v":"old","seq":0,"op":"u"}
{"id":4,"part":"a","v":"new","seq":2,"op":"c"}
`)
	args := func(src string, v string) []string {
		return []string{"merge", tbl, "--source", src, "--merge-key", "id", "--sequence-by", "seq", "--delete-when", "op = 'd'",
			"--partition-by", "part", "--app-id", "load", "--version", v}
	}
	if _, stderr, code := runCLI(t, args(c1, "1")...); code != 0 {
		t.Fatalf("merge 1: %d %s", code, stderr)
	}
	out, stderr, code := runCLI(t, append(args(c2, "2"), "--json")...)
	if code != 0 {
		t.Fatalf("merge 2: %d %s", code, stderr)
	}
	sum := jsonLines(t, out)[0]
	if sum["numInserted"] != 1.0 || sum["numUpdated"] != 1.0 || sum["numDeleted"] != 1.0 || sum["numStale"] != 1.0 || sum["skipped"] != false {
		t.Fatalf("summary %v", sum)
	}
	want := []string{`{"id":1,"part":"b","seq":2,"v":"x2"}`, `{"id":3,"part":"a","seq":1,"v":"z"}`, `{"id":4,"part":"a","seq":2,"v":"new"}`}
	if got := mergeScanLines(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
	out, _, code = runCLI(t, append(args(c2, "2"), "--json")...)
	if code != 0 || jsonLines(t, out)[0]["skipped"] != true {
		t.Fatalf("rerun: %d %s", code, out)
	}
	// Duplicate keys without --sequence-by: refused, naming the key.
	_, stderr, code = runCLI(t, "merge", tbl, "--source", writeFile(t, filepath.Join(dir, "dup.json"), "{\"id\":7,\"part\":\"a\"}\n{\"id\":7,\"part\":\"b\"}\n"), "--merge-key", "id")
	if code != 1 || !strings.Contains(stderr, "id=7") {
		t.Fatalf("duplicate key: %d %s", code, stderr)
	}
}

// TestIngestUpdateModeDebezium: ingest --output-mode update with
// --cdc-format debezium merges Debezium change events, one file per batch,
// and reports inserted/updated/deleted rows per batch.
func TestIngestUpdateModeDebezium(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "in")
	writeFile(t, filepath.Join(src, "0001.json"), `{"before":null,"after":{"id":1,"name":"a"},"op":"c","ts_ms":1,"source":{"db":"x"}}
{"before":null,"after":{"id":2,"name":"b"},"op":"r","ts_ms":1}
{"before":{"id":1,"name":"a"},"after":{"id":1,"name":"a2"},"op":"u","ts_ms":2}
`)
	writeFile(t, filepath.Join(src, "0002.json"), `{"before":{"id":2,"name":"b"},"after":null,"op":"d","ts_ms":3}
{"before":null,"after":{"id":3,"name":"c"},"op":"c","ts_ms":3}
`)
	schema := writeFile(t, filepath.Join(dir, "schema.json"), `{"type":"struct","fields":[{"name":"id","type":"long","nullable":false,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}`)
	tbl := filepath.Join(dir, "t")
	_, stderr, code := runCLI(t, "ingest", "--source", src, "--format", "json", "--schema", schema, "--checkpoint", filepath.Join(dir, "chk"),
		"--table", tbl, "--output-mode", "update", "--merge-key", "id", "--cdc-format", "debezium", "--max-files-per-trigger", "1")
	if code != 0 {
		t.Fatalf("ingest: %d %s", code, stderr)
	}
	if !strings.Contains(stderr, "(2 inserted, 0 updated, 0 deleted, 0 files rewritten)") || !strings.Contains(stderr, "(1 inserted, 0 updated, 1 deleted, 1 file rewritten)") {
		t.Fatalf("progress lines:\n%s", stderr)
	}
	want := []string{`{"id":1,"name":"a2"}`, `{"id":3,"name":"c"}`}
	if got := mergeScanLines(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
}

// TestMergeDebeziumRowWithOpColumn: a row whose own columns include "__op"
// (Debezium's ExtractNewRecordState adds it with add.fields=op) keeps that
// column, and its value is never read as the event's op: an insert whose
// row says __op = "d" is an insert. Before the fix the change batch had two
// "__op" columns, the delete predicate read the row's, one inserted row was
// deleted and the column was dropped (exit 0).
func TestMergeDebeziumRowWithOpColumn(t *testing.T) {
	dir := t.TempDir()
	events := writeFile(t, filepath.Join(dir, "e.json"), `{"before":null,"after":{"id":1,"__op":"d"},"op":"c","ts_ms":1}
{"before":null,"after":{"id":2,"__op":"c"},"op":"c","ts_ms":1}
`)
	sch := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"__op","type":"string","nullable":true,"metadata":{}}]}`
	tbl := filepath.Join(dir, "t")
	if _, stderr, code := runCLI(t, "merge", tbl, "--source", events, "--merge-key", "id", "--cdc-format", "debezium", "--schema", sch); code != 0 {
		t.Fatalf("merge: %d %s", code, stderr)
	}
	want := []string{`{"id":1,"__op":"d"}`, `{"id":2,"__op":"c"}`}
	if got := mergeScanLines(t, tbl); !slices.Equal(got, want) {
		t.Fatalf("table %v, want %v", got, want)
	}
	// A delete event of key 1 deletes it, whatever its row's __op says.
	del := writeFile(t, filepath.Join(dir, "d.json"), `{"before":{"id":1,"__op":"c"},"after":null,"op":"d","ts_ms":2}
`)
	if _, stderr, code := runCLI(t, "merge", tbl, "--source", del, "--merge-key", "id", "--cdc-format", "debezium"); code != 0 {
		t.Fatalf("merge delete: %d %s", code, stderr)
	}
	if got := mergeScanLines(t, tbl); !slices.Equal(got, []string{`{"id":2,"__op":"c"}`}) {
		t.Fatalf("after delete: %v", got)
	}
}

// TestMergeCommandCreatesNothingOnBadInput: `lakesink merge` into a missing
// table with input it refuses (duplicate keys) commits nothing: no version
// 0 is left behind. An input field the table lacks gets a hint that names
// what merge supports (--schema; merge never adds columns), not schema
// evolution, which it has not.
func TestMergeCommandCreatesNothingOnBadInput(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "t")
	dup := writeFile(t, filepath.Join(dir, "dup.json"), "{\"id\":7,\"v\":\"a\"}\n{\"id\":7,\"v\":\"b\"}\n")
	if _, stderr, code := runCLI(t, "merge", tbl, "--source", dup, "--merge-key", "id"); code != 1 || !strings.Contains(stderr, "id=7") {
		t.Fatalf("duplicate key: %d %s", code, stderr)
	}
	if _, err := os.Stat(filepath.Join(tbl, "_delta_log", "00000000000000000000.json")); !os.IsNotExist(err) {
		t.Fatalf("a refused merge left version 0 of %s behind (%v)", tbl, err)
	}
	ok := writeFile(t, filepath.Join(dir, "ok.json"), "{\"id\":1,\"v\":\"a\"}\n")
	if _, stderr, code := runCLI(t, "merge", tbl, "--source", ok, "--merge-key", "id"); code != 0 {
		t.Fatalf("merge: %d %s", code, stderr)
	}
	extra := writeFile(t, filepath.Join(dir, "extra.json"), "{\"id\":2,\"v\":\"b\",\"extra\":5}\n")
	_, stderr, code := runCLI(t, "merge", tbl, "--source", extra, "--merge-key", "id")
	if code != 1 || !strings.Contains(stderr, "field extra") || !strings.Contains(stderr, "--schema") || strings.Contains(stderr, "evolve") {
		t.Fatalf("input field the table lacks: %d %s, want a hint naming --schema and no schema evolution", code, stderr)
	}
}

// TestCDCFlagsFollowTheLibraryRule: merge and ingest refuse the same
// change-event flags by ingest.CheckCDC, worded with the CLI's flags.
func TestCDCFlagsFollowTheLibraryRule(t *testing.T) {
	dir := t.TempDir()
	src := writeFile(t, filepath.Join(dir, "in", "e.json"), `{"op":"c","after":{"id":1}}`+"\n")
	tbl := filepath.Join(dir, "t")
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"merge delete-when", []string{"merge", tbl, "--source", src, "--merge-key", "id", "--cdc-format", "debezium", "--delete-when", "op = 'd'"},
			"--delete-when: with --cdc-format debezium deletes are the events with op 'd'"},
		{"merge unknown format", []string{"merge", tbl, "--source", src, "--merge-key", "id", "--cdc-format", "maxwell"},
			`--cdc-format "maxwell": the supported format is debezium`},
		{"merge no schema", []string{"merge", tbl, "--source", src, "--merge-key", "id", "--cdc-format", "debezium"},
			"--cdc-format debezium needs --schema (the schema of the events' after rows) or an existing --table"},
		{"ingest append", []string{"ingest", "--source", filepath.Join(dir, "in"), "--format", "json", "--checkpoint", filepath.Join(dir, "chk"),
			"--table", tbl, "--cdc-format", "debezium"}, "--cdc-format debezium needs --output-mode update and --merge-key"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, stderr, code := runCLI(t, tc.args...)
			if code != 1 || !strings.Contains(stderr, tc.want) {
				t.Fatalf("exit %d, stderr %q; want 1 with %q", code, stderr, tc.want)
			}
		})
	}
}
