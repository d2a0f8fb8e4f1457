// Package expr is lakesink's predicate language: the --where strings of
// `lakesink scan`, `lakesink files` and `lakesink compact`, and a merge's
// delete predicate (table.MergeOptions.DeleteWhen), with its three
// evaluations. It sits below table so that table's Merge and the reader
// share one parser and one evaluator.
//
// Parse turns a string such as
//
//	country IN ('NL', 'BE') AND ts >= TIMESTAMP '2024-01-01 00:00:00' AND `my col`.x IS NOT NULL
//
// into an Expr (see parse.go for the grammar; errors are *SyntaxError with
// the byte position). Bind resolves it against a table schema into a
// *Predicate, which evaluates:
//
//   - on a row (Predicate.EvalRow, Predicate.Eval): SQL three-valued logic;
//     a row for which the predicate is unknown (null) is dropped;
//   - on a file (Predicate.MayMatch) given a Domain per column: an exact value
//     for partition columns (ParsePartitionValue; PROTOCOL.md, "Partition
//     Value Serialization") or bounds from the add action's statistics
//     (ParseStats, Stats.Domain; PROTOCOL.md, "Per-file Statistics"). It
//     answers "could this file contain a matching row?" conservatively: a
//     file without statistics for a column is never skipped because of it;
//     timestamp maxima are widened by 1 ms (they are millisecond-truncated);
//     string maxima are treated as possibly truncated prefixes; double and
//     float maxima are ignored because NaN is greater than every value in
//     Spark's ordering and Parquet-derived statistics leave it out.
//
// Lifecycle:
//
//	e, err := expr.Parse(where)
//	p, err := expr.Bind(e, schema)
//	if p.MayMatch(domains) { ... read the file ...; if p.EvalRow(row) == expr.True { keep } }
//
// Concurrency: a *Predicate is immutable and safe for concurrent use.
// Nothing in this package keeps global state.
package expr
