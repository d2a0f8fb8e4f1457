package storage_test

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// TestStageLinksOneFile: on local disk a staged content is written once;
// a PutIfAbsent that loses to an existing object leaves it, the next one
// links the same file to its name (two links until Close), and Close
// leaves no temporary file. A name in another directory is still written.
// Elsewhere (mem://) it is PutIfAbsent with the data.
func TestStageLinksOneFile(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	st, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.PutIfAbsent(ctx, "log/1.json", []byte("theirs")); err != nil {
		t.Fatal(err)
	}
	sg, err := storage.Stage(ctx, st, "log/1.json", []byte("ours"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sg.PutIfAbsent(ctx, "log/1.json"); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("put over an existing object: %v, want ErrAlreadyExists", err)
	}
	if err := sg.PutIfAbsent(ctx, "log/2.json"); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(filepath.Join(dir, "log", "2.json"))
	if err != nil {
		t.Fatal(err)
	}
	if n := fi.Sys().(*syscall.Stat_t).Nlink; n != 2 {
		t.Fatalf("2.json has %d links before Close, want 2 (the staged file's)", n)
	}
	if err := sg.PutIfAbsent(ctx, "other/3.json"); err != nil {
		t.Fatal(err)
	}
	if err := errors.Join(sg.Close(), sg.Close()); err != nil {
		t.Fatal(err)
	}
	for p, want := range map[string]string{"log/1.json": "theirs", "log/2.json": "ours", "other/3.json": "ours"} {
		if b, err := st.Read(ctx, p); err != nil || string(b) != want {
			t.Fatalf("%s = %q, %v; want %q", p, b, err, want)
		}
	}
	for _, d := range []string{"log", "other"} {
		es, err := os.ReadDir(filepath.Join(dir, d))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range es {
			if strings.HasPrefix(e.Name(), ".") {
				t.Fatalf("temporary file %s/%s left after Close", d, e.Name())
			}
		}
	}
	if fi, err := os.Stat(filepath.Join(dir, "log", "2.json")); err != nil || fi.Sys().(*syscall.Stat_t).Nlink != 1 {
		t.Fatalf("2.json after Close: %v, %v; want one link", fi, err)
	}

	o, err := storage.NewOpener(storage.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	mem, err := o.Open(ctx, "mem://stage")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	sg, err = storage.Stage(ctx, mem, "a", []byte("x"))
	if err != nil {
		t.Fatal(err)
	}
	defer sg.Close()
	if err := errors.Join(sg.PutIfAbsent(ctx, "a"), mem.Put(ctx, "b", []byte("y"))); err != nil {
		t.Fatal(err)
	}
	if err := sg.PutIfAbsent(ctx, "b"); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("mem put over b: %v, want ErrAlreadyExists", err)
	}
}
