package benchproc

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Figures is one finished process.
type Figures struct {
	// Wall is the time from start to exit.
	Wall time.Duration
	// CPU is user + system time of the process (and of the children it
	// waited for). Wall and CPU are measured by the launcher, around the
	// process only.
	CPU time.Duration
	// MaxRSS is the peak resident set size in bytes (ru_maxrss; KiB on
	// Linux, converted).
	MaxRSS int64
	// RSSFloor is the launcher's RSS when it started the process, in
	// bytes: Linux counts it in MaxRSS when that is larger (see launch.go).
	RSSFloor int64
	// Work and WorkCPU are the wall and CPU (user+sys) time of the part of
	// a side that it ran in Work, measured inside the process; zero when
	// the process did not call Work (a CLI run, a side without setup).
	Work, WorkCPU time.Duration
}

// MiB is MaxRSS in MiB.
func (f Figures) MiB() float64 { return float64(f.MaxRSS) / (1 << 20) }

// Run runs cmd to completion and measures it; a failure (or a process that
// exits non-zero) fails tb with the command's stderr. A nil cmd.Stdout is
// discarded. Whatever the caller does before Run (building cmd, a fresh
// output directory) is not timed. cmd is started from a small launcher
// process (see launch.go: a child of the benchmark process itself would
// inherit its RSS as a floor), so cmd itself is not run: its Path, Args,
// Env, Dir and standard files are used, and its ProcessState stays nil.
func Run(tb testing.TB, cmd *exec.Cmd) Figures {
	tb.Helper()
	var stderr strings.Builder
	if cmd.Stderr == nil {
		cmd.Stderr = &stderr
	}
	if cmd.Stdout == nil {
		cmd.Stdout = io.Discard
	}
	out, err := os.CreateTemp("", "benchproc-launch-*")
	if err != nil {
		tb.Fatal(err)
	}
	out.Close()
	defer os.Remove(out.Name())
	l, err := launcherCmd(cmd, out.Name())
	if err != nil {
		tb.Fatal(err)
	}
	if err := l.Run(); err != nil {
		tb.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, stderr.String())
	}
	data, err := os.ReadFile(out.Name())
	if err != nil {
		tb.Fatal(err)
	}
	var f Figures
	if _, err := fmt.Sscan(string(data), &f.Wall, &f.CPU, &f.MaxRSS, &f.RSSFloor); err != nil {
		tb.Fatalf("%s: launcher figures %q: %v", strings.Join(cmd.Args, " "), data, err)
	}
	if path := workFileOf(cmd); path != "" {
		data, err := os.ReadFile(path)
		os.Remove(path)
		if err == nil && len(data) > 0 {
			if _, err := fmt.Sscan(string(data), &f.Work, &f.WorkCPU); err != nil {
				tb.Fatalf("%s: work figures %q: %v", strings.Join(cmd.Args, " "), data, err)
			}
		}
	}
	return f
}

// Pairs is the number of A/B pairs a benchmark runs:
// $LAKESINK_BENCH_PAIRS, default 3.
func Pairs() int {
	if v, err := strconv.Atoi(os.Getenv("LAKESINK_BENCH_PAIRS")); err == nil && v > 0 {
		return v
	}
	return 3
}

// Load is the 1, 5 and 15 minute load averages of /proc/loadavg ("" where
// there is none).
func Load() string {
	data, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(data))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// Median is the median of xs (the mean of the middle two for an even
// count); xs is not reordered. It panics on an empty slice.
func Median[T int64 | float64 | time.Duration](xs []T) T {
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// Result is what AB measured: the medians of each side and the median of the
// pairwise speed ratios.
type Result struct {
	// Lakesink and Baseline hold the medians of each figure over the pairs.
	Lakesink, Baseline Figures
	// Speed is the median of baseline wall / lakesink wall over the pairs
	// (above 1: lakesink is faster).
	Speed float64
	// Pairs is the number of pairs run.
	Pairs int
	// Load is Load() after the last pair.
	Load string
}

// AB runs a (lakesink) and base (the baseline) alternately, a b a b, Pairs()
// times, each call given the pair's index (0, 1, ...) for fresh output
// paths; the factories run before timing starts. It logs each pair and
// prints three BENCHROW lines for figure (its wording says what both sides
// do and with how many goroutines; baseWhat, in the baseline column, says
// what the baseline is):
//
//	<figure>, wall (s; speed ratio baseline/lakesink, N pairs, load L)
//	<figure>, peak RSS (MiB)
//	<figure>, CPU (user+sys s)
//
// and returns the medians. When both sides are Side processes that timed
// their work with Work (their input built in the process first, untimed),
// the wall and CPU rows are those of the work, and say so:
//
//	<figure>, wall of the work (s, in-process setup untimed; speed ratio ...)
//	<figure>, peak RSS of the whole process (MiB)
//	<figure>, CPU of the work (user+sys s)
func AB(b testing.TB, figure, baseWhat string, a, base func(i int) *exec.Cmd) Result {
	b.Helper()
	var la, ba []Figures
	var ratios []float64
	for i := range Pairs() {
		fa := Run(b, a(i))
		fb := Run(b, base(i))
		la, ba = append(la, fa), append(ba, fb)
		ratios = append(ratios, fb.Wall.Seconds()/fa.Wall.Seconds())
		b.Logf("%s pair %d: lakesink %v (work %v) %.0f MiB, baseline %v (work %v) %.0f MiB", figure, i,
			fa.Wall.Round(time.Millisecond), fa.Work.Round(time.Millisecond), fa.MiB(),
			fb.Wall.Round(time.Millisecond), fb.Work.Round(time.Millisecond), fb.MiB())
	}
	work := !slices.ContainsFunc(append(slices.Clone(la), ba...), func(f Figures) bool { return f.Work <= 0 })
	if work {
		for i := range la {
			la[i].Wall, la[i].CPU = la[i].Work, la[i].WorkCPU
			ba[i].Wall, ba[i].CPU = ba[i].Work, ba[i].WorkCPU
			ratios[i] = ba[i].Wall.Seconds() / la[i].Wall.Seconds()
		}
	}
	r := Result{Lakesink: medians(la), Baseline: medians(ba), Speed: Median(ratios), Pairs: len(ratios), Load: Load()}
	wall, rss, cpu := "wall (s; ", "peak RSS (MiB)", "CPU (user+sys s)"
	if work {
		wall, rss, cpu = "wall of the work (s, in-process setup untimed; ", "peak RSS of the whole process (MiB)", "CPU of the work (user+sys s)"
	}
	fmt.Printf("BENCHROW\t%s, %sspeed ratio baseline/lakesink, %d pairs, load %s)\t%.2f\t%.2f (%s)\t%.2fx\n",
		figure, wall, r.Pairs, r.Load, r.Lakesink.Wall.Seconds(), r.Baseline.Wall.Seconds(), baseWhat, r.Speed)
	fmt.Printf("BENCHROW\t%s, %s\t%.0f\t%.0f\t%.2f\n",
		figure, rss, r.Lakesink.MiB(), r.Baseline.MiB(), float64(r.Lakesink.MaxRSS)/float64(r.Baseline.MaxRSS))
	fmt.Printf("BENCHROW\t%s, %s\t%.2f\t%.2f\t%.2f\n",
		figure, cpu, r.Lakesink.CPU.Seconds(), r.Baseline.CPU.Seconds(), r.Lakesink.CPU.Seconds()/r.Baseline.CPU.Seconds())
	return r
}

func medians(fs []Figures) Figures {
	var w, c []time.Duration
	var m []int64
	for _, f := range fs {
		w, c, m = append(w, f.Wall), append(c, f.CPU), append(m, f.MaxRSS)
	}
	return Figures{Wall: Median(w), CPU: Median(c), MaxRSS: Median(m)}
}
