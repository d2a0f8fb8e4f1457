package tests

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/s3test"
	"github.com/lakesink/lakesink/sink"
)

// TestS3CommitStoredButAnswered503 puts a proxy in front of the S3 server
// that lets a commit's conditional PUT be stored and then answers 503 (what
// an S3 front end under load can do). The SDK's own retry would then get a
// 412 and the writer would believe it lost the race although its commit is
// in place; lakesink must instead recognise its own commit (txnId read back)
// and report the batch committed, once.
func TestS3CommitStoredButAnswered503(t *testing.T) {
	srv := s3test.Start(t)
	for _, tc := range []struct {
		name  string
		fault s3test.Fault
	}{
		{"stored then 503", s3test.StoredThen503},
		{"lost with 503", s3test.LostThen503},
	} {
		t.Run(tc.name, func(t *testing.T) {
			prefix := "faults/" + strings.ReplaceAll(tc.name, " ", "-")
			createWriterTable(t, srv.URL(prefix))
			var mu sync.Mutex
			var faulted []string
			armed := false
			proxy := srv.Proxy(t, func(r *http.Request) s3test.Fault {
				mu.Lock()
				defer mu.Unlock()
				if armed && s3test.IsConditionalPut(r) && strings.HasSuffix(r.URL.Path, "/_delta_log/00000000000000000001.json") && len(faulted) == 0 {
					faulted = append(faulted, r.URL.Path)
					return tc.fault
				}
				return s3test.Pass
			})
			url := proxy.URL(prefix)
			opts := sink.DefaultOptions()
			opts.QueryID = "q"
			d, err := sink.NewDelta(t.Context(), url, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			mu.Lock()
			armed = true
			mu.Unlock()
			res, err := d.AddBatch(t.Context(), 0, writerBatch("q", 0, 5))
			if err != nil {
				t.Fatalf("AddBatch through a %s commit: %v", tc.name, err)
			}
			if res.Skipped || res.Version != 1 {
				t.Errorf("AddBatch = %+v, want committed at version 1", res)
			}
			if len(faulted) != 1 {
				t.Fatalf("faulted requests %q, want the PUT of version 1", faulted)
			}
			// The batch again (a restarted query): skipped, nothing new.
			res, err = d.AddBatch(t.Context(), 0, writerBatch("q", 0, 5))
			if err != nil || !res.Skipped {
				t.Fatalf("re-sent batch 0: %+v, %v; want skipped", res, err)
			}
			commits := readCommits(t, srv.URL(prefix))
			txns := checkContiguous(t, commits)
			if len(commits) != 2 || txns["q@0"] != 1 {
				t.Fatalf("log has %d commits, txn q@0 %d times; want 2 commits, 1", len(commits), txns["q@0"])
			}
			want := map[string]int{}
			for s := range int64(5) {
				want[writerKey("q", 0, s)] = 1
			}
			compareKeys(t, writerTableKeys(t, srv.URL(prefix)), want)
		})
	}
}
