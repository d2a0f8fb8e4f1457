package s3test

import "errors"

var (
	// ErrNotInstalled: the versitygw binary was not found.
	ErrNotInstalled = errors.New("s3test: versitygw not installed (run scripts/install-s3-server.sh)")
	// ErrNoConditionalWrites: the server overwrote an object despite
	// If-None-Match: *; it cannot be trusted for commit tests.
	ErrNoConditionalWrites = errors.New("s3test: server does not honour If-None-Match: *")
	// ErrStart: the server process did not come up.
	ErrStart = errors.New("s3test: server did not start")
)
