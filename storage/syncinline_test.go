package storage

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// TestSyncObjectsOfOneFileSyncsInLine: SyncObjects of one file in the
// store's directory fsyncs the file and the directory from the caller's
// goroutine (a goroutine per fsync first waited for a P, longer than the
// fsync took, on 2 CPUs with 4 writers appending), and of more files from
// goroutines of its own, each file and directory once.
func TestSyncObjectsOfOneFileSyncsInLine(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for i := range 20 {
		putDeferred(t, st, "part-"+string(rune('a'+i))+".parquet")
	}
	var mu sync.Mutex
	var inLine, elsewhere []string
	prev := fsyncFile
	t.Cleanup(func() { fsyncFile = prev })
	fsyncFile = func(f *os.File) error {
		pc := make([]uintptr, 64)
		frames := runtime.CallersFrames(pc[:runtime.Callers(1, pc)])
		caller := false
		for {
			fr, more := frames.Next()
			if strings.HasSuffix(fr.Function, ".TestSyncObjectsOfOneFileSyncsInLine") {
				caller = true
			}
			if !more {
				break
			}
		}
		mu.Lock()
		if caller {
			inLine = append(inLine, f.Name())
		} else {
			elsewhere = append(elsewhere, f.Name())
		}
		mu.Unlock()
		return prev(f)
	}
	if err := SyncObjects(ctx, st, []string{"part-a.parquet"}); err != nil {
		t.Fatal(err)
	}
	slices.Sort(inLine)
	if want := []string{dir, filepath.Join(dir, "part-a.parquet")}; !slices.Equal(inLine, want) || len(elsewhere) != 0 {
		t.Fatalf("SyncObjects of one file fsynced %q on the caller's goroutine and %q elsewhere, want %q on the caller's", inLine, elsewhere, want)
	}
	inLine, elsewhere = nil, nil
	var paths []string
	for i := range 20 {
		paths = append(paths, "part-"+string(rune('a'+i))+".parquet")
	}
	if err := SyncObjects(ctx, st, paths); err != nil {
		t.Fatal(err)
	}
	if len(inLine) != 0 || len(elsewhere) != 21 {
		t.Fatalf("SyncObjects of 20 files fsynced %d on the caller's goroutine and %d elsewhere, want 0 and 21 (each file, the directory)", len(inLine), len(elsewhere))
	}
}
