// Package corpus finds the shared interop corpus for tests: the tables that
// Spark, Databricks and delta-rs wrote (testdata: dat/, delta-rs/, spark/)
// and the large data files (data: flights-3m.parquet, ...). Both live
// outside the repository, in ../shared next to its root, so a clean checkout
// has neither: a test that needs them skips with a message saying where they
// were looked for, and fails instead when LAKESINK_REQUIRE_CORPUS=1 (CI).
//
// The places looked at, in order:
//
//   - $LAKESINK_SHARED_TESTDATA (testdata) or $LAKESINK_SHARED_DATA (data);
//   - <repository root>/../shared/<kind>, the repository root being the
//     nearest directory above the working directory whose go.mod declares
//     module github.com/lakesink/lakesink;
//   - for a git worktree (.git is a file naming the main repository's
//     .git/worktrees/NAME), <main checkout>/../shared/<kind>.
package corpus
