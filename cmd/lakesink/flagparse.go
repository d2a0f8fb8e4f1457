package main

import (
	"errors"
	"fmt"
	"strings"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// byteSizeForms lists what a byte-size flag accepts (txlog.ParseByteSize:
// Spark's JavaUtils byte strings, 1024-based).
const byteSizeForms = "a whole number of bytes with an optional unit b, k, m, g, t or p (or kb/kib, mb/mib, ...: 1024-based), e.g. 134217728, 128m or 1gb"

// parseByteSizeFlag parses the value of a byte-size flag. The error names
// the flag, the value and the accepted forms, nothing else (the library's
// wording names table properties); it keeps compaction.ErrInvalidOptions
// for errors.Is.
func parseByteSizeFlag(flag, value string) (int64, error) {
	n, err := compaction.ParseByteSize(value)
	if err != nil {
		return 0, &hintError{err: err, msg: fmt.Sprintf("--%s %q: not a byte size; want %s", flag, value, byteSizeForms)}
	}
	return n, nil
}

// checkPartitionBy refuses a --partition-by list that names a column twice
// or an empty name, before anything is read or created.
func checkPartitionBy(cols []string) error {
	seen := make(map[string]bool, len(cols))
	for _, c := range cols {
		switch {
		case c == "":
			return fmt.Errorf("--partition-by %s: an empty column name", strings.Join(cols, ","))
		case seen[c]:
			return fmt.Errorf("--partition-by %s: column %q given twice", strings.Join(cols, ","), c)
		}
		seen[c] = true
	}
	return nil
}

// partitionByError words a partition column the schema cannot have
// (*schema.PartitionColumnError, from create or from the first batch of
// ingest) with the flag and the schema's columns, in place of the layers'
// "write to the sink: batch 0: create URL: invalid options: ..."; the error
// is kept for errors.Is and errors.As. Any other error is returned as it is.
func partitionByError(err error) error {
	var pe *schema.PartitionColumnError
	if !errors.As(err, &pe) {
		return err
	}
	var msg string
	switch pe.Problem {
	case schema.PartitionColumnUnknown:
		msg = fmt.Sprintf("--partition-by: unknown column %q; the columns are: %s", pe.Column, strings.Join(pe.Columns, ", "))
	case schema.PartitionColumnNested:
		msg = fmt.Sprintf("--partition-by: column %q has the nested type %s; a partition column holds one primitive value", pe.Column, pe.Type)
	default:
		msg = fmt.Sprintf("--partition-by: every column (%s) would be a partition column; leave at least one data column", strings.Join(pe.Columns, ", "))
	}
	return &hintError{err, msg}
}

// mergeFlagError words a merge option the table or the input cannot have
// (*table.MergeOptionError, from merge or from an update-mode ingest batch)
// with its flag, in place of the layers' "merge into URL at version N:
// invalid options: ..."; the error is kept for errors.Is and errors.As. With
// cdc the delete predicate is the CLI's own (--cdc-format), not a flag's: its
// error is returned as it is, as is any other error.
func mergeFlagError(err error, cdc bool) error {
	var me *table.MergeOptionError
	if !errors.As(err, &me) {
		return err
	}
	flag := map[string]string{"Keys": "--merge-key", "SequenceBy": "--sequence-by", "UpdateColumns": "--update-columns", "DeleteWhen": "--delete-when"}[me.Option]
	var msg string
	switch {
	case flag == "" || me.Option == "DeleteWhen" && cdc:
		return err
	case me.Option == "DeleteWhen":
		msg = fmt.Sprintf("--delete-when %q: %v", me.Column, me.Err)
	case me.Problem == table.MergeColumnNotInTable:
		msg = fmt.Sprintf("%s: unknown column %q; the table's columns are: %s", flag, me.Column, strings.Join(me.Columns, ", "))
	case me.Problem == table.MergeColumnNotInBatch:
		msg = fmt.Sprintf("%s: column %q is not in the input", flag, me.Column)
	default:
		msg = fmt.Sprintf("%s: column %q %s", flag, me.Column, me.Problem)
	}
	return &hintError{err, msg}
}
