package storage

import (
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"testing"
)

// TestLocalDirectReadsOfOddNames: the local Read, Stat and NewRangeReader
// (which open the file themselves) and the writes, listing and Delete
// agree on the file of a key whose name has spaces, percent signs, a
// gocloud hex-escape lookalike (__0x41__), non-ASCII letters or bytes that
// are not UTF-8: a key written is read, listed, ranged and deleted under
// the same name.
func TestLocalDirectReadsOfOddNames(t *testing.T) {
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
	for _, key := range []string{
		"k=a b/part 0.parquet",
		"k=100%25/p%2F.parquet",
		"k=__0x41__/x__0x2f__y",
		"k=Zürich/ü.parquet",
		"k=\xff\xfe/bad.parquet",
	} {
		data := []byte("data of " + key)
		if err := st.Put(ctx, key, data); err != nil {
			t.Fatalf("put %q: %v", key, err)
		}
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(key))); err != nil {
			t.Errorf("put %q: not at its own name: %v", key, err)
		}
		got, err := st.Read(ctx, key)
		if err != nil || string(got) != string(data) {
			t.Errorf("read %q: %q, %v", key, got, err)
		}
		fi, err := st.Stat(ctx, key)
		if err != nil || fi.Size != int64(len(data)) || fi.Path != key {
			t.Errorf("stat %q: %+v, %v", key, fi, err)
		}
		r, err := st.NewRangeReader(ctx, key, 3, 4)
		if err != nil {
			t.Fatalf("range %q: %v", key, err)
		}
		got, err = io.ReadAll(r)
		r.Close()
		if err != nil || string(got) != string(data[3:7]) {
			t.Errorf("range %q: %q, %v", key, got, err)
		}
		listed := false
		for fi, err := range st.List(ctx, "", "") {
			if err != nil {
				t.Fatal(err)
			}
			listed = listed || fi.Path == key
		}
		if !listed {
			t.Errorf("list: %q missing", key)
		}
		if err := st.Delete(ctx, key); err != nil {
			t.Errorf("delete %q: %v", key, err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("stat %q after its delete: %v, want ErrNotFound", key, err)
		}
	}
}

// TestLocalRangeReaderSymlinksAndReplace: a local range reader follows a
// symbolic link to a file (as fileblob's os.Open did), a dangling link and
// a link to a directory are ErrNotFound, and a reader opened before its
// file is replaced by a rename (a re-put) reads the bytes it opened.
func TestLocalRangeReaderSymlinksAndReplace(t *testing.T) {
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
	if err := st.Put(ctx, "d/f", []byte("0123456789")); err != nil {
		t.Fatal(err)
	}
	for name, target := range map[string]string{"link": "d/f", "dangling": "nothing", "dirlink": "d"} {
		if err := os.Symlink(filepath.Join(dir, target), filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := st.NewRangeReader(ctx, "link", 2, 3)
	if err != nil {
		t.Fatal(err)
	}
	got, _ := io.ReadAll(r)
	r.Close()
	if string(got) != "234" {
		t.Errorf("range through a link: %q, want \"234\"", got)
	}
	for _, key := range []string{"dangling", "dirlink"} {
		if _, err := st.NewRangeReader(ctx, key, 0, -1); !errors.Is(err, ErrNotFound) {
			t.Errorf("range %s: %v, want ErrNotFound", key, err)
		}
		if _, err := st.Read(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("read %s: %v, want ErrNotFound", key, err)
		}
		if _, err := st.Stat(ctx, key); !errors.Is(err, ErrNotFound) {
			t.Errorf("stat %s: %v, want ErrNotFound", key, err)
		}
	}

	r, err = st.NewRangeReader(ctx, "d/f", 0, -1)
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Put(ctx, "d/f", []byte("abc")); err != nil {
		t.Fatal(err)
	}
	got, err = io.ReadAll(r)
	r.Close()
	if err != nil || string(got) != "0123456789" {
		t.Errorf("reader opened before the re-put: %q, %v; want the old bytes", got, err)
	}
	if got, _ := st.Read(ctx, "d/f"); string(got) != "abc" {
		t.Errorf("read after the re-put: %q", got)
	}
}
