package storage

import "errors"

var (
	// ErrNotFound: the object does not exist.
	ErrNotFound = errors.New("storage: not found")
	// ErrAlreadyExists: PutIfAbsent lost; an object is already at the path.
	ErrAlreadyExists = errors.New("storage: already exists")
	// ErrInvalidPath: the path is absolute, contains "." or "..", or escapes the root.
	ErrInvalidPath = errors.New("storage: invalid path")
	// ErrCommitStateUnknown: a PutIfAbsent whose outcome is not known
	// (timeout, 5xx after the request was sent). Never retry blindly: read back.
	ErrCommitStateUnknown = errors.New("storage: commit state unknown")
	// ErrUnsupportedURL: the URL scheme or form is not supported.
	ErrUnsupportedURL = errors.New("storage: unsupported URL")
	// ErrConditionalWriteUnsupported: the object store does not honour
	// If-None-Match: * and so cannot serve as a commit store.
	ErrConditionalWriteUnsupported = errors.New("storage: conditional writes not supported by the store")
)
