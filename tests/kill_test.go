package tests

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"syscall"
	"testing"
	"time"
)

// recoveryCounts counts, from the driver's --json progress lines, the two
// recovery paths: a rerun whose sink commit had not landed (committed now),
// and a rerun skipped by the sink because its commit had landed before
// commits/N was written.
type recoveryCounts struct {
	batches, rerunCommitted, rerunSkipped int
}

func (c *recoveryCounts) add(out []byte) {
	sc := bufio.NewScanner(bytes.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var m struct {
			MessageType string `json:"message_type"`
			Recovery    string `json:"recovery"`
			Sink        struct {
				Skipped bool `json:"skipped"`
			} `json:"sink"`
		}
		if json.Unmarshal(sc.Bytes(), &m) != nil || m.MessageType != "progress" {
			continue
		}
		c.batches++
		if m.Recovery == "rerun" {
			if m.Sink.Skipped {
				c.rerunSkipped++
			} else {
				c.rerunCommitted++
			}
		}
	}
}

// bothRecoveries reports whether c has both recovery paths: a rerun that
// committed and one the sink skipped.
func bothRecoveries(c recoveryCounts) bool { return c.rerunCommitted > 0 && c.rerunSkipped > 0 }

func envInt(name string, def int) int {
	if v, err := strconv.Atoi(os.Getenv(name)); err == nil && v > 0 {
		return v
	}
	return def
}

// TestKillDashNineIngestIsExactlyOnce streams the 20 flight files into a
// Delta table with one file per micro-batch, kills the ingest process with
// SIGKILL at random moments, restarts it, and checks that the table holds
// each of the 20,000 source rows exactly once (a run that drains the source
// before its kill gets copies of 20 parts more, whose rows must then be in
// the table twice). It also checks that both recovery paths were
// exercised. LAKESINK_KILL_TRIALS sets the minimum number of kills (default
// 5, and more until both recovery paths have been seen, to keep `make test`
// short; `make soak` runs 200).
func TestKillDashNineIngestIsExactlyOnce(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	killTest(t, "--table", "", "", envInt("LAKESINK_KILL_TRIALS", 5))
}

// TestKillDashNineFileSinkIsExactlyOnce is the same against Spark's file
// sink, read back through _spark_metadata.
func TestKillDashNineFileSinkIsExactlyOnce(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	killTest(t, "--file-sink", "", "", envInt("LAKESINK_KILL_TRIALS", 5))
}

// TestKillDashNinePartitionedIngestIsExactlyOnce is the Delta test with
// the table partitioned by origin: each 100-row batch writes a file into
// each of its airports' directories (created by the batch that first
// meets the airport) through storage.NewDeferredWriter, made durable by
// one SyncObjects before the commit, so a kill lands in the deferred
// writes, the sync waves or the commit.
func TestKillDashNinePartitionedIngestIsExactlyOnce(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	killTest(t, "--table", "", "", envInt("LAKESINK_KILL_TRIALS", 5), "--partition-by", "origin")
}

// killTest runs the kill -9 loop with the target flag (--table or
// --file-sink); outURL and checkpointURL, when set, are the target and the
// checkpoint (e.g. on the S3 server), else local folders. The source folder
// is always local.
func killTest(t *testing.T, targetFlag, outURL, checkpointURL string, minTrials int, extra ...string) {
	files := flightFiles(t)
	dir := t.TempDir()
	src := filepath.Join(dir, "source")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	// The 20 files of 1,000 rows are split into 200 files of 100 rows so
	// that the stream has 200 micro-batches to be killed in.
	n := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		lines := bytes.SplitAfter(bytes.TrimRight(data, "\n"), []byte("\n"))
		for i := 0; i < len(lines); i += 100 {
			part := bytes.Join(lines[i:min(i+100, len(lines))], nil)
			if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("part-%04d.json", n)), part, 0o644); err != nil {
				t.Fatal(err)
			}
			n++
		}
	}
	out, chk := outURL, checkpointURL
	if out == "" {
		out = filepath.Join(dir, "out")
	}
	if chk == "" {
		chk = filepath.Join(dir, "checkpoint")
	}
	args := []string{"ingest", "--json", "--source", src, "--format", "json",
		"--schema", "../testdata/flights-schema.json", "--timestamp-format", "2006/01/02 15:04",
		"--checkpoint", chk, targetFlag, out}
	args = append(args, extra...)
	args = append(args, "--trigger", "available-now", "--max-files-per-trigger", "1")

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	// A run that drains the source before its kill gets 20 more parts: a
	// copy of the next 20 of the 200 under new names (their rows count
	// twice in the source, and so must in the table).
	gen := 0
	more := func() {
		gen++
		for i := range 20 {
			j := ((gen-1)*20 + i) % n
			data, err := os.ReadFile(filepath.Join(src, fmt.Sprintf("part-%04d.json", j)))
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("part-%04d-copy-%d.json", j, gen)), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	kills, counts := killLoop(t, args, 200*time.Millisecond, rng, minTrials, bothRecoveries, more)
	// Finish the stream without interference: the batch a kill left
	// planned reruns with exactly its file, then the rest comes in one
	// batch (the kills are over; 170-odd more one-file batches would only
	// repeat the trials' work; Spark's maxFilesPerTrigger may change
	// between runs too).
	finalArgs := slices.Clone(args)
	finalArgs[len(finalArgs)-1] = "0"
	final := ingestToEnd(t, finalArgs)
	counts.add(final)
	t.Logf("%d kills, %d batches reported, %d reruns committed, %d reruns skipped (commit had landed)",
		kills, counts.batches, counts.rerunCommitted, counts.rerunSkipped)

	fed, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil {
		t.Fatal(err)
	}
	compareKeys(t, tableKeys(t, out), sourceKeys(t, fed))
	if kills < minTrials {
		t.Fatalf("only %d kills, want at least %d", kills, minTrials)
	}
	if !bothRecoveries(counts) {
		t.Fatalf("recovery paths not both exercised: %d reruns committed, %d reruns skipped", counts.rerunCommitted, counts.rerunSkipped)
	}
}

// killLoop runs the CLI with args under ingestUntilKilled (a SIGKILL after
// a random delay below maxDelay) over and over until it has been killed
// minKills times and enough(counts of the runs' progress lines) holds (nil:
// no further condition). A run that finishes before its kill has drained
// the source: more adds input (the next files or records) and the loop goes
// on, so the kills made do not depend on how fast the machine runs the
// stream against the delays. It stops after minKills*20 runs (then short of
// kills: the caller fails the test after checking the table, so a broken
// exactly-once shows as such). It returns the kills and the counts.
func killLoop(t *testing.T, args []string, maxDelay time.Duration, rng *rand.Rand, minKills int,
	enough func(recoveryCounts) bool, more func()) (int, recoveryCounts) {
	t.Helper()
	var counts recoveryCounts
	kills, finished := 0, 0
	for run := 0; kills < minKills || (enough != nil && !enough(counts)); run++ {
		if run >= minKills*20 {
			t.Logf("stopped after %d runs short of kills or recoveries", run)
			break
		}
		o, killed := ingestUntilKilled(t, args, maxDelay, rng)
		counts.add(o)
		if killed {
			kills++
			continue
		}
		finished++
		more()
	}
	if finished > 0 {
		t.Logf("%d runs drained their input before the kill; more input added each time", finished)
	}
	return kills, counts
}

// ingestUntilKilled runs the CLI with args (with the after-commit delay
// that widens the commit-to-checkpoint window), waits for its first output
// line (a finished batch) so that the kill lands while batches run, not
// during process start, then SIGKILLs it after a random delay below
// maxDelay. It returns what the process printed and whether it was killed
// (false: it finished first). A failure before the kill fails the test.
func ingestUntilKilled(t *testing.T, args []string, maxDelay time.Duration, rng *rand.Rand) ([]byte, bool) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(lakesinkBin, args...)
	cmd.Stderr = &stderr
	cmd.Env = append(os.Environ(), "LAKESINK_TEST_AFTER_COMMIT_DELAY=15ms")
	pipe, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
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
			if !signalled && len(line) > 0 {
				close(firstLine)
				signalled = true
			}
			if err != nil {
				if !signalled {
					close(firstLine)
				}
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
			t.Fatalf("ingest failed before the kill: %v\n%s", err, stderr.String())
		}
		return stdout.Bytes(), false
	case <-time.After(time.Duration(rng.Int63n(int64(maxDelay)))):
		_ = cmd.Process.Signal(syscall.SIGKILL)
		<-done
		return stdout.Bytes(), true
	}
}

// ingestToEnd runs the CLI with args to completion and returns its output.
func ingestToEnd(t *testing.T, args []string) []byte {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(lakesinkBin, args...)
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("final ingest: %v\n%s", err, stderr.String())
	}
	return out
}
