//go:build !linux

package s3test

import "os/exec"

// dieWithParent: only Linux has a parent-death signal; elsewhere a server
// outlives a test binary that dies without running its cleanups.
func dieWithParent(*exec.Cmd) {}
