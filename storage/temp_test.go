package storage_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// ListTemp yields exactly the ".lakesink-tmp-" files List hides, and
// DeleteTemp deletes only such names.
func TestListTempAndDeleteTemp(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	for _, k := range []string{"a/.lakesink-tmp-1-x.parquet", ".lakesink-tmp-2-y", "a/.lakesink-tmpz", "a/.other", "a/b.parquet"} {
		name := filepath.Join(dir, filepath.FromSlash(k))
		if err := os.MkdirAll(filepath.Dir(name), 0o777); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(name, []byte("12345"), 0o666); err != nil {
			t.Fatal(err)
		}
	}
	list := func(prefix string) []string {
		var out []string
		for fi, err := range storage.ListTemp(ctx, st, prefix) {
			if err != nil {
				t.Fatal(err)
			}
			if fi.Size != 5 {
				t.Errorf("%s: size %d, want 5", fi.Path, fi.Size)
			}
			out = append(out, fi.Path)
		}
		return out
	}
	if got, want := list(""), []string{".lakesink-tmp-2-y", "a/.lakesink-tmp-1-x.parquet"}; !slices.Equal(got, want) {
		t.Errorf("ListTemp = %v, want %v", got, want)
	}
	if got, want := list("a/"), []string{"a/.lakesink-tmp-1-x.parquet"}; !slices.Equal(got, want) {
		t.Errorf("ListTemp(a/) = %v, want %v", got, want)
	}
	for _, k := range []string{"a/.lakesink-tmpz", "a/.other", "a/b.parquet"} {
		if err := storage.DeleteTemp(ctx, st, k); !errors.Is(err, storage.ErrInvalidPath) {
			t.Errorf("DeleteTemp(%s) = %v, want ErrInvalidPath", k, err)
		}
	}
	if err := storage.DeleteTemp(ctx, st, "a/.lakesink-tmp-1-x.parquet"); err != nil {
		t.Fatal(err)
	}
	if err := storage.DeleteTemp(ctx, st, "a/.lakesink-tmp-1-x.parquet"); err != nil {
		t.Errorf("second DeleteTemp: %v", err)
	}
	if got, want := list(""), []string{".lakesink-tmp-2-y"}; !slices.Equal(got, want) {
		t.Errorf("after delete: ListTemp = %v, want %v", got, want)
	}
	for _, k := range []string{"a/.lakesink-tmpz", "a/.other", "a/b.parquet"} {
		if _, err := os.Stat(filepath.Join(dir, filepath.FromSlash(k))); err != nil {
			t.Errorf("%s: %v", k, err)
		}
	}
	mem, err := storage.Open(ctx, "mem://temp-test")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	for fi, err := range storage.ListTemp(ctx, mem, "") {
		t.Errorf("mem store yielded %v, %v", fi, err)
	}
}
