package storage

import (
	"errors"
	"fmt"
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
