package engines

// Must-show 5 (the Spark file sink, both ways) and 6 (the seed recovery
// check of the streaming guide).

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/schema"
)

const fileSchemaJSON = `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"part","type":"string","nullable":true,"metadata":{}},{"name":"v","type":"double","nullable":true,"metadata":{}}]}`

// writeSource writes files first..last-1 of a JSON source (5 rows each,
// smallBatch's rows) and returns their rows.
func writeSource(t *testing.T, dir string, first, last int) *schema.Batch {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	all := &schema.Batch{Schema: smallBatch(0, 0, false).Schema}
	for f := first; f < last; f++ {
		b := smallBatch(f*5, 5, false)
		var sb strings.Builder
		for _, r := range b.Rows {
			line, _ := json.Marshal(map[string]any{"id": r[0], "part": r[1], "v": r[2]})
			sb.Write(append(line, '\n'))
		}
		name := filepath.Join(dir, fmt.Sprintf("in-%03d.json", f))
		if err := os.WriteFile(name, []byte(sb.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		all.Rows = append(all.Rows, b.Rows...)
	}
	return all
}

// lakesinkLs is `lakesink filesink ls DIR --json`: the live files, relative.
func lakesinkLs(t *testing.T, dir string) []string {
	t.Helper()
	var files []string
	for _, line := range strings.Split(strings.TrimSpace(cli(t, "filesink", "ls", dir, "--json")), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("filesink ls line %q: %v", line, err)
		}
		if m["message_type"] == "file" {
			files = append(files, fmt.Sprint(m["path"]))
		}
	}
	sort.Strings(files)
	return files
}

// relFiles turns Spark's inputFiles (file: URIs) into paths relative to dir.
func relFiles(t *testing.T, dir string, uris []string) []string {
	t.Helper()
	var out []string
	for _, u := range uris {
		p := strings.TrimPrefix(strings.TrimPrefix(u, "file://"), "file:")
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rel)
	}
	sort.Strings(out)
	return out
}

func addOrphan(t *testing.T, dir, sub, ext string) {
	t.Helper()
	matches, _ := filepath.Glob(filepath.Join(dir, sub, "part-*"+ext))
	if len(matches) == 0 {
		t.Fatalf("no data file in %s/%s to copy as an orphan", dir, sub)
	}
	data, err := os.ReadFile(matches[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, sub, "part-99999-orphan-c000"+ext), data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustExist(t *testing.T, path string) {
	t.Helper()
	if _, err := os.Stat(path); err != nil {
		t.Fatalf("%v", err)
	}
}

func sparkFileSinkRun(t *testing.T, name, src, out, cp, format string) {
	t.Helper()
	var rep struct {
		Exception *string `json:"exception"`
	}
	srv.must(t, map[string]any{"op": "spark_stream_start", "name": name,
		"source":      map[string]any{"kind": "json", "path": src, "schema": smallDDL, "options": map[string]any{"maxFilesPerTrigger": 1}},
		"sink_format": format, "path": out, "checkpoint": cp, "partition_by": []string{"part"}, "available_now": true}, &rep)
	if rep.Exception != nil {
		t.Fatalf("Spark query %s: %s", name, *rep.Exception)
	}
}

func TestSparkFileSinkReadByLakesink(t *testing.T) {
	for _, format := range []string{"parquet", "json"} {
		t.Run(format, func(t *testing.T) {
			needEngines(t, "Spark", "Spark's file sink ("+format+", partitioned, 9.compact, orphans) read by lakesink filesink ls / scan")
			dir := t.TempDir()
			src, out := filepath.Join(dir, "src"), localURL(t, filepath.Join(dir, "out"))
			source := writeSource(t, src, 0, 12)
			sparkFileSinkRun(t, "fs-"+format, src, out, filepath.Join(dir, "cp"), format)
			mustExist(t, filepath.Join(out, "_spark_metadata", "9.compact"))
			addOrphan(t, out, "part=a", "."+format)
			sp := sparkRead(t, out, format, map[string]any{})
			if got, want := lakesinkLs(t, out), relFiles(t, out, sp.Files); strings.Join(got, "\n") != strings.Join(want, "\n") {
				t.Errorf("lakesink filesink ls\n%v\nSpark inputFiles\n%v", got, want)
			}
			want := batchRows(source)
			if format == "json" {
				// Spark infers the JSON schema (fields by name, integral
				// numbers long): read with the source's types instead.
				sp = sparkRead(t, out, format, nil)
				var a sparkAnswer
				srv.must(t, map[string]any{"op": "spark_sql_rows", "sql": "SELECT CAST(id AS BIGINT) AS id, CAST(part AS STRING) AS part, CAST(v AS DOUBLE) AS v FROM json.`" + out + "`"}, &a)
				sp.Rows = a.Rows
			}
			sameRows(t, "Spark read of its file sink", want, engineRows(sp.Rows))
			sameRows(t, "lakesink scan of Spark's file sink", want, lakesinkRows(t, out))
		})
	}
}

func TestLakesinkFileSinkAndSparkTakeTurns(t *testing.T) {
	needEngines(t, "Spark", "lakesink's file sink read by spark.read.parquet (orphans ignored); Spark and lakesink continue each other's query; compact interval agrees")
	dir := t.TempDir()
	src, out, cp := filepath.Join(dir, "src"), localURL(t, filepath.Join(dir, "out")), filepath.Join(dir, "cp")
	schemaFile := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaFile, []byte(fileSchemaJSON), 0o644); err != nil {
		t.Fatal(err)
	}
	ingest := func() {
		cli(t, "ingest", "--source", src, "--format", "json", "--schema", schemaFile, "--checkpoint", cp,
			"--file-sink", out, "--partition-by", "part", "--trigger", "available-now", "--max-files-per-trigger", "1", "--quiet")
	}
	all := writeSource(t, src, 0, 12)
	ingest()
	mustExist(t, filepath.Join(out, "_spark_metadata", "9.compact"))
	addOrphan(t, out, "part=b", ".parquet")
	check := func(label string) {
		t.Helper()
		want := batchRows(all)
		sp := sparkRead(t, out, "parquet", map[string]any{})
		sameRows(t, "Spark read "+label, want, engineRows(sp.Rows))
		sameRows(t, "lakesink read "+label, want, lakesinkRows(t, out))
		if got, w := lakesinkLs(t, out), relFiles(t, out, sp.Files); strings.Join(got, "\n") != strings.Join(w, "\n") {
			t.Errorf("%s: lakesink filesink ls\n%v\nSpark inputFiles\n%v", label, got, w)
		}
	}
	check("of lakesink's file sink")

	more := writeSource(t, src, 12, 15)
	all.Rows = append(all.Rows, more.Rows...)
	sparkFileSinkRun(t, "continue-lakesink", src, out, cp, "parquet")
	check("after Spark continued lakesink's query")

	more = writeSource(t, src, 15, 21)
	all.Rows = append(all.Rows, more.Rows...)
	ingest()
	mustExist(t, filepath.Join(out, "_spark_metadata", "19.compact"))
	check("after lakesink continued Spark's batches")
}

type seedOutputs struct {
	QueryIDReused     bool    `json:"query_id_reused"`
	SecondInputRows   int     `json:"second_input_rows"`
	OutputRows        int     `json:"output_rows"`
	CheckpointEntries string  `json:"checkpoint_entries"`
	Rows              [][]any `json:"rows"`
}

func TestSeedRecoveryCheck(t *testing.T) {
	needEngines(t, "Spark", "seed recovery check (file sink, availableNow, restart) by Spark and by lakesink ingest --file-sink")
	dir := t.TempDir()
	var spark seedOutputs
	srv.must(t, map[string]any{"op": "seed_recovery", "input": filepath.Join(dir, "spark-in"),
		"output": filepath.Join(dir, "spark-out"), "checkpoint": filepath.Join(dir, "spark-cp")}, &spark)
	want := seedOutputs{QueryIDReused: true, SecondInputRows: 1, OutputRows: 3, CheckpointEntries: "commits,metadata,offsets,sources"}
	if spark.QueryIDReused != want.QueryIDReused || spark.SecondInputRows != want.SecondInputRows ||
		spark.OutputRows != want.OutputRows || spark.CheckpointEntries != want.CheckpointEntries {
		t.Fatalf("Spark's own run: %+v, want %+v", spark, want)
	}

	in, out, cp := filepath.Join(dir, "lk-in"), filepath.Join(dir, "lk-out"), filepath.Join(dir, "lk-cp")
	schemaFile := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaFile, []byte(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"name","type":"string","nullable":true,"metadata":{}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	run := func(file, lines string) (queryID string, rows int) {
		if err := os.MkdirAll(in, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(in, file), []byte(lines), 0o644); err != nil {
			t.Fatal(err)
		}
		outp := cli(t, "ingest", "--source", in, "--format", "json", "--schema", schemaFile, "--checkpoint", cp,
			"--file-sink", out, "--file-format", "json", "--trigger", "available-now", "--json")
		for _, line := range strings.Split(strings.TrimSpace(outp), "\n") {
			var m struct {
				MessageType  string `json:"message_type"`
				QueryID      string `json:"queryId"`
				NumInputRows int    `json:"numInputRows"`
			}
			if err := json.Unmarshal([]byte(line), &m); err != nil {
				t.Fatalf("ingest --json line %q: %v", line, err)
			}
			if m.MessageType == "summary" {
				return m.QueryID, m.NumInputRows
			}
		}
		t.Fatalf("ingest --json printed no summary: %s", outp)
		return "", 0
	}
	id1, _ := run("batch1.json", "{\"id\":1,\"name\":\"a\"}\n{\"id\":2,\"name\":\"b\"}\n")
	id2, second := run("batch2.json", "{\"id\":3,\"name\":\"c\"}\n")
	var lk seedOutputs
	srv.must(t, map[string]any{"op": "seed_outputs", "output": out, "checkpoint": cp}, &lk)
	lk.QueryIDReused, lk.SecondInputRows = id1 == id2 && id1 != "", second
	if fmt.Sprint(lk) != fmt.Sprint(spark) {
		t.Errorf("lakesink's run, scored by Spark: %+v\nSpark's own run: %+v", lk, spark)
	}
}
