package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
)

// pipelineSize is the size of TestKillDashNinePipelineIsExactlyOnce: source
// files, rows per file and the SIGKILLs of each query.
// LAKESINK_PIPELINE_KILL_TRIALS sets the kills (and runs the full data
// set); so does LAKESINK_KILL_TRIALS as `make soak` sets it (20 kills).
// Else the `make test` size: 40 files of 50 rows, 4 kills of each query.
func pipelineSize() (files, perFile, kills int) {
	if n := envInt("LAKESINK_PIPELINE_KILL_TRIALS", 0); n > 0 {
		return 200, 100, n
	}
	if os.Getenv("LAKESINK_KILL_TRIALS") != "" {
		return 200, 100, 20
	}
	return 40, 50, 4
}

// TestKillDashNinePipelineIsExactlyOnce is issue 21's pipeline: NDJSON files
// -> bronze (`ingest`, partitioned by part, one file per batch) -> silver
// (`ingest --format delta` from bronze, two bronze files per batch), both
// running at once, while `compact` (OPTIMIZE: dataChange=false rewrites the
// silver query must not stream again) and `vacuum --retain 168h` (longer
// than the run: it deletes nothing silver still has to read) run over and
// over on bronze. Each query is SIGKILLed at random moments and restarted,
// until it was killed the wanted number of times and has rerun a batch
// after a kill; a query that drains its input before that gets 5 more
// source files (silver through an unkilled bronze run). Bronze starts with a tenth of the files already ingested, so
// silver's first batches come from the starting snapshot (isStartingVersion
// offsets). At the end bronze and silver each hold every source id exactly
// once: the multisets of ids, compared id by id.
func TestKillDashNinePipelineIsExactlyOnce(t *testing.T) {
	nFiles, perFile, minKills := pipelineSize()
	dir := t.TempDir()
	src, staging := filepath.Join(dir, "source"), filepath.Join(dir, "staging")
	bronze, silver := filepath.Join(dir, "bronze"), filepath.Join(dir, "silver")
	for _, d := range []string{src, staging} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	schemaFile := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schemaFile, []byte(`{"type":"struct","fields":[`+
		`{"name":"id","type":"long","nullable":false,"metadata":{}},`+
		`{"name":"part","type":"string","nullable":true,"metadata":{}},`+
		`{"name":"payload","type":"string","nullable":true,"metadata":{}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	// stage writes source file f (ids f*perFile up to (f+1)*perFile) into
	// the staging folder and returns its name.
	stage := func(f int) (string, error) {
		var b strings.Builder
		for i := range perFile {
			id := f*perFile + i
			fmt.Fprintf(&b, `{"id":%d,"part":"p%d","payload":"row %d of file %d"}`+"\n", id, id%4, i, f)
		}
		name := fmt.Sprintf("part-%04d.json", f)
		return name, os.WriteFile(filepath.Join(staging, name), []byte(b.String()), 0o644)
	}
	var names []string
	for f := range nFiles {
		name, err := stage(f)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, name)
	}
	feedErr := func(names []string) error {
		for _, n := range names {
			if err := os.Rename(filepath.Join(staging, n), filepath.Join(src, n)); err != nil {
				return err
			}
		}
		return nil
	}
	feed := func(names []string) {
		t.Helper()
		if err := feedErr(names); err != nil {
			t.Fatal(err)
		}
	}
	// grow adds 5 source files, ids going on, for a query whose run drained
	// its input before it had its kills (a fast machine against the
	// delays); nFiles counts them.
	var growMu sync.Mutex
	grown := 0
	grow := func() error {
		growMu.Lock()
		defer growMu.Unlock()
		grown++
		for range 5 {
			name, err := stage(nFiles)
			if err != nil {
				return err
			}
			if err := feedErr([]string{name}); err != nil {
				return err
			}
			nFiles++
		}
		return nil
	}

	bronzeArgs := []string{"ingest", "--json", "--source", src, "--format", "json", "--schema", schemaFile,
		"--checkpoint", filepath.Join(dir, "chk-bronze"), "--table", bronze, "--partition-by", "part",
		"--trigger", "available-now", "--max-files-per-trigger", "1"}
	silverArgs := []string{"ingest", "--json", "--format", "delta", "--source", bronze,
		"--checkpoint", filepath.Join(dir, "chk-silver"), "--table", silver,
		"--trigger", "available-now", "--max-files-per-trigger", "2"}

	// A tenth of the files first, so that silver starts from a snapshot.
	feed(names[:nFiles/10])
	ingestToEnd(t, bronzeArgs)
	feed(names[nFiles/10:])

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	var (
		mu       sync.Mutex
		failures []string
	)
	fail := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		failures = append(failures, fmt.Sprintf(format, args...))
	}
	failed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(failures) > 0
	}

	// Maintenance on bronze until the queries are done.
	maint, stopMaint := context.WithCancel(context.Background())
	defer stopMaint()
	var maintWG sync.WaitGroup
	var compactions, vacuums int
	maintain := func(name, count string, n *int, pause time.Duration, args ...string) {
		maintWG.Add(1)
		go func() {
			defer maintWG.Done()
			for maint.Err() == nil {
				var out, stderr bytes.Buffer
				cmd := exec.Command(lakesinkBin, args...)
				cmd.Stdout, cmd.Stderr = &out, &stderr
				err := cmd.Run()
				var ee *exec.ExitError
				switch {
				case errors.As(err, &ee) && ee.ExitCode() == 3:
					// A conflict with an append: retried, as a scheduler would.
				case err != nil:
					fail("%s: %v: %s", name, err, strings.TrimSpace(stderr.String()))
					return
				default:
					if summaryCount(out.Bytes(), count) > 0 || count == "" {
						mu.Lock()
						*n++
						mu.Unlock()
					}
				}
				select {
				case <-maint.Done():
				case <-time.After(pause):
				}
			}
		}()
	}
	maintain("compact", "numRemovedFiles", &compactions, 300*time.Millisecond, "compact", "--json", "--quiet", bronze)
	maintain("vacuum", "", &vacuums, 500*time.Millisecond, "vacuum", "--json", "--quiet", bronze, "--retain", "168h")

	// The two queries, each killed and restarted in its own loop. Silver
	// runs on after bronze finished until it has its kills (bronze's
	// backlog is then silver's).
	type result struct {
		kills  int
		counts recoveryCounts
	}
	var bronzeRes, silverRes result
	bronzeDone := make(chan struct{})
	var qWG sync.WaitGroup
	killLoop := func(name string, args []string, res *result, rng *rand.Rand, done <-chan struct{}, maxDelay time.Duration) {
		enough := func() bool { return res.kills >= minKills && res.counts.rerunCommitted+res.counts.rerunSkipped > 0 }
		// Up to minKills*20 runs killed or followed by more input; the runs
		// of silver that wait for bronze do not count (a slow bronze).
		for trial := 0; trial < minKills*20 && !failed() && !enough(); {
			out, killed, err := runUntilKilled(args, maxDelay, rng)
			res.counts.add(out)
			if err != nil {
				fail("%s: %v", name, err)
				return
			}
			if killed {
				res.kills++
				trial++
				continue
			}
			// The run finished: nothing left for now.
			if enough() {
				return
			}
			if done == nil {
				trial++
				// Bronze consumed its source short of its kills: more files.
				if err := grow(); err != nil {
					fail("%s: more source files: %v", name, err)
					return
				}
				continue
			}
			select {
			case <-done:
				trial++
				// Bronze is complete and silver caught up short of its
				// kills: more files, through bronze (no longer killed).
				if err := grow(); err != nil {
					fail("%s: more source files: %v", name, err)
					return
				}
				if _, err := runToEnd(bronzeArgs); err != nil {
					fail("%s: bronze run for more input: %v", name, err)
					return
				}
			case <-time.After(100 * time.Millisecond):
			}
		}
	}
	qWG.Add(2)
	go func() {
		defer qWG.Done()
		defer close(bronzeDone)
		killLoop("bronze", bronzeArgs, &bronzeRes, rand.New(rand.NewSource(seed)), nil, 300*time.Millisecond)
		if !failed() {
			out, err := runToEnd(bronzeArgs)
			bronzeRes.counts.add(out)
			if err != nil {
				fail("final bronze run: %v", err)
			}
		}
	}()
	go func() {
		defer qWG.Done()
		killLoop("silver", silverArgs, &silverRes, rand.New(rand.NewSource(seed+1)), bronzeDone, 300*time.Millisecond)
	}()
	qWG.Wait()
	stopMaint()
	maintWG.Wait()
	for _, f := range failures {
		t.Error(f)
	}
	if t.Failed() {
		t.FailNow()
	}
	// Finish silver without interference.
	silverRes.counts.add(ingestToEnd(t, silverArgs))
	t.Logf("bronze: %d kills, %d batches reported, %d reruns committed, %d reruns skipped", bronzeRes.kills,
		bronzeRes.counts.batches, bronzeRes.counts.rerunCommitted, bronzeRes.counts.rerunSkipped)
	t.Logf("silver: %d kills, %d batches reported, %d reruns committed, %d reruns skipped", silverRes.kills,
		silverRes.counts.batches, silverRes.counts.rerunCommitted, silverRes.counts.rerunSkipped)
	t.Logf("bronze maintenance: %d compactions that rewrote files, %d vacuums", compactions, vacuums)
	if grown > 0 {
		t.Logf("a query drained its input short of its kills %d times: %d source files in all", grown, nFiles)
	}

	want := make([]int64, nFiles*perFile)
	for i := range want {
		want[i] = int64(i)
	}
	for _, tb := range []struct{ name, url string }{{"bronze", bronze}, {"silver", silver}} {
		if got := sortedIDs(t, tb.url); !slices.Equal(got, want) {
			t.Errorf("%s: %s", tb.name, idDiff(got, want))
		}
	}
	for _, q := range []struct {
		name string
		res  result
	}{{"bronze", bronzeRes}, {"silver", silverRes}} {
		if q.res.kills < minKills {
			t.Errorf("%s was killed %d times, want at least %d", q.name, q.res.kills, minKills)
		}
		if q.res.counts.rerunCommitted+q.res.counts.rerunSkipped == 0 {
			t.Errorf("%s never reran a batch after a kill: the recovery was not exercised", q.name)
		}
	}
	if compactions == 0 {
		t.Errorf("no OPTIMIZE of bronze rewrote a file during the run: the dataChange=false rewrites were not exercised")
	}
	if vacuums == 0 {
		t.Errorf("no VACUUM of bronze ran to completion during the run")
	}
	if hist, _, _ := run(t, "history", silver, "--json"); strings.Count(hist, `"STREAMING UPDATE"`) == 0 {
		t.Errorf("silver's history has no streaming commit: %.300s", hist)
	}
}

// summaryCount is the number field of the --json summary line of out (0 if
// absent).
func summaryCount(out []byte, field string) float64 {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m map[string]any
		if json.Unmarshal(sc.Bytes(), &m) == nil && m["message_type"] == "summary" {
			v, _ := m[field].(float64)
			return v
		}
	}
	return 0
}

// sortedIDs reads the id column of the table at url, sorted (duplicates
// kept).
func sortedIDs(t *testing.T, url string) []int64 {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var ids []int64
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id"}}) {
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, rec.Values[0].(int64))
	}
	slices.Sort(ids)
	return ids
}

// idDiff describes how the sorted multiset got differs from want (sorted,
// each id once): the ids missing and those present more than once.
func idDiff(got, want []int64) string {
	n := map[int64]int{}
	for _, id := range got {
		n[id]++
	}
	var missing, dup, unknown []string
	for _, id := range want {
		switch c := n[id]; {
		case c == 0:
			missing = append(missing, fmt.Sprint(id))
		case c > 1:
			dup = append(dup, fmt.Sprintf("%d x%d", id, c))
		}
		delete(n, id)
	}
	for id := range n {
		unknown = append(unknown, fmt.Sprint(id))
	}
	slices.Sort(unknown)
	return fmt.Sprintf("%d rows for %d ids: %d ids missing (first %v), %d more than once (first %v), %d unknown (first %v)",
		len(got), len(want), len(missing), head(missing), len(dup), head(dup), len(unknown), head(unknown))
}

// runUntilKilled is ingestUntilKilled for a goroutine other than the
// test's: it returns an error instead of failing the test. It waits for
// the first output line (a batch done, or the summary of a run with
// nothing to do), then SIGKILLs the process after a random delay below
// maxDelay unless it exited first.
func runUntilKilled(args []string, maxDelay time.Duration, rng *rand.Rand) ([]byte, bool, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(lakesinkBin, args...)
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "LAKESINK_TEST_AFTER_COMMIT_DELAY=15ms")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		return nil, false, err
	}
	if err := cmd.Start(); err != nil {
		return nil, false, err
	}
	var stdout bytes.Buffer
	firstLine := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		r := bufio.NewReader(pipe)
		signalled := false
		for {
			line, err := r.ReadBytes('\n')
			stdout.Write(line)
			if !signalled && (len(line) > 0 || err != nil) {
				close(firstLine)
				signalled = true
			}
			if err != nil {
				return
			}
		}
	}()
	<-firstLine
	done := make(chan error, 1)
	go func() { <-copied; done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			return stdout.Bytes(), false, fmt.Errorf("failed before the kill: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return stdout.Bytes(), false, nil
	case <-time.After(time.Duration(rng.Int63n(int64(maxDelay)))):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		err := <-done
		var ee *exec.ExitError
		if errors.As(err, &ee) && ee.ExitCode() != -1 && ee.ExitCode() != 0 {
			// Exited with an error of its own before the signal landed.
			return stdout.Bytes(), false, fmt.Errorf("failed: %w: %s", err, strings.TrimSpace(stderr.String()))
		}
		return stdout.Bytes(), err != nil, nil
	}
}

// runToEnd runs the CLI with args to completion.
func runToEnd(args []string) ([]byte, error) {
	var stderr bytes.Buffer
	cmd := exec.Command(lakesinkBin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return out, fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}
