package engines

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/s3test"
)

// TestGeneratedCorpusS3 (issue 17): a corpus case on the local S3 server,
// written by delta-rs committing with S3 conditional put (storage option
// aws_conditional_put=etag: each commit is a PutObject with If-None-Match,
// no locking provider; delta-rs docs "CloudFlare R2 & Minio"), read by
// lakesink from its s3:// URL and checked against delta-rs's answers as
// TestGeneratedCorpus checks the local cases. A proxy in front of the server
// counts the conditional PUTs of commit files, so the case cannot pass with
// delta-rs committing some other way.
func TestGeneratedCorpusS3(t *testing.T) {
	needEngines(t, "delta-rs", "generated: rs_s3_conditional_put (local S3 server, conditional-put commits)")
	base := s3test.Start(t)
	commitFile := regexp.MustCompile(`/_delta_log/([0-9]{20})\.json$`)
	var mu sync.Mutex
	conditional, plain := map[int64]int{}, map[int64]int{}
	s3 := base.Proxy(t, func(r *http.Request) s3test.Fault {
		m := commitFile.FindStringSubmatch(r.URL.Path)
		if m == nil || r.Method != http.MethodPut {
			return s3test.Pass
		}
		v, _ := strconv.ParseInt(m[1], 10, 64)
		mu.Lock()
		if s3test.IsConditionalPut(r) {
			conditional[v]++
		} else {
			plain[v]++
		}
		mu.Unlock()
		return s3test.Pass
	})
	const name = "rs_s3_conditional_put"
	var cases []corpusCase
	srv.must(t, map[string]any{"op": "corpus", "root": "s3://" + s3.Bucket + "/corpus", "cases": []string{name},
		"storage_options": map[string]string{
			"AWS_ENDPOINT_URL":      s3.Endpoint,
			"AWS_REGION":            s3test.Region,
			"AWS_ACCESS_KEY_ID":     s3test.AccessKeyID,
			"AWS_SECRET_ACCESS_KEY": s3test.SecretAccessKey,
			"AWS_ALLOW_HTTP":        "true",
			"AWS_FORCE_PATH_STYLE":  "true",
			"aws_conditional_put":   "etag",
		}}, &cases)
	if len(cases) != 1 || cases[0].Case != name {
		t.Fatalf("py/corpus.py answered %d cases, want %s", len(cases), name)
	}
	c := cases[0]
	// lakesink reads the table from its own form of the URL (the
	// server's endpoint and path style in the query).
	c.Path = s3.URL("corpus/" + name)
	ck := &corpusCheck{c: c}
	ck.run()
	mu.Lock()
	for v := int64(0); c.Error == "" && v <= c.Latest; v++ {
		if conditional[v] != 1 || plain[v] != 0 {
			ck.errorf("commit %d: %d conditional PUTs (If-None-Match) and %d plain PUTs of _delta_log/%020d.json, want 1 and 0",
				v, conditional[v], plain[v], v)
		}
	}
	mu.Unlock()
	var vs []string
	for _, v := range c.Versions {
		vs = append(vs, strconv.FormatInt(v.Version, 10))
	}
	corpusResults.mu.Lock()
	corpusResults.rows = append(corpusResults.rows, corpusResultRow{c.Case, c.Engine + ", local S3 server (versitygw " + s3test.Version + ")",
		strings.Join(vs, ", "), ck.result()})
	corpusResults.mu.Unlock()
	if len(ck.errs) > 0 {
		t.Errorf("%s (%s):\n  %s", c.Case, c.Description, strings.Join(ck.errs, "\n  "))
	}
}
