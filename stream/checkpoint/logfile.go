package checkpoint

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
)

// splitLines splits a log file into lines. A trailing newline is optional
// (Spark writes none; hand-made files often have one) and "\r\n" is accepted.
func splitLines(data []byte) []string {
	data = bytes.TrimSuffix(data, []byte("\n"))
	lines := strings.Split(string(data), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSuffix(l, "\r")
	}
	return lines
}

// parseVersion checks a "v<N>" version line against the highest supported
// version, as Spark's MetadataVersionUtil.validateVersion does.
func parseVersion(line string, maxSupported int) error {
	line = strings.TrimSpace(line)
	if len(line) < 2 || line[0] != 'v' {
		return fmt.Errorf("malformed version line %q (want v%d)", line, maxSupported)
	}
	v, err := strconv.Atoi(line[1:])
	if err != nil || v <= 0 {
		return fmt.Errorf("malformed version line %q (want v%d)", line, maxSupported)
	}
	if v > maxSupported {
		return fmt.Errorf("%w: %q (max supported v%d); the checkpoint was written by a newer version", ErrUnsupportedVersion, line, maxSupported)
	}
	return nil
}

// batchIDFromName parses a batch file name: "N" or "N.compact". ok is false
// for anything else (temp files, Spark's ".N.crc" files, directories).
func batchIDFromName(name string) (id int64, compact bool, ok bool) {
	base, compact := strings.CutSuffix(name, compactSuffix)
	if base == "" || (len(base) > 1 && base[0] == '0') {
		return 0, false, false
	}
	for _, c := range base {
		if c < '0' || c > '9' {
			return 0, false, false
		}
	}
	id, err := strconv.ParseInt(base, 10, 64)
	if err != nil {
		return 0, false, false
	}
	return id, compact, true
}
