package storage

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"
)

// Options configure an Opener. The zero value is not valid; start from
// DefaultOptions.
type Options struct {
	// S3ConflictRetries bounds how often a PutIfAbsent on S3 is retried after
	// a 409 ConditionalRequestConflict (another conditional write to the
	// same key was in flight). Default 8.
	S3ConflictRetries int
	// S3UnknownRetries bounds how often a PutIfAbsent on S3 is re-sent after
	// an ambiguous failure (5xx, timeout, connection reset). A re-send that
	// succeeds proves our write; a re-send answered with 412 leaves the
	// outcome unknown (ErrCommitStateUnknown). Default 2.
	S3UnknownRetries int
	// S3RetryBackoff is the first back-off between those retries; it
	// doubles each time. Default 50ms.
	S3RetryBackoff time.Duration
	// LocalSkipFsync skips every fsync on local disk. Writes stay atomic
	// (temp file + rename/link) and PutIfAbsent stays exclusive, but an
	// acknowledged write may be lost on power failure or kernel crash. For
	// tests only (an fsync costs milliseconds). Default false.
	LocalSkipFsync bool
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options {
	return Options{S3ConflictRetries: 8, S3UnknownRetries: 2, S3RetryBackoff: 50 * time.Millisecond}
}

// Validate lists every violation; the error wraps ErrInvalidOptions.
func (o Options) Validate() error {
	var errs []error
	if o.S3ConflictRetries < 0 {
		errs = append(errs, fmt.Errorf("%w: S3ConflictRetries %d < 0", ErrInvalidOptions, o.S3ConflictRetries))
	}
	if o.S3UnknownRetries < 0 {
		errs = append(errs, fmt.Errorf("%w: S3UnknownRetries %d < 0", ErrInvalidOptions, o.S3UnknownRetries))
	}
	if o.S3RetryBackoff < 0 {
		errs = append(errs, fmt.Errorf("%w: S3RetryBackoff %v < 0", ErrInvalidOptions, o.S3RetryBackoff))
	}
	return errors.Join(errs...)
}

// Opener opens stores from URLs. It owns the registry of in-memory buckets:
// two Open calls with the same "mem://name" on one Opener share the objects.
// An Opener is safe for concurrent use.
type Opener struct {
	opts Options
	mem  memRegistry
}

// NewOpener returns an Opener with a copy of opts.
func NewOpener(opts Options) (*Opener, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	return &Opener{opts: opts}, nil
}

// defaultOpener serves the package-level Open. It is package state on
// purpose, and the only such state: "mem://name" must name the same bucket
// for every caller in the process (the CLI and tests open a URL in one place
// and use it in another). Code that wants isolation uses its own Opener.
var defaultOpener = &Opener{opts: DefaultOptions()}

// Open opens a store with the process-wide default Opener; see Opener.Open.
func Open(ctx context.Context, rawURL string) (Store, error) {
	return defaultOpener.Open(ctx, rawURL)
}

// Open opens the store at rawURL:
//
//   - a plain path ("tables/t1", "/data/t1") or "file:///abs/path": a local
//     directory. Relative paths are made absolute. The directory need not
//     exist: reads find nothing until the first write creates it.
//   - "mem://name[/dir]": an in-memory bucket shared by every store this
//     Opener opens with the same name.
//   - "s3://bucket[/prefix]?region=..&endpoint=http://host:port&use_path_style=true":
//     S3 or an S3-compatible server. Credentials come from the environment
//     (AWS_ACCESS_KEY_ID, profiles, ...), never from the URL.
//
// Errors wrap ErrUnsupportedURL for a URL it cannot serve.
func (o *Opener) Open(ctx context.Context, rawURL string) (Store, error) {
	if rawURL == "" {
		return nil, fmt.Errorf("%w: empty URL", ErrUnsupportedURL)
	}
	if !strings.Contains(rawURL, "://") {
		return o.openLocal(rawURL)
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		// url.Error quotes the URL; it may hold credentials, so do not echo it.
		return nil, fmt.Errorf("%w: cannot parse URL", ErrUnsupportedURL)
	}
	if u.User != nil {
		return nil, fmt.Errorf("%w: %s://%s: credentials must not be part of the URL", ErrUnsupportedURL, u.Scheme, u.Host)
	}
	if u.Fragment != "" || strings.HasSuffix(rawURL, "#") {
		// url.Parse drops everything from '#': "file:///data/t#1" would
		// silently open /data/t, another table.
		return nil, fmt.Errorf("%w: %s URL with a '#' (a fragment); write it as %%23, or give a plain path", ErrUnsupportedURL, u.Scheme)
	}
	switch u.Scheme {
	case "file":
		if u.Host != "" && u.Host != "localhost" {
			return nil, fmt.Errorf("%w: file URL with host %q (want file:///abs/path)", ErrUnsupportedURL, u.Host)
		}
		if u.RawQuery != "" {
			return nil, fmt.Errorf("%w: file URL with a query", ErrUnsupportedURL)
		}
		if !strings.HasPrefix(u.Path, "/") {
			return nil, fmt.Errorf("%w: file URL path %q is not absolute", ErrUnsupportedURL, u.Path)
		}
		return o.openLocal(u.Path)
	case "mem":
		if u.RawQuery != "" {
			return nil, fmt.Errorf("%w: mem URL with a query", ErrUnsupportedURL)
		}
		s := newStore(&memBackend{name: u.Host, b: o.mem.get(u.Host)})
		return subRoot(s, u.Path)
	case "s3":
		return o.openS3(ctx, u)
	default:
		return nil, fmt.Errorf("%w: scheme %q", ErrUnsupportedURL, u.Scheme)
	}
}

func (o *Opener) openLocal(p string) (Store, error) {
	abs, err := filepath.Abs(p)
	if err != nil {
		return nil, fmt.Errorf("%w: local path %q: %w", ErrUnsupportedURL, p, err)
	}
	// A root that is a symbolic link (to a source folder, say) is followed:
	// listings walk the directory it points to.
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	return newStore(newLocalBackend(filepath.Clean(abs), o.opts.LocalSkipFsync)), nil
}

// subRoot roots s at the URL path p ("", "/", "/a/b").
func subRoot(s *store, p string) (Store, error) {
	p = strings.Trim(p, "/")
	if p == "" {
		return s, nil
	}
	if err := ValidatePath(p); err != nil {
		return nil, fmt.Errorf("%w: root %q: %w", ErrUnsupportedURL, p, err)
	}
	s.root = p + "/"
	return s, nil
}
