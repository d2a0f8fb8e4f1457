package storage

import (
	"fmt"
	"strings"
)

// ValidatePath reports whether p is a valid object key relative to a store
// root: non-empty, slash-separated, not absolute, no empty, "." or ".."
// element, no backslash, no control character and no trailing slash.
// The error wraps ErrInvalidPath.
func ValidatePath(p string) error {
	if p == "" {
		return fmt.Errorf("%w: empty path", ErrInvalidPath)
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: %q is absolute", ErrInvalidPath, p)
	}
	return validateElems(p, false)
}

// validatePrefix checks a List prefix: "" is allowed, and so is a trailing
// slash ("_delta_log/") or a partial last element ("_delta_log/0000").
func validatePrefix(p string) error {
	if p == "" {
		return nil
	}
	if strings.HasPrefix(p, "/") {
		return fmt.Errorf("%w: prefix %q is absolute", ErrInvalidPath, p)
	}
	return validateElems(p, true)
}

func validateElems(p string, allowTrailingSlash bool) error {
	for i := 0; i < len(p); i++ {
		c := p[i]
		if c == '\\' {
			return fmt.Errorf("%w: %q contains a backslash", ErrInvalidPath, p)
		}
		if c < 0x20 || c == 0x7f {
			return fmt.Errorf("%w: %q contains a control character", ErrInvalidPath, p)
		}
	}
	elems := strings.Split(p, "/")
	for i, e := range elems {
		switch e {
		case "":
			if allowTrailingSlash && i == len(elems)-1 {
				continue
			}
			return fmt.Errorf("%w: %q has an empty element", ErrInvalidPath, p)
		case ".", "..":
			if allowTrailingSlash && i == len(elems)-1 {
				continue // a prefix's last element is a partial name (".crc" files)
			}
			return fmt.Errorf("%w: %q has a %q element", ErrInvalidPath, p, e)
		}
	}
	return nil
}
