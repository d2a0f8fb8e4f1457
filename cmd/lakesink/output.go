package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"

	"golang.org/x/term"
)

// printer writes a command's output: text for people, or with --json one
// object per line, each with a message_type (restic's scripting convention).
type printer struct {
	out   io.Writer
	err   io.Writer
	json  bool
	quiet bool
}

func newPrinter(g *globalOptions, out, errw io.Writer) *printer {
	return &printer{out: out, err: errw, json: g.JSON, quiet: g.Quiet}
}

// emit writes one JSON object with message_type set.
func (p *printer) emit(messageType string, v map[string]any) error {
	v["message_type"] = messageType
	enc := json.NewEncoder(p.out)
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// emitValue writes v (a struct with json tags) merged with message_type.
func (p *printer) emitValue(messageType string, v any) error {
	m, err := valueMap(v)
	if err != nil {
		return err
	}
	return p.emit(messageType, m)
}

// emitSummary writes a command's closing summary object: v's fields (a
// struct with json tags, or a map), message_type "summary" and "table", the
// table's URL, so a script running one command over many tables can tell
// the lines apart. Every command on a table closes with it.
func (p *printer) emitSummary(tableURL string, v any) error {
	m, err := valueMap(v)
	if err != nil {
		return err
	}
	m["table"] = tableURL
	return p.emit("summary", m)
}

// valueMap is v (a struct with json tags) as a JSON object.
func valueMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	// Numbers keep their exact text (a decimal stat 10000000000000000000000000000.5
	// read as float64 printed 1e+28).
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	m := map[string]any{}
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

func (p *printer) textf(format string, args ...any) {
	if !p.json {
		fmt.Fprintf(p.out, format, args...)
	}
}

// summaryf prints a command's one-line result (what compact, vacuum,
// checkpoint, merge, create... did) to stdout, unless --json (the summary
// object says it) or --quiet asked for silence; a verb's report itself
// (rows, a plan, a file listing) goes through textf.
func (p *printer) summaryf(format string, args ...any) {
	if !p.quiet {
		p.textf(format, args...)
	}
}

// progressEnabled: progress goes to stderr only when it is a terminal and
// neither --quiet nor --json asked otherwise.
func (p *printer) progressEnabled() bool {
	if p.quiet || p.json {
		return false
	}
	f, ok := p.err.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// humanBytes renders a byte count: 1.5 MiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}

// plural renders a count with its noun: "1 batch", "2 batches".
func plural[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
}
