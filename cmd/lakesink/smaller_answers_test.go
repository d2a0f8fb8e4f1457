package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestDescribeNumRecordsSubtractsDeletionVectors is issue 14 item 6:
// describe summed stats.numRecords and reported 10 for a table whose
// deletion vector deletes 2 of its 10 rows (scan returns 8): numRecords is
// now stats.numRecords minus each file's deletionVector.cardinality.
func TestDescribeNumRecordsSubtractsDeletionVectors(t *testing.T) {
	tbl := "../../reader/testdata/deltars/table-with-dv-small"
	out, e, code := runCLI(t, "scan", tbl, "--json")
	if code != 0 {
		t.Fatalf("scan: exit %d %s", code, e)
	}
	rows := strings.Count(strings.TrimSpace(out), "\n") + 1
	out, e, code = runCLI(t, "describe", tbl, "--json")
	if code != 0 {
		t.Fatalf("describe: exit %d %s", code, e)
	}
	objs := jsonLines(t, out)
	if n := fmt.Sprint(objs[0]["numRecords"]); n != "8" || rows != 8 {
		t.Fatalf("describe numRecords %v, scan %d rows; want 8 and 8", objs[0]["numRecords"], rows)
	}
}

// TestFilesJSONKeepsDecimalStatsExact is issue 14 item 6: files --json
// printed a decimal(38,1) min/max of 10000000000000000000000000000.5 as
// 1e+28 (every value went through float64); numbers keep their exact text.
func TestFilesJSONKeepsDecimalStatsExact(t *testing.T) {
	dir := t.TempDir()
	src := filepath.Join(dir, "src")
	os.MkdirAll(src, 0o755)
	os.WriteFile(filepath.Join(src, "a.json"), []byte(`{"id":1,"amount":"10000000000000000000000000000.5"}`+"\n"), 0o644)
	schema := `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"amount","type":"decimal(38,1)","nullable":true,"metadata":{}}]}`
	tbl := filepath.Join(dir, "t")
	if _, e, code := runCLI(t, "ingest", "-q", "--source", src, "--schema", schema, "--checkpoint", filepath.Join(dir, "chk"), "--table", tbl); code != 0 {
		t.Fatalf("ingest: exit %d %s", code, e)
	}
	out, e, code := runCLI(t, "files", tbl, "--json")
	if code != 0 {
		t.Fatalf("files: exit %d %s", code, e)
	}
	for _, want := range []string{`"maxValues":{"amount":10000000000000000000000000000.5`, `"minValues":{"amount":10000000000000000000000000000.5`} {
		if !strings.Contains(out, want) {
			t.Fatalf("files --json:\n%s\nwant %s", out, want)
		}
	}
}

// TestFileSinkCompactLogRetentionZeroDropsAll is issue 14 item 6 through
// the CLI: --retention 0s kept every entry (0 read as "no retention") while
// 1s dropped them all. As Spark's FileStreamSink retention, 0s drops every
// entry older than now; a retention longer than the entries' age keeps them.
func TestFileSinkCompactLogRetentionZeroDropsAll(t *testing.T) {
	dir := t.TempDir()
	out := ingestFlights(t, dir, 10, true)
	keep := filepath.Join(dir, "keep")
	if err := os.CopyFS(keep, os.DirFS(out)); err != nil {
		t.Fatal(err)
	}
	if o, e, code := runCLI(t, "filesink", "compact-log", keep, "--retention", "1h"); code != 0 || !strings.Contains(o, "(10 entries)") {
		t.Fatalf("--retention 1h: exit %d %q %q; want the 10 entries kept", code, o, e)
	}
	if o, e, code := runCLI(t, "filesink", "compact-log", out, "--retention", "0s"); code != 0 || !strings.Contains(o, "(0 entries)") {
		t.Fatalf("--retention 0s: exit %d %q %q; want every entry dropped", code, o, e)
	}
}

// TestScanAndDescribeJSONFileSink is issue 14 item 6: a JSON file-sink
// directory that lakesink wrote was reported as a corrupt Parquet file by
// scan and describe (exit 4). Both read it through its _spark_metadata log.
func TestScanAndDescribeJSONFileSink(t *testing.T) {
	out := ingestFlights(t, t.TempDir(), 2, true, "--file-format", "json")
	rows, e, code := runCLI(t, "scan", out, "--format", "csv")
	if code != 0 || strings.Count(rows, "\n") != 2001 || !strings.HasPrefix(rows, "date,delay,destination,distance,origin\n") {
		t.Fatalf("scan: exit %d, %d lines, %.80q %s; want the header and 2000 rows", code, strings.Count(rows, "\n"), rows, e)
	}
	if d, e, code := runCLI(t, "describe", out); code != 0 || !strings.Contains(d, "_spark_metadata") {
		t.Fatalf("describe: exit %d %q %s", code, d, e)
	}
}
