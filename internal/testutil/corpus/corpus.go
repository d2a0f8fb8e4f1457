package corpus

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Kind names one part of the shared corpus, a directory under ../shared.
type Kind string

const (
	// Testdata is ../shared/testdata (dat/, delta-rs/, spark/ tables).
	Testdata Kind = "testdata"
	// Data is ../shared/data (flights-3m.parquet and other large files).
	Data Kind = "data"
)

// RequireEnv makes an absent corpus a test failure instead of a skip.
const RequireEnv = "LAKESINK_REQUIRE_CORPUS"

const module = "github.com/lakesink/lakesink"

func (k Kind) env() string {
	if k == Data {
		return "LAKESINK_SHARED_DATA"
	}
	return "LAKESINK_SHARED_TESTDATA"
}

// Find returns the absolute directory of kind, joined with sub (a path
// relative to it, "" for the directory itself), or an error listing every
// place looked at when none exists.
func Find(kind Kind, sub string) (string, error) {
	var tried []string
	try := func(dir string) (string, bool) {
		p := filepath.Join(dir, sub)
		abs, err := filepath.Abs(p)
		if err != nil {
			abs = p
		}
		if _, err := os.Stat(abs); err == nil {
			return abs, true
		}
		tried = append(tried, abs)
		return "", false
	}
	if v := os.Getenv(kind.env()); v != "" {
		if p, ok := try(v); ok {
			return p, nil
		}
		return "", fmt.Errorf("shared %s: %s=%s: %s is absent", kind, kind.env(), v, tried[0])
	}
	root, err := repoRoot()
	if err != nil {
		return "", fmt.Errorf("shared %s: %w (set %s)", kind, err, kind.env())
	}
	if p, ok := try(filepath.Join(root, "..", "shared", string(kind))); ok {
		return p, nil
	}
	if main, ok := worktreeMain(root); ok {
		if p, ok := try(filepath.Join(main, "..", "shared", string(kind))); ok {
			return p, nil
		}
	}
	return "", fmt.Errorf("shared %s is absent (it lives outside the repository, in ../shared/%s; set %s to use another place); looked at %s",
		kind, kind, kind.env(), strings.Join(tried, ", "))
}

// Dir is Find for a test: it returns the directory, or skips t with Find's
// message, or fails t when LAKESINK_REQUIRE_CORPUS=1.
func Dir(t testing.TB, kind Kind, sub string) string {
	t.Helper()
	p, err := Find(kind, sub)
	if err != nil {
		if Required() {
			t.Fatalf("%v (%s=1: the corpus is required)", err, RequireEnv)
		}
		t.Skip(err)
	}
	return p
}

// Required reports LAKESINK_REQUIRE_CORPUS=1.
func Required() bool { return os.Getenv(RequireEnv) == "1" }

// repoRoot is the nearest directory above the working directory whose
// go.mod declares the lakesink module (not the interop module's).
func repoRoot() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; {
		if modulePath(filepath.Join(dir, "go.mod")) == module {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", fmt.Errorf("no go.mod of module %s above %s", module, wd)
		}
		dir = parent
	}
}

func modulePath(gomod string) string {
	f, err := os.Open(gomod)
	if err != nil {
		return ""
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if m, ok := strings.CutPrefix(strings.TrimSpace(sc.Text()), "module "); ok {
			return strings.Trim(strings.TrimSpace(m), `"`)
		}
	}
	return ""
}

// worktreeMain returns the main checkout of a git worktree at root: its .git
// is a file "gitdir: <main>/.git/worktrees/<name>".
func worktreeMain(root string) (string, bool) {
	b, err := os.ReadFile(filepath.Join(root, ".git"))
	if err != nil {
		return "", false // a directory (a plain clone) or absent
	}
	gitdir, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(gitdir) {
		gitdir = filepath.Join(root, gitdir)
	}
	wt := filepath.Dir(gitdir) // <main>/.git/worktrees
	if filepath.Base(wt) != "worktrees" {
		return "", false
	}
	dotgit := filepath.Dir(wt)
	if filepath.Base(dotgit) != ".git" {
		return "", false
	}
	return filepath.Dir(dotgit), true
}

// CopyDir copies the directory tree src (a table, with its _delta_log) to
// dst, regular files and directories only, so that a test or benchmark may
// write to its own copy; it fails tb on any error.
func CopyDir(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := copyTree(src, dst, false); err != nil {
		tb.Fatalf("copy %s to %s: %v", src, dst, err)
	}
}

// LinkDir is CopyDir with hard links instead of copies of the regular files
// (a copy where linking fails, as across file systems), for a benchmark
// that needs many fresh copies of a large table it only adds files to:
// lakesink never writes into an existing file (every object is put by
// renaming or linking a new temporary file into place), so the copies
// share nothing that a write to one changes. A link allocates no inode and
// removing it frees none: on ext4 without a journal (this project's
// machines) the inodes freed by removing copies made the next minutes'
// file creations on the file system slow (fs/ext4/ialloc.c: find_inode_bit
// skips inodes whose deletion is recent, recently_deleted), which a
// benchmark run after the copies were removed measured as its own cost.
func LinkDir(tb testing.TB, src, dst string) {
	tb.Helper()
	if err := copyTree(src, dst, true); err != nil {
		tb.Fatalf("link %s to %s: %v", src, dst, err)
	}
}

// copyTree copies (link: hard-links, else copies) the regular files of the
// tree src to dst, making its directories.
func copyTree(src, dst string, link bool) error {
	return filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		if link && os.Link(p, to) == nil {
			return nil
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
}
