package storage

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// TestPutOptionalSyncsTheContentNotTheName: PutOptional on local disk
// fsyncs the temporary file that becomes the object, once, and not the
// directory it is renamed into (Put fsyncs both); the object reads back
// whole and no temporary is left. On mem:// it is a Put.
func TestPutOptionalSyncsTheContentNotTheName(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(ctx, "_delta_log/0.json", []byte("{}")); err != nil { // the directory exists
		t.Fatal(err)
	}
	logDir := filepath.Join(dir, "_delta_log")
	fsyncs := countFsyncs(t)
	if err := st.Put(ctx, "_delta_log/1.crc", []byte("one")); err != nil {
		t.Fatal(err)
	}
	got := fsyncs()
	if len(got) != 2 || !slices.Contains(got, logDir) {
		t.Fatalf("Put fsynced %q, want its temporary file and %s", got, logDir)
	}
	if err := PutOptional(ctx, st, "_delta_log/2.crc", []byte("two")); err != nil {
		t.Fatal(err)
	}
	got = fsyncs()
	if len(got) != 1 || !isTempName(filepath.Base(got[0])) || filepath.Dir(got[0]) != logDir {
		t.Fatalf("PutOptional fsynced %q, want only its temporary file in %s", got, logDir)
	}
	if b, err := st.Read(ctx, "_delta_log/2.crc"); err != nil || string(b) != "two" {
		t.Fatalf("read after PutOptional = %q, %v", b, err)
	}
	ents, err := os.ReadDir(logDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if isTempName(e.Name()) {
			t.Errorf("temporary file %s left behind", e.Name())
		}
	}

	mem, err := Open(ctx, "mem://")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	if err := PutOptional(ctx, mem, "a.crc", []byte("m")); err != nil {
		t.Fatal(err)
	}
	if b, err := mem.Read(ctx, "a.crc"); err != nil || string(b) != "m" {
		t.Fatalf("mem:// read after PutOptional = %q, %v", b, err)
	}
}
