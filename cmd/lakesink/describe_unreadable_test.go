package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// unreadableLog writes a hand-made Delta log at dir: commits 0..published-1
// (0 creates the table with protocol, 1.. add a file each), plus one staged
// commit (_delta_log/_staged_commits/, PROTOCOL.md "Catalog-managed
// tables") for version published that adds a further file.
func unreadableLog(t *testing.T, dir string, protocol map[string]any, published int) {
	t.Helper()
	logDir := filepath.Join(dir, "_delta_log")
	if err := os.MkdirAll(filepath.Join(logDir, "_staged_commits"), 0o755); err != nil {
		t.Fatal(err)
	}
	line := func(v any) string {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return string(b) + "\n"
	}
	add := func(v int) string {
		return line(map[string]any{"add": map[string]any{"path": fmt.Sprintf("part-%d.parquet", v), "partitionValues": map[string]any{},
			"size": 100 + v, "modificationTime": 1700000000000, "dataChange": true, "stats": `{"numRecords":3}`}})
	}
	commitInfo := func(v int) string {
		return line(map[string]any{"commitInfo": map[string]any{"timestamp": 1700000000000 + v, "operation": "WRITE", "txnId": fmt.Sprint("txn-", v)}})
	}
	for v := 0; v <= published; v++ {
		var b strings.Builder
		b.WriteString(commitInfo(v))
		if v == 0 {
			b.WriteString(line(map[string]any{"protocol": protocol}))
			b.WriteString(line(map[string]any{"metaData": map[string]any{"id": "11111111-2222-3333-4444-555555555555",
				"format": map[string]any{"provider": "parquet", "options": map[string]any{}}, "partitionColumns": []string{},
				"schemaString":  `{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}}]}`,
				"configuration": map[string]string{}, "createdTime": 1700000000000}}))
		} else {
			b.WriteString(add(v))
		}
		name := filepath.Join(logDir, fmt.Sprintf("%020d.json", v))
		if v == published {
			// Proposed (perhaps ratified) but not published: only the
			// catalog knows whether version `published` exists.
			name = filepath.Join(logDir, "_staged_commits", fmt.Sprintf("%020d.3a0d65cd-4056-49b8-937b-95f9e3ee90e5.json", v))
		}
		if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDescribeUnreadableTable (issue 17): describe of a table whose rows
// lakesink cannot read prints its protocol, says plainly that and why its
// rows cannot be read, shows no file figures, and exits 4; a
// catalog-managed table (catalogManaged, catalogOwned-preview) described
// without --version presents no version as its latest, since only its
// catalog knows whether commits after the newest published one exist
// (PROTOCOL.md "Catalog-managed tables"). The readable control (the same
// log with timestampNtz) exits 0 with its figures.
func TestDescribeUnreadableTable(t *testing.T) {
	feature := func(f string) map[string]any {
		return map[string]any{"minReaderVersion": 3, "minWriterVersion": 7, "readerFeatures": []string{f}, "writerFeatures": []string{f}}
	}
	cases := []struct {
		name     string
		protocol map[string]any
		catalog  bool
		reason   string // in the text and in unreadableReason; "" readable
		refusal  string // on stderr
	}{
		{"readable", feature("timestampNtz"), false, "", ""},
		{"unknown reader feature", feature("someFutureFeature"), false,
			`it needs the reader feature "someFutureFeature", which lakesink does not implement`, `cannot read a table that requires "someFutureFeature"`},
		{"reader version 4", map[string]any{"minReaderVersion": 4, "minWriterVersion": 7, "readerFeatures": []string{}, "writerFeatures": []string{}}, false,
			"it needs reader version 4; lakesink reads reader versions 1 to 3", `cannot read a table that requires "readerVersion 4"`},
		{"catalogManaged", feature("catalogManaged"), true,
			`the table is catalog-managed (reader feature "catalogManaged"): only its managing catalog may read it`, `cannot read a table that requires "catalogManaged"`},
		{"catalogOwned-preview", feature("catalogOwned-preview"), true,
			`the table is catalog-managed (reader feature "catalogOwned-preview")`, `cannot read a table that requires "catalogOwned-preview"`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			unreadableLog(t, dir, tc.protocol, 3) // published 0, 1, 2; 3 staged
			out, e, code := runCLI(t, "describe", dir)
			if tc.reason == "" {
				if code != 0 || e != "" || !strings.Contains(out, "version      2 (") || !strings.Contains(out, "files        2 (203 B), records 6") {
					t.Fatalf("describe: exit %d, stderr %q, out:\n%s", code, e, out)
				}
			} else {
				if code != 4 || !strings.Contains(e, tc.refusal) || !strings.Contains(e, "version 2") {
					t.Fatalf("describe: exit %d, stderr %q; want 4 with %q", code, e, tc.refusal)
				}
				for _, want := range []string{"protocol     reader ", "rows         cannot be read by lakesink: " + tc.reason, "  id                   long",
					"files        not shown"} {
					if !strings.Contains(out, want) {
						t.Errorf("describe: no %q in\n%s", want, out)
					}
				}
				if strings.Contains(out, "(203 B)") || strings.Contains(out, "records") {
					t.Errorf("describe shows file figures of an unreadable table:\n%s", out)
				}
			}
			if strings.Contains(out, "version      3") || strings.Contains(out, "is 3 (") {
				t.Errorf("describe read the staged commit:\n%s", out)
			}
			if v := strings.Contains(out, "version      2 ("); v == tc.catalog {
				t.Errorf("describe presents version 2 as the latest (%v), want %v:\n%s", v, !tc.catalog, out)
			}
			if tc.catalog && !strings.Contains(out, "only its catalog knows its latest version; the newest commit published in _delta_log/ is 2") {
				t.Errorf("describe of a catalog-managed table does not say its latest version is unknown:\n%s", out)
			}

			out, e, code = runCLI(t, "describe", "--json", dir)
			objs := jsonLines(t, out)
			if len(objs) != 1 {
				t.Fatalf("describe --json: %d objects, want 1: %s", len(objs), out)
			}
			d := objs[0]
			if tc.reason == "" {
				if code != 0 || d["readable"] != true || d["numFiles"] != float64(2) || d["version"] != float64(2) || d["unreadableReason"] != nil {
					t.Fatalf("describe --json: exit %d %v", code, d)
				}
				return
			}
			var exitErr map[string]any
			if err := json.Unmarshal([]byte(e), &exitErr); code != 4 || err != nil || exitErr["code"] != float64(4) ||
				!strings.Contains(fmt.Sprint(exitErr["message"]), tc.refusal) {
				t.Fatalf("describe --json: exit %d, stderr %q", code, e)
			}
			if d["readable"] != false || !strings.Contains(fmt.Sprint(d["unreadableReason"]), tc.reason) {
				t.Errorf("describe --json: readable %v, unreadableReason %q", d["readable"], d["unreadableReason"])
			}
			for _, k := range []string{"numFiles", "sizeInBytes", "numRecords", "txns"} {
				if v, ok := d[k]; !ok || v != nil {
					t.Errorf("describe --json: %s = %v, want null", k, v)
				}
			}
			if d["minReaderVersion"] != float64(tc.protocol["minReaderVersion"].(int)) {
				t.Errorf("describe --json: minReaderVersion %v, want %v", d["minReaderVersion"], tc.protocol["minReaderVersion"])
			}
			if tc.catalog {
				if v, ok := d["version"]; !ok || v != nil || d["latestPublishedVersion"] != float64(2) {
					t.Errorf("describe --json of a catalog-managed table: version %v, latestPublishedVersion %v; want null and 2", v, d["latestPublishedVersion"])
				}
				// A version asked for is a published commit: it exists.
				out, _, code = runCLI(t, "describe", "--json", "--version", "1", dir)
				if d := jsonLines(t, out); code != 4 || len(d) != 1 || d[0]["version"] != float64(1) || d[0]["latestPublishedVersion"] != nil {
					t.Errorf("describe --json --version 1: exit %d %v", code, d)
				}
			} else if d["version"] != float64(2) || d["latestPublishedVersion"] != nil {
				t.Errorf("describe --json: version %v, latestPublishedVersion %v; want 2 and none", d["version"], d["latestPublishedVersion"])
			}
		})
	}
}
