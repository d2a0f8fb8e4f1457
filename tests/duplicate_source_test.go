package tests

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

// TestTwoFreshIngestsOfOneSourceWriteItOnce: two ingests of one source into
// one table, each with a fresh checkpoint, started at the same moment. The
// history check cannot see a query that has not committed yet; the source
// claim (put-if-absent) lets exactly one of them write. Regression: both used
// to succeed and the table held every row twice (found by a new-user trial).
func TestTwoFreshIngestsOfOneSourceWriteItOnce(t *testing.T) {
	files := flightFiles(t)[:6]
	want := sourceKeys(t, files)
	for round := range 3 {
		dir := t.TempDir()
		src, tbl := filepath.Join(dir, "src"), filepath.Join(dir, "t")
		if err := os.MkdirAll(src, 0o755); err != nil {
			t.Fatal(err)
		}
		for _, f := range files {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, filepath.Base(f)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		type result struct {
			code   int
			stderr string
		}
		results := make([]result, 2)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for i := range results {
			wg.Add(1)
			go func() {
				defer wg.Done()
				cmd := exec.Command(lakesinkBin, "ingest", "--source", src, "--timestamp-format", "2006/01/02 15:04",
					"--checkpoint", filepath.Join(dir, fmt.Sprintf("chk%d", i)), "--table", tbl, "--max-files-per-trigger", "2")
				var errb bytes.Buffer
				cmd.Stderr = &errb
				<-start
				err := cmd.Run()
				results[i].stderr = errb.String()
				var ee *exec.ExitError
				if errors.As(err, &ee) {
					results[i].code = ee.ExitCode()
				} else if err != nil {
					results[i].code = -1
					results[i].stderr += err.Error()
				}
			}()
		}
		close(start)
		wg.Wait()
		ok, refused := 0, 0
		for _, r := range results {
			switch {
			case r.code == 0:
				ok++
			case r.code == 1 && strings.Contains(r.stderr, "source already ingested into this table by another query"):
				refused++
			default:
				t.Fatalf("round %d: exit %d: %s", round, r.code, r.stderr)
			}
		}
		if ok != 1 || refused != 1 {
			t.Fatalf("round %d: %d ingests succeeded and %d were refused, want 1 and 1: %+v", round, ok, refused, results)
		}
		compareKeys(t, tableKeys(t, tbl), want)
	}
}
