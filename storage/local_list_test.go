package storage

import (
	"context"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestLocalListStatsOnlyWhatItYields: a listing stats an entry when it
// yields it, so a caller that stops at the first key (describe asking
// whether _delta_log has anything) costs one stat, not one per file of the
// directory (21,055 stats for a 10,000-commit table before), and keys,
// order and startAfter are unchanged, nested directories included.
func TestLocalListStatsOnlyWhatItYields(t *testing.T) {
	dir := t.TempDir()
	var want []string
	for i := range 200 {
		want = append(want, fmt.Sprintf("_delta_log/%020d.json", i))
	}
	want = append(want, "_delta_log/_sidecars/a.parquet", "_delta_log/_sidecars/b.parquet")
	for _, k := range append(slices.Clone(want), "part-0.parquet", "_delta_log/.lakesink-tmp-x-1.json") {
		p := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	slices.Sort(want)
	stats := 0
	defer func(f func(fs.DirEntry) (fs.FileInfo, error)) { statEntry = f }(statEntry)
	statEntry = func(d fs.DirEntry) (fs.FileInfo, error) { stats++; return d.Info() }
	l := newLocalBackend(dir, false)
	ctx := context.Background()

	for fi, err := range l.list(ctx, "_delta_log/", "") {
		if err != nil || fi.Path != want[0] || fi.Size != 1 {
			t.Fatalf("first key %+v, %v; want %s of 1 byte", fi, err, want[0])
		}
		break
	}
	if stats != 1 {
		t.Errorf("stopping at the first key stat'ed %d entries, want 1", stats)
	}

	list := func(prefix, startAfter string) []string {
		var got []string
		for fi, err := range l.list(ctx, prefix, startAfter) {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fi.Path)
		}
		return got
	}
	if got := list("_delta_log/", ""); !slices.Equal(got, want) {
		t.Errorf("whole listing: %d keys %v..., want %d", len(got), got[:min(3, len(got))], len(want))
	}
	if got := list("_delta_log/", want[189]); !slices.Equal(got, want[190:]) {
		t.Errorf("after %s: %v, want %v", want[189], got, want[190:])
	}
	if got := list("_delta_log/_s", ""); !slices.Equal(got, want[200:]) {
		t.Errorf("prefix _delta_log/_s: %v, want %v", got, want[200:])
	}
	if got := list("", "_delta_log/_sidecars/b.parquet"); !slices.Equal(got, []string{"part-0.parquet"}) {
		t.Errorf("whole store after the sidecars: %v, want part-0.parquet", got)
	}
	if got := list("part-0.parquet/", ""); len(got) != 0 {
		t.Errorf("under a file: %v, want nothing", got)
	}
}
