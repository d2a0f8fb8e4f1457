package tests

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// run runs the CLI and returns stdout, stderr and the exit code.
func run(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	cmd := exec.Command(lakesinkBin, args...)
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return out.String(), errb.String(), code
}

func TestCLIRoundTripAndExitCodes(t *testing.T) {
	dir := t.TempDir()
	tbl := filepath.Join(dir, "t")
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range flightFiles(t)[:3] {
		data, _ := os.ReadFile(f)
		os.WriteFile(filepath.Join(src, filepath.Base(f)), data, 0o644)
	}
	if _, e, code := run(t, "create", tbl, "--schema", "../testdata/flights-schema.json", "--partition-by", "origin", "--property", "delta.checkpointInterval=5"); code != 0 {
		t.Fatalf("create: exit %d: %s", code, e)
	}
	if _, e, code := run(t, "create", tbl, "--schema", "../testdata/flights-schema.json"); code != 1 || !strings.Contains(e, "exists") {
		t.Fatalf("second create: exit %d, %q; want 1 naming the existing table", code, e)
	}
	ingest := []string{"ingest", "--source", src, "--timestamp-format", "2006/01/02 15:04", "--checkpoint", filepath.Join(dir, "chk"), "--table", tbl, "--max-files-per-trigger", "1", "--json"}
	out, e, code := run(t, ingest...)
	if code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, e)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	var last map[string]any
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &last); err != nil || last["message_type"] != "summary" || last["batches"] != float64(3) {
		t.Fatalf("ingest --json must end in a summary of 3 batches: %q", lines[len(lines)-1])
	}

	out, _, code = run(t, "describe", tbl, "--json")
	var d map[string]any
	if err := json.Unmarshal([]byte(out), &d); err != nil || code != 0 {
		t.Fatalf("describe --json: %v %q", err, out)
	}
	for _, k := range []string{"version", "schema", "partitionColumns", "minReaderVersion", "minWriterVersion", "readerFeatures", "writerFeatures", "properties", "numFiles", "sizeInBytes", "numRecords", "txns"} {
		if _, ok := d[k]; !ok {
			t.Errorf("describe --json lacks %q", k)
		}
	}
	if d["version"] != float64(3) || d["numRecords"] != float64(3000) || len(d["txns"].(map[string]any)) != 1 {
		t.Fatalf("describe: version %v numRecords %v txns %v", d["version"], d["numRecords"], d["txns"])
	}

	out, _, _ = run(t, "scan", tbl, "--where", "origin = 'SFO' AND delay > 30", "--columns", "origin,delay")
	n := 0
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("scan line %q: %v", l, err)
		}
		if r["origin"] != "SFO" || r["delay"].(float64) <= 30 || len(r) != 2 {
			t.Fatalf("scan row %v does not match the filter or projection", r)
		}
		n++
	}
	if n == 0 {
		t.Fatal("scan returned no SFO rows with delay > 30")
	}

	out, _, _ = run(t, "history", tbl, "--json", "--limit", "2")
	if c := strings.Count(out, `"message_type":"commit"`); c != 2 {
		t.Fatalf("history --limit 2 printed %d commits", c)
	}

	// Exit codes: 1 for a missing table, 4 for a corrupt log, 1 for update mode.
	if _, _, code := run(t, "describe", filepath.Join(dir, "nope")); code != 1 {
		t.Fatalf("missing table: exit %d, want 1", code)
	}
	if _, e, code := run(t, "ingest", "--source", filepath.Join(dir, "no-such-dir"), "--checkpoint", filepath.Join(dir, "chk3"), "--table", tbl); code != 1 || !strings.Contains(e, "no-such-dir") {
		t.Fatalf("missing source directory: exit %d %q, want 1 naming it", code, e)
	}
	if _, e, code := run(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk4"), "--table", tbl, "--partition-by", "destination", "--allow-reset"); code != 1 || !strings.Contains(e, "partitioned by [origin]") {
		t.Fatalf("--partition-by differing from the table's: exit %d %q, want 1", code, e)
	}
	if _, e, code := run(t, "ingest", "--source", src, "--checkpoint", filepath.Join(dir, "chk2"), "--table", tbl, "--output-mode", "update"); code != 1 || !strings.Contains(e, "update") {
		t.Fatalf("update mode: exit %d %q, want 1 naming the mode", code, e)
	}
	commit := filepath.Join(tbl, "_delta_log", "00000000000000000004.json")
	if err := os.WriteFile(commit, []byte("{\"add\": {not json\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, e, code := run(t, "describe", tbl); code != 4 || !strings.Contains(e, "00000000000000000004.json") {
		t.Fatalf("corrupt commit: exit %d %q, want 4 naming the file", code, e)
	}
	if _, e, code := run(t, "history", tbl); code != 4 || !strings.Contains(e, "00000000000000000004.json") {
		t.Fatalf("history over a corrupt commit: exit %d %q, want 4 naming the file (never an empty row)", code, e)
	}
	if _, e, code := run(t, "describe", tbl, "--version", "3"); code != 0 {
		t.Fatalf("describe of the version before the corrupt commit: exit %d %s", code, e)
	}
}

// TestBadRecordsPathWritesRejectsOnce: records that do not fit go to the
// --bad-records-path Delta table with the file, line and reason; the valid
// rows go on. A batch rerun (its commits/N lost, as after a crash between the
// sink's commit and the checkpoint) writes neither its rows nor its rejects
// twice.
func TestBadRecordsPathWritesRejectsOnce(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	good, _ := os.ReadFile(flightFiles(t)[0])
	lines := strings.SplitAfter(string(good), "\n")[:5]
	data := strings.Join(lines, "") + `{"date":"2001/01/01 00:47","delay":"late","distance":1,"origin":"X","destination":"Y"}` + "\nnot json\n"
	os.WriteFile(filepath.Join(src, "a.json"), []byte(data), 0o644)
	args := []string{"ingest", "--source", src, "--schema", "../testdata/flights-schema.json", "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t")}
	if _, e, code := run(t, args...); code != 1 || !strings.Contains(e, "line 6") || !strings.Contains(e, "delay") {
		t.Fatalf("without --bad-records-path: exit %d %q; want 1 naming line 6 and field delay", code, e)
	}
	args = append(args, "--bad-records-path", filepath.Join(dir, "bad"))
	for i := 0; i < 2; i++ {
		if _, e, code := run(t, args...); code != 0 {
			t.Fatalf("run %d: exit %d %s", i, code, e)
		}
		// Lose commits/0: the next run reruns batch 0.
		os.Remove(filepath.Join(dir, "chk", "commits", "0"))
	}
	out, _, _ := run(t, "scan", filepath.Join(dir, "bad"))
	var rejects []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatal(err)
		}
		rejects = append(rejects, r)
	}
	if len(rejects) != 2 || rejects[0]["line"] != float64(6) || rejects[0]["field"] != "delay" || rejects[1]["line"] != float64(7) ||
		!strings.HasSuffix(rejects[0]["file"].(string), "a.json") {
		t.Fatalf("rejects = %v; want lines 6 (field delay) and 7 of a.json, once each", rejects)
	}
	out, _, _ = run(t, "describe", filepath.Join(dir, "t"), "--json")
	var d map[string]any
	json.Unmarshal([]byte(out), &d)
	if d["numRecords"] != float64(5) {
		t.Fatalf("table holds %v records, want the 5 valid ones once", d["numRecords"])
	}
}

// A null partition value and the literal string "__HIVE_DEFAULT_PARTITION__"
// share a directory but are different partitions: OPTIMIZE must not merge
// them (regression: it rewrote the literal as null). A value ".." must not
// make the table unreadable (regression: "p=../" keys were unreadable).
func TestPartitionValuesThatShareOrEscapeDirectories(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}]}`
	for i, name := range []string{"a.json", "b.json"} {
		rows := fmt.Sprintf("{\"id\":%d,\"p\":null}\n{\"id\":%d,\"p\":\"__HIVE_DEFAULT_PARTITION__\"}\n{\"id\":%d,\"p\":\"..\"}\n", i*10, i*10+1, i*10+2)
		os.WriteFile(filepath.Join(src, name), []byte(rows), 0o644)
	}
	tbl := filepath.Join(dir, "t")
	if _, e, code := run(t, "ingest", "--source", src, "--schema", schema, "--checkpoint", filepath.Join(dir, "chk"), "--table", tbl,
		"--partition-by", "p", "--max-files-per-trigger", "1"); code != 0 {
		t.Fatalf("ingest: exit %d %s", code, e)
	}
	count := func(where string) int {
		out, e, code := run(t, "scan", tbl, "--where", where)
		if code != 0 {
			t.Fatalf("scan %q: exit %d %s", where, code, e)
		}
		return strings.Count(out, "\n")
	}
	check := func(stage string) {
		if n := count("p = '__HIVE_DEFAULT_PARTITION__'"); n != 2 {
			t.Fatalf("%s: %d rows with the literal value, want 2", stage, n)
		}
		if n := count("p IS NULL"); n != 2 {
			t.Fatalf("%s: %d rows with a null value, want 2", stage, n)
		}
		if n := count("p = '..'"); n != 2 {
			t.Fatalf("%s: %d rows with value '..', want 2", stage, n)
		}
	}
	check("after ingest")
	if _, e, code := run(t, "compact", tbl); code != 0 {
		t.Fatalf("compact: exit %d %s", code, e)
	}
	check("after compact")
}
