package tests

import (
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/s3test"
)

// TestS3KillDashNineIngestIsExactlyOnce is the kill -9 ingest test of
// kill_test.go with the Delta table and the stream checkpoint on the S3
// server: random SIGKILLs while streaming the 20,000 flight rows, then every
// row exactly once, both recovery paths exercised. LAKESINK_S3_KILL_TRIALS
// sets the minimum number of kills (default 2, and more until both recovery
// paths have been seen; `make soak` runs 20).
func TestS3KillDashNineIngestIsExactlyOnce(t *testing.T) {
	srv := s3test.Start(t)
	killTest(t, "--table", srv.URL("kill/table/out"), srv.URL("kill/table/checkpoint"), envInt("LAKESINK_S3_KILL_TRIALS", 2))
}

// TestS3KillDashNineFileSinkIsExactlyOnce: the same with Spark's file sink
// on S3, read back through _spark_metadata.
func TestS3KillDashNineFileSinkIsExactlyOnce(t *testing.T) {
	srv := s3test.Start(t)
	killTest(t, "--file-sink", srv.URL("kill/filesink/out"), srv.URL("kill/filesink/checkpoint"), envInt("LAKESINK_S3_KILL_TRIALS", 2))
}
