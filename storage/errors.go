package storage

import (
	"errors"
	"strings"
)

var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("not found")
	// ErrAlreadyExists: PutIfAbsent lost; an object is already at the path.
	ErrAlreadyExists = errors.New("already exists")
	// ErrInvalidPath: the path is absolute, contains "." or "..", or escapes the root.
	ErrInvalidPath = errors.New("invalid path")
	// ErrCommitStateUnknown: a PutIfAbsent whose outcome is not known
	// (timeout, 5xx after the request was sent). Never retry blindly: read back.
	ErrCommitStateUnknown = errors.New("commit state unknown")
	// ErrUnsupportedURL: the URL scheme or form is not supported.
	ErrUnsupportedURL = errors.New("unsupported URL")
	// ErrConditionalWriteUnsupported: the object store does not honour
	// If-None-Match: * and so cannot serve as a commit store.
	ErrConditionalWriteUnsupported = errors.New("conditional writes not supported by the store")
	// ErrClosed: the store (or a writer) was used after Close.
	ErrClosed = errors.New("closed")
	// ErrInvalidOptions: Options.Validate found a violation.
	ErrInvalidOptions = errors.New("invalid options")
	// ErrNoCredentials: an s3:// store found no AWS credentials in the SDK's
	// default chain (returned as a *NoCredentialsError).
	ErrNoCredentials = errors.New("no AWS credentials found")
)

// NoCredentialsError is the error of an S3 request when the AWS SDK's
// default credential chain found nothing, and no credential source was
// configured at all (no AWS_ACCESS_KEY_ID, AWS_PROFILE, profile= URL
// parameter, shared config or credentials file, web identity or container
// credentials): its message says which variables or profile to set instead
// of the SDK's account of every provider it tried. It matches
// ErrNoCredentials; Err is the SDK's error.
type NoCredentialsError struct {
	Bucket string // the S3 bucket opened
	Err    error  // the AWS SDK's error
}

// Error implements error.
func (e *NoCredentialsError) Error() string {
	return "no AWS credentials found for s3://" + e.Bucket + ": set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY " +
		"(and AWS_SESSION_TOKEN for temporary keys), or AWS_PROFILE (or profile= in the URL) naming a profile of " +
		"~/.aws/credentials or ~/.aws/config (AWS_SHARED_CREDENTIALS_FILE, AWS_CONFIG_FILE); off EC2 also set " +
		"AWS_EC2_METADATA_DISABLED=true so that the instance metadata service is not asked"
}

// Unwrap returns the underlying error, for errors.Is and errors.As.
func (e *NoCredentialsError) Unwrap() []error { return []error{ErrNoCredentials, e.Err} }

// PathError records a failed operation on one path. It matches its sentinel
// (ErrNotFound, ErrAlreadyExists, ...) and, when present, the underlying
// driver or context error through errors.Is / errors.As.
//
// Its message reads "<op> <path>: <reason>", e.g.
// "read _delta_log/00000000000000000003.json: not found".
// Path is relative to the store's root. Messages never contain credentials.
type PathError struct {
	Op   string // "read", "put", "put-if-absent", "list", "stat", "delete", "write", ...
	Path string // key relative to the store root
	Err  error  // the class: one of the sentinels, a context error, or the cause itself
	// Cause is the driver error behind Err (nil if Err is the whole story).
	Cause error
}

// Error implements error.
func (e *PathError) Error() string {
	var b strings.Builder
	b.WriteString(e.Op)
	if e.Path != "" {
		b.WriteString(" ")
		b.WriteString(e.Path)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	// The cause of a plain not-found or already-exists is noise; for the
	// others (commit state unknown, I/O errors) it is the explanation.
	if e.Cause != nil && (e.Err != ErrNotFound && e.Err != ErrAlreadyExists || e.Cause == errNoSuchBucket) { //nolint:errorlint // identity on our own sentinels
		b.WriteString(": ")
		b.WriteString(e.Cause.Error())
	}
	return b.String()
}

// Unwrap returns the class and the cause, so errors.Is and errors.As see both.
func (e *PathError) Unwrap() []error {
	if e.Cause == nil {
		return []error{e.Err}
	}
	return []error{e.Err, e.Cause}
}

// ErrCorrupt marks every kind of corrupt or unreadable input, whatever
// package found it: a commit, checkpoint or _last_checkpoint that cannot be
// parsed, a data file that is not the Parquet the log describes, a
// deletion vector, a _spark_metadata or stream checkpoint file, a path in a
// log that escapes its root, or a table or log in a format version or
// feature lakesink cannot read. errors.Is(err, storage.ErrCorrupt) finds it
// under each package's own sentinel (txlog.ErrCorruptLog, ...), as pebble's
// base.ErrCorruption + MarkCorruptionError do. The CLI exits 4 on it.
var ErrCorrupt = errors.New("corrupt or unreadable data")

// MarkCorrupt returns err marked with ErrCorrupt: its message is err's and
// errors.Is finds both err and ErrCorrupt. MarkCorrupt(nil) is nil.
func MarkCorrupt(err error) error {
	if err == nil {
		return nil
	}
	return &corruptError{err: err}
}

type corruptError struct{ err error }

func (e *corruptError) Error() string   { return e.err.Error() }
func (e *corruptError) Unwrap() []error { return []error{e.err, ErrCorrupt} }
