// Command benchtable reads `go test -bench` output on stdin and prints one
// summary table from the BENCHROW lines that benchmarks print:
//
//	BENCHROW<TAB>figure<TAB>lakesink value<TAB>baseline value<TAB>ratio
//
// Each benchmark measures its baseline in the same run, so the ratio holds
// when the machine's speed drifts. The table starts with the machine (CPUs,
// CPU model, load average when the table is printed) and the date. With -md
// it is a Markdown table, for the README's "Benchmarks" section.
package main

import (
	"bufio"
	"flag"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"text/tabwriter"
	"time"
)

func main() {
	md := flag.Bool("md", false, "print a Markdown table")
	flag.Parse()
	rows, err := read(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "benchtable:", err)
		os.Exit(1)
	}
	m := machine{cpus: runtime.NumCPU(), model: cpuModel(), load: loadAvg(), date: time.Now().UTC(), goVersion: runtime.Version()}
	if *md {
		printMarkdown(os.Stdout, m, rows)
	} else {
		printPlain(os.Stdout, m, rows)
	}
	if len(rows) == 0 {
		fmt.Println("(no BENCHROW lines: did the benchmarks run?)")
	}
}

// row is one BENCHROW line's four cells.
type row struct{ figure, lakesink, baseline, ratio string }

// read collects the BENCHROW lines of r, the first of each figure.
func read(r io.Reader) ([]row, error) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	seen := map[string]bool{}
	var rows []row
	for sc.Scan() {
		line := sc.Text()
		i := strings.Index(line, "BENCHROW\t")
		if i < 0 {
			continue
		}
		cols := strings.Split(line[i+len("BENCHROW\t"):], "\t")
		if len(cols) < 4 || seen[cols[0]] {
			continue
		}
		seen[cols[0]] = true
		rows = append(rows, row{cols[0], cols[1], cols[2], cols[3]})
	}
	return rows, sc.Err()
}

// machine is what the table says about where it ran.
type machine struct {
	cpus      int
	model     string // "" if unknown
	load      string // 1, 5, 15 minute load averages; "" if unknown
	date      time.Time
	goVersion string
}

func (m machine) String() string {
	s := fmt.Sprintf("%d CPUs", m.cpus)
	if m.model != "" {
		s += " (" + m.model + ")"
	}
	if m.load != "" {
		s += ", load average " + m.load + " at the end of the run"
	}
	return s + ", " + m.goVersion + ", " + m.date.Format("2006-01-02 15:04 UTC")
}

func printPlain(w io.Writer, m machine, rows []row) {
	fmt.Fprintf(w, "\nmachine: %s\n", m)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nfigure\tlakesink\tbaseline\tratio")
	fmt.Fprintln(tw, "------\t--------\t--------\t-----")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.figure, r.lakesink, r.baseline, r.ratio)
	}
	tw.Flush()
}

func printMarkdown(w io.Writer, m machine, rows []row) {
	fmt.Fprintf(w, "One `make bench` run: %s.\n\n", m)
	fmt.Fprintln(w, "| figure | lakesink | baseline | ratio |")
	fmt.Fprintln(w, "|---|---|---|---|")
	cell := strings.NewReplacer("|", `\|`).Replace
	for _, r := range rows {
		fmt.Fprintf(w, "| %s | %s | %s | %s |\n", cell(r.figure), cell(r.lakesink), cell(r.baseline), cell(r.ratio))
	}
}

// cpuModel is the first "model name" of /proc/cpuinfo ("" if none).
func cpuModel() string {
	data, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return ""
	}
	for line := range strings.SplitSeq(string(data), "\n") {
		if k, v, ok := strings.Cut(line, ":"); ok && strings.TrimSpace(k) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// loadAvg is the three load averages of /proc/loadavg ("" if none).
func loadAvg() string {
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
