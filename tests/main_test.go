package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// lakesinkBin is the CLI built for this test binary.
var lakesinkBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lakesink-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	lakesinkBin = filepath.Join(dir, "lakesink")
	build := exec.Command("go", "build", "-o", lakesinkBin, "../cmd/lakesink")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "build lakesink:", err)
		os.Exit(1)
	}
	code := m.Run()
	stopSharedBroker()
	os.RemoveAll(dir)
	os.Exit(code)
}
