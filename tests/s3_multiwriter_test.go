package tests

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/table"
)

// createWriterTable creates the writer table at url (as `lakesink create`
// would before the ingest processes are started).
func createWriterTable(t *testing.T, url string) {
	t.Helper()
	tb, err := table.Create(t.Context(), url, table.CreateOptions{Schema: writerSchema})
	if err != nil {
		t.Fatal(err)
	}
	if err := tb.Close(); err != nil {
		t.Fatal(err)
	}
}

// startSignal returns a file path writers wait for, and a function that
// creates it.
func startSignal(t *testing.T) (string, func()) {
	p := filepath.Join(t.TempDir(), "go")
	return p, func() {
		if err := os.WriteFile(p, nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// checkContiguous fails unless the commits are versions 0..n-1 without a
// gap, and returns every txn (appId@version) with how often it occurs.
func checkContiguous(t *testing.T, commits []logCommit) map[string]int {
	t.Helper()
	txns := map[string]int{}
	for i, c := range commits {
		if c.version != int64(i) {
			t.Fatalf("commit versions not contiguous: position %d holds version %d", i, c.version)
		}
		for _, x := range c.txns {
			txns[x]++
		}
	}
	return txns
}

// TestS3FourWritersOneTable: 4 OS processes, each a Delta sink with its own
// query id, each commit 25 batches to one table on the S3 server at the same
// time. The log must hold 100 batch commits at contiguous versions, each
// (query id, batch id) exactly once, and the table each batch's rows exactly
// once.
func TestS3FourWritersOneTable(t *testing.T) {
	srv := s3test.Start(t)
	fourWritersOneTable(t, srv.URL("multi/four"))
}

// TestLocalFourWritersOneTable is the same on local disk: 4 OS processes
// each commit 25 batches (blind appends with a txn) to one table; the local
// put-if-absent (temp file, fsync, link) gives each version one winner.
func TestLocalFourWritersOneTable(t *testing.T) {
	fourWritersOneTable(t, "file://"+t.TempDir())
}

func fourWritersOneTable(t *testing.T, url string) {
	const writers, batches, rows = 4, 25, 20 // 100 racing commits (50 each before; make test keeps it short)
	createWriterTable(t, url)
	signal, start := startSignal(t)
	var specs []writerSpec
	for w := range writers {
		specs = append(specs, writerSpec{Table: url, QueryID: fmt.Sprintf("query-%d", w), Batches: batches, Rows: rows, StartWait: signal})
	}
	wait := startWriters(t, specs)
	began := time.Now()
	start()
	results := wait()
	elapsed := time.Since(began)

	want := map[string]int{}
	var versions []int64
	for w, rs := range results {
		if len(rs) != batches {
			t.Fatalf("writer %d reported %d batches, want %d", w, len(rs), batches)
		}
		for _, r := range rs {
			if r.Skipped {
				t.Errorf("writer %d: batch %d skipped; no other writer has its query id", w, r.BatchID)
			}
			versions = append(versions, r.Version)
			for s := range int64(rows) {
				want[writerKey(specs[w].QueryID, r.BatchID, s)] = 1
			}
		}
	}
	sort.Slice(versions, func(i, j int) bool { return versions[i] < versions[j] })
	if len(slices.Compact(slices.Clone(versions))) != len(versions) {
		t.Errorf("two batches reported the same version: %v", versions)
	}

	commits := readCommits(t, url)
	txns := checkContiguous(t, commits)
	if got := len(commits); got != writers*batches+1 {
		t.Errorf("%d commits, want %d (create + %d batches)", got, writers*batches+1, writers*batches)
	}
	for w := range writers {
		for b := range batches {
			if n := txns[fmt.Sprintf("query-%d@%d", w, b)]; n != 1 {
				t.Errorf("txn query-%d@%d in %d commits, want 1", w, b, n)
			}
		}
	}
	if len(txns) != writers*batches {
		t.Errorf("%d distinct txns in the log, want %d", len(txns), writers*batches)
	}
	compareKeys(t, writerTableKeys(t, url), want)
	t.Logf("%d processes x %d batches on %s in %v (%.1f commits/s)", writers, batches, url, elapsed.Round(time.Millisecond), float64(writers*batches)/elapsed.Seconds())
}

// TestS3SameQueryTwoProcesses: two processes run the same query id (the
// same batches with the same rows) against one table at the same time. No
// batch may land twice: each batch id is committed once, skipped by the
// other process, and the rows are there once.
func TestS3SameQueryTwoProcesses(t *testing.T) {
	srv := s3test.Start(t)
	const batches, rows = 50, 10
	url := srv.URL("multi/same-query")
	createWriterTable(t, url)
	signal, start := startSignal(t)
	spec := writerSpec{Table: url, QueryID: "shared-query", Batches: batches, Rows: rows, StartWait: signal}
	wait := startWriters(t, []writerSpec{spec, spec})
	start()
	results := wait()

	committed := map[int64]int{}
	skipped := 0
	for _, rs := range results {
		for _, r := range rs {
			if r.Skipped {
				skipped++
			} else {
				committed[r.BatchID]++
			}
		}
	}
	for b := range int64(batches) {
		if committed[b] != 1 {
			t.Errorf("batch %d committed by %d processes, want exactly 1", b, committed[b])
		}
	}
	commits := readCommits(t, url)
	txns := checkContiguous(t, commits)
	for b := range batches {
		if n := txns[fmt.Sprintf("shared-query@%d", b)]; n != 1 {
			t.Errorf("txn shared-query@%d in %d commits, want 1", b, n)
		}
	}
	want := map[string]int{}
	for b := range int64(batches) {
		for s := range int64(rows) {
			want[writerKey("shared-query", b, s)] = 1
		}
	}
	compareKeys(t, writerTableKeys(t, url), want)
	t.Logf("%d batches: %d commits, %d skips by the other process", batches, len(commits)-1, skipped)
}
