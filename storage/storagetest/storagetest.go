package storagetest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// Config tunes the suite for a backend.
type Config struct {
	// ConcurrentRounds is how many rounds of concurrent PutIfAbsent the race
	// test runs (default 200).
	ConcurrentRounds int
	// ConcurrentWriters is the number of racers per round (default 8).
	ConcurrentWriters int
	// ListObjects is the number of objects of the pagination test; it must
	// exceed one page (S3: 1000). Default 1100.
	ListObjects int
	// LargeObjectBytes is the size of the streaming-writer test object;
	// above 5 MiB it exercises S3 multipart uploads. Default 6 MiB.
	LargeObjectBytes int
}

func (c Config) withDefaults() Config {
	if c.ConcurrentRounds == 0 {
		c.ConcurrentRounds = 200
	}
	if c.ConcurrentWriters == 0 {
		c.ConcurrentWriters = 8
	}
	if c.ListObjects == 0 {
		c.ListObjects = 1100
	}
	if c.LargeObjectBytes == 0 {
		c.LargeObjectBytes = 6 << 20
	}
	return c
}

// Run runs the suite with the default Config.
func Run(t *testing.T, newStore func(t *testing.T) storage.Store) {
	RunConfig(t, Config{}, newStore)
}

// RunConfig runs the suite with cfg.
func RunConfig(t *testing.T, cfg Config, newStore func(t *testing.T) storage.Store) {
	cfg = cfg.withDefaults()
	tests := []struct {
		name string
		fn   func(t *testing.T, s storage.Store)
	}{
		{"ReadMissing", testReadMissing},
		{"PutRead", testPutRead},
		{"Overwrite", testOverwrite},
		{"Stat", testStat},
		{"Delete", testDelete},
		{"InvalidPath", testInvalidPath},
		{"ListOrder", testListOrder},
		{"ListStartAfter", testListStartAfter},
		{"ListEarlyStop", testListEarlyStop},
		{"ListPagination", func(t *testing.T, s storage.Store) { testListPagination(t, s, cfg.ListObjects) }},
		{"RangeRead", testRangeRead},
		{"WriterVisibility", testWriterVisibility},
		{"WriterAbort", testWriterAbort},
		{"WriterLarge", func(t *testing.T, s storage.Store) { testWriterLarge(t, s, cfg.LargeObjectBytes) }},
		{"WriterCancel", testWriterCancel},
		{"ContextCancelled", testContextCancelled},
		{"PutIfAbsent", testPutIfAbsent},
		{"PutIfAbsentConcurrent", func(t *testing.T, s storage.Store) {
			testPutIfAbsentConcurrent(t, s, cfg.ConcurrentRounds, cfg.ConcurrentWriters)
		}},
		{"Sub", testSub},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.fn(t, newStore(t))
		})
	}
}

func put(t *testing.T, s storage.Store, p, data string) {
	t.Helper()
	if err := s.Put(t.Context(), p, []byte(data)); err != nil {
		t.Fatalf("Put(%q): %v", p, err)
	}
}

func read(t *testing.T, s storage.Store, p string) string {
	t.Helper()
	b, err := s.Read(t.Context(), p)
	if err != nil {
		t.Fatalf("Read(%q): %v", p, err)
	}
	return string(b)
}

// listAll collects List(prefix, startAfter) paths.
func listAll(t *testing.T, s storage.Store, prefix, startAfter string) []string {
	t.Helper()
	var got []string
	for fi, err := range s.List(t.Context(), prefix, startAfter) {
		if err != nil {
			t.Fatalf("List(%q, %q): %v", prefix, startAfter, err)
		}
		got = append(got, fi.Path)
	}
	return got
}

func testReadMissing(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const p = "_delta_log/00000000000000000003.json"
	_, err := s.Read(ctx, p)
	if !errors.Is(err, storage.ErrNotFound) {
		t.Fatalf("Read missing: got %v, want ErrNotFound", err)
	}
	want := "read " + p + ": not found"
	if err.Error() != want {
		t.Errorf("Read missing message = %q, want %q", err.Error(), want)
	}
	if _, err := s.Stat(ctx, p); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat missing: got %v, want ErrNotFound", err)
	}
	if _, err := s.NewRangeReader(ctx, p, 0, -1); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("NewRangeReader missing: got %v, want ErrNotFound", err)
	}
	if got := listAll(t, s, "", ""); len(got) != 0 {
		t.Errorf("List of an empty store = %q, want nothing", got)
	}
}

func testPutRead(t *testing.T, s storage.Store) {
	for _, tc := range []struct {
		name, path, data string
	}{
		{"simple", "a.txt", "hello"},
		{"nested", "x/y/z/part-00000.parquet", "PAR1...PAR1"},
		{"empty object", "empty", ""},
		{"hive partition", "date=2024-01-01/city=S%C3%A3o Paulo/part-1.parquet", "p"},
		{"dot file", "_delta_log/.00000000000000000000.json.crc", "crc"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			put(t, s, tc.path, tc.data)
			if got := read(t, s, tc.path); got != tc.data {
				t.Errorf("Read(%q) = %q, want %q", tc.path, got, tc.data)
			}
		})
	}
}

func testOverwrite(t *testing.T, s storage.Store) {
	put(t, s, "k", "first version, longer")
	put(t, s, "k", "second")
	if got := read(t, s, "k"); got != "second" {
		t.Errorf("after overwrite Read = %q, want %q", got, "second")
	}
	if got := listAll(t, s, "", ""); !slices.Equal(got, []string{"k"}) {
		t.Errorf("List after overwrite = %q, want [k] (no temp files)", got)
	}
}

func testStat(t *testing.T, s storage.Store) {
	put(t, s, "dir/obj", "12345")
	fi, err := s.Stat(t.Context(), "dir/obj")
	if err != nil {
		t.Fatal(err)
	}
	if fi.Path != "dir/obj" || fi.Size != 5 || fi.ModTime.IsZero() {
		t.Errorf("Stat = %+v, want path dir/obj, size 5, a modification time", fi)
	}
	if _, err := s.Stat(t.Context(), "dir"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Stat of a \"directory\": got %v, want ErrNotFound", err)
	}
}

func testDelete(t *testing.T, s storage.Store) {
	ctx := t.Context()
	put(t, s, "d/a", "a")
	put(t, s, "d/b", "b")
	if err := s.Delete(ctx, "d/a"); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Read(ctx, "d/a"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read after Delete: got %v, want ErrNotFound", err)
	}
	if err := s.Delete(ctx, "d/a"); err != nil {
		t.Errorf("Delete of an absent object: %v, want nil", err)
	}
	if err := s.Delete(ctx, "never/existed"); err != nil {
		t.Errorf("Delete of a never-existing object: %v, want nil", err)
	}
	if got := listAll(t, s, "", ""); !slices.Equal(got, []string{"d/b"}) {
		t.Errorf("List after Delete = %q, want [d/b]", got)
	}
}

func testInvalidPath(t *testing.T, s storage.Store) {
	ctx := t.Context()
	bad := []string{"", "/abs", "/", "a/../b", "..", "../x", ".", "./a", "a/./b", `a\b`, "a//b", "a/", "a\x00b", "tab\there"}
	ops := []struct {
		name string
		fn   func(p string) error
	}{
		{"Read", func(p string) error { _, err := s.Read(ctx, p); return err }},
		{"NewRangeReader", func(p string) error { _, err := s.NewRangeReader(ctx, p, 0, 1); return err }},
		{"Put", func(p string) error { return s.Put(ctx, p, []byte("x")) }},
		{"PutIfAbsent", func(p string) error { return s.PutIfAbsent(ctx, p, []byte("x")) }},
		{"NewWriter", func(p string) error { _, err := s.NewWriter(ctx, p); return err }},
		{"Stat", func(p string) error { _, err := s.Stat(ctx, p); return err }},
		{"Delete", func(p string) error { return s.Delete(ctx, p) }},
		{"Sub", func(p string) error { return s.Sub(p).Put(ctx, "x", []byte("x")) }},
	}
	for _, op := range ops {
		for _, p := range bad {
			if op.name == "Sub" && (p == "a/" || p == "" || p == "/") {
				continue // Sub accepts a trailing slash; "" and "/" are the root itself
			}
			if err := op.fn(p); !errors.Is(err, storage.ErrInvalidPath) {
				t.Errorf("%s(%q): got %v, want ErrInvalidPath", op.name, p, err)
			}
		}
	}
	if _, err := s.Read(ctx, "a/../b"); err == nil || err.Error() != `read a/../b: invalid path: "a/../b" has a ".." element` {
		t.Errorf("invalid path message = %v", err)
	}
	for _, prefix := range []string{"/abs", "../x", "a/../", `a\`, "a//"} {
		var gotErr error
		for _, err := range s.List(ctx, prefix, "") {
			gotErr = err
		}
		if !errors.Is(gotErr, storage.ErrInvalidPath) {
			t.Errorf("List(%q): got %v, want ErrInvalidPath", prefix, gotErr)
		}
	}
	if got := listAll(t, s, "", ""); len(got) != 0 {
		t.Errorf("invalid paths left objects behind: %q", got)
	}
}

// orderKeys sort differently by key than by a directory walk ("a-b" < "a/b").
// No key is also a "directory" of another: a file system cannot hold both.
var orderKeys = []string{
	"b", "a/b", "a-b", "a.b", "a0", "a/c/d", "a/b0", "_delta_log/00000000000000000010.json",
	"_delta_log/.00000000000000000010.json.crc",
	"_delta_log/00000000000000000002.json", "_delta_log/00000000000000000002.checkpoint.parquet",
	"_delta_log/_last_checkpoint", "z/y/x", "A", "~tilde",
}

func putAll(t *testing.T, s storage.Store, keys []string) []string {
	t.Helper()
	for _, k := range keys {
		put(t, s, k, "v:"+k)
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	return sorted
}

func filterPrefix(keys []string, prefix, startAfter string) []string {
	var out []string
	for _, k := range keys {
		if strings.HasPrefix(k, prefix) && k > startAfter {
			out = append(out, k)
		}
	}
	return out
}

func testListOrder(t *testing.T, s storage.Store) {
	sorted := putAll(t, s, orderKeys)
	for _, prefix := range []string{"", "a", "a/", "a/b", "_delta_log/", "_delta_log/0000", "_delta_log/.", "z/", "nothing/", "A"} {
		got := listAll(t, s, prefix, "")
		want := filterPrefix(sorted, prefix, "")
		if !slices.Equal(got, want) {
			t.Errorf("List(%q) = %q, want %q", prefix, got, want)
		}
	}
	var sizes []int64
	for fi, err := range s.List(t.Context(), "a/", "") {
		if err != nil {
			t.Fatal(err)
		}
		if fi.ModTime.IsZero() {
			t.Errorf("List: %s has no ModTime", fi.Path)
		}
		sizes = append(sizes, fi.Size)
	}
	for i, k := range filterPrefix(sorted, "a/", "") {
		if sizes[i] != int64(len("v:"+k)) {
			t.Errorf("List: %s size %d, want %d", k, sizes[i], len("v:"+k))
		}
	}
}

func testListStartAfter(t *testing.T, s storage.Store) {
	sorted := putAll(t, s, orderKeys)
	for _, tc := range []struct{ prefix, startAfter string }{
		{"", "a-b"},    // existing key: excluded
		{"", "a"},      // before a key
		{"", "a/"},     // between keys
		{"", "a.b"},    //
		{"", "~tilde"}, // last key: nothing
		{"", "0"},      // before everything
		{"_delta_log/", "_delta_log/00000000000000000002.json"},
		{"_delta_log/", "_delta_log/00000000000000000002"},
		{"_delta_log/", ""},
		{"a/", "0"},   // startAfter before the prefix
		{"a/", "zzz"}, // startAfter after the prefix
	} {
		got := listAll(t, s, tc.prefix, tc.startAfter)
		want := filterPrefix(sorted, tc.prefix, tc.startAfter)
		if !slices.Equal(got, want) {
			t.Errorf("List(%q, %q) = %q, want %q", tc.prefix, tc.startAfter, got, want)
		}
	}
}

func testListEarlyStop(t *testing.T, s storage.Store) {
	sorted := putAll(t, s, orderKeys)
	var got []string
	for fi, err := range s.List(t.Context(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fi.Path)
		if len(got) == 3 {
			break
		}
	}
	if !slices.Equal(got, sorted[:3]) {
		t.Errorf("first three of List = %q, want %q", got, sorted[:3])
	}
}

func testListPagination(t *testing.T, s storage.Store, n int) {
	keys := make([]string, n)
	for i := range keys {
		// Two directories so that a walk order and key order could differ.
		keys[i] = fmt.Sprintf("p/%d/%06d", i%2, i)
	}
	putParallel(t, s, keys)
	want := slices.Clone(keys)
	slices.Sort(want)
	if got := listAll(t, s, "p/", ""); !slices.Equal(got, want) {
		t.Fatalf("List over %d objects: got %d (first %q), want %d", n, len(got), head(got), len(want))
	}
	mid := n / 2
	if got := listAll(t, s, "p/", want[mid]); !slices.Equal(got, want[mid+1:]) {
		t.Errorf("List startAfter %q: got %d objects, want %d", want[mid], len(got), len(want[mid+1:]))
	}
	if got := listAll(t, s, "p/1/", ""); len(got) != n/2 {
		t.Errorf("List(p/1/) = %d objects, want %d", len(got), n/2)
	}
}

func head(s []string) []string { return s[:min(len(s), 3)] }

func putParallel(t *testing.T, s storage.Store, keys []string) {
	t.Helper()
	const workers = 16
	var wg sync.WaitGroup
	errs := make(chan error, workers)
	ch := make(chan string)
	for range workers {
		wg.Go(func() {
			for k := range ch {
				if err := s.Put(t.Context(), k, []byte(k)); err != nil {
					errs <- err
					for range ch {
					}
					return
				}
			}
		})
	}
	for _, k := range keys {
		ch <- k
	}
	close(ch)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

func testRangeRead(t *testing.T, s storage.Store) {
	const data = "0123456789abcdef"
	put(t, s, "r", data)
	for _, tc := range []struct {
		name           string
		offset, length int64
		want           string
	}{
		{"whole", 0, -1, data},
		{"prefix", 0, 4, "0123"},
		{"middle", 5, 3, "567"},
		{"tail", 10, -1, "abcdef"},
		{"length past end", 12, 100, "cdef"},
		{"at end", 16, -1, ""},
		{"zero length", 3, 0, ""},
		{"zero length at end", 16, 0, ""},
		{"past end", 20, -1, ""},
		{"past end with length", 20, 5, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := s.NewRangeReader(t.Context(), "r", tc.offset, tc.length)
			if err != nil {
				t.Fatal(err)
			}
			got, err := io.ReadAll(r)
			if cerr := r.Close(); err == nil {
				err = cerr
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Errorf("range(%d, %d) = %q, want %q", tc.offset, tc.length, got, tc.want)
			}
		})
	}
}

func testWriterVisibility(t *testing.T, s storage.Store) {
	ctx := t.Context()
	w, err := s.NewWriter(ctx, "data/part-0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	for i := range 10 {
		if _, err := fmt.Fprintf(w, "row %d\n", i); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Read(ctx, "data/part-0.parquet"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read before Close: got %v, want ErrNotFound", err)
	}
	if got := listAll(t, s, "", ""); len(got) != 0 {
		t.Errorf("List before Close = %q, want nothing (no temp files)", got)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got := read(t, s, "data/part-0.parquet")
	if !strings.HasPrefix(got, "row 0\n") || !strings.HasSuffix(got, "row 9\n") {
		t.Errorf("after Close Read = %q", got)
	}
	if got := listAll(t, s, "", ""); !slices.Equal(got, []string{"data/part-0.parquet"}) {
		t.Errorf("List after Close = %q", got)
	}
	if _, err := w.Write([]byte("late")); err == nil {
		t.Error("Write after Close succeeded")
	}
	// A writer replaces an existing object.
	w2, err := s.NewWriter(ctx, "data/part-0.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w2.Write([]byte("v2")); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "data/part-0.parquet"); !strings.HasPrefix(got, "row 0") {
		t.Errorf("old content must stay visible until Close, got %q", got)
	}
	if err := w2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := read(t, s, "data/part-0.parquet"); got != "v2" {
		t.Errorf("after second writer Read = %q, want v2", got)
	}
}

func testWriterAbort(t *testing.T, s storage.Store) {
	ctx := t.Context()
	w, err := s.NewWriter(ctx, "aborted/file")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(bytes.Repeat([]byte("x"), 1000)); err != nil {
		t.Fatal(err)
	}
	if err := w.Abort(); err != nil {
		t.Fatalf("Abort: %v", err)
	}
	if _, err := s.Read(ctx, "aborted/file"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read after Abort: got %v, want ErrNotFound", err)
	}
	if got := listAll(t, s, "", ""); len(got) != 0 {
		t.Errorf("List after Abort = %q, want nothing", got)
	}
	if err := w.Close(); err == nil {
		t.Error("Close after Abort succeeded")
	}
	if _, err := s.Read(ctx, "aborted/file"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read after Abort+Close: got %v, want ErrNotFound", err)
	}
}

func testWriterLarge(t *testing.T, s storage.Store, size int) {
	data := make([]byte, size)
	for i := range data {
		data[i] = byte(i*7 + i>>10)
	}
	w, err := s.NewWriter(t.Context(), "big/file.bin")
	if err != nil {
		t.Fatal(err)
	}
	for chunk := range slices.Chunk(data, 256<<10) {
		if _, err := w.Write(chunk); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	got, err := s.Read(t.Context(), "big/file.bin")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, data) {
		t.Fatalf("large object: read %d bytes, differs from the %d written", len(got), len(data))
	}
	r, err := s.NewRangeReader(t.Context(), "big/file.bin", int64(size-10), -1)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	tail, err := io.ReadAll(r)
	if err != nil || !bytes.Equal(tail, data[size-10:]) {
		t.Errorf("range read of the tail: %v, %x want %x", err, tail, data[size-10:])
	}
}

func testWriterCancel(t *testing.T, s storage.Store) {
	ctx, cancel := context.WithCancel(t.Context())
	w, err := s.NewWriter(ctx, "cancelled/file")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = w.Write([]byte("partial"))
	cancel()
	if err := w.Close(); err == nil {
		t.Error("Close after ctx cancellation succeeded")
	}
	if _, err := s.Read(t.Context(), "cancelled/file"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("Read after cancelled write: got %v, want ErrNotFound", err)
	}
	if got := listAll(t, s, "", ""); len(got) != 0 {
		t.Errorf("List after cancelled write = %q, want nothing", got)
	}
}

func testContextCancelled(t *testing.T, s storage.Store) {
	put(t, s, "exists", "x")
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	ops := []struct {
		name string
		fn   func() error
	}{
		{"Read", func() error { _, err := s.Read(ctx, "exists"); return err }},
		{"NewRangeReader", func() error { _, err := s.NewRangeReader(ctx, "exists", 0, 1); return err }},
		{"Put", func() error { return s.Put(ctx, "new", []byte("x")) }},
		{"PutIfAbsent", func() error { return s.PutIfAbsent(ctx, "new2", []byte("x")) }},
		{"NewWriter", func() error { _, err := s.NewWriter(ctx, "new3"); return err }},
		{"Stat", func() error { _, err := s.Stat(ctx, "exists"); return err }},
		{"Delete", func() error { return s.Delete(ctx, "exists") }},
		{"List", func() error {
			for _, err := range s.List(ctx, "", "") {
				if err != nil {
					return err
				}
			}
			return nil
		}},
	}
	for _, op := range ops {
		if err := op.fn(); !errors.Is(err, context.Canceled) {
			t.Errorf("%s with a cancelled ctx: got %v, want context.Canceled", op.name, err)
		}
	}
	if got := listAll(t, s, "", ""); !slices.Equal(got, []string{"exists"}) {
		t.Errorf("after cancelled ops List = %q, want [exists]", got)
	}
}

func testPutIfAbsent(t *testing.T, s storage.Store) {
	ctx := t.Context()
	const p = "_delta_log/00000000000000000000.json"
	if err := s.PutIfAbsent(ctx, p, []byte("winner")); err != nil {
		t.Fatal(err)
	}
	err := s.PutIfAbsent(ctx, p, []byte("loser"))
	if !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("second PutIfAbsent: got %v, want ErrAlreadyExists", err)
	}
	if want := "put-if-absent " + p + ": already exists"; err.Error() != want {
		t.Errorf("message = %q, want %q", err.Error(), want)
	}
	if got := read(t, s, p); got != "winner" {
		t.Errorf("after lost PutIfAbsent Read = %q, want winner", got)
	}
	put(t, s, "plain", "by put")
	if err := s.PutIfAbsent(ctx, "plain", []byte("x")); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Errorf("PutIfAbsent over a Put object: got %v, want ErrAlreadyExists", err)
	}
	if err := s.PutIfAbsent(ctx, "empty/commit", nil); err != nil {
		t.Errorf("PutIfAbsent of an empty object: %v", err)
	}
	want := []string{p, "empty/commit", "plain"}
	if got := listAll(t, s, "", ""); !slices.Equal(got, want) {
		t.Errorf("List = %q, want %q (no temp files)", got, want)
	}
}

func testPutIfAbsentConcurrent(t *testing.T, s storage.Store, rounds, writers int) {
	ctx := t.Context()
	for round := range rounds {
		key := fmt.Sprintf("race/%05d.json", round)
		results := make([]error, writers)
		var wg sync.WaitGroup
		start := make(chan struct{})
		for w := range writers {
			wg.Go(func() {
				<-start
				results[w] = s.PutIfAbsent(ctx, key, []byte(fmt.Sprintf("writer %d", w)))
			})
		}
		close(start)
		wg.Wait()
		winner := -1
		for w, err := range results {
			switch {
			case err == nil:
				if winner >= 0 {
					t.Fatalf("round %d: writers %d and %d both won", round, winner, w)
				}
				winner = w
			case errors.Is(err, storage.ErrAlreadyExists):
			default:
				t.Fatalf("round %d writer %d: %v", round, w, err)
			}
		}
		if winner < 0 {
			t.Fatalf("round %d: no writer won", round)
		}
		if got, want := read(t, s, key), fmt.Sprintf("writer %d", winner); got != want {
			t.Fatalf("round %d: content %q, want the winner's %q", round, got, want)
		}
	}
	if got := listAll(t, s, "race/", ""); len(got) != rounds {
		t.Errorf("List(race/) = %d objects, want %d (no temp files)", len(got), rounds)
	}
}

func testSub(t *testing.T, s storage.Store) {
	ctx := t.Context()
	sub := s.Sub("tables/t1")
	if !strings.HasSuffix(sub.URL(), "/tables/t1") && !strings.Contains(sub.URL(), "/tables/t1?") {
		t.Errorf("Sub URL = %q, want it to end in /tables/t1", sub.URL())
	}
	put(t, sub, "_delta_log/0.json", "c0")
	put(t, s, "tables/t10/x", "other table")
	put(t, s, "outside", "o")
	if got := read(t, s, "tables/t1/_delta_log/0.json"); got != "c0" {
		t.Errorf("parent sees %q, want c0", got)
	}
	if got := listAll(t, sub, "", ""); !slices.Equal(got, []string{"_delta_log/0.json"}) {
		t.Errorf("List in Sub = %q, want [_delta_log/0.json]", got)
	}
	if got := listAll(t, sub, "", "_delta_log/"); !slices.Equal(got, []string{"_delta_log/0.json"}) {
		t.Errorf("List in Sub after _delta_log/ = %q", got)
	}
	if err := sub.PutIfAbsent(ctx, "_delta_log/0.json", []byte("x")); !errors.Is(err, storage.ErrAlreadyExists) {
		t.Errorf("Sub PutIfAbsent: got %v, want ErrAlreadyExists", err)
	}
	nested := sub.Sub("_delta_log")
	if got := read(t, nested, "0.json"); got != "c0" {
		t.Errorf("nested Sub Read = %q", got)
	}
	if got := read(t, s.Sub(""), "outside"); got != "o" {
		t.Errorf(`Sub("") Read = %q, want the root's object`, got)
	}
	if err := sub.Close(); err != nil {
		t.Errorf("Close of a Sub: %v", err)
	}
	if got := read(t, s, "outside"); got != "o" {
		t.Errorf("parent after Sub.Close = %q", got)
	}
}
