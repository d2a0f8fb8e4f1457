package storage_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

func TestOpenURLs(t *testing.T) {
	cwd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	tmp := t.TempDir()
	t.Setenv("AWS_REGION", "")
	t.Setenv("AWS_DEFAULT_REGION", "")
	t.Setenv("AWS_CONFIG_FILE", os.DevNull)
	for _, tc := range []struct {
		name, raw, wantURL string
		wantErr            error
	}{
		{"relative plain path", "rel/dir", "file://" + filepath.ToSlash(filepath.Join(cwd, "rel/dir")), nil},
		{"absolute plain path", tmp + "/t1/", "file://" + filepath.ToSlash(tmp) + "/t1", nil},
		{"file URL", "file://" + tmp + "/t1", "file://" + tmp + "/t1", nil},
		{"file URL with localhost", "file://localhost" + tmp, "file://" + tmp, nil},
		{"file URL with a host", "file://server/share", "", storage.ErrUnsupportedURL},
		{"file URL with a query", "file://" + tmp + "?x=1", "", storage.ErrUnsupportedURL},
		// Regression: url.Parse drops "#1", which opened tmp/t, another table.
		{"file URL with a fragment", "file://" + tmp + "/t#1", "", storage.ErrUnsupportedURL},
		{"file URL with an empty fragment", "file://" + tmp + "/t#", "", storage.ErrUnsupportedURL},
		{"mem URL with a fragment", "mem://scratch/t#1", "", storage.ErrUnsupportedURL},
		{"file URL with an escaped '#'", "file://" + tmp + "/t%231", "file://" + tmp + "/t%231", nil},
		{"path with URL metacharacters", tmp + "/a b%c#d", "file://" + tmp + "/a%20b%25c%23d", nil},
		{"mem", "mem://scratch", "mem://scratch", nil},
		{"mem with dir", "mem://scratch/a/b/", "mem://scratch/a/b", nil},
		{"mem with a query", "mem://scratch?x=1", "", storage.ErrUnsupportedURL},
		{"mem with a bad dir", "mem://scratch/a/../b", "", storage.ErrUnsupportedURL},
		{"s3 without a bucket", "s3:///prefix?region=us-east-1", "", storage.ErrUnsupportedURL},
		{"s3 unknown parameter", "s3://b/p?region=us-east-1&colour=blue", "", storage.ErrUnsupportedURL},
		{"s3 bad path style", "s3://b/p?region=us-east-1&use_path_style=maybe", "", storage.ErrUnsupportedURL},
		{"s3 without a region", "s3://b/p?endpoint=http://127.0.0.1:1", "", storage.ErrUnsupportedURL},
		{"unknown scheme", "gopher://x/y", "", storage.ErrUnsupportedURL},
		{"empty", "", "", storage.ErrUnsupportedURL},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, err := storage.NewOpener(storage.DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			s, err := o.Open(t.Context(), tc.raw)
			if tc.wantErr != nil {
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("Open(%q): got %v, want %v", tc.raw, err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("Open(%q): %v", tc.raw, err)
			}
			defer s.Close()
			if got := s.URL(); got != tc.wantURL {
				t.Errorf("URL() = %q, want %q", got, tc.wantURL)
			}
			// The URL opens the same location again.
			s2, err := o.Open(t.Context(), s.URL())
			if err != nil {
				t.Fatalf("reopen %q: %v", s.URL(), err)
			}
			defer s2.Close()
			if s2.URL() != s.URL() {
				t.Errorf("reopened URL %q != %q", s2.URL(), s.URL())
			}
		})
	}
}

func TestValidatePath(t *testing.T) {
	for _, tc := range []struct {
		path string
		ok   bool
	}{
		{"a", true},
		{"_delta_log/00000000000000000000.json", true},
		{"date=2024-01-01/part-0.parquet", true},
		{".hidden", true},
		{"a..b/c...", true},
		{"", false},
		{"/a", false},
		{"a/", false},
		{"a//b", false},
		{".", false},
		{"..", false},
		{"a/./b", false},
		{"a/../b", false},
		{`a\b`, false},
		{"a\nb", false},
		{"a\x7fb", false},
	} {
		err := storage.ValidatePath(tc.path)
		if (err == nil) != tc.ok {
			t.Errorf("ValidatePath(%q) = %v, want ok=%v", tc.path, err, tc.ok)
		}
		if err != nil && !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("ValidatePath(%q) = %v, want ErrInvalidPath", tc.path, err)
		}
	}
}

func TestLocalDirectoryCreatedOnFirstWrite(t *testing.T) {
	ctx := t.Context()
	dir := filepath.Join(t.TempDir(), "not", "yet")
	s, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Read(ctx, "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read: got %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat: got %v, want ErrNotFound", err)
	}
	if _, err := s.NewRangeReader(ctx, "x", 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("NewRangeReader: got %v, want ErrNotFound", err)
	}
	for _, err := range s.List(ctx, "", "") {
		t.Errorf("List of a missing directory yielded %v", err)
	}
	if err := s.Delete(ctx, "x"); err != nil {
		t.Errorf("Delete: %v", err)
	}
	if _, err := os.Stat(dir); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("reads created the directory: %v", err)
	}
	if err := s.PutIfAbsent(ctx, "_delta_log/0.json", []byte("c")); err != nil {
		t.Fatal(err)
	}
	if got, err := os.ReadFile(filepath.Join(dir, "_delta_log", "0.json")); err != nil || string(got) != "c" {
		t.Errorf("file on disk: %q, %v", got, err)
	}
}

// A table directory must hold only data files and logs: no ".attrs"
// sidecars, no temp files, whatever the write path.
func TestLocalLeavesOnlyObjects(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	s, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(s.Put(ctx, "a/put", []byte("1")))
	must(s.Put(ctx, "a/put", []byte("2")))
	must(s.PutIfAbsent(ctx, "_delta_log/0.json", []byte("c")))
	if err := s.PutIfAbsent(ctx, "_delta_log/0.json", []byte("c")); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatal(err)
	}
	w, err := s.NewWriter(ctx, "part-0.parquet")
	must(err)
	_, err = w.Write([]byte("data"))
	must(err)
	must(w.Close())
	w, err = s.NewWriter(ctx, "part-1.parquet")
	must(err)
	_, err = w.Write([]byte("data"))
	must(err)
	must(w.Abort())
	var files []string
	must(filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			rel, _ := filepath.Rel(dir, p)
			files = append(files, filepath.ToSlash(rel))
		}
		return err
	}))
	want := []string{"_delta_log/0.json", "a/put", "part-0.parquet"}
	if !slices.Equal(files, want) {
		t.Errorf("files on disk = %q, want %q", files, want)
	}
}

func TestLocalStrandedTempFileIsHidden(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	stranded := ".lakesink-tmp-0123456789abcdef-00000000000000000001.json"
	if err := os.MkdirAll(filepath.Join(dir, "_delta_log"), 0o777); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", stranded), []byte("half"), 0o666); err != nil {
		t.Fatal(err)
	}
	s, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for fi, err := range s.List(ctx, "", "") {
		t.Errorf("List yielded %v %v: a crash leftover must stay hidden", fi.Path, err)
	}
	if _, err := s.Read(ctx, "_delta_log/"+stranded); !errors.Is(err, storage.ErrInvalidPath) {
		t.Errorf("Read of a temp name: got %v, want ErrInvalidPath", err)
	}
	if err := s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("c")); err != nil {
		t.Errorf("PutIfAbsent next to a stranded temp file: %v", err)
	}
}

func TestMemSharedByName(t *testing.T) {
	ctx := t.Context()
	url := "mem://" + strings.ReplaceAll(t.Name(), "/", "-")
	a, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Put(ctx, "t/x", []byte("shared")); err != nil {
		t.Fatal(err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := storage.Open(ctx, url+"/t")
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got, err := b.Read(ctx, "x"); err != nil || string(got) != "shared" {
		t.Errorf("second Open of the same mem URL: %q, %v", got, err)
	}
	o, err := storage.NewOpener(storage.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Read(ctx, "t/x"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("another Opener must not share the bucket: %v", err)
	}
}

func TestClosed(t *testing.T) {
	ctx := t.Context()
	for _, raw := range []string{t.TempDir(), "mem://closed"} {
		o, err := storage.NewOpener(storage.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		s, err := o.Open(ctx, raw)
		if err != nil {
			t.Fatal(err)
		}
		sub := s.Sub("d")
		if err := sub.Close(); err != nil {
			t.Errorf("%s: Sub.Close: %v", raw, err)
		}
		if err := sub.Put(ctx, "x", []byte("x")); err != nil {
			t.Errorf("%s: Sub.Close must not close the parent: %v", raw, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if err := s.Close(); err != nil {
			t.Errorf("%s: second Close: %v", raw, err)
		}
		if _, err := s.Read(ctx, "d/x"); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("%s: Read after Close: got %v, want ErrClosed", raw, err)
		}
		if err := sub.Put(ctx, "y", nil); !errors.Is(err, storage.ErrClosed) {
			t.Errorf("%s: Sub Put after parent Close: got %v, want ErrClosed", raw, err)
		}
		for _, err := range s.List(ctx, "", "") {
			if !errors.Is(err, storage.ErrClosed) {
				t.Errorf("%s: List after Close: got %v, want ErrClosed", raw, err)
			}
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	if err := storage.DefaultOptions().Validate(); err != nil {
		t.Errorf("defaults: %v", err)
	}
	bad := storage.Options{S3ConflictRetries: -1, S3UnknownRetries: -1, S3RetryBackoff: -1}
	err := bad.Validate()
	if !errors.Is(err, storage.ErrInvalidOptions) {
		t.Fatalf("got %v, want ErrInvalidOptions", err)
	}
	for _, field := range []string{"S3ConflictRetries", "S3UnknownRetries", "S3RetryBackoff"} {
		if !strings.Contains(err.Error(), field) {
			t.Errorf("Validate does not list %s: %v", field, err)
		}
	}
	if _, err := storage.NewOpener(bad); !errors.Is(err, storage.ErrInvalidOptions) {
		t.Errorf("NewOpener(bad): %v", err)
	}
}

// On disk "a" cannot be a file and a directory: looking up "a/b" under the
// file "a" is not found (not an I/O error).
func TestLocalPathUnderAFile(t *testing.T) {
	ctx := t.Context()
	s, err := storage.Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.Put(ctx, "a", []byte("file")); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ctx, "a/b"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read: got %v, want ErrNotFound", err)
	}
	if _, err := s.Stat(ctx, "a/b"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat: got %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "a/b"); err != nil {
		t.Errorf("Delete: %v", err)
	}
	for fi, err := range s.List(ctx, "a/", "") {
		t.Errorf("List(a/) yielded %v, %v", fi.Path, err)
	}
}
