package benchproc

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Why a launcher: os/exec starts a child with clone(CLONE_VM|CLONE_VFORK),
// and on execve Linux records the RSS of the memory the child shared until
// then (the parent's) as the child's ru_maxrss high-water mark
// (setmax_mm_hiwater_rss in exec_mmap). A benchmark process that holds a
// 3M-row table would make every child's peak RSS at least its own. So Run
// starts the measured command from a launcher: this test binary re-executed
// with launchEnv set, caught by this package's init before any test setup,
// whose small RSS (reported as Figures.RSSFloor) is the only floor; it
// waits for the command and writes the command's own figures to a file.

// launchEnv carries the launch (a JSON launchSpec) to the launcher.
const launchEnv = "LAKESINK_BENCH_LAUNCH"

// launchSpec is the command a launcher runs and where it reports.
type launchSpec struct {
	Path string   `json:"path"`
	Args []string `json:"args"`
	Out  string   `json:"out"`
}

func init() {
	spec := os.Getenv(launchEnv)
	if spec == "" {
		return
	}
	os.Exit(launch(spec))
}

// launch runs the command of spec with this process's standard files,
// environment (launchEnv removed) and directory, writes "wall cpu maxrss
// floor" (nanoseconds, nanoseconds, bytes, bytes) to spec.Out, and returns
// the command's exit status.
func launch(spec string) int {
	var s launchSpec
	if err := json.Unmarshal([]byte(spec), &s); err != nil {
		fmt.Fprintln(os.Stderr, "benchproc launcher:", err)
		return 1
	}
	os.Unsetenv(launchEnv)
	cmd := exec.Command(s.Path)
	cmd.Args = s.Args
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	floor := vmRSS()
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if cmd.ProcessState == nil {
		fmt.Fprintln(os.Stderr, "benchproc launcher:", err)
		return 1
	}
	ru, _ := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	var maxRSS int64
	if ru != nil {
		maxRSS = ru.Maxrss * 1024 // Linux: KiB
	}
	cpu := cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
	if werr := os.WriteFile(s.Out, fmt.Appendf(nil, "%d %d %d %d\n", int64(wall), int64(cpu), maxRSS, floor), 0o644); werr != nil {
		fmt.Fprintln(os.Stderr, "benchproc launcher:", werr)
		return 1
	}
	if code := cmd.ProcessState.ExitCode(); code >= 0 {
		return code
	}
	return 1
}

// vmRSS is this process's resident set size now (VmRSS of
// /proc/self/status), in bytes; 0 where there is none.
func vmRSS() int64 {
	f, err := os.Open("/proc/self/status")
	if err != nil {
		return 0
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "VmRSS:"); ok {
			kb, _ := strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(v), "kB")), 10, 64)
			return kb * 1024
		}
	}
	return 0
}

// launcherCmd is cmd started from a launcher that reports to out.
func launcherCmd(cmd *exec.Cmd, out string) (*exec.Cmd, error) {
	spec, err := json.Marshal(launchSpec{Path: cmd.Path, Args: cmd.Args, Out: out})
	if err != nil {
		return nil, err
	}
	l := exec.Command(os.Args[0], "-benchproc.launcher-not-linked")
	env := cmd.Env
	if env == nil {
		env = os.Environ()
	}
	l.Env = append(append([]string{}, env...), launchEnv+"="+string(spec))
	l.Dir, l.Stdin, l.Stdout, l.Stderr = cmd.Dir, cmd.Stdin, cmd.Stdout, cmd.Stderr
	return l, nil
}
