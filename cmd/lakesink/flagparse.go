package main

import (
	"fmt"

	"github.com/lakesink/lakesink/compaction"
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
