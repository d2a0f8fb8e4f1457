// Command lakesink is the CLI of lakesink: thin verbs over the library.
//
//	lakesink create URL --schema FILE --partition-by a,b
//	lakesink ingest --source DIR --format json --checkpoint DIR --table URL --trigger available-now
//	lakesink describe URL [--json]
//	lakesink history URL [--json]
//	lakesink scan URL [--where EXPR] [--limit N]
//
// Exit status (stable, for scripts): 0 ok (a skipped batch is ok), 1 error or
// bad usage, 3 commit conflict, 4 corrupt or unsupported table, 130
// interrupted. 2 is left to Go's runtime for panics. The mapping lives in
// exitCode in main.go and nowhere else.
package main
