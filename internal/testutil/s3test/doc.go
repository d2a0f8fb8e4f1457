// Package s3test starts a real S3-compatible server (versitygw, Apache-2.0,
// its posix backend over a temporary folder) on 127.0.0.1 for tests, so that
// every S3 code path of lakesink runs against a real S3 API with no cloud
// credentials.
//
// Lifecycle:
//
//	srv := s3test.Start(t)             // skips (fails under CI=true) without versitygw
//	url := srv.URL("tables/events")    // s3://lake/tables/events?region=...&endpoint=...&use_path_style=true
//	st, err := storage.Open(ctx, url)  // or table.Open, sink.NewDelta, the CLI ...
//	// the server stops when the test ends
//
// Before a Server is handed out, Start checks that the server refuses an
// overwrite with If-None-Match: * on PutObject and on
// CompleteMultipartUpload (412 Precondition Failed): a server that silently
// overwrote would make every exactly-once test pass for the wrong reason.
//
// Start sets the standard AWS environment variables (fixed test
// credentials, AWS_REGION, AWS_EC2_METADATA_DISABLED=true, config and
// credential files pointing at the null device) with t.Setenv, so the SDK's
// default credential chain inside the code under test, and any child process
// the test starts, talk to this server and never probe a cloud metadata
// address. Because of t.Setenv, tests using Start cannot call t.Parallel.
//
// Install the server once with scripts/install-s3-server.sh (a `go install`
// of a pinned versitygw). Without it Start skips the test, except when the
// environment variable CI is "true" or LAKESINK_REQUIRE_S3 is set: then it
// fails, so CI never passes by silently skipping S3.
//
// Server.Proxy puts a fault-injecting HTTP proxy in front of the server,
// e.g. to have a conditional PUT stored and then answered with a 503.
//
// Concurrency: a Server's methods may be called from any goroutine; the
// server itself serves concurrent requests (and concurrent OS processes).
package s3test
