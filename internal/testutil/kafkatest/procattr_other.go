//go:build !linux

package kafkatest

import "os/exec"

// procAttr: only Linux has a parent-death signal; elsewhere a broker
// outlives a test binary that dies without running its cleanups.
func procAttr(*exec.Cmd) {}

// killGroup kills the JVM itself (no process group elsewhere).
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = cmd.Process.Kill()
	}
}
