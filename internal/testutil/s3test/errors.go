package s3test

import "errors"

var (
	// ErrNotInstalled: the versitygw binary was not found.
	ErrNotInstalled = errors.New("versitygw not installed (run scripts/install-s3-server.sh)")
	// ErrNoConditionalWrites: the server overwrote an object despite
	// If-None-Match: *; it cannot be trusted for commit tests.
	ErrNoConditionalWrites = errors.New("server does not honour If-None-Match: *")
	// ErrStart: the server process did not come up.
	ErrStart = errors.New("server did not start")
)
