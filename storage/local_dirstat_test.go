package storage

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// TestLocalWritesStatNoDirectory: the local backend creates a file's
// temporary first and looks at (and creates) its directory only when that
// is missing, so after a table's first commit a blind append's writes (the
// data file by NewDeferredWriter, the commit by Stage and PutIfAbsent, the
// .crc by Put, a checkpoint by NewWriter) stat no directory; the first
// write into a missing directory still creates it (a missing partition
// directory too), and renaming a temporary onto a directory fails.
func TestLocalWritesStatNoDirectory(t *testing.T) {
	ctx := context.Background()
	stats := 0
	defer func(f func(string) (os.FileInfo, error)) { statDir = f }(statDir)
	statDir = func(name string) (os.FileInfo, error) { stats++; return os.Stat(name) }

	dir := filepath.Join(t.TempDir(), "t")
	op, err := NewOpener(Options{})
	if err != nil {
		t.Fatal(err)
	}
	st, err := op.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	if stats == 0 {
		t.Fatal("the first write into a missing directory looked at no directory")
	}
	stats = 0
	w, err := NewDeferredWriter(ctx, st, "part-0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("PAR1")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := SyncObjects(ctx, st, []string{"part-0.parquet"}); err != nil {
		t.Fatal(err)
	}
	sg, err := Stage(ctx, st, "_delta_log/00000000000000000001.json", []byte("{}\n"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sg.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json"); err != nil {
		t.Fatal(err)
	}
	if err := sg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "_delta_log/00000000000000000001.crc", []byte("{}")); err != nil {
		t.Fatal(err)
	}
	cw, err := st.NewWriter(ctx, "_delta_log/00000000000000000001.checkpoint.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cw.Write([]byte("PAR1")); err != nil {
		t.Fatal(err)
	}
	if err := cw.Close(); err != nil {
		t.Fatal(err)
	}
	if stats != 0 {
		t.Errorf("a commit's writes into existing directories made %d directory stats, want 0", stats)
	}
	for _, p := range []string{"part-0.parquet", "_delta_log/00000000000000000001.json", "_delta_log/00000000000000000001.crc", "_delta_log/00000000000000000001.checkpoint.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(p))); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}

	pw, err := NewDeferredWriter(ctx, st, "k=1/part-1.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if err := pw.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "k=1", "part-1.parquet")); err != nil {
		t.Errorf("a file in a new partition directory: %v", err)
	}
	if err := st.Put(ctx, "sub/x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "adir"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "adir", []byte("x")); err == nil {
		t.Error("Put onto a directory succeeded")
	}
	var le *os.LinkError
	if err := renameLocal(filepath.Join(dir, "sub", "x"), filepath.Join(dir, "adir")); !errors.As(err, &le) {
		t.Errorf("rename of a file onto a directory: %v, want an *os.LinkError", err)
	}
}

// TestDeferredWriterMakesANewPartitionDirectoryWithOneMkdir: a deferred
// writer into a missing directory whose parent is there (a new partition
// directory of a table) makes it with one mkdir, and stats no directory
// (mkdirAllSync's stat of the store's location, one for each of the 229
// airports of the 3M flights, before); a directory whose parent is missing
// too (nested partitions), or the missing location itself, are still made,
// and two writers into one new directory both write their files.
func TestDeferredWriterMakesANewPartitionDirectoryWithOneMkdir(t *testing.T) {
	ctx := context.Background()
	stats := 0
	defer func(f func(string) (os.FileInfo, error)) { statDir = f }(statDir)
	statDir = func(name string) (os.FileInfo, error) { stats++; return os.Stat(name) }

	dir := filepath.Join(t.TempDir(), "t")
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	write := func(p string) {
		t.Helper()
		putDeferred(t, st, p)
	}
	write("part-0.parquet") // the location is missing: made as mkdirAllSync makes it
	if stats == 0 {
		t.Fatal("the first write into the missing location looked at no directory")
	}
	stats = 0
	paths := []string{"k=1/part-1.parquet", "k=2/part-2.parquet", "k=1/part-3.parquet", "a=1/b=2/part-4.parquet"}
	for _, p := range paths[:3] {
		write(p)
	}
	if stats != 0 {
		t.Errorf("3 writes into 2 new partition directories made %d directory stats, want 0", stats)
	}
	write(paths[3])
	if err := SyncObjects(ctx, st, paths); err != nil {
		t.Fatal(err)
	}
	for _, p := range paths {
		if b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(p))); err != nil || string(b) != p {
			t.Errorf("%s: %q, %v", p, b, err)
		}
	}
}
