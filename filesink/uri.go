package filesink

import (
	"fmt"
	"net/url"
	"path"
	"strings"
	"unicode"
	"unicode/utf8"
)

// location is a store root or a log path split into its parts, unescaped.
type location struct {
	scheme string // "file", "s3", "mem", ... ("" for a bare path)
	host   string // bucket or mem name; "" for file
	path   string // absolute ("/a/b") or, for a bare relative path, relative
}

// schemeFamily maps Hadoop's S3 schemes to one family.
func schemeFamily(s string) string {
	switch s {
	case "s3", "s3a", "s3n":
		return "s3"
	}
	return s
}

// parseStoreURL splits storage.Store.URL() ("file:///abs/my%20dir",
// "mem://name/dir", "s3://bucket/prefix?region=.."). A URL that parses is
// taken as escaped; one that does not (a raw path with a stray "%") is split
// as it is.
func parseStoreURL(u string) (location, error) {
	if pu, err := url.Parse(u); err == nil && pu.Scheme != "" && pu.Opaque == "" {
		loc := location{scheme: pu.Scheme, host: pu.Host, path: strings.TrimSuffix(pu.Path, "/")}
		if loc.scheme == "file" && loc.host == "localhost" {
			loc.host = ""
		}
		if !strings.HasPrefix(loc.path, "/") {
			loc.path = "/" + loc.path
		}
		return loc, nil
	}
	scheme, rest, ok := strings.Cut(u, "://")
	if !ok {
		return location{}, fmt.Errorf("store URL %q has no scheme", u)
	}
	if scheme == "s3" {
		rest, _, _ = strings.Cut(rest, "?")
	}
	loc := location{scheme: scheme}
	if scheme == "file" {
		loc.path = rest
	} else {
		host, p, _ := strings.Cut(rest, "/")
		loc.host, loc.path = host, "/"+p
	}
	loc.path = strings.TrimSuffix(loc.path, "/")
	if !strings.HasPrefix(loc.path, "/") {
		loc.path = "/" + loc.path
	}
	return loc, nil
}

// rootURI is the qualified URI of the output directory as Spark writes it in
// log paths: file:///abs/dir, s3a://bucket/prefix (the S3 scheme from
// Options.S3Scheme), mem://name/dir; the path escaped as Java's URI does.
func rootURI(storeURL, s3Scheme string) (string, error) {
	loc, err := parseStoreURL(storeURL)
	if err != nil {
		return "", err
	}
	scheme := loc.scheme
	if scheme == "s3" {
		scheme = s3Scheme
	}
	p := loc.path
	if p == "/" {
		p = ""
	}
	return scheme + "://" + loc.host + escapeURIPath(p), nil
}

// escapeURIPath quotes a path as java.net.URI's multi-argument constructors
// do (Hadoop's Path.toUri().toString(), which Spark writes in the log):
// unreserved (alphanumerics and _-!.~'()*), punct (,;:$&+=), '/' and '@'
// are kept; other ASCII, including '%', becomes %XX; non-ASCII characters are
// kept as they are ("other") unless they are ISO control or space characters,
// which are quoted as their UTF-8 bytes.
func escapeURIPath(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); {
		c := p[i]
		if c < utf8.RuneSelf {
			if isURIPathChar(c) {
				b.WriteByte(c)
			} else {
				fmt.Fprintf(&b, "%%%02X", c)
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(p[i:])
		if r == utf8.RuneError && size == 1 || unicode.IsControl(r) || unicode.Is(unicode.Zs, r) ||
			unicode.Is(unicode.Zl, r) || unicode.Is(unicode.Zp, r) {
			for _, by := range []byte(p[i : i+size]) {
				fmt.Fprintf(&b, "%%%02X", by)
			}
		} else {
			b.WriteString(p[i : i+size])
		}
		i += size
	}
	return b.String()
}

func isURIPathChar(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	}
	return strings.IndexByte("_-!.~'()*,;:$&+=/@", c) >= 0
}

// entryURI is the log path of the data file at key (relative to the root).
func entryURI(root, key string) string {
	return root + "/" + escapeURIPath(key)
}

// parseLogPath splits a log path: a URI (file:/abs, file:///abs,
// s3a://bucket/key, mem://name/key), escaped, or a bare path (/a/b/0 in
// Spark's test logs).
func parseLogPath(p string) (location, error) {
	u, err := url.Parse(p)
	if err != nil {
		return location{}, err
	}
	if u.Opaque != "" {
		return location{}, fmt.Errorf("not a hierarchical URI")
	}
	return location{scheme: u.Scheme, host: u.Host, path: u.Path}, nil
}

// resolveLogPath returns the key (relative to the output directory root) of
// a path named by the log. A path outside the root, on another file system
// or bucket, or escaping with "..", is ErrPathOutsideRoot. A bare absolute
// path is taken to be on the root's file system; a bare relative path is
// relative to the root.
func resolveLogPath(root location, logPath string) (string, error) {
	loc, err := parseLogPath(logPath)
	if err != nil {
		return "", fmt.Errorf("%w: %q cannot be parsed: %w", ErrPathOutsideRoot, logPath, err)
	}
	if loc.scheme != "" && (schemeFamily(loc.scheme) != schemeFamily(root.scheme) || loc.host != root.host) {
		return "", fmt.Errorf("%w: %q is not on %s://%s", ErrPathOutsideRoot, logPath, root.scheme, root.host)
	}
	var rel string
	if strings.HasPrefix(loc.path, "/") {
		prefix := strings.TrimSuffix(root.path, "/") + "/"
		var ok bool
		if rel, ok = strings.CutPrefix(loc.path, prefix); !ok {
			return "", fmt.Errorf("%w: %q is not under %s", ErrPathOutsideRoot, logPath, root.path)
		}
	} else {
		if loc.scheme != "" {
			return "", fmt.Errorf("%w: %q has a relative path", ErrPathOutsideRoot, logPath)
		}
		rel = loc.path
	}
	if rel == "" || path.Clean(rel) != rel || rel == ".." || strings.HasPrefix(rel, "../") {
		return "", fmt.Errorf("%w: %q does not name a file inside %s", ErrPathOutsideRoot, logPath, root.path)
	}
	return rel, nil
}
