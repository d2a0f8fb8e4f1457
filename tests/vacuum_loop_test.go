package tests

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/table"
)

// vacuumLoopDuration is how long TestVacuumRetainZeroWhileIngestingAndCompacting
// runs its three loops: LAKESINK_VACUUM_LOOP_DURATION (e.g. 60s; `make soak`),
// else 8 s, enough to hit the race on today's 2-core machine (without the
// untracked-file floor, every run of 8 s lost files).
func vacuumLoopDuration(t *testing.T) time.Duration {
	if v := os.Getenv("LAKESINK_VACUUM_LOOP_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("LAKESINK_VACUUM_LOOP_DURATION=%q: want a duration such as 60s", v)
		}
		return d
	}
	return 8 * time.Second
}

// TestVacuumRetainZeroWhileIngestingAndCompacting is issue 14 item 4's
// loop: an ingest with --trigger interval=500ms streams new flight files
// into a partitioned table while `compact` and `vacuum --retain 0h --force`
// run over and over in their own processes. VACUUM used to delete the data
// files of a batch (or of an OPTIMIZE) written but not committed yet, so
// the next commit named deleted files. At the end every file of the latest
// snapshot exists and every source row is in the table exactly once; the
// maintenance loops really compacted and deleted.
func TestVacuumRetainZeroWhileIngestingAndCompacting(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	duration := vacuumLoopDuration(t)
	files := flightFiles(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "source")
	staging := filepath.Join(dir, "staging")
	tbl := filepath.Join(dir, "table")
	chk := filepath.Join(dir, "checkpoint")
	for _, d := range []string{src, staging} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// 20,000 rows in 400 files of 50 rows, fed evenly over the duration.
	var parts []string
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(bytes.TrimRight(data, "\n"), []byte("\n"))
		for i := 0; i < len(lines); i += 50 {
			name := fmt.Sprintf("part-%04d.json", len(parts))
			if err := os.WriteFile(filepath.Join(staging, name), bytes.Join(lines[i:min(i+50, len(lines))], nil), 0o644); err != nil {
				t.Fatal(err)
			}
			parts = append(parts, name)
		}
	}
	if out, stderr, code := run(t, "create", tbl, "--schema", "../testdata/flights-schema.json", "--partition-by", "origin"); code != 0 {
		t.Fatalf("create: exit %d: %s %s", code, out, stderr)
	}
	var mu sync.Mutex
	ingestArgs := []string{"ingest", "--quiet", "--source", src, "--format", "json",
		"--schema", "../testdata/flights-schema.json", "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", chk, "--table", tbl, "--partition-by", "origin"}

	// The feeder spreads the files over the duration; the maintenance loops
	// run for the duration, and on (up to 3x) until a VACUUM deleted
	// compacted-away files, so that a slow machine still tests the race.
	ctx, cancel := context.WithTimeout(t.Context(), duration)
	defer cancel()
	start := time.Now()
	var vacuums int
	keepGoing := func() bool {
		if t.Context().Err() != nil {
			return false
		}
		el := time.Since(start)
		mu.Lock()
		defer mu.Unlock()
		return el < duration || (vacuums == 0 && el < 3*duration)
	}
	var ingestErr bytes.Buffer
	ingest := exec.Command(lakesinkBin, append(ingestArgs, "--trigger", "interval=500ms")...)
	ingest.Stderr = &ingestErr
	if err := ingest.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var failures []string
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	// The feeder moves the files into the source folder (a rename: the
	// ingest never sees half a file).
	wg.Add(1)
	go func() {
		defer wg.Done()
		every := duration / time.Duration(len(parts))
		for _, name := range parts {
			if err := os.Rename(filepath.Join(staging, name), filepath.Join(src, name)); err != nil {
				fail("feed %s: %v", name, err)
				return
			}
			select {
			case <-ctx.Done():
			case <-time.After(every):
			}
		}
	}()
	// loop runs the CLI with args while keepGoing and counts the runs whose
	// --json summary has a positive field `count`.
	loop := func(name, count string, n *int, args ...string) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for keepGoing() {
				var out, stderr bytes.Buffer
				cmd := exec.Command(lakesinkBin, args...)
				cmd.Stdout, cmd.Stderr = &out, &stderr
				err := cmd.Run()
				code := 0
				if ee, ok := err.(*exec.ExitError); ok {
					code = ee.ExitCode()
				} else if err != nil {
					fail("%s: %v", name, err)
					return
				}
				if code == 3 {
					continue // a conflict: retried, as a scheduler would
				}
				if code != 0 {
					fail("%s: exit %d: %s", name, code, strings.TrimSpace(stderr.String()))
					continue
				}
				for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
					var m map[string]any
					if json.Unmarshal([]byte(line), &m) == nil && m["message_type"] == "summary" {
						if v, ok := m[count].(float64); ok && v > 0 {
							mu.Lock()
							*n++
							mu.Unlock()
						}
					}
				}
			}
		}()
	}
	var compactions int
	loop("compact", "numRemovedFiles", &compactions, "compact", "--json", "--quiet", tbl)
	loop("vacuum", "filesDeleted", &vacuums, "vacuum", "--json", tbl, "--retain", "0h", "--force")
	wg.Wait()

	// Stop the interval ingest (SIGINT: exit 0 between batches, 130 when a
	// batch was interrupted and is left to rerun), then finish the stream.
	_ = ingest.Process.Signal(syscall.SIGINT)
	if err := ingest.Wait(); err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 130 {
			t.Fatalf("interval ingest: %v: %s", err, ingestErr.String())
		}
	}
	if out, stderr, code := run(t, append(ingestArgs, "--trigger", "available-now")...); code != 0 {
		t.Fatalf("final ingest: exit %d: %s %s", code, out, stderr)
	}
	for _, f := range failures {
		t.Error(f)
	}

	// Every file of the latest snapshot exists.
	bg := context.Background()
	tb, err := table.Open(bg, tbl)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(bg)
	if err != nil {
		t.Fatal(err)
	}
	var missing []string
	for _, a := range snap.Files() {
		p, err := url.PathUnescape(a.Path)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tb.Store().Stat(bg, p); err != nil {
			if !isNotFound(err) {
				t.Fatal(err)
			}
			missing = append(missing, p)
		}
	}
	t.Logf("%s (loops ran %s): version %d, %d live files, %d compactions and %d vacuums that deleted files",
		duration, time.Since(start).Round(time.Second), snap.Version(), len(snap.Files()), compactions, vacuums)
	if len(missing) > 0 {
		t.Fatalf("%d of %d live files of version %d are missing (first: %v)", len(missing), len(snap.Files()), snap.Version(), head(missing))
	}
	if compactions == 0 || vacuums == 0 {
		t.Fatalf("the maintenance did nothing: %d compactions, %d vacuums deleted files", compactions, vacuums)
	}
	var fed []string
	for _, name := range parts {
		fed = append(fed, filepath.Join(src, name))
	}
	compareKeys(t, tableKeys(t, tbl), sourceKeys(t, fed))
}

func isNotFound(err error) bool {
	return errors.Is(err, storage.ErrNotFound)
}
