package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/compaction"
)

// runCLI runs the CLI in-process as main does and returns stdout, stderr and
// the exit status.
func runCLI(t *testing.T, args ...string) (string, string, int) {
	t.Helper()
	var out, errb bytes.Buffer
	root := newRootCommand()
	root.SetArgs(args)
	root.SetOut(&out)
	root.SetErr(&errb)
	err := root.ExecuteContext(context.Background())
	if err != nil {
		printExitError(&errb, root.jsonErrors(), err)
	}
	return out.String(), errb.String(), exitCode(err, false)
}

// jsonLines decodes NDJSON output, failing on any line that is not a JSON
// object with a message_type.
func jsonLines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var objs []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		if l == "" {
			continue
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("stdout line %q is not JSON: %v", l, err)
		}
		if _, ok := m["message_type"]; !ok {
			t.Fatalf("stdout line %q has no message_type", l)
		}
		objs = append(objs, m)
	}
	return objs
}

const flightsSchema = "../../testdata/flights-schema.json"

// flightsSource copies the first n flight files (1,000 rows each) into a
// fresh source directory.
func flightsSource(t *testing.T, dir string, n int) string {
	t.Helper()
	files, err := filepath.Glob("../../testdata/flights/flights-*.json")
	if err != nil || len(files) < n {
		t.Fatalf("flight files: %v (%d found)", err, len(files))
	}
	src := filepath.Join(dir, "src")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range files[:n] {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(src, filepath.Base(f)), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return src
}

// ingestFlights ingests n flight files into a Delta table (one batch per
// file) or, with fileSink, a file-sink directory, and returns its path.
func ingestFlights(t *testing.T, dir string, n int, fileSink bool, extra ...string) string {
	t.Helper()
	src := flightsSource(t, dir, n)
	out := filepath.Join(dir, "t")
	target := "--table"
	if fileSink {
		target = "--file-sink"
	}
	args := append([]string{"ingest", "--source", src, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", filepath.Join(dir, "chk"), target, out, "--max-files-per-trigger", "1", "-q"}, extra...)
	if _, e, code := runCLI(t, args...); code != 0 {
		t.Fatalf("ingest: exit %d: %s", code, e)
	}
	return out
}

// TestFileSinkCompactLog: a typo in DIR, or a directory that is not a file
// sink, is an error naming it (it reported "compacted into  (0 entries)" with
// exit 0); a log without a compaction file yet says so; a log with one
// rewrites it.
func TestFileSinkCompactLog(t *testing.T) {
	dir := t.TempDir()
	missing := filepath.Join(dir, "no-such-dir")
	if _, e, code := runCLI(t, "filesink", "compact-log", missing); code != 1 || !strings.Contains(e, "no-such-dir") {
		t.Fatalf("missing DIR: exit %d %q; want 1 naming it", code, e)
	}
	plain := filepath.Join(dir, "plain")
	os.MkdirAll(plain, 0o755)
	if _, e, code := runCLI(t, "filesink", "compact-log", plain); code != 1 || !strings.Contains(e, "_spark_metadata") || !strings.Contains(e, "plain") {
		t.Fatalf("DIR without _spark_metadata: exit %d %q; want 1 naming DIR and the missing log", code, e)
	}

	few := ingestFlights(t, filepath.Join(dir, "few"), 3, true)
	out, e, code := runCLI(t, "filesink", "compact-log", few)
	if code != 0 || !strings.Contains(out, "no compaction file yet") {
		t.Fatalf("3 batches: exit %d %q %q; want 0 saying there is no compaction file yet", code, out, e)
	}
	out, _, _ = runCLI(t, "filesink", "compact-log", few, "--json")
	objs := jsonLines(t, out)
	if len(objs) != 1 || objs[0]["file"] != "" || objs[0]["deletedLogFiles"] == nil {
		t.Fatalf("--json with no compaction file: %v; want one summary with file \"\" and deletedLogFiles []", objs)
	}

	ten := ingestFlights(t, filepath.Join(dir, "ten"), 10, true)
	out, e, code = runCLI(t, "filesink", "compact-log", ten)
	if code != 0 || !strings.Contains(out, "compacted into _spark_metadata/9.compact (10 entries)") {
		t.Fatalf("10 batches: exit %d %q %q; want batch 9's compaction file rewritten with 10 entries", code, out, e)
	}
}

// TestCompactJSONStatusIsThrottledAndQuiet: compact --json printed one status
// line per input file (thousands for a large table) and --quiet kept them;
// now status lines are throttled per phase, dropped by --quiet, and the
// summary is still the last line.
func TestCompactJSONStatusIsThrottledAndQuiet(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 3, false, "--partition-by", "origin")
	copyTable := func(name string) string {
		dst := filepath.Join(dir, name)
		if err := os.CopyFS(dst, os.DirFS(tbl)); err != nil {
			t.Fatal(err)
		}
		return dst
	}
	plan, _, _ := runCLI(t, "compact", tbl, "--dry-run", "--json")
	objs := jsonLines(t, plan)
	files := objs[len(objs)-1]["numFiles"].(float64)
	if files < 100 {
		t.Fatalf("the plan rewrites %v files; the test needs many", files)
	}

	out, e, code := runCLI(t, "compact", copyTable("a"), "--json")
	if code != 0 {
		t.Fatalf("compact --json: exit %d %s", code, e)
	}
	objs = jsonLines(t, out)
	last := objs[len(objs)-1]
	if last["message_type"] != "summary" || last["numRemovedFiles"] != files {
		t.Fatalf("last line %v; want the summary removing %v files", last, files)
	}
	// Durations in JSON are milliseconds everywhere (ingest's durationMs);
	// compact printed durationNs.
	if _, ok := last["durationMs"].(float64); !ok || last["durationNs"] != nil {
		t.Fatalf("summary %v; want durationMs and no durationNs", last)
	}
	status := len(objs) - 1
	// Phases rewrite, commit and done, plus one a second while rewriting.
	if status < 1 || status > 10 {
		t.Fatalf("%d status lines for %v files; want a handful (one per phase, throttled)", status, files)
	}

	out, _, code = runCLI(t, "compact", copyTable("b"), "--json", "--quiet")
	objs = jsonLines(t, out)
	if code != 0 || len(objs) != 1 || objs[0]["message_type"] != "summary" {
		t.Fatalf("compact --json --quiet: exit %d, %d lines; want only the summary", code, len(objs))
	}
}

func TestStatusThrottle(t *testing.T) {
	s := statusThrottle{every: time.Second}
	t0 := time.Unix(100, 0)
	steps := []struct {
		name  string
		phase string
		at    time.Duration
		want  bool
	}{
		{"first event", "rewrite", 0, true},
		{"same phase too soon", "rewrite", 500 * time.Millisecond, false},
		{"same phase after the interval", "rewrite", 1000 * time.Millisecond, true},
		{"new phase at once", "commit", 1001 * time.Millisecond, true},
		{"another new phase at once", "done", 1002 * time.Millisecond, true},
	}
	for _, st := range steps {
		if got := s.due(st.phase, t0.Add(st.at)); got != st.want {
			t.Fatalf("%s: due = %v, want %v", st.name, got, st.want)
		}
	}
}

// TestVacuumRetentionTooShortNamesTheFlag: the refusal named the library's
// option and the flag ("use Force to override (pass --force to override)").
func TestVacuumRetentionTooShortNamesTheFlag(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 1, false)
	_, e, code := runCLI(t, "vacuum", tbl, "--retain", "1h", "--dry-run")
	if code != 1 || strings.Count(e, "--force") != 1 || strings.Contains(e, "override") {
		t.Fatalf("vacuum --retain 1h: exit %d %q; want 1 naming --force once", code, e)
	}
	if !strings.Contains(e, "1h0m0s < 168h0m0s") {
		t.Fatalf("vacuum --retain 1h: %q; want the retention and the table's", e)
	}
	if _, e, code := runCLI(t, "vacuum", tbl, "--retain", "1h", "--dry-run", "--force"); code != 0 {
		t.Fatalf("vacuum --retain 1h --force: exit %d %s", code, e)
	}
	out, e, code := runCLI(t, "vacuum", tbl, "--dry-run", "--json")
	objs := jsonLines(t, out)
	if last := objs[len(objs)-1]; code != 0 || last["retentionMs"] != float64(7*24*3600*1000) || last["retentionNs"] != nil {
		t.Fatalf("vacuum --json: exit %d %v %s; want retentionMs 604800000 (7 days) and no retentionNs", code, last, e)
	}
}

// TestOrphansOlderThanTakesDays: --older-than refused "7d" while --retain and
// --retention take it.
func TestOrphansOlderThanTakesDays(t *testing.T) {
	dir := ingestFlights(t, t.TempDir(), 1, true)
	orphan := filepath.Join(dir, "part-99999-orphan.parquet")
	os.WriteFile(orphan, nil, 0o644)
	old := time.Now().Add(-3 * 24 * time.Hour)
	os.Chtimes(orphan, old, old)
	cases := []struct {
		name      string
		olderThan string
		want      string
		code      int
	}{
		{"days, older", "2d", "1 orphan older than 48h0m0s", 0},
		{"days, younger", "7d", "0 orphans older than 168h0m0s", 0},
		{"hours", "24h", "1 orphan older than 24h0m0s", 0},
		{"not a duration", "7x", "want a duration such as 24h or 7d", 1},
	}
	for _, c := range cases {
		out, e, code := runCLI(t, "filesink", "orphans", dir, "--older-than", c.olderThan)
		if code != c.code || !strings.Contains(out+e, c.want) {
			t.Errorf("%s: --older-than %s: exit %d %q %q; want %d and %q", c.name, c.olderThan, code, out, e, c.code, c.want)
		}
	}
	if _, _, code := runCLI(t, "filesink", "orphans", dir); code != 0 {
		t.Fatalf("default --older-than: exit %d", code)
	}
}

// TestMaintenanceSummaries: cleanup-log on a young table said "reachable from
// checkpoint -1"; maintain --once ended its line with a dangling ";".
func TestMaintenanceSummaries(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 2, false)
	out, e, code := runCLI(t, "cleanup-log", tbl)
	if code != 0 || !strings.HasPrefix(out, "nothing to delete: no checkpoint is older than the cutoff") || strings.Contains(out, "checkpoint -1") {
		t.Fatalf("cleanup-log: exit %d %q %q; want 0 saying no checkpoint is older than the cutoff", code, out, e)
	}
	out, e, code = runCLI(t, "maintain", tbl, "--once") // the line on stdout, the log on stderr
	line := strings.TrimSpace(out)
	if code != 0 || !strings.HasPrefix(line, "file://") || !strings.Contains(line, ": vacuumed 0 files; cleaned 0 log files") || strings.HasSuffix(line, ";") {
		t.Fatalf("maintain --once: exit %d %q %q; want one line listing the steps separated by \"; \"", code, out, e)
	}
}

// TestMaintainStopExitStatus: SIGINT/SIGTERM between passes ends maintain
// with exit 0, as ingest --trigger interval (it was 130); a stop that cut a
// pass short is 130 and names the table (compaction's
// TestServiceRunReportsAnInterruptedPass shows Run's two errors).
func TestMaintainStopExitStatus(t *testing.T) {
	var errb bytes.Buffer
	p := &printer{out: io.Discard, err: &errb}
	err := maintainStopped(p, context.Canceled, context.Canceled)
	if code := exitCode(err, true); code != exitOK || err != nil {
		t.Fatalf("stop between passes: exit %d (%v), want 0", code, err)
	}
	if !strings.Contains(errb.String(), "maintenance stopped between passes") {
		t.Errorf("stderr %q; want it to say the service stopped between passes", errb.String())
	}
	err = maintainStopped(p, &compaction.PassInterruptedError{Tables: []string{"file:///data/t"}, Err: context.Canceled}, context.Canceled)
	if code := exitCode(err, true); code != exitInterrupted {
		t.Fatalf("stop during a pass: exit %d (%v), want %d", code, err, exitInterrupted)
	}
	if want := "interrupted: maintenance stopped during a pass of file:///data/t; every table is consistent"; err == nil || !strings.HasPrefix(err.Error(), want) {
		t.Fatalf("stop during a pass: %v, want %q...", err, want)
	}
}

// TestIngestBadRecordHints: a record that does not fit names the file, line
// and field and says how to go on; deleting the bad file (the natural next
// step) left a bare "not found", now it says the batch was planned with it.
func TestIngestBadRecordHints(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	bad := filepath.Join(src, "b.csv")
	os.WriteFile(filepath.Join(src, "a.csv"), []byte("id,amount\n1,10.5\n"), 0o644)
	os.WriteFile(bad, []byte("id,amount\n2,abc\n"), 0o644)
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"amount","type":"double","nullable":true,"metadata":{}}]}`
	args := []string{"ingest", "--source", src, "--format", "csv", "--schema", schema, "--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t")}

	_, e, code := runCLI(t, args...)
	for _, want := range []string{"b.csv line 2 field amount", "--bad-records-path"} {
		if code != 1 || !strings.Contains(e, want) {
			t.Fatalf("bad record: exit %d %q; want 1 and %q", code, e, want)
		}
	}
	os.Remove(bad)
	_, e, code = runCLI(t, args...)
	for _, want := range []string{"b.csv", "batch 0 was planned with this file", "offsets/0", "put the file back"} {
		if code != 1 || !strings.Contains(e, want) {
			t.Fatalf("planned file deleted: exit %d %q; want 1 and %q", code, e, want)
		}
	}
	os.WriteFile(bad, []byte("id,amount\n2,3.5\n"), 0o644)
	if _, e, code := runCLI(t, args...); code != 0 {
		t.Fatalf("fixed file put back: exit %d %s", code, e)
	}
	if out, _, _ := runCLI(t, "scan", filepath.Join(dir, "t"), "--format", "csv"); out != "id,amount\n1,10.5\n2,3.5\n" {
		t.Fatalf("rows after the fix: %q", out)
	}
}

// TestUsageErrorsNameTheCommand: cobra's "accepts 1 arg(s), received 0" and
// "unknown flag: --limt" did not say which command or how to call it.
func TestUsageErrorsNameTheCommand(t *testing.T) {
	cases := []struct {
		name string
		args []string
		want string
	}{
		{"no URL", []string{"scan"}, "lakesink: scan: accepts 1 arg(s), received 0 (usage: lakesink scan URL [flags])"},
		{"two URLs", []string{"describe", "a", "b"}, "describe: accepts 1 arg(s), received 2 (usage: lakesink describe URL [flags])"},
		{"nested command", []string{"filesink", "ls"}, "filesink ls: accepts 1 arg(s), received 0 (usage: lakesink filesink ls DIR [flags])"},
		{"no table to maintain", []string{"maintain", "--once"}, "maintain: requires at least 1 arg(s), only received 0 (usage: lakesink maintain URL... [flags])"},
		{"misspelt flag", []string{"scan", "t", "--limt", "3"}, "lakesink: scan: unknown flag: --limt (see lakesink scan --help)"},
		{"bad flag value", []string{"history", "t", "--limit", "x"}, "history: invalid argument \"x\" for \"--limit\" flag: not an integer (see lakesink history --help)"},
		{"huge flag value", []string{"scan", "t", "--limit", "99999999999999999999"}, "scan: invalid argument \"99999999999999999999\" for \"--limit\" flag: out of range (see"},
		{"bad trigger", []string{"ingest", "--source", "s", "--checkpoint", "c", "--table", "t", "--trigger", "sometimes"}, "lakesink: --trigger \"sometimes\": want available-now, once or interval=<duration>"},
		{"root flag", []string{"--badflag"}, "lakesink: unknown flag: --badflag (see lakesink --help)"},
		// Negative counts are named by their flag, not by a library's option
		// field ("MaxBins -1 < 0", "Limit -1 is negative").
		{"negative scan limit", []string{"scan", "t", "--limit", "-1"}, "lakesink: scan: --limit -1: want 0 or more"},
		{"negative history limit", []string{"history", "t", "--limit", "-3"}, "history: --limit -3: want 0 or more"},
		{"negative max bins", []string{"compact", "t", "--max-bins", "-1"}, "compact: --max-bins -1: want 0 or more"},
		{"negative workers", []string{"compact", "t", "--workers", "-2"}, "compact: --workers -2: want 0 or more"},
		{"negative small files", []string{"maintain", "t", "--small-files", "-1"}, "maintain: --small-files -1: want 0 or more"},
		{"negative files per trigger", []string{"ingest", "--source", "s", "--checkpoint", "c", "--table", "t", "--max-files-per-trigger", "-1"}, "ingest: --max-files-per-trigger -1: want 0 or more"},
		{"negative offsets per trigger", []string{"ingest", "--source", "s", "--checkpoint", "c", "--table", "t", "--max-offsets-per-trigger", "-5"}, "ingest: --max-offsets-per-trigger -5: want 0 or more"},
	}
	for _, c := range cases {
		_, e, code := runCLI(t, c.args...)
		if code != 1 || !strings.Contains(e, c.want) {
			t.Errorf("%s: exit %d %q; want 1 and %q", c.name, code, e, c.want)
		}
	}
}

// TestParseTimeFormsAndError: the error listed only RFC 3339 and epoch
// milliseconds, while "2024-01-31 10:00:00" and "2024-01-31" are accepted.
func TestParseTimeFormsAndError(t *testing.T) {
	want := time.Date(2024, 1, 31, 10, 0, 0, 0, time.UTC)
	for _, s := range []string{"2024-01-31T10:00:00Z", "2024-01-31 10:00:00", "2024-01-31T10:00:00", "1706695200000"} {
		got, err := parseTime(s)
		if err != nil || !got.Equal(want) {
			t.Errorf("parseTime(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	if got, err := parseTime("2024-01-31"); err != nil || !got.Equal(want.Truncate(24*time.Hour)) {
		t.Errorf("parseTime(date) = %v, %v", got, err)
	}
	_, err := parseTime("yesterday")
	if err == nil || !strings.Contains(err.Error(), "2024-01-31 10:00:00") || !strings.Contains(err.Error(), "RFC 3339") {
		t.Fatalf("parseTime(yesterday): %v; want an error listing every accepted form", err)
	}
}

// TestScanVacuumedVersionAndFormatConflict: time travel to a version whose
// files VACUUM deleted ended in a bare "not found"; --json with --format csv
// printed CSV.
func TestScanVacuumedVersionAndFormatConflict(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 2, false)
	if _, e, code := runCLI(t, "compact", tbl, "-q"); code != 0 {
		t.Fatalf("compact: exit %d %s", code, e)
	}
	if _, e, code := runCLI(t, "vacuum", tbl, "--retain", "0h", "--force", "-q"); code != 0 {
		t.Fatalf("vacuum: exit %d %s", code, e)
	}
	if out, e, code := runCLI(t, "scan", tbl, "--format", "csv"); code != 0 || strings.Count(out, "\n") != 2001 {
		t.Fatalf("scan of the latest version: exit %d, %d lines %s; want 2,000 rows and a header", code, strings.Count(out, "\n"), e)
	}
	_, e, code := runCLI(t, "scan", tbl, "--version", "1")
	if code != 1 || !strings.Contains(e, "not found") || !strings.Contains(e, "VACUUM deletes") || !strings.Contains(e, ".parquet") {
		t.Fatalf("scan --version 1 after VACUUM: exit %d %q; want 1 naming the file and VACUUM", code, e)
	}
	out, e, code := runCLI(t, "scan", tbl, "--columns", "origin,delay,ORIGIN")
	if code != 1 || out != "" || !strings.Contains(e, `column "ORIGIN" given twice`) {
		t.Fatalf("scan --columns origin,delay,ORIGIN: exit %d %q %q; want 1 naming the repeated column", code, out, e)
	}
	out, e, code = runCLI(t, "scan", tbl, "--json", "--format", "csv")
	if code != 1 || out != "" || !strings.Contains(e, "not both") {
		t.Fatalf("scan --json --format csv: exit %d %q %q; want 1 and no output", code, out, e)
	}
	out, _, code = runCLI(t, "scan", tbl, "--json", "--limit", "1")
	var row map[string]any
	if err := json.Unmarshal([]byte(out), &row); code != 0 || err != nil || row["origin"] == nil {
		t.Fatalf("scan --json --limit 1: exit %d %q %v; want one NDJSON row", code, out, err)
	}
}

// TestMarkInterrupted: an error ending in exit status 130 said only
// "...: context canceled" (compact, vacuum, scan stopped by Ctrl-C).
func TestMarkInterrupted(t *testing.T) {
	canceled := fmt.Errorf("compaction: optimize t: rewrite a.parquet: %w", context.Canceled)
	cases := []struct {
		name        string
		err         error
		interrupted bool
		wantPrefix  string
	}{
		{"cancelled by a signal", canceled, true, "interrupted (SIGINT/SIGTERM); the table is left consistent: compaction: optimize t"},
		{"already says interrupted", &hintError{canceled, "interrupted: maintenance stopped"}, true, "interrupted: maintenance stopped"},
		{"an ordinary error", errors.New("boom"), false, "boom"},
	}
	for _, c := range cases {
		got := markInterrupted(c.err, c.interrupted)
		if !strings.HasPrefix(got.Error(), c.wantPrefix) || strings.Count(got.Error(), "interrupted") > 1 {
			t.Errorf("%s: %q; want it to start with %q", c.name, got, c.wantPrefix)
		}
		if !errors.Is(got, c.err) || exitCode(got, c.interrupted) != exitCode(c.err, c.interrupted) {
			t.Errorf("%s: the marked error lost its cause or exit status", c.name)
		}
	}
	if markInterrupted(nil, true) != nil {
		t.Error("markInterrupted(nil) != nil")
	}
}

// TestWhereAndColumnsHints: an unknown column lists the table's columns; a
// bare word on the right of a comparison ("comparing two columns") says
// that text takes single quotes. scan and files both name the --where flag
// (scan said `where "..."`, the reader's wording, without the dashes).
func TestWhereAndColumnsHints(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 1, false)
	const columns = "the columns are: date, delay, distance, origin, destination"
	cases := []struct {
		name string
		args []string
		want []string
	}{
		{"scan, unknown --where column", []string{"scan", tbl, "--where", "nosuch = 1"}, []string{`--where "nosuch = 1"`, columns}},
		{"files, unknown --where column", []string{"files", tbl, "--where", "nosuch = 1"}, []string{`--where "nosuch = 1"`, columns}},
		{"scan, unknown --columns column", []string{"scan", tbl, "--columns", "origin,nosuch"}, []string{`"nosuch"`, columns}},
		{"scan, unquoted text", []string{"scan", tbl, "--where", "origin = SFO"}, []string{`--where "origin = SFO"`, "position 9", "single quotes, e.g. origin = 'SFO'"}},
		{"files, unquoted text", []string{"files", tbl, "--where", "origin = SFO"}, []string{"single quotes"}},
	}
	for _, c := range cases {
		_, e, code := runCLI(t, c.args...)
		for _, w := range c.want {
			if code != 1 || !strings.Contains(e, w) {
				t.Errorf("%s: exit %d %q; want 1 and %q", c.name, code, e, w)
			}
		}
	}
	if _, e, code := runCLI(t, "scan", tbl, "--where", "delay > 'x'"); code != 1 || strings.Contains(e, "the columns are") {
		t.Errorf("a literal of the wrong type: exit %d %q; want 1 without the column list", code, e)
	}
}

// TestDescribeFileSinkNamesItsURL: describe of a file-sink directory printed
// the path as typed, a Delta table its file:/// URL.
func TestDescribeFileSinkNamesItsURL(t *testing.T) {
	dir := ingestFlights(t, t.TempDir(), 1, true)
	abs, _ := filepath.Abs(dir)
	out, e, code := runCLI(t, "describe", dir)
	if code != 0 || !strings.HasPrefix(out, "file-sink    file://"+abs+" ") {
		t.Fatalf("describe: exit %d %q %s; want the file:// URL first", code, out, e)
	}
	out, _, _ = runCLI(t, "describe", dir, "--json")
	if objs := jsonLines(t, out); len(objs) != 1 || objs[0]["directory"] != "file://"+abs || objs[0]["kind"] != "filesink" {
		t.Fatalf("describe --json: %v", objs)
	}
}

// TestPlural: "1 batches", "1 files" and "1 orphans" read as typos.
func TestPlural(t *testing.T) {
	cases := []struct {
		n    int64
		want string
	}{{0, "0 batches"}, {1, "1 batch"}, {2, "2 batches"}}
	for _, c := range cases {
		if got := plural(c.n, "batch", "batches"); got != c.want {
			t.Errorf("plural(%d) = %q, want %q", c.n, got, c.want)
		}
	}
	dir := t.TempDir()
	src := flightsSource(t, dir, 1)
	_, e, code := runCLI(t, "ingest", "--source", src, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t"))
	for _, want := range []string{"batch 0: 1 file, 1000 rows -> 1 data file, committed version 0", "ingested 1000 rows in 1 batch (0 skipped)"} {
		if code != 0 || !strings.Contains(e, want) {
			t.Fatalf("ingest: exit %d %q; want %q", code, e, want)
		}
	}
}

// TestVacuumUntrackedFloorModeAndHistory: --untracked-min-age below 1h is
// refused naming its own force flag once (--force does not lift it);
// --mode takes full/lite (Delta's FULL/LITE too) and nothing else; a
// VACUUM that deleted files shows as VACUUM START and VACUUM END in
// history, a dry run adds nothing.
func TestVacuumUntrackedFloorModeAndHistory(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 2, false)
	_, e, code := runCLI(t, "vacuum", tbl, "--retain", "0h", "--force", "--untracked-min-age", "10m", "--dry-run")
	if code != 1 || strings.Count(e, "--force-untracked-min-age") != 1 || !strings.Contains(e, "10m0s < 1h0m0s") || strings.Contains(e, "ForceUntrackedMinAge") {
		t.Fatalf("--untracked-min-age 10m: exit %d %q; want 1 naming --force-untracked-min-age once", code, e)
	}
	if _, e, code := runCLI(t, "vacuum", tbl, "--mode", "quick", "--dry-run"); code != 1 || !strings.Contains(e, `--mode "quick"`) {
		t.Fatalf("--mode quick: exit %d %q", code, e)
	}
	if _, e, code := runCLI(t, "compact", tbl, "-q"); code != 0 {
		t.Fatalf("compact: exit %d %s", code, e)
	}
	for _, mode := range []string{"LITE", "full"} {
		out, e, code := runCLI(t, "vacuum", tbl, "--retain", "0h", "--force", "--mode", mode, "--dry-run", "--json")
		objs := jsonLines(t, out)
		if last := objs[len(objs)-1]; code != 0 || last["filesDeleted"] != float64(2) || last["mode"] != strings.ToUpper(mode) || last["untrackedMinAgeMs"] != float64(3600000) {
			t.Fatalf("vacuum --mode %s --dry-run: exit %d %v %s; want 2 files", mode, code, last, e)
		}
	}
	history := func() []map[string]any {
		out, e, code := runCLI(t, "history", tbl, "--json")
		if code != 0 {
			t.Fatalf("history: exit %d %s", code, e)
		}
		return jsonLines(t, out)
	}
	if h := history(); h[0]["operation"] != "OPTIMIZE" {
		t.Fatalf("a dry run committed: latest is %v", h[0])
	}
	if _, e, code := runCLI(t, "vacuum", tbl, "--retain", "0h", "--force", "--mode", "lite", "-q"); code != 0 {
		t.Fatalf("vacuum --mode lite: exit %d %s", code, e)
	}
	h := history()
	if h[0]["operation"] != "VACUUM END" || h[1]["operation"] != "VACUUM START" {
		t.Fatalf("history after VACUUM: %v, %v", h[0], h[1])
	}
	if m, _ := h[0]["operationMetrics"].(map[string]any); m["numDeletedFiles"] != "2" {
		t.Fatalf("VACUUM END metrics %v", h[0]["operationMetrics"])
	}
}

// TestScanTruncatedCommitExitsCorrupt is issue 14 item 1 through the CLI:
// `: > _delta_log/00000000000000000001.json`, or the commit cut after its
// commitInfo line, made `scan` print version 0's rows with exit 0. Both are
// exit 4 naming the file; with --skip-checksum the cut commit reads as its
// file says (the .crc is what caught it).
func TestScanTruncatedCommitExitsCorrupt(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 2, false)
	commit1 := filepath.Join(tbl, "_delta_log", "00000000000000000001.json")
	orig, err := os.ReadFile(commit1)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tbl, "_delta_log", "00000000000000000001.crc")); err != nil {
		t.Fatalf("no .crc after the commit: %v", err)
	}
	for _, tc := range []struct {
		name string
		data []byte
		file string
	}{
		{"emptied", nil, "00000000000000000001.json"},
		{"only commitInfo kept", orig[:bytes.IndexByte(orig, '\n')+1], "00000000000000000001.crc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if err := os.WriteFile(commit1, tc.data, 0o644); err != nil {
				t.Fatal(err)
			}
			out, e, code := runCLI(t, "scan", tbl, "--format", "csv")
			if code != 4 || !strings.Contains(e, tc.file) || !strings.Contains(e, "version 1") || out != "" ||
				(tc.data != nil) != strings.Contains(e, "--skip-checksum") {
				t.Fatalf("scan: exit %d, %d bytes out, %q; want 4 naming %s and version 1 (and --skip-checksum for a .crc mismatch)", code, len(out), e, tc.file)
			}
			for _, verb := range []string{"describe", "files", "history"} {
				if _, e, code := runCLI(t, verb, tbl); code != 4 || !strings.Contains(e, tc.file) {
					t.Errorf("%s: exit %d %q; want 4 naming %s", verb, code, e, tc.file)
				}
			}
			if tc.data != nil {
				out, e, code := runCLI(t, "scan", tbl, "--format", "csv", "--skip-checksum")
				if code != 0 || strings.Count(out, "\n") != 1001 {
					t.Fatalf("scan --skip-checksum: exit %d, %d lines %s; want version 0's 1,000 rows", code, strings.Count(out, "\n"), e)
				}
				if _, e, code := runCLI(t, "history", tbl, "--skip-checksum"); code != 0 {
					t.Errorf("history --skip-checksum: exit %d %s", code, e)
				}
			}
		})
	}
	if err := os.WriteFile(commit1, orig, 0o644); err != nil {
		t.Fatal(err)
	}
	if out, e, code := runCLI(t, "scan", tbl, "--format", "csv"); code != 0 || strings.Count(out, "\n") != 2001 {
		t.Fatalf("scan of the restored table: exit %d %s", code, e)
	}
}
