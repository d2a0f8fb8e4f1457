package storage

import (
	"errors"
	"fmt"
	"os"
	"strings"
)

// ValidatePath reports whether p is a valid object key relative to a store
// root: non-empty, slash-separated, not absolute, no empty, "." or ".."
// element, no backslash, no control character and no trailing slash.
// The error wraps ErrInvalidPath.
func ValidatePath(p string) error {
	if reason := pathProblem(p, false); reason != nil {
		return fmt.Errorf("%w: %w", ErrInvalidPath, reason)
	}
	return nil
}

// pathProblem says what is wrong with a key (or, with isPrefix, a List
// prefix), without the ErrInvalidPath class. A prefix may be "" and its last
// element is a partial name: it may be empty ("_delta_log/"), "." or "..".
func pathProblem(p string, isPrefix bool) error {
	if p == "" {
		if isPrefix {
			return nil
		}
		return errors.New("empty path")
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%q is absolute", p)
	}
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			return fmt.Errorf("%q contains a backslash", p)
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%q contains a control character", p)
		}
	}
	elems := strings.Split(p, "/")
	for i, e := range elems {
		partial := isPrefix && i == len(elems)-1
		switch e {
		case "":
			if !partial {
				return fmt.Errorf("%q has an empty element", p)
			}
		case ".", "..":
			if !partial {
				return fmt.Errorf("%q has a %q element", p, e)
			}
		}
	}
	return nil
}

// CheckLocalDir refuses a local location (a plain path or a file:// URL)
// that does not exist or is not a directory, so that a typo does not read
// as an empty folder. Object-store prefixes (s3://, mem://, ...) cannot be
// told apart from empty ones and are not checked. The error names url; a
// missing directory wraps the *fs.PathError (errors.Is(err, fs.ErrNotExist)).
func CheckLocalDir(url string) error {
	if strings.Contains(url, "://") && !strings.HasPrefix(url, "file://") {
		return nil
	}
	p := strings.TrimPrefix(url, "file://")
	fi, err := os.Stat(p)
	if err != nil {
		return fmt.Errorf("directory %s: %w", url, err)
	}
	if !fi.IsDir() {
		return fmt.Errorf("%s is not a directory (give a folder; globs are not supported)", url)
	}
	return nil
}
