package corpus

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// layout makes base/repo (go.mod of the lakesink module, a package dir) and
// returns the package dir.
func layout(t *testing.T, base string) string {
	t.Helper()
	pkg := filepath.Join(base, "repo", "txlog")
	if err := os.MkdirAll(pkg, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "repo", "go.mod"), []byte("module github.com/lakesink/lakesink\n\ngo 1.26\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return pkg
}

func TestFindRelativeToRepo(t *testing.T) {
	base := t.TempDir()
	t.Chdir(layout(t, base))
	t.Setenv("LAKESINK_SHARED_TESTDATA", "")
	if _, err := Find(Testdata, "dat"); err == nil || !strings.Contains(err.Error(), filepath.Join(base, "shared", "testdata", "dat")) {
		t.Fatalf("absent corpus: %v, want an error naming %s", err, filepath.Join(base, "shared", "testdata", "dat"))
	}
	want := filepath.Join(base, "shared", "testdata", "dat")
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	if got, err := Find(Testdata, "dat"); err != nil || got != want {
		t.Fatalf("Find = %q, %v; want %q", got, err, want)
	}
}

func TestFindEnvOverrides(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("LAKESINK_SHARED_DATA", dir)
	if got, err := Find(Data, ""); err != nil || got != dir {
		t.Fatalf("Find = %q, %v; want %q", got, err, dir)
	}
	if _, err := Find(Data, "flights-3m.parquet"); err == nil || !strings.Contains(err.Error(), "LAKESINK_SHARED_DATA="+dir) {
		t.Fatalf("absent file under the variable: %v", err)
	}
}

// A git worktree (.git a file naming <main>/.git/worktrees/NAME) finds the
// corpus next to the main checkout.
func TestFindFromWorktree(t *testing.T) {
	base := t.TempDir()
	pkg := layout(t, filepath.Join(base, "wt"))
	main := filepath.Join(base, "main")
	if err := os.MkdirAll(filepath.Join(main, ".git", "worktrees", "repo"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(base, "wt", "repo", ".git"), []byte("gitdir: "+filepath.Join(main, ".git", "worktrees", "repo")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	want := filepath.Join(base, "shared", "testdata")
	if err := os.MkdirAll(want, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(pkg)
	t.Setenv("LAKESINK_SHARED_TESTDATA", "")
	if got, err := Find(Testdata, ""); err != nil || got != want {
		t.Fatalf("Find = %q, %v; want %q", got, err, want)
	}
}
