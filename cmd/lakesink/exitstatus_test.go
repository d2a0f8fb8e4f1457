package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/txlog"
)

// TestExitStatusTable checks the README's "Exit status by situation" table:
// for each situation, each command's exit status and the words its message
// starts with or contains. A change of either fails here and must be made
// in the README too.
func TestExitStatusTable(t *testing.T) {
	dir := t.TempDir()
	good := ingestFlights(t, dir, 3, false) // 3 commits (versions 0-2), one file each
	mk := func(name string, mod func(root string)) string {
		p := filepath.Join(dir, name)
		corpus.CopyDir(t, good, p)
		mod(p)
		return p
	}
	notTable := filepath.Join(dir, "not-a-table")
	if err := os.MkdirAll(notTable, 0o755); err != nil {
		t.Fatal(err)
	}
	commit3 := func(root, data string) {
		if err := os.WriteFile(filepath.Join(root, "_delta_log", "00000000000000000003.json"), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	unsupported := mk("unsupported", func(root string) {
		b, _ := json.Marshal(map[string]any{"protocol": map[string]any{"minReaderVersion": 3, "minWriterVersion": 7,
			"readerFeatures": []string{"fancyFeature"}, "writerFeatures": []string{"fancyFeature"}}})
		commit3(root, string(b)+"\n")
	})
	corrupt := mk("corrupt", func(root string) { commit3(root, "{\"add\": {\"path\": \n") })
	missing := mk("missing", func(root string) {
		files, _ := filepath.Glob(filepath.Join(root, "*.parquet"))
		if len(files) != 3 {
			t.Fatalf("%d data files, want 3", len(files))
		}
		if err := os.Remove(files[0]); err != nil {
			t.Fatal(err)
		}
	})

	const (
		feature     = `unsupported table feature: cannot `
		corruptLine = "corrupt log: _delta_log/00000000000000000003.json line 1 (version 3)"
		gone        = ": not found"
	)
	// Every verb words a path that is not a table the same way, naming it
	// once; the readers that also read a file-sink directory say so.
	notFound := "not a table: " + notTable + " has no Delta log (_delta_log/ with a commit)"
	type want struct {
		code int
		msg  string // "" for exit 0
	}
	cases := []struct {
		situation, table string
		byCommand        map[string]want
	}{
		{"not a table", notTable, map[string]want{
			"describe": {1, notFound}, "history": {1, notFound}, "scan": {1, notFound}, "files": {1, notFound},
			"compact": {1, notFound}, "vacuum": {1, notFound}, "checkpoint": {1, notFound}, "cleanup-log": {1, notFound},
		}},
		{"unsupported reader feature", unsupported, map[string]want{
			"describe": {4, feature + `read a table that requires "fancyFeature"`}, "history": {0, ""}, // history shows the protocol
			"scan": {4, feature + `read a table that requires "fancyFeature"`}, "files": {4, feature + `read a table that requires "fancyFeature"`},
			"compact": {4, feature + `write`}, "vacuum": {4, feature + `write`}, "checkpoint": {4, feature + `write`}, "cleanup-log": {4, feature + `write`},
		}},
		{"corrupt commit", corrupt, map[string]want{
			"describe": {4, corruptLine}, "history": {4, corruptLine}, "scan": {4, corruptLine}, "files": {4, corruptLine},
			"compact": {4, corruptLine}, "vacuum": {4, corruptLine}, "checkpoint": {4, corruptLine}, "cleanup-log": {4, corruptLine},
		}},
		{"missing data file", missing, map[string]want{
			"describe": {0, ""}, "history": {0, ""}, "files": {0, ""}, "checkpoint": {0, ""}, "cleanup-log": {0, ""}, // the log only
			"vacuum": {0, ""}, // nothing to delete
			"scan":   {1, gone}, "compact": {1, gone},
		}},
	}
	for _, tc := range cases {
		for cmd, w := range tc.byCommand {
			t.Run(tc.situation+"/"+cmd, func(t *testing.T) {
				args := []string{cmd, tc.table}
				if cmd == "vacuum" {
					args = append(args, "--dry-run")
				}
				_, e, code := runCLI(t, args...)
				if code != w.code || w.msg != "" && !strings.Contains(e, w.msg) || w.msg == "" && e != "" {
					t.Fatalf("%v: exit %d, stderr %q; want exit %d with %q", args, code, e, w.code, w.msg)
				}
				if tc.table == notTable {
					wantMsg := "lakesink: " + notFound
					if cmd == "describe" || cmd == "scan" || cmd == "files" {
						wantMsg += " nor a file-sink log (_spark_metadata/)"
					}
					if e != wantMsg+"\n" {
						t.Errorf("%v: stderr %q, want %q", args, e, wantMsg)
					}
				}
				if w.code != 0 && strings.Count(e, tc.table) < 1 {
					t.Errorf("%v: stderr %q does not name the table", args, e)
				}
			})
		}
	}

	// A conflict (another writer won, a checkpoint in use) is 3 for every
	// command; an interrupt is 130 with a message starting "interrupted".
	for _, err := range []error{
		fmt.Errorf("table x: %w", txlog.ErrConcurrentModification),
		fmt.Errorf("ingest: %w", stream.ErrCheckpointInUse),
	} {
		if code := exitCode(err, false); code != exitConflict {
			t.Errorf("%v: exit %d, want %d", err, code, exitConflict)
		}
	}
	var errb bytes.Buffer
	printExitError(&errb, false, markInterrupted(fmt.Errorf("compaction: optimize x: %w", context.Canceled), true))
	if code := exitCode(context.Canceled, true); code != exitInterrupted || !strings.HasPrefix(errb.String(), "lakesink: interrupted (SIGINT/SIGTERM); the table is left consistent") {
		t.Errorf("interrupt: exit %d, stderr %q", code, errb.String())
	}
}
