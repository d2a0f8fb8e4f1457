package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// The messages a new user met (issue 19), each asserted in full enough to
// fail with the old wording.

// A bad --format or --output-mode of ingest names the flag and the accepted
// values (they read `invalid ingest options: Format "jsn" (want ...)`, the
// Go field's name, and `unsupported output mode: "upsert"`, with no list);
// so do the merge flags outside update mode and update mode without a key.
func TestIngestEnumFlagErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	base := []string{"ingest", "--source", dir, "--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t")}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--format", "jsn"}, `--format "jsn": want json, csv, parquet, kafka or delta`},
		{[]string{"--output-mode", "upsert"}, `--output-mode "upsert": want append, complete or update`},
		// They read "invalid options: update mode needs MergeKeys (...)" and
		// "invalid options: merge keys, sequence, delete predicate and
		// update columns apply to update mode only".
		{[]string{"--output-mode", "update"}, `--output-mode update needs --merge-key (the key columns each batch is merged by)`},
		{[]string{"--merge-key", "origin"}, `--merge-key applies to --output-mode update only (this run's is append)`},
		{[]string{"--output-mode", "complete", "--delete-when", "op = 'd'"}, `--delete-when applies to --output-mode update only (this run's is complete)`},
	} {
		_, e, code := runCLI(t, append(append([]string{}, base...), tc.args...)...)
		if code != exitError || strings.TrimSpace(e) != "lakesink: "+tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, e, tc.want)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "chk")); !os.IsNotExist(err) {
		t.Errorf("a refused flag created the checkpoint (stat: %v)", err)
	}
}

// A byte-size flag's error names the flag, the value and the accepted forms,
// not table properties or packages (it read "compaction: invalid options:
// txlog: invalid table property: byte size "banana"").
func TestByteSizeFlagErrorNamesTheFlag(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 1, false)
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"compact", tbl, "--target-size", "banana"}, "--target-size"},
		{[]string{"compact", tbl, "--max-bytes", "12 parsecs"}, "--max-bytes"},
	} {
		_, e, code := runCLI(t, tc.args...)
		want := tc.flag + ` "` + tc.args[3] + `": not a byte size; want ` + byteSizeForms
		if code != exitError || strings.TrimSpace(e) != "lakesink: "+want {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, e, want)
		}
		for _, bad := range []string{"compaction:", "txlog:", "table property"} {
			if strings.Contains(e, bad) {
				t.Errorf("%v: stderr %q names %q", tc.args, e, bad)
			}
		}
	}
}

// A schema file with a JSON syntax error names the file, line and column.
func TestSchemaFileSyntaxErrorNamesFileLineColumn(t *testing.T) {
	dir := t.TempDir()
	bad := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(bad, []byte("{\"type\":\"struct\",\n \"fields\":[\n  {\"name\":\"a\",\"type\":\"long\",\"nullable\":true,\"metadata\":{}},\n ]}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, e, code := runCLI(t, "create", filepath.Join(dir, "t"), "--schema", bad)
	want := "schema file " + bad + ": line 4, column 2: invalid character ']' looking for beginning of value"
	if code != exitError || !strings.Contains(e, want) {
		t.Fatalf("exit %d, stderr %q; want %q", code, e, want)
	}
	_, e, _ = runCLI(t, "create", filepath.Join(dir, "t"), "--schema", `{"type":"struct","fields":[{"name":"a","type":"lonk"}]}`)
	if want := `--schema (inline JSON): column a: unknown type "lonk"`; !strings.Contains(e, want) {
		t.Fatalf("stderr %q; want %q", e, want)
	}
}

// A checkpoint reused for another table is refused naming --allow-reset.
func TestReusedCheckpointNamesAllowReset(t *testing.T) {
	dir := t.TempDir()
	ingestFlights(t, dir, 1, false)
	_, e, code := runCLI(t, "ingest", "--source", filepath.Join(dir, "src"), "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "other"), "-q")
	if code == exitOK || !strings.Contains(e, "pass --allow-reset to reuse this one") || !strings.Contains(e, "use a new --checkpoint directory") ||
		strings.Contains(e, "allow a reset explicitly") {
		t.Fatalf("exit %d, stderr %q; want a refusal naming --allow-reset", code, e)
	}
}

// --where supports LIKE and NOT LIKE (it said "unexpected LIKE"), and skips
// files on the literal prefix.
func TestWhereLike(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 2, false)
	out, e, code := runCLI(t, "scan", tbl, "--where", "origin LIKE 'SF%' AND destination NOT LIKE 'S__'", "--columns", "origin,destination")
	if code != 0 {
		t.Fatalf("scan: exit %d: %s", code, e)
	}
	rows := 0
	for _, r := range jsonRows(t, out) {
		o, d := r["origin"].(string), r["destination"].(string)
		if !strings.HasPrefix(o, "SF") || len(d) == 3 && d[0] == 'S' {
			t.Fatalf("row %v does not match", r)
		}
		rows++
	}
	if rows == 0 {
		t.Fatal("no row of origin SF% outside destinations S__")
	}
	out, _, code = runCLI(t, "files", tbl, "--where", "origin LIKE 'ZZ%'")
	if code != 0 || !strings.Contains(out, "0 of 2 files kept") {
		t.Fatalf("files --where LIKE 'ZZ%%': exit %d, %q; want every file skipped on its stats", code, out)
	}
}

func jsonRows(t *testing.T, out string) []map[string]any {
	t.Helper()
	var rows []map[string]any
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("row %q: %v", l, err)
		}
		rows = append(rows, m)
	}
	return rows
}

// compact says how many of the table's files it rewrote, how many rows they
// held and how many the table holds (it said "compacted 1551 files ... 19989
// rows" of a 20,000-row table, which read as rows lost).
func TestCompactSaysRowsOfTheTable(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 3, false, "--partition-by", "origin")
	out, e, code := runCLI(t, "compact", tbl)
	re := regexp.MustCompile(`^compacted (\d+) of (\d+) files \(.*\) into .* bins?; the rewritten files held (\d+) rows, the table holds 3000 rows; committed version 3 in `)
	m := re.FindStringSubmatch(out)
	if code != 0 || m == nil {
		t.Fatalf("compact: exit %d, stdout %q, stderr %q; want %s", code, out, e, re)
	}
	if removed, total, held := atoi(t, m[1]), atoi(t, m[2]), atoi(t, m[3]); removed > total || held > 3000 || held == 0 {
		t.Fatalf("compacted %d of %d files holding %d rows: inconsistent", removed, total, held)
	}
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// S3 without any credential source says that no AWS credentials were found
// and what to set (it printed the SDK's IMDS warnings and a long error about
// EC2 roles).
func TestS3WithoutCredentialsSaysWhatToSet(t *testing.T) {
	home := t.TempDir() // no ~/.aws
	for _, v := range []string{"AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY", "AWS_SESSION_TOKEN", "AWS_PROFILE", "AWS_DEFAULT_PROFILE",
		"AWS_WEB_IDENTITY_TOKEN_FILE", "AWS_CONTAINER_CREDENTIALS_RELATIVE_URI", "AWS_CONTAINER_CREDENTIALS_FULL_URI",
		"AWS_SHARED_CREDENTIALS_FILE", "AWS_CONFIG_FILE"} {
		t.Setenv(v, "")
	}
	t.Setenv("HOME", home)
	t.Setenv("AWS_EC2_METADATA_DISABLED", "true")
	_, e, code := runCLI(t, "describe", "s3://bucket/t?region=us-east-1&endpoint=http://127.0.0.1:9&use_path_style=true")
	want := "lakesink: no AWS credentials found for s3://bucket: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY"
	if code != exitError || !strings.HasPrefix(e, want) || !strings.Contains(e, "AWS_PROFILE") ||
		strings.Contains(e, "IMDS") || strings.Contains(e, "get identity") {
		t.Fatalf("exit %d, stderr %q; want %q...", code, e, want)
	}
}

// A Parquet input file whose column has another type than the table's (a
// string id into a long id) is bad input: exit 1 (not 4, corruption),
// naming the file once and the column, without package prefixes.
func TestParquetTypeConflictIsBadInput(t *testing.T) {
	dir := t.TempDir()
	// A Parquet file with a string id: the data file of a table ingested
	// from JSON.
	jsonSrc := filepath.Join(dir, "json")
	if err := os.MkdirAll(jsonSrc, 0o755); err != nil {
		t.Fatal(err)
	}
	writeFile(t, filepath.Join(jsonSrc, "a.json"), "{\"id\":\"abc\",\"v\":1}\n")
	strTable := filepath.Join(dir, "strings")
	if _, e, code := runCLI(t, "ingest", "--source", jsonSrc, "--format", "json", "--checkpoint", filepath.Join(dir, "chk0"),
		"--table", strTable, "--trigger", "available-now"); code != 0 {
		t.Fatalf("ingest json: exit %d: %s", code, e)
	}
	files, _ := filepath.Glob(filepath.Join(strTable, "*.parquet"))
	if len(files) != 1 {
		t.Fatalf("%d data files", len(files))
	}
	pqSrc := filepath.Join(dir, "parquet")
	if err := os.MkdirAll(pqSrc, 0o755); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(files[0])
	if err != nil {
		t.Fatal(err)
	}
	pqFile := filepath.Join(pqSrc, "part-0.parquet")
	if err := os.WriteFile(pqFile, data, 0o644); err != nil {
		t.Fatal(err)
	}
	longs := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"v","type":"long","nullable":true,"metadata":{}}]}`
	for i, extra := range [][]string{nil, {"--merge-schema"}} {
		tbl := filepath.Join(dir, "longs"+strconv.Itoa(i))
		if _, e, code := runCLI(t, "create", tbl, "--schema", longs); code != 0 {
			t.Fatalf("create: %s", e)
		}
		args := append([]string{"ingest", "--source", pqSrc, "--format", "parquet", "--checkpoint", filepath.Join(dir, "chk"+strconv.Itoa(i+1)),
			"--table", tbl, "--trigger", "available-now"}, extra...)
		_, e, code := runCLI(t, args...)
		want := "lakesink: batch 0: read input: file://" + pqFile + " field id: the file has string (BYTE_ARRAY), the schema wants long; " +
			"to go on, rewrite the file with the table's column types (a rerun reads the same files)\n"
		if code != exitError || e != want {
			t.Errorf("%v: exit %d, stderr\n%q\nwant exit 1 with\n%q", extra, code, e, want)
		}
		if n := strings.Count(e, "part-0.parquet"); n != 1 {
			t.Errorf("%v: the file is named %d times", extra, n)
		}
	}
}

// A negative duration flag is refused naming the flag (it read
// "compaction: invalid options: UntrackedMinAge -1h0m0s < 0", the Go field).
func TestNegativeDurationFlagsNameTheFlag(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 1, false)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"vacuum", tbl, "--untracked-min-age", "-1h"}, "--untracked-min-age -1h: want 0 or more"},
		{[]string{"vacuum", tbl, "--retain", "-2h"}, "--retain -2h: want 0 or more"},
		{[]string{"maintain", tbl, "--interval", "-1s", "--once"}, "--interval -1s: want 0 or more"},
	} {
		_, e, code := runCLI(t, tc.args...)
		if code != exitError || e != "lakesink: "+tc.want+"\n" {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, e, tc.want)
		}
	}
}

// --quiet silences the one-line results of the maintenance and write verbs
// (they printed "compacted ...", "deleted 0 files ...", "checkpoint of
// version ..." under -q); a verb's report itself (scan's rows) stays.
func TestQuietSilencesSummaryLines(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 2, false)
	src := writeFile(t, filepath.Join(dir, "m.json"), "{\"id\":1}\n")
	cases := [][]string{
		{"compact", tbl}, {"vacuum", tbl}, {"checkpoint", tbl}, {"cleanup-log", tbl},
		{"create", filepath.Join(dir, "new"), "--schema", `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`},
		{"merge", filepath.Join(dir, "new"), "--source", src, "--merge-key", "id"},
		{"maintain", tbl, "--once"},
	}
	for _, args := range cases {
		o, e, code := runCLI(t, append([]string{"-q"}, args...)...)
		if code != 0 || o != "" || e != "" {
			t.Errorf("-q %v: exit %d, stdout %q, stderr %q; want exit 0 and no output", args, code, o, e)
		}
	}
	if o, _, code := runCLI(t, "checkpoint", tbl); code != 0 || !strings.HasPrefix(o, "checkpoint of version") {
		t.Errorf("checkpoint without -q: exit %d, stdout %q", code, o)
	}
	if o, _, code := runCLI(t, "-q", "scan", tbl, "--limit", "1"); code != 0 || strings.Count(o, "\n") != 1 {
		t.Errorf("-q scan --limit 1: exit %d, stdout %q; want one row", code, o)
	}
}

// A JSON key that differs from a table column only in case ("ID" for id)
// is that column, as a Spark + Delta write resolves it
// (spark.sql.caseSensitive=false), with and without --merge-schema: it
// read "field ID: not in the schema (a new column); ... pass
// --merge-schema" even with --merge-schema.
func TestCaseOnlyColumnNameIsTheSameColumn(t *testing.T) {
	for _, extra := range [][]string{nil, {"--merge-schema"}} {
		dir := t.TempDir()
		tbl := filepath.Join(dir, "t")
		for i, line := range []string{`{"id":1,"v":"a"}`, `{"ID":2,"v":"b"}`} {
			src := filepath.Join(dir, "src"+strconv.Itoa(i))
			if err := os.MkdirAll(src, 0o755); err != nil {
				t.Fatal(err)
			}
			writeFile(t, filepath.Join(src, "a.json"), line+"\n")
			args := append([]string{"-q", "ingest", "--source", src, "--format", "json", "--checkpoint", filepath.Join(dir, "chk"+strconv.Itoa(i)),
				"--table", tbl, "--trigger", "available-now"}, extra...)
			if _, e, code := runCLI(t, args...); code != 0 {
				t.Fatalf("%v: ingest %s: exit %d: %s", extra, line, code, e)
			}
		}
		o, e, code := runCLI(t, "scan", tbl)
		rows := strings.Split(strings.TrimSpace(o), "\n")
		slices.Sort(rows)
		if code != 0 || strings.Join(rows, "\n") != `{"id":1,"v":"a"}`+"\n"+`{"id":2,"v":"b"}` {
			t.Errorf("%v: scan: exit %d, %q %s", extra, code, o, e)
		}
	}
}

// Errors a new user met following the README (a bad --partition-by named no
// table and no column list; a missing --schema file, an unknown --columns
// name and a bad --timestamp named no flag): each names the flag or table
// and what would have been accepted.
func TestNewUserErrorsNameFlagOrTable(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 1, false)
	fresh := filepath.Join(dir, "fresh")
	missing := filepath.Join(dir, "nofile.json")
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"create", fresh, "--schema", flightsSchema, "--partition-by", "nope"},
			`--partition-by: unknown column "nope"; the columns are: date, delay, distance, origin, destination`},
		{[]string{"create", fresh, "--schema", missing},
			`--schema: read schema file: open ` + missing + `: no such file or directory`},
		{[]string{"scan", tbl, "--columns", "nope"},
			`--columns: unknown column: "nope"; the columns are: date, delay, distance, origin, destination`},
		{[]string{"scan", tbl, "--timestamp", "yesterday"},
			`--timestamp "yesterday": want RFC 3339 (2024-01-31T10:00:00Z), 2024-01-31 10:00:00 or 2024-01-31 (both UTC), or milliseconds since the epoch`},
		{[]string{"describe", tbl, "--timestamp", "yesterday"},
			`--timestamp "yesterday": want RFC 3339 (2024-01-31T10:00:00Z), 2024-01-31 10:00:00 or 2024-01-31 (both UTC), or milliseconds since the epoch`},
	} {
		_, e, code := runCLI(t, tc.args...)
		if code != exitError || strings.TrimSpace(e) != "lakesink: "+tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, e, "lakesink: "+tc.want)
		}
	}
	if _, err := os.Stat(fresh); !os.IsNotExist(err) {
		t.Errorf("a refused create left %s (stat: %v)", fresh, err)
	}
}

// maintain's --interval and --vacuum-interval take days as vacuum --retain
// and filesink orphans --older-than do ("1d" was refused: time: unknown unit
// "d"), and a bad value names the flag and the accepted forms.
func TestMaintainIntervalsTakeDays(t *testing.T) {
	tbl := ingestFlights(t, t.TempDir(), 1, false)
	if _, e, code := runCLI(t, "maintain", tbl, "--once", "--quiet", "--interval", "1d", "--vacuum-interval", "7d"); code != 0 {
		t.Fatalf("--interval 1d --vacuum-interval 7d: exit %d, stderr %q", code, e)
	}
	_, e, code := runCLI(t, "maintain", tbl, "--once", "--interval", "1x")
	if want := `invalid argument "1x" for "--interval" flag: want a duration such as 24h or 7d`; code != exitError || !strings.Contains(e, want) {
		t.Fatalf("--interval 1x: exit %d, stderr %q; want %q", code, e, want)
	}
}

// convert's one-line result counts its files in English ("with 1 files").
func TestConvertSaysOneFile(t *testing.T) {
	dir := ingestFlights(t, t.TempDir(), 1, true)
	o, e, code := runCLI(t, "convert", dir)
	if want := "created the Delta table with 1 file ("; code != 0 || !strings.HasPrefix(o, want) {
		t.Fatalf("exit %d, stdout %q, stderr %q; want a line starting %q", code, o, e, want)
	}
}

// Every maintenance command's --json summary names its table, as create,
// history and merge did (checkpoint, cleanup-log, vacuum, compact and
// convert printed figures only: a script looping over tables could not tell
// the lines apart; files did until it used the same emitSummary).
func TestJSONSummariesNameTheTable(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 2, false)
	fs := ingestFlights(t, t.TempDir(), 1, true)
	for _, args := range [][]string{
		{"checkpoint", tbl}, {"cleanup-log", tbl}, {"vacuum", tbl, "--dry-run"},
		{"compact", tbl, "--dry-run"}, {"compact", tbl}, {"convert", fs},
		{"files", tbl}, {"files", fs, "--where", "origin = 'SFO'"}, {"history", tbl},
	} {
		o, e, code := runCLI(t, append(args, "--json")...)
		if code != 0 {
			t.Fatalf("%v: exit %d, stderr %q", args, code, e)
		}
		var last map[string]any
		for _, m := range jsonRows(t, o) {
			last = m
		}
		want := "file://" + args[1]
		if last["message_type"] != "summary" || last["table"] != want {
			t.Errorf("%v: last object %v; want a summary with table %q", args, last, want)
		}
	}
}

// A bad --partition-by of ingest names the flag, the column and the columns
// there are, once (it read "write to the sink: batch 0: create URL: invalid
// options: partition column ..." for a table, "invalid schema: ..." without
// the columns for a file sink); a repeated column and a bad --compression are
// refused by flag before anything is read (they read "invalid options:
// invalid options: Compression: invalid options: ...").
func TestIngestPartitionByErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	src := flightsSource(t, dir, 1)
	cols := "the columns are: date, delay, distance, origin, destination"
	for i, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--table", filepath.Join(dir, "t"), "--partition-by", "nope"}, `--partition-by: unknown column "nope"; ` + cols},
		{[]string{"--file-sink", filepath.Join(dir, "fs"), "--partition-by", "nope"}, `--partition-by: unknown column "nope"; ` + cols},
		{[]string{"--file-sink", filepath.Join(dir, "fj"), "--file-format", "json", "--partition-by", "nope"}, `--partition-by: unknown column "nope"; ` + cols},
		{[]string{"--table", filepath.Join(dir, "t2"), "--partition-by", "date,delay,distance,origin,destination"},
			"--partition-by: every column (date, delay, distance, origin, destination) would be a partition column; leave at least one data column"},
		{[]string{"--table", filepath.Join(dir, "t"), "--partition-by", "origin,origin"}, `--partition-by origin,origin: column "origin" given twice`},
		{[]string{"--table", filepath.Join(dir, "t"), "--compression", "zzz"}, `--compression "zzz": want snappy, zstd, gzip, lz4 or none`},
	} {
		args := append([]string{"ingest", "--source", src, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
			"--checkpoint", filepath.Join(dir, "chk"+strconv.Itoa(i))}, tc.args...)
		_, e, code := runCLI(t, args...)
		if code != exitError || strings.TrimSpace(e) != "lakesink: "+tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, e, "lakesink: "+tc.want)
		}
	}
	for _, f := range []string{"t/_delta_log/00000000000000000000.json", "t2/_delta_log/00000000000000000000.json", "fs/_spark_metadata/0", "fj/_spark_metadata/0"} {
		if _, err := os.Stat(filepath.Join(dir, f)); !os.IsNotExist(err) {
			t.Errorf("a refused ingest wrote %s (stat: %v)", f, err)
		}
	}
}

// The first partition column a schema cannot have is one
// *schema.PartitionColumnError, whoever finds it (table.Create or a first
// write, the file sink, the Parquet writer), so the CLI words each once.
func TestCreatePartitionByAllColumnsNotUnknown(t *testing.T) {
	dir := t.TempDir()
	one := `{"type":"struct","fields":[{"name":"a","type":"long","nullable":true,"metadata":{}}]}`
	_, e, code := runCLI(t, "create", filepath.Join(dir, "t"), "--schema", one, "--partition-by", "nope")
	// It also said "every column is a partition column" (one name given, one column).
	if want := `lakesink: --partition-by: unknown column "nope"; the columns are: a`; code != exitError || strings.TrimSpace(e) != want {
		t.Errorf("exit %d, stderr %q; want %q", code, e, want)
	}
}

// compact's errors speak of compact, the CLI's word, not of the library's
// OPTIMIZE ("optimize file:///t: ..."), and a bad --where names the flag as
// scan's does (it read "optimize URL: invalid partition filter: ...").
func TestCompactErrorsSayCompact(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 2, false, "--partition-by", "origin")
	for _, tc := range []struct{ where, want string }{
		{"nope = 1", `--where "nope = 1": predicate does not fit the schema: no column nope in the schema; the columns are: date, delay, distance, origin, destination`},
		{"delay > 1", `--where "delay > 1": compact rewrites whole partitions, so the filter may name partition columns only (origin)`},
	} {
		_, e, code := runCLI(t, "compact", tbl, "--where", tc.where)
		if code != exitError || strings.TrimSpace(e) != "lakesink: "+tc.want {
			t.Errorf("--where %q: exit %d, stderr %q; want %q", tc.where, code, e, "lakesink: "+tc.want)
		}
	}
	// A data file gone under the log fails the rewrite.
	files, err := filepath.Glob(filepath.Join(tbl, "origin=*", "*.parquet"))
	if err != nil || len(files) == 0 {
		t.Fatalf("data files: %v %v", files, err)
	}
	for _, f := range files {
		if err := os.Remove(f); err != nil {
			t.Fatal(err)
		}
	}
	_, e, code := runCLI(t, "compact", tbl)
	if code == 0 || !strings.HasPrefix(e, "lakesink: compact file://"+tbl+": ") || strings.Contains(e, "optimize") {
		t.Errorf("compact of a table without its files: exit %d, stderr %q; want a message starting %q", code, e, "lakesink: compact file://"+tbl+": ")
	}
}

// A bad interval of --trigger names the flag, the value and the accepted
// forms (it read "want available-now, once or interval=<duration>" for
// interval=abc, as though interval were not accepted).
func TestTriggerIntervalErrorSaysDuration(t *testing.T) {
	dir := t.TempDir()
	for _, v := range []string{"abc", "-1s", ""} {
		_, e, code := runCLI(t, "ingest", "--source", dir, "--checkpoint", filepath.Join(dir, "chk"), "--table", filepath.Join(dir, "t"), "--trigger", "interval="+v)
		want := `lakesink: --trigger "interval=` + v + `": "` + v + `" is not a duration of 0 or more; want interval=<duration> such as 30s, 5m or 1h30m (Go's time.ParseDuration units ns, us, ms, s, m, h)`
		if code != exitError || strings.TrimSpace(e) != want {
			t.Errorf("interval=%s: exit %d, stderr %q; want %q", v, code, e, want)
		}
	}
}

// A --partition-by that --schema cannot have is refused before the
// checkpoint is made and the source claimed, so a rerun with the right
// column ingests, also on a fresh checkpoint (it was refused by the first
// batch, after the claim: a rerun after removing the failed run's checkpoint
// read "source already ingested into this table by another query").
func TestIngestPartitionByRefusedBeforeTheClaim(t *testing.T) {
	dir := t.TempDir()
	src := flightsSource(t, dir, 1)
	tbl := filepath.Join(dir, "t")
	args := func(chk, part string) []string {
		return []string{"-q", "ingest", "--source", src, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
			"--checkpoint", filepath.Join(dir, chk), "--table", tbl, "--partition-by", part}
	}
	_, e, code := runCLI(t, args("chk", "nope")...)
	if want := `lakesink: --partition-by: unknown column "nope"; the columns are: date, delay, distance, origin, destination`; code != exitError || strings.TrimSpace(e) != want {
		t.Fatalf("--partition-by nope: exit %d, stderr %q; want %q", code, e, want)
	}
	for _, p := range []string{tbl, filepath.Join(dir, "chk")} {
		if _, err := os.Stat(p); !os.IsNotExist(err) {
			t.Errorf("the refused run left %s (stat: %v)", p, err)
		}
	}
	if _, e, code := runCLI(t, args("chk2", "origin")...); code != 0 {
		t.Fatalf("rerun with --partition-by origin: exit %d, stderr %q", code, e)
	}
}

// A merge flag that the table or the input cannot have names the flag, in
// merge and in an update-mode ingest (they read "merge into URL at version
// 0: invalid options: merge key column ..." and "write to the sink: batch 0:
// merge into URL at a new table: invalid options: ..."), as do merge's
// --partition-by and --target-file-size ("--target-file-size: invalid
// options: invalid table property: byte size ...").
func TestMergeFlagErrorsNameTheFlag(t *testing.T) {
	dir := t.TempDir()
	tbl := ingestFlights(t, dir, 1, false)
	input := "../../testdata/flights/flights-00.json"
	src := flightsSource(t, t.TempDir(), 1)
	cols := "the table's columns are: date, delay, distance, origin, destination"
	for i, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--merge-key", "nope"}, `--merge-key: unknown column "nope"; ` + cols},
		{[]string{"--merge-key", "origin", "--sequence-by", "nope"}, `--sequence-by: unknown column "nope"; ` + cols},
		{[]string{"--merge-key", "origin", "--delete-when", "delay ="}, `--delete-when "delay =": syntax error at position 7: expected a column or a literal, found end of input`},
	} {
		merge := append([]string{"merge", tbl, "--source", input, "--timestamp-format", "2006/01/02 15:04"}, tc.args...)
		ingest := append([]string{"ingest", "--source", src, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
			"--max-files-per-trigger", "1", "--checkpoint", filepath.Join(dir, "chk"+strconv.Itoa(i)), "--table", filepath.Join(dir, "new"+strconv.Itoa(i)),
			"--output-mode", "update"}, tc.args...)
		for _, args := range [][]string{merge, ingest} {
			_, e, code := runCLI(t, args...)
			if code != exitError || strings.TrimSpace(e) != "lakesink: "+tc.want {
				t.Errorf("%s %v: exit %d, stderr %q; want %q", args[0], tc.args, code, e, "lakesink: "+tc.want)
			}
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"merge", filepath.Join(dir, "fresh"), "--source", input, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04", "--merge-key", "origin", "--partition-by", "nope"},
			`--partition-by: unknown column "nope"; the columns are: date, delay, distance, origin, destination`},
		{[]string{"merge", tbl, "--source", input, "--merge-key", "origin", "--target-file-size", "12x"}, `--target-file-size "12x": not a byte size; want ` + byteSizeForms},
	} {
		_, e, code := runCLI(t, tc.args...)
		if code != exitError || strings.TrimSpace(e) != "lakesink: "+tc.want {
			t.Errorf("%v: exit %d, stderr %q; want %q", tc.args, code, e, "lakesink: "+tc.want)
		}
	}
}

// The json file sink takes --compression gzip (and none); a Parquet codec
// is refused by flag before anything is written. The flag was silently
// ignored for json: --compression gzip wrote plain .json files and
// --compression zstd was accepted.
func TestIngestJSONFileSinkCompression(t *testing.T) {
	dir := t.TempDir()
	src := flightsSource(t, dir, 1)
	args := func(sinkDir, codec string) []string {
		return []string{"-q", "ingest", "--source", src, "--schema", flightsSchema, "--timestamp-format", "2006/01/02 15:04",
			"--checkpoint", filepath.Join(dir, sinkDir+"-chk"), "--file-sink", filepath.Join(dir, sinkDir), "--file-format", "json", "--compression", codec}
	}
	_, e, code := runCLI(t, args("z", "zstd")...)
	if want := `lakesink: --compression "zstd": the json file sink writes gzip or none`; code != exitError || strings.TrimSpace(e) != want {
		t.Fatalf("--compression zstd: exit %d, stderr %q; want %q", code, e, want)
	}
	if _, err := os.Stat(filepath.Join(dir, "z")); !os.IsNotExist(err) {
		t.Errorf("the refused run left its file sink (stat: %v)", err)
	}
	for codec, ext := range map[string]string{"gzip": ".json.gz", "none": ".json"} {
		if _, e, code := runCLI(t, args(codec, codec)...); code != 0 {
			t.Fatalf("--compression %s: exit %d, stderr %q", codec, code, e)
		}
		m, err := filepath.Glob(filepath.Join(dir, codec, "part-*"))
		if err != nil || len(m) == 0 {
			t.Fatalf("--compression %s: no data files (%v)", codec, err)
		}
		for _, f := range m {
			if !strings.HasSuffix(f, ext) || (ext == ".json" && strings.HasSuffix(f, ".gz")) {
				t.Errorf("--compression %s wrote %s, want a %s file", codec, filepath.Base(f), ext)
			}
		}
	}
}
