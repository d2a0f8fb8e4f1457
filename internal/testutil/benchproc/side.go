package benchproc

import (
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"syscall"
	"time"
)

// sideEnv names the side a re-executed test binary runs (see Side).
const sideEnv = "LAKESINK_BENCH_SIDE"

// missingSide is a flag no test binary defines: Side passes it so that a
// binary in which no Register call matched the side exits with "flag
// provided but not defined" (status 2) instead of running nothing and
// exiting 0.
const missingSide = "-benchproc.side-not-registered"

// Register declares the side name of a benchmark: a function run alone in a
// fresh process of the test binary, started by Side(name, args...). Call it
// from an init function of the test package. In a process started by
// Side(name, ...), Register(name, fn) runs fn with the arguments, before any
// test or TestMain, and exits: status 0 when fn returns nil, else 1 with the
// error on stderr. Elsewhere it does nothing.
func Register(name string, fn func(args []string) error) {
	if os.Getenv(sideEnv) != name {
		return
	}
	i := slices.Index(os.Args, "--")
	if i < 0 {
		fmt.Fprintf(os.Stderr, "side %s: no -- before its arguments\n", name)
		os.Exit(1)
	}
	if err := fn(os.Args[i+1:]); err != nil {
		fmt.Fprintf(os.Stderr, "side %s: %v\n", name, err)
		os.Exit(1)
	}
	os.Exit(0)
}

// workEnv names the file a Side process's Work writes its figures to.
const workEnv = "LAKESINK_BENCH_WORK_FILE"

// Work runs fn, the measured part of a side (what comes before it in the
// side, as building its input in memory, is setup), and records its wall
// and CPU time (getrusage of the process, user+sys) for Run
// (Figures.Work, Figures.WorkCPU). Call it once per side, from the
// function given to Register. Outside a Side process it just runs fn.
func Work(fn func() error) error {
	runtime.GC() // the setup's garbage is not the work's
	cpu0 := cpuTime()
	start := time.Now()
	err := fn()
	wall, cpu := time.Since(start), cpuTime()-cpu0
	if err != nil {
		return err
	}
	if path := os.Getenv(workEnv); path != "" {
		return os.WriteFile(path, fmt.Appendf(nil, "%d %d\n", int64(wall), int64(cpu)), 0o644)
	}
	return nil
}

func cpuTime() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// workFileOf is the work file named in cmd's environment ("" if none).
func workFileOf(cmd *exec.Cmd) string {
	for _, kv := range cmd.Env {
		if v, ok := strings.CutPrefix(kv, workEnv+"="); ok {
			return v
		}
	}
	return ""
}

// Side is a command that re-executes this test binary (os.Args[0]) as the
// side name registered with Register, with args. Set its Stdout to read what
// the side prints; Run measures it.
func Side(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(os.Args[0], append([]string{missingSide, "--"}, args...)...)
	cmd.Env = append(os.Environ(), sideEnv+"="+name)
	if f, err := os.CreateTemp("", "benchproc-work-*"); err == nil {
		f.Close()
		cmd.Env = append(cmd.Env, workEnv+"="+f.Name())
	}
	return cmd
}
