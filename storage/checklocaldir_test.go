package storage_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// TestCheckLocalDir: a missing local directory or a file is refused with
// the location named; an existing one, and object-store prefixes, pass.
func TestCheckLocalDir(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "f.json")
	if err := os.WriteFile(file, []byte("{}"), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "nope")
	for _, ok := range []string{dir, "file://" + dir, "s3://bucket/prefix", "mem://x"} {
		if err := storage.CheckLocalDir(ok); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	for _, url := range []string{missing, "file://" + missing} {
		if err := storage.CheckLocalDir(url); !errors.Is(err, fs.ErrNotExist) || !strings.Contains(err.Error(), url) {
			t.Errorf("%s: %v, want fs.ErrNotExist naming it", url, err)
		}
	}
	if err := storage.CheckLocalDir(file); err == nil || !strings.Contains(err.Error(), file+" is not a directory") {
		t.Errorf("%s: %v, want 'is not a directory'", file, err)
	}
}
