package tests

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// lakesinkBin is the CLI the tests run: $LAKESINK_BIN when set (`make
// test` builds bin/lakesink once and passes it, so the CLI is not linked
// again for this package), else a build for this test binary.
var lakesinkBin string

// binEnv names a prebuilt CLI to test instead of building one.
const binEnv = "LAKESINK_BIN"

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "lakesink-e2e-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	if bin := os.Getenv(binEnv); bin != "" {
		abs, err := filepath.Abs(bin)
		if err == nil {
			_, err = os.Stat(abs)
		}
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s=%s: %v\n", binEnv, bin, err)
			os.Exit(1)
		}
		lakesinkBin = abs
	} else {
		lakesinkBin = filepath.Join(dir, "lakesink")
		build := exec.Command("go", "build", "-o", lakesinkBin, "../cmd/lakesink")
		build.Stdout, build.Stderr = os.Stderr, os.Stderr
		if err := build.Run(); err != nil {
			fmt.Fprintln(os.Stderr, "build lakesink:", err)
			os.Exit(1)
		}
	}
	code := m.Run()
	stopSharedBroker()
	os.RemoveAll(dir)
	os.Exit(code)
}
