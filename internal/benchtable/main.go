// Command benchtable reads `go test -bench` output on stdin and prints one
// summary table from the BENCHROW lines that benchmarks log:
//
//	BENCHROW<TAB>figure<TAB>lakesink value<TAB>baseline value<TAB>ratio
//
// Each benchmark measures its baseline in the same run, so the ratio holds
// when the machine's speed drifts.
package main

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"text/tabwriter"
)

func main() {
	sc := bufio.NewScanner(os.Stdin)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	tw := tabwriter.NewWriter(os.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "\nfigure\tlakesink\tbaseline\tratio")
	fmt.Fprintln(tw, "------\t--------\t--------\t-----")
	seen := map[string]bool{}
	n := 0
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
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", cols[0], cols[1], cols[2], cols[3])
		n++
	}
	tw.Flush()
	if n == 0 {
		fmt.Println("(no BENCHROW lines: did the benchmarks run?)")
	}
}
