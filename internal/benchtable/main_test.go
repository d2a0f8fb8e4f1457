package main

import (
	"strings"
	"testing"
	"time"
)

const sample = `goos: linux
BENCHROW	scan, wall (s; a|b)	1.00	2.00 (raw)	2.00x
    bench_test.go:12: BENCHROW	OPTIMIZE, peak RSS (MiB)	107	69	1.55
BENCHROW	scan, wall (s; a|b)	9	9	9
BENCHROW	too few cells	1
PASS
`

func TestMarkdownTable(t *testing.T) {
	rows, err := read(strings.NewReader(sample))
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("rows %v: want the first of each figure with four cells (2)", rows)
	}
	var sb strings.Builder
	m := machine{cpus: 2, model: "Test CPU", load: "1.00 2.00 3.00", date: time.Date(2026, 12, 2, 8, 0, 0, 0, time.UTC), goVersion: "go1.26"}
	printMarkdown(&sb, m, rows)
	want := "One `make bench` run: 2 CPUs (Test CPU), load average 1.00 2.00 3.00 at the end of the run, go1.26, 2026-12-02 08:00 UTC.\n\n" +
		"| figure | lakesink | baseline | ratio |\n|---|---|---|---|\n" +
		"| scan, wall (s; a\\|b) | 1.00 | 2.00 (raw) | 2.00x |\n" +
		"| OPTIMIZE, peak RSS (MiB) | 107 | 69 | 1.55 |\n"
	if sb.String() != want {
		t.Errorf("markdown:\n%s\nwant:\n%s", sb.String(), want)
	}
	sb.Reset()
	printPlain(&sb, m, rows)
	if !strings.Contains(sb.String(), "machine: 2 CPUs (Test CPU)") || !strings.Contains(sb.String(), "OPTIMIZE, peak RSS (MiB)  107") {
		t.Errorf("plain table:\n%s", sb.String())
	}
}
