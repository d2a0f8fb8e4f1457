//go:build linux

package kafkatest

import (
	"os/exec"
	"syscall"
)

// procAttr puts the JVM in a process group of its own (so stop can kill it
// with everything it spawned) and makes the kernel kill it if the test
// binary dies without running its cleanups (a test timeout, a SIGKILL), so
// no broker is left behind on a CI machine.
func procAttr(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
}

// killGroup kills the process group of cmd's process.
func killGroup(cmd *exec.Cmd) {
	if cmd.Process != nil {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
	}
}
