package txlog

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

var rewrite = flag.Bool("rewrite", false, "rewrite the expected output of testdata/replay files")

// TestReplayData runs the data-driven cases in testdata/replay. A file holds
// commits (a line "commit" followed by the JSON lines of the next version,
// "checkpoint" to write a checkpoint of the state so far, "gap" for a
// version without a commit file), then a line
// "----" and the expected rendering of the latest snapshot (or of the error).
// Run with -rewrite to regenerate the expectations after a deliberate change.
func TestReplayData(t *testing.T) {
	files, _ := filepath.Glob("testdata/replay/*.txt")
	if len(files) == 0 {
		t.Fatal("no replay cases")
	}
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			data, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			input, want, _ := strings.Cut(string(data), "----\n")
			got := runReplayCase(t, input)
			if *rewrite {
				if err := os.WriteFile(f, []byte(input+"----\n"+got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			if got != want {
				t.Errorf("%s:\n got:\n%s\nwant:\n%s", f, got, want)
			}
		})
	}
}

func runReplayCase(t *testing.T, input string) string {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }})
	v := int64(-1)
	var cur []string
	pending := false
	flush := func() {
		if pending {
			st.put(CommitPath(v), strings.Join(cur, "\n")+"\n")
		}
		cur, pending = nil, false
	}
	for _, line := range strings.Split(input, "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "" || strings.HasPrefix(line, "#"):
		case line == "commit":
			flush()
			v++
			pending = true
		case line == "gap": // a version whose commit file is missing
			flush()
			v++
		case line == "checkpoint":
			flush()
			s, err := l.Snapshot(ctx)
			if err != nil {
				return "error: " + err.Error() + "\n"
			}
			if _, err := l.Checkpoint(ctx, s); err != nil {
				return "error: " + err.Error() + "\n"
			}
		default:
			cur = append(cur, line)
		}
	}
	flush()
	s, err := l.Snapshot(ctx)
	if err != nil {
		return "error: " + err.Error() + "\n"
	}
	return renderSnapshot(s)
}

func renderSnapshot(s *Snapshot) string {
	var b strings.Builder
	p := s.Protocol()
	fmt.Fprintf(&b, "version %d (checkpoint %d)\n", s.Version(), s.CheckpointVersion())
	fmt.Fprintf(&b, "protocol %d/%d %v %v\n", p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures)
	m := s.Metadata()
	fmt.Fprintf(&b, "metadata %s partitionColumns=%v\n", m.ID, m.PartitionColumns)
	b.WriteString("files:\n")
	for _, a := range s.Files() {
		key, _ := s.FileKey(a.Path)
		var pv []string
		for k, v := range a.PartitionValues {
			if v == nil {
				pv = append(pv, k+"=<null>")
			} else {
				pv = append(pv, k+"="+*v)
			}
		}
		slices.Sort(pv)
		fmt.Fprintf(&b, "  %s key=%q size=%d dv=%q partition=%v\n", a.Path, key, a.Size, a.DeletionVector.UniqueID(), pv)
	}
	b.WriteString("tombstones:\n")
	for _, r := range s.Tombstones() {
		fmt.Fprintf(&b, "  %s dv=%q deletionTimestamp=%d\n", r.Path, r.DeletionVector.UniqueID(), deref(r.DeletionTimestamp))
	}
	b.WriteString("txns:\n")
	for _, tx := range s.TxnActions() {
		fmt.Fprintf(&b, "  %s=%d\n", tx.AppID, tx.Version)
	}
	b.WriteString("domains:\n")
	for _, d := range s.Domains() {
		fmt.Fprintf(&b, "  %s=%s\n", d.Domain, d.Configuration)
	}
	return b.String()
}
