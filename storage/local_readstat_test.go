package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// TestLocalReadStatWithoutBlobLayer: on local disk Read, Stat and
// NewRangeReader (the snapshot load's read of each commit) go to the
// file directly (no gocloud fileblob stat, .attrs lookup and tracing span
// for each commit a writer reads) and answer as fileblob does: the content
// and the size and modification time of a file; ErrNotFound for a missing
// file, a missing table directory, a directory, and a path under a file;
// a .attrs file next to an object is not read.
func TestLocalReadStatWithoutBlobLayer(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	op, err := NewOpener(Options{LocalSkipFsync: true})
	if err != nil {
		t.Fatal(err)
	}
	st, err := op.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(ctx, "_delta_log/00000000000000000000.json", []byte("{}\n")); err != nil {
		t.Fatal(err)
	}
	// A sidecar gocloud would parse (and fail on): never looked at.
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", "00000000000000000000.json.attrs"), []byte("not json"), 0o644); err != nil {
		t.Fatal(err)
	}
	mod := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	if err := os.Chtimes(filepath.Join(dir, "_delta_log", "00000000000000000000.json"), mod, mod); err != nil {
		t.Fatal(err)
	}
	data, err := st.Read(ctx, "_delta_log/00000000000000000000.json")
	if err != nil || string(data) != "{}\n" {
		t.Fatalf("Read = %q, %v", data, err)
	}
	fi, err := st.Stat(ctx, "_delta_log/00000000000000000000.json")
	if err != nil || fi.Size != 3 || !fi.ModTime.Equal(mod) || fi.Path != "_delta_log/00000000000000000000.json" {
		t.Fatalf("Stat = %+v, %v", fi, err)
	}
	for _, rc := range []struct {
		off, n int64
		want   string
	}{{0, -1, "{}\n"}, {1, 1, "}"}, {1, 10, "}\n"}, {3, -1, ""}, {10, 5, ""}} {
		r, err := st.NewRangeReader(ctx, "_delta_log/00000000000000000000.json", rc.off, rc.n)
		if err != nil {
			t.Fatalf("NewRangeReader(%d, %d): %v", rc.off, rc.n, err)
		}
		got, err := io.ReadAll(r)
		if cerr := r.Close(); err == nil {
			err = cerr
		}
		if err != nil || string(got) != rc.want {
			t.Errorf("NewRangeReader(%d, %d) read %q, %v; want %q", rc.off, rc.n, got, err, rc.want)
		}
	}
	for _, p := range []string{"_delta_log/00000000000000000001.json", "_delta_log", "_delta_log/00000000000000000000.json/x"} {
		if _, err := st.NewRangeReader(ctx, p, 0, -1); !errors.Is(err, ErrNotFound) {
			t.Errorf("NewRangeReader %s: %v, want ErrNotFound", p, err)
		}
		if _, err := st.Read(ctx, p); !errors.Is(err, ErrNotFound) {
			t.Errorf("Read %s: %v, want ErrNotFound", p, err)
		}
		if _, err := st.Stat(ctx, p); !errors.Is(err, ErrNotFound) {
			t.Errorf("Stat %s: %v, want ErrNotFound", p, err)
		}
	}
	gone, err := op.Open(ctx, filepath.Join(dir, "missing"))
	if err != nil {
		t.Fatal(err)
	}
	defer gone.Close()
	if _, err := gone.Read(ctx, "_delta_log/00000000000000000000.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Read in a missing directory: %v, want ErrNotFound", err)
	}
	if _, err := gone.Stat(ctx, "_delta_log/00000000000000000000.json"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Stat in a missing directory: %v, want ErrNotFound", err)
	}
}
