package txlog

import (
	"fmt"
	"net/url"
	"path"
	"strings"
)

// Paths in add/remove/cdc actions are URIs (RFC 2396, PROTOCOL.md "Add File
// and Remove File"): relative to the table root, or absolute. They must be
// decoded to get the file's name: Spark writes a file "a b/c%3A.parquet" as
// "a%20b/c%253A.parquet".

// EncodePath encodes a storage key relative to the table root the way Spark
// writes it (java.net.URI path quoting: every byte outside RFC 2396's
// unreserved and path characters is %XX-encoded; "/" is kept).
func EncodePath(key string) string {
	var b strings.Builder
	for i := 0; i < len(key); i++ {
		c := key[i]
		if shouldKeep(c) {
			b.WriteByte(c)
			continue
		}
		fmt.Fprintf(&b, "%%%02X", c)
	}
	return b.String()
}

// shouldKeep reports the bytes java.net.URI leaves unquoted in a path:
// alphanumerics, the marks -_.!~*'() and the path punctuation /@:&=+$,;
func shouldKeep(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("-_.!~*'()/@:&=+$,;", c) >= 0
}

// tableRoot is the parsed URL of a table root, used to make absolute action
// paths relative.
type tableRoot struct {
	scheme string
	host   string
	path   string // cleaned, without trailing slash
}

func parseTableRoot(rootURL string) tableRoot {
	u, err := url.Parse(rootURL)
	if err != nil {
		return tableRoot{}
	}
	p := path.Clean("/" + u.Path)
	return tableRoot{scheme: normScheme(u.Scheme), host: u.Host, path: strings.TrimSuffix(p, "/")}
}

func normScheme(s string) string {
	s = strings.ToLower(s)
	switch s {
	case "s3a", "s3n":
		return "s3"
	}
	return s
}

// ResolvePath decodes an action path to a storage key relative to the table
// root at rootURL. Absolute URIs inside the root are made relative; any path
// outside the root (absolute elsewhere, or ".." escaping it) is
// ErrPathOutsideTable.
func ResolvePath(rootURL, raw string) (string, error) {
	return resolvePath(parseTableRoot(rootURL), raw)
}

func resolvePath(root tableRoot, raw string) (string, error) {
	if raw == "" {
		return "", fmt.Errorf("%w: empty path", ErrPathOutsideTable)
	}
	if isAbsoluteURI(raw) {
		u, err := url.Parse(raw)
		if err != nil {
			return "", fmt.Errorf("decode path %q: %w", raw, err)
		}
		if normScheme(u.Scheme) != root.scheme || u.Host != root.host {
			return "", fmt.Errorf("%w: %q is not under %s://%s%s", ErrPathOutsideTable, raw, root.scheme, root.host, root.path)
		}
		p := path.Clean("/" + u.Path)
		rel, ok := strings.CutPrefix(p, root.path+"/")
		if !ok || rel == "" {
			return "", fmt.Errorf("%w: %q is not under %s", ErrPathOutsideTable, raw, root.path)
		}
		return rel, nil
	}
	if plainRelative(raw) {
		return raw, nil // what unescaping and cleaning would give
	}
	dec, err := url.PathUnescape(raw)
	if err != nil {
		return "", fmt.Errorf("decode path %q: %w", raw, err)
	}
	if strings.HasPrefix(dec, "/") {
		// a scheme-less absolute path: inside the root only for file stores.
		if root.scheme != "file" {
			return "", fmt.Errorf("%w: %q", ErrPathOutsideTable, raw)
		}
		p := path.Clean(dec)
		rel, ok := strings.CutPrefix(p, root.path+"/")
		if !ok || rel == "" {
			return "", fmt.Errorf("%w: %q is not under %s", ErrPathOutsideTable, raw, root.path)
		}
		return rel, nil
	}
	p := path.Clean(dec)
	if p == "." || p == ".." || strings.HasPrefix(p, "../") {
		return "", fmt.Errorf("%w: %q escapes the table root", ErrPathOutsideTable, raw)
	}
	return p, nil
}

// plainRelative reports a relative path that unescaping and path.Clean
// leave as it is: no '%', no leading or trailing '/', no empty, "." or
// ".." segment (the paths writers give their data files; one scan instead
// of url.PathUnescape and path.Clean for each of a checkpoint's adds).
func plainRelative(raw string) bool {
	if raw == "" || raw[0] == '/' || raw[len(raw)-1] == '/' {
		return false
	}
	seg := 0
	for i := 0; i <= len(raw); i++ {
		if i < len(raw) && raw[i] != '/' {
			if raw[i] == '%' {
				return false
			}
			continue
		}
		if s := raw[seg:i]; s == "" || s == "." || s == ".." {
			return false
		}
		seg = i + 1
	}
	return true
}

// isAbsoluteURI reports whether raw starts with a URI scheme ("s3:", "file:").
func isAbsoluteURI(raw string) bool {
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		switch {
		case c == ':':
			return i > 1 // a single letter is a Windows drive, not a scheme
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z':
		case i > 0 && ('0' <= c && c <= '9' || c == '+' || c == '-' || c == '.'):
		default:
			return false
		}
	}
	return false
}
