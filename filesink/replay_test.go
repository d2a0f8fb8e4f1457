package filesink

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/replay files")

// TestReplay runs the data-driven log scripts in testdata/replay. Each file
// is a list of commands, then a line "----", then the expected output, which
// `go test -run TestReplay -rewrite` regenerates. Commands:
//
//	options k=v ...      interval, retention, minBatches, cleanupDelay, legacy, deletion
//	add N [name ...]     Log.Add(N) with one entry per name, modificationTime = now
//	advance D            move the clock by D (a Go duration)
//	raw KEY LINE...      put a raw log file (lines joined by \n; "\n" in LINE)
//	state                print the log files, the snapshot and AllFiles
//	compact-log          CompactLog
//
// Errors are printed as "error: <sentinel>" so the scripts do not depend on
// message wording.
func TestReplay(t *testing.T) {
	files, err := filepath.Glob("testdata/replay/*.txt")
	if err != nil || len(files) == 0 {
		t.Fatalf("no replay scripts: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			script, want, _ := strings.Cut(string(data), "----\n")
			got := runReplay(t, script)
			if *rewrite {
				if err := os.WriteFile(path, []byte(script+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Fatalf("%s: output differs (run with -rewrite to update)\n--- got\n%s--- want\n%s", path, got, want)
			}
		})
	}
}

func runReplay(t *testing.T, script string) string {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	var out strings.Builder
	logf := func(format string, args ...any) { fmt.Fprintf(&out, format, args...) }
	errName := func(err error) string {
		for _, s := range []error{ErrIncompleteLog, ErrCorruptLog, ErrUnsupportedLogVersion, ErrMissingLogFile,
			ErrBatchGap, ErrConcurrentWriter, ErrPathOutsideRoot, ErrInvalidOptions} {
			if errors.Is(err, s) {
				return s.Error()
			}
		}
		return err.Error()
	}
	for lineNo, line := range strings.Split(script, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		logf("> %s\n", line)
		fail := func(format string, args ...any) {
			t.Fatalf("line %d %q: %s", lineNo+1, line, fmt.Sprintf(format, args...))
		}
		switch f[0] {
		case "options":
			for _, kv := range f[1:] {
				k, v, _ := strings.Cut(kv, "=")
				var err error
				switch k {
				case "interval":
					o.CompactInterval, err = strconv.Atoi(v)
				case "retention":
					var d time.Duration
					d, err = ParseRetention(v)
					o.Retention = RetentionOf(d)
				case "minBatches":
					o.MinBatchesToRetain, err = strconv.Atoi(v)
				case "cleanupDelay":
					o.CleanupDelay, err = time.ParseDuration(v)
				case "legacy":
					o.LegacyDeleteAction, err = strconv.ParseBool(v)
				case "deletion":
					o.DeleteExpiredLog, err = strconv.ParseBool(v)
				default:
					fail("unknown option %q", k)
				}
				if err != nil {
					fail("%v", err)
				}
			}
		case "add":
			id, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				fail("%v", err)
			}
			var es []SinkFileStatus
			for _, name := range f[2:] {
				es = append(es, entry("file:///out/"+name, clock.Now()))
			}
			l, err := NewLog(m, o)
			if err == nil {
				err = l.Add(ctx, id, es)
			}
			if err != nil {
				logf("error: %s\n", errName(err))
			}
		case "advance":
			d, err := time.ParseDuration(f[1])
			if err != nil {
				fail("%v", err)
			}
			clock.Advance(d)
		case "raw":
			content := strings.ReplaceAll(strings.Join(f[2:], " "), `\n`, "\n")
			m.putAt(MetadataDir+"/"+f[1], []byte(content), clock.Now())
		case "compact-log":
			res, deleted, err := CompactLog(ctx, m, o)
			if err != nil {
				logf("error: %s\n", errName(err))
				break
			}
			logf("compacted batch %d: %d entries; deleted %v\n", res.BatchID, res.EntriesWritten, deleted)
		case "state":
			var keys []string
			for _, k := range m.keys() {
				if name, ok := strings.CutPrefix(k, MetadataDir+"/"); ok {
					keys = append(keys, name)
				}
			}
			logf("log: %s\n", strings.Join(keys, " "))
			l, err := NewLog(m, o)
			if err != nil {
				fail("%v", err)
			}
			snap, err := l.State(ctx)
			if err != nil {
				logf("error: %s\n", errName(err))
				break
			}
			logf("latest %d, compact %d, interval %d\n", snap.LatestBatchID, snap.CompactBatchID, snap.CompactInterval)
			all, err := l.AllFiles(ctx)
			if err != nil {
				logf("error: %s\n", errName(err))
				break
			}
			var names []string
			for _, e := range all {
				n := strings.TrimPrefix(e.Path, "file:///out/")
				if e.Action != ActionAdd {
					n += "(" + e.Action + ")"
				}
				names = append(names, n)
			}
			logf("files: %s\n", strings.Join(names, " "))
		default:
			fail("unknown command")
		}
	}
	return out.String()
}
