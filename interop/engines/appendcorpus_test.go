package engines

// Issue 17, "lakesink writes to the Spark-written tables where their writer
// features allow": each case has Spark + Delta create a table with one
// writer feature, `lakesink ingest` appends rows to it, and Spark (one JVM
// for every case) reads the union of its rows and lakesink's; delta-rs too
// where it reads the feature. Where lakesink cannot honour a feature
// (generated and identity columns) the append must fail with exit 4 naming
// it and leave the table as Spark wrote it; a row breaking a CHECK
// constraint fails with exit 1 naming the constraint.

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// appendCase is one Spark-written table and lakesink's append to it.
type appendCase struct {
	name    string
	feature string   // the writer feature under test, for the report
	setup   []string // Spark SQL; %s is the table (delta.`path`)
	// input is lakesink's NDJSON input (the table's schema decodes it).
	input []string
	// expect is a Spark SELECT of the same rows as literals, in the table's
	// column order: the rows Spark must read back beside its own ("": check
	// compares them).
	expect string
	// bad is input lakesink must refuse first, with exit code refuse and
	// want in stderr, committing nothing (then input, if any, is appended).
	bad    []string
	refuse int
	want   string
	// check runs extra Spark checks after a successful append (v: the
	// version lakesink committed).
	check func(t *testing.T, path string, v int64)
}

var appendCases = []appendCase{
	{
		name: "deletion_vectors", feature: "deletionVectors",
		setup: []string{
			"CREATE TABLE %s (id BIGINT, part STRING, v STRING) USING delta PARTITIONED BY (part) TBLPROPERTIES ('delta.enableDeletionVectors' = 'true')",
			"INSERT INTO %s VALUES (1, 'a', 'x'), (2, 'a', 'y'), (3, 'b', 'z'), (4, 'b', 'w')",
			"DELETE FROM %s WHERE id = 2",
		},
		input:  []string{`{"id": 10, "part": "a", "v": "lk1"}`, `{"id": 11, "part": "c", "v": "lk2"}`},
		expect: "SELECT * FROM VALUES (CAST(10 AS BIGINT), 'a', 'lk1'), (CAST(11 AS BIGINT), 'c', 'lk2')",
	},
	columnMappingCase("name"),
	columnMappingCase("id"),
	{
		name: "type_widening", feature: "typeWidening",
		setup: []string{
			"CREATE TABLE %s (id INT, f FLOAT, dec DECIMAL(10,2)) USING delta TBLPROPERTIES ('delta.enableTypeWidening' = 'true')",
			"INSERT INTO %s VALUES (1, 1.5, 12.34)",
			"ALTER TABLE %s CHANGE COLUMN id TYPE BIGINT",
			"ALTER TABLE %s CHANGE COLUMN f TYPE DOUBLE",
			"ALTER TABLE %s CHANGE COLUMN dec TYPE DECIMAL(20,2)",
		},
		input:  []string{`{"id": 9223372036854775807, "f": 0.1, "dec": "123456789012345678.99"}`},
		expect: "SELECT * FROM VALUES (9223372036854775807L, CAST(0.1 AS DOUBLE), CAST(123456789012345678.99 AS DECIMAL(20,2)))",
	},
	{
		name: "in_commit_timestamps", feature: "inCommitTimestamp",
		setup: []string{
			"CREATE TABLE %s (id BIGINT, v STRING) USING delta TBLPROPERTIES ('delta.enableInCommitTimestamps' = 'true')",
			"INSERT INTO %s VALUES (1, 'a')",
			"INSERT INTO %s VALUES (2, 'b')",
		},
		input:  []string{`{"id": 3, "v": "lk"}`},
		expect: "SELECT * FROM VALUES (CAST(3 AS BIGINT), 'lk')",
		check:  checkInCommitTimestamps,
	},
	{
		name: "row_tracking", feature: "rowTracking",
		setup: []string{
			"CREATE TABLE %s (id BIGINT, v STRING) USING delta TBLPROPERTIES ('delta.enableRowTracking' = 'true')",
			"INSERT INTO %s VALUES (1, 'a'), (2, 'b'), (3, 'c')",
			"UPDATE %s SET v = 'u' WHERE id = 2",
		},
		input:  []string{`{"id": 10, "v": "lk1"}`, `{"id": 11, "v": "lk2"}`},
		expect: "SELECT * FROM VALUES (CAST(10 AS BIGINT), 'lk1'), (CAST(11 AS BIGINT), 'lk2')",
		check:  checkRowTracking,
	},
	{
		name: "change_data_feed", feature: "changeDataFeed",
		setup: []string{
			"CREATE TABLE %s (id BIGINT, v STRING) USING delta TBLPROPERTIES ('delta.enableChangeDataFeed' = 'true')",
			"INSERT INTO %s VALUES (1, 'a')",
		},
		input:  []string{`{"id": 2, "v": "lk"}`},
		expect: "SELECT * FROM VALUES (CAST(2 AS BIGINT), 'lk')",
		check:  checkChangeDataFeed,
	},
	{
		name: "check_constraint", feature: "checkConstraints",
		setup: []string{
			"CREATE TABLE %s (id BIGINT, x INT) USING delta",
			"ALTER TABLE %s ADD CONSTRAINT x_positive CHECK (x > 0)",
			"INSERT INTO %s VALUES (1, 1)",
		},
		bad:    []string{`{"id": 2, "x": 5}`, `{"id": 3, "x": -1}`},
		refuse: 1, want: "CHECK constraint x_positive (x > 0) violated by row with values x = -1",
		input:  []string{`{"id": 2, "x": 5}`},
		expect: "SELECT * FROM VALUES (CAST(2 AS BIGINT), 5)",
	},
	{
		name: "generated_column", feature: "generatedColumns",
		setup: []string{
			"CREATE TABLE %s (x INT, y INT GENERATED ALWAYS AS (x * 2)) USING delta",
			"INSERT INTO %s (x) VALUES (1)",
		},
		bad:    []string{`{"x": 2}`},
		refuse: 4, want: `requires "generatedColumns" (column y GENERATED ALWAYS AS (x * 2))`,
	},
	{
		name: "identity_column", feature: "identityColumns",
		setup: []string{
			"CREATE TABLE %s (id BIGINT GENERATED ALWAYS AS IDENTITY (START WITH 5 INCREMENT BY 3), v STRING) USING delta",
			"INSERT INTO %s (v) VALUES ('a'), ('b')",
		},
		input: []string{`{"v": "lk1"}`, `{"v": "lk2"}`},
		check: checkIdentity,
	},
}

// columnMappingCase: a renamed column, a renamed partition column, a
// renamed nested field and a dropped column, then lakesink appends by the
// logical names; Spark reads by physical name (name mode) or field id (id
// mode).
func columnMappingCase(mode string) appendCase {
	return appendCase{
		name: "column_mapping_" + mode, feature: "columnMapping (" + mode + ")",
		setup: []string{
			"CREATE TABLE %s (id BIGINT, a STRING, b INT, s STRUCT<x: INT, y: STRING>, part STRING) USING delta PARTITIONED BY (part) " +
				"TBLPROPERTIES ('delta.columnMapping.mode' = '" + mode + "')",
			"INSERT INTO %s VALUES (1, 'a1', 10, named_struct('x', 1, 'y', 'y1'), 'p')",
			"ALTER TABLE %s RENAME COLUMN a TO a_renamed",
			"ALTER TABLE %s DROP COLUMN b",
			"ALTER TABLE %s RENAME COLUMN s.x TO x_renamed",
			"ALTER TABLE %s RENAME COLUMN part TO part_renamed",
		},
		input: []string{`{"id": 5, "a_renamed": "lk", "s": {"x_renamed": 50, "y": "y5"}, "part_renamed": "p"}`,
			`{"id": 6, "a_renamed": null, "s": null, "part_renamed": "q r"}`},
		expect: "SELECT * FROM VALUES (CAST(5 AS BIGINT), 'lk', named_struct('x_renamed', 50, 'y', 'y5'), 'p'), " +
			"(CAST(6 AS BIGINT), CAST(NULL AS STRING), CAST(NULL AS STRUCT<x_renamed: INT, y: STRING>), 'q r')",
	}
}

func TestAppendToEngineTables(t *testing.T) {
	needEngines(t, "Spark", "lakesink appends to Spark-written tables")
	root := t.TempDir()
	for _, c := range appendCases {
		t.Run(c.name, func(t *testing.T) {
			needEngines(t, "Spark", "append to Spark table: "+c.feature)
			path := filepath.Join(root, c.name)
			tbl := "delta.`" + path + "`"
			for _, q := range c.setup {
				var out any
				srv.must(t, map[string]any{"op": "spark_sql", "sql": strings.ReplaceAll(q, "%s", tbl)}, &out)
			}
			before := sparkRead(t, path, "delta", nil)
			v0 := latestVersion(t, path)
			// delta-rs is checked after the append only where it reads the
			// table as Spark wrote it.
			var rsBefore rsAnswer
			rsReason := ""
			if err := srv.call(map[string]any{"op": "rs_read", "path": path}, &rsBefore); err != nil {
				rsReason = err.Error()
			} else if d := rowDiff(engineRows(before.Rows), engineRows(rsBefore.Rows)); d != "" {
				rsReason = "its rows of the Spark-written table differ from Spark's: " + d
			}

			ingest := func(step string, lines []string) (int, string) {
				src := filepath.Join(root, c.name+"-"+step)
				if err := os.MkdirAll(src, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(src, "rows.json"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
					t.Fatal(err)
				}
				_, code, stderr := runCLI("ingest", "--source", src, "--format", "json",
					"--checkpoint", filepath.Join(root, c.name+"-"+step+"-chk"), "--table", path)
				return code, stderr
			}
			if c.bad != nil {
				code, stderr := ingest("bad", c.bad)
				if code != c.refuse || !strings.Contains(stderr, c.want) {
					t.Fatalf("lakesink ingest: exit %d, stderr %q; want exit %d naming %q", code, stderr, c.refuse, c.want)
				}
				if v := latestVersion(t, path); v != v0 {
					t.Errorf("the refused append committed version %d", v)
				}
				after := sparkRead(t, path, "delta", nil)
				sameRows(t, "Spark rows after the refused append", engineRows(before.Rows), engineRows(after.Rows))
			}
			if c.input == nil {
				return
			}
			code, stderr := ingest("in", c.input)
			if code != 0 {
				t.Fatalf("lakesink ingest: exit %d: %s", code, stderr)
			}
			v := latestVersion(t, path)
			if v != v0+1 {
				t.Fatalf("lakesink committed up to version %d, want %d", v, v0+1)
			}
			if c.check != nil {
				c.check(t, path, v)
			}
			if c.expect == "" {
				return
			}
			var added struct {
				Rows []map[string]any `json:"rows"`
			}
			srv.must(t, map[string]any{"op": "spark_sql_rows", "sql": c.expect + " AS e(" + strings.Join(columnNames(t, before.Schema), ", ") + ")"}, &added)
			want := append(engineRows(before.Rows), engineRows(added.Rows)...)
			after := sparkRead(t, path, "delta", nil)
			sameRows(t, "Spark rows after lakesink's append (Spark's + lakesink's)", want, engineRows(after.Rows))
			if rsReason != "" {
				t.Logf("delta-rs not checked: it cannot read the %s table: %s", c.feature, rsReason)
				return
			}
			var rs rsAnswer
			srv.must(t, map[string]any{"op": "rs_read", "path": path}, &rs)
			sameRows(t, "delta-rs rows after lakesink's append", want, engineRows(rs.Rows))
		})
	}
}

// latestVersion is the latest commit in path's _delta_log.
func latestVersion(t *testing.T, path string) int64 {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(path, "_delta_log", "*.json"))
	if err != nil || len(names) == 0 {
		t.Fatalf("no commits in %s: %v", path, err)
	}
	slices.Sort(names)
	var v int64
	if _, err := fmt.Sscanf(filepath.Base(names[len(names)-1]), "%020d.json", &v); err != nil {
		t.Fatal(err)
	}
	return v
}

// commitInfoOf is the commitInfo action of version v.
func commitInfoOf(t *testing.T, path string, v int64) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path, "_delta_log", fmt.Sprintf("%020d.json", v)))
	if err != nil {
		t.Fatal(err)
	}
	first, _, _ := strings.Cut(string(b), "\n")
	var a struct {
		CommitInfo map[string]any `json:"commitInfo"`
	}
	d := json.NewDecoder(strings.NewReader(first))
	d.UseNumber()
	if err := d.Decode(&a); err != nil || a.CommitInfo == nil {
		t.Fatalf("version %d: the first action is not commitInfo (PROTOCOL.md In-Commit Timestamps): %v %q", v, err, first)
	}
	return a.CommitInfo
}

// checkInCommitTimestamps: lakesink's commit carries inCommitTimestamp,
// first in the commit, above the previous commit's (PROTOCOL.md "Writer
// Requirements for In-Commit Timestamps"), and Spark's DESCRIBE HISTORY
// shows it as the commit's timestamp.
func checkInCommitTimestamps(t *testing.T, path string, v int64) {
	prev := num(t, commitInfoOf(t, path, v-1)["inCommitTimestamp"])
	ours, ok := commitInfoOf(t, path, v)["inCommitTimestamp"]
	if !ok {
		t.Fatalf("version %d has no inCommitTimestamp", v)
	}
	ict := num(t, ours)
	if ict <= prev {
		t.Errorf("inCommitTimestamp %d of version %d is not above version %d's %d", ict, v, v-1, prev)
	}
	var hist []map[string]any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": fmt.Sprintf("DESCRIBE HISTORY delta.`%s` LIMIT 1", path)}, &hist)
	if len(hist) != 1 {
		t.Fatalf("DESCRIBE HISTORY LIMIT 1 answered %v", hist)
	}
	// engine_server's plain(): a timestamp is microseconds since the epoch
	if got := hist[0]; num(t, got["version"]) != v || num(t, got["timestamp"]) != ict*1000 {
		t.Errorf("Spark's DESCRIBE HISTORY latest version %v at %v µs, want version %d at %d ms (our inCommitTimestamp)",
			got["version"], got["timestamp"], v, ict)
	}
}

// checkRowTracking: Spark's row ids (_metadata.row_id) stay unique with
// lakesink's rows among Spark's, and lakesink's rows have
// row_commit_version = its commit (PROTOCOL.md "Row Tracking"); the
// high-water mark covers every row id.
func checkRowTracking(t *testing.T, path string, v int64) {
	var rows []map[string]any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": fmt.Sprintf(
		"SELECT id, CAST(_metadata.row_id AS STRING) AS row_id, CAST(_metadata.row_commit_version AS STRING) AS rcv FROM delta.`%s`", path)}, &rows)
	seen := map[string]bool{}
	for _, r := range rows {
		id := fmt.Sprint(r["row_id"])
		if r["row_id"] == nil || seen[id] {
			t.Errorf("row %v: row id %s missing or not unique", r["id"], id)
		}
		seen[id] = true
		if n := fmt.Sprint(r["id"]); (n == "10" || n == "11") && fmt.Sprint(r["rcv"]) != fmt.Sprint(v) {
			t.Errorf("lakesink's row %s: row_commit_version %v, want %d", n, r["rcv"], v)
		}
	}
	if len(rows) != 5 {
		t.Errorf("%d rows with row ids, want 5", len(rows))
	}
	var dm []map[string]any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": fmt.Sprintf("SELECT MAX(_metadata.row_id) AS m FROM delta.`%s`", path)}, &dm)
	b, err := os.ReadFile(filepath.Join(path, "_delta_log", fmt.Sprintf("%020d.json", v)))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"domain":"delta.rowTracking"`) || len(dm) != 1 ||
		!strings.Contains(string(b), fmt.Sprintf(`{\"rowIdHighWaterMark\":%v}`, dm[0]["m"])) {
		t.Errorf("version %d does not set the delta.rowTracking high-water mark to Spark's highest row id %v:\n%s", v, dm, b)
	}
}

// checkIdentity: Spark reads lakesink's rows with identity values of their
// own (distinct, 5 + 3k, above every value Spark generated), and a Spark
// INSERT after lakesink's append generates above lakesink's values: the
// high-water mark moved (PROTOCOL.md "Identity Columns").
func checkIdentity(t *testing.T, path string, v int64) {
	ids := func() map[string]int64 {
		var rows []map[string]any
		srv.must(t, map[string]any{"op": "spark_sql", "sql": fmt.Sprintf("SELECT id, v FROM delta.`%s`", path)}, &rows)
		out := map[string]int64{}
		for _, r := range rows {
			if r["id"] == nil {
				t.Fatalf("row %v: null identity", r)
			}
			out[fmt.Sprint(r["v"])] = num(t, r["id"])
		}
		return out
	}
	got := ids()
	if len(got) != 4 {
		t.Fatalf("Spark reads %v, want rows a, b (Spark's), lk1, lk2 (lakesink's)", got)
	}
	sparkMax := max(got["a"], got["b"])
	seen := map[int64]bool{}
	for _, k := range []string{"a", "b", "lk1", "lk2"} {
		id := got[k]
		if seen[id] || (id-5)%3 != 0 || id < 5 {
			t.Errorf("row %s: identity %d repeated or not 5 + 3k: %v", k, id, got)
		}
		seen[id] = true
	}
	if got["lk1"] <= sparkMax || got["lk2"] <= sparkMax {
		t.Errorf("lakesink's identities %d, %d not above Spark's %d", got["lk1"], got["lk2"], sparkMax)
	}
	var out any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": fmt.Sprintf("INSERT INTO delta.`%s` (v) VALUES ('after')", path)}, &out)
	got = ids()
	if got["after"] <= max(got["lk1"], got["lk2"]) {
		t.Errorf("Spark's identity %d after lakesink's append is not above lakesink's %d, %d: the high-water mark did not move", got["after"], got["lk1"], got["lk2"])
	}
}

// columnNames are the top-level field names of a Spark schema answer.
func columnNames(t *testing.T, sch any) []string {
	t.Helper()
	m, _ := sch.(map[string]any)
	fields, _ := m["fields"].([]any)
	var out []string
	for _, f := range fields {
		fm, _ := f.(map[string]any)
		name, _ := fm["name"].(string)
		out = append(out, "`"+name+"`")
	}
	if len(out) == 0 {
		t.Fatalf("no columns in Spark's schema %v", sch)
	}
	return out
}

// checkChangeDataFeed: Spark's change data feed of lakesink's version is
// its rows as inserts (an append writes no change data files: PROTOCOL.md
// "Add CDC File").
func checkChangeDataFeed(t *testing.T, path string, v int64) {
	var rows []map[string]any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": fmt.Sprintf(
		"SELECT id, v, _change_type, _commit_version FROM table_changes_by_path('%s', %d)", path, v)}, &rows)
	if len(rows) != 1 || fmt.Sprint(rows[0]["id"]) != "2" || rows[0]["_change_type"] != "insert" || num(t, rows[0]["_commit_version"]) != v {
		t.Errorf("Spark's change data feed of version %d: %v, want one insert of id 2", v, rows)
	}
}
