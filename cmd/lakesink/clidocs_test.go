package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/spf13/cobra/doc"
)

var updateCLIDocs = flag.Bool("update", false, "rewrite docs/cli/*.md from the cobra commands (TestCLIDocs)")

// cliDocsDir is the command reference, generated from the cobra commands
// (their Use, Long text and every flag with its default and help) by
// cobra/doc, so that it cannot omit a flag.
const cliDocsDir = "../../docs/cli"

// TestCLIDocs fails when docs/cli/*.md differ from what the commands
// generate. Regenerate with
//
//	go test ./cmd/lakesink -run TestCLIDocs -update
func TestCLIDocs(t *testing.T) {
	root := newRootCommand()
	root.DisableAutoGenTag = true // no generation date in the files
	gen := t.TempDir()
	if err := doc.GenMarkdownTree(root.Command, gen); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.Glob(filepath.Join(gen, "*.md"))
	if err != nil || len(want) == 0 {
		t.Fatalf("generated %d files: %v", len(want), err)
	}
	if *updateCLIDocs {
		if err := os.MkdirAll(cliDocsDir, 0o755); err != nil {
			t.Fatal(err)
		}
		old, _ := filepath.Glob(filepath.Join(cliDocsDir, "*.md"))
		for _, f := range old {
			if err := os.Remove(f); err != nil {
				t.Fatal(err)
			}
		}
	}
	var names []string
	for _, f := range want {
		name := filepath.Base(f)
		names = append(names, name)
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(cliDocsDir, name)
		if *updateCLIDocs {
			if err := os.WriteFile(dst, data, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		have, err := os.ReadFile(dst)
		if err != nil || !bytes.Equal(have, data) {
			t.Errorf("%s is stale or missing (%v): regenerate with go test ./cmd/lakesink -run TestCLIDocs -update", dst, err)
		}
	}
	have, _ := filepath.Glob(filepath.Join(cliDocsDir, "*.md"))
	for _, f := range have {
		if !slices.Contains(names, filepath.Base(f)) {
			t.Errorf("%s documents no command: regenerate with go test ./cmd/lakesink -run TestCLIDocs -update", f)
		}
	}
	if !strings.Contains(strings.Join(names, " "), "lakesink_ingest.md") {
		t.Errorf("no lakesink_ingest.md among %v", names)
	}
}
