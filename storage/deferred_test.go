package storage

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
)

// countFsyncs makes fsyncFile record the names it fsyncs, for the test.
func countFsyncs(t *testing.T) func() []string {
	var mu sync.Mutex
	var names []string
	prev := fsyncFile
	t.Cleanup(func() { fsyncFile = prev })
	fsyncFile = func(f *os.File) error {
		mu.Lock()
		names = append(names, f.Name())
		mu.Unlock()
		return prev(f)
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		out := slices.Clone(names)
		names = names[:0]
		slices.Sort(out)
		return out
	}
}

// TestDeferredWriterSyncsOnceAtTheEnd: files written by NewDeferredWriter
// into new directories are fsynced neither when written nor when closed,
// and SyncObjects then fsyncs each file once, each of their directories
// once and the directories between them and the store's location once
// (NewWriter fsyncs the file, its directory and, for a new directory, its
// parent: three per file of a new partition directory, 711 fsyncs in a row
// for the 229 files of the 3M flights by origin before).
func TestDeferredWriterSyncsOnceAtTheEnd(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	tbl := st.Sub("t")
	if err := tbl.Put(ctx, "_delta_log/x", []byte("x")); err != nil { // the table directory exists
		t.Fatal(err)
	}
	fsyncs := countFsyncs(t)
	var paths []string
	for i := range 6 {
		p := fmt.Sprintf("a=%d/b=%d/part-%d.parquet", i%3, i%2, i)
		putDeferred(t, tbl, p)
		paths = append(paths, p)
	}
	if got := fsyncs(); len(got) != 0 {
		t.Fatalf("writing and closing fsynced %q, want nothing before SyncObjects", got)
	}
	for _, p := range paths {
		if b, err := tbl.Read(ctx, p); err != nil || string(b) != p {
			t.Fatalf("read %s after Close = %q, %v", p, b, err)
		}
	}
	if err := SyncObjects(ctx, tbl, paths); err != nil {
		t.Fatal(err)
	}
	root := filepath.Join(dir, "t")
	var want []string
	for _, p := range paths {
		want = append(want, filepath.Join(root, filepath.FromSlash(p)))
	}
	want = append(want, root, dir) // dir: the location Open was given, which holds t
	for a := range 3 {
		want = append(want, filepath.Join(root, fmt.Sprintf("a=%d", a)))
	}
	for _, ab := range [][2]int{{0, 0}, {1, 1}, {2, 0}, {0, 1}, {1, 0}, {2, 1}} {
		want = append(want, filepath.Join(root, fmt.Sprintf("a=%d", ab[0]), fmt.Sprintf("b=%d", ab[1])))
	}
	slices.Sort(want)
	if got := fsyncs(); !slices.Equal(got, want) {
		t.Errorf("SyncObjects fsynced\n%q\nwant each file and directory once:\n%q", got, want)
	}

	// NewWriter, for comparison: the file, its directory and the new
	// directory's parent, when it returns.
	w, err := tbl.NewWriter(ctx, "a=9/part-9.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("9")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := fsyncs(); len(got) != 3 {
		t.Errorf("NewWriter into a new directory fsynced %q, want 3", got)
	}
}

// TestDeferredWriterElsewhere: a store without deferred writes (mem://)
// writes durably on Close and SyncObjects has nothing to do; a path that
// was deleted fails SyncObjects on local disk with ErrNotFound naming it.
func TestDeferredWriterElsewhere(t *testing.T) {
	ctx := context.Background()
	mem, err := Open(ctx, "mem://deferred-test")
	if err != nil {
		t.Fatal(err)
	}
	defer mem.Close()
	w, err := NewDeferredWriter(ctx, mem, "a/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := SyncObjects(ctx, mem, []string{"a/x"}); err != nil {
		t.Fatal(err)
	}
	if b, err := mem.Read(ctx, "a/x"); err != nil || string(b) != "x" {
		t.Fatalf("read a/x = %q, %v", b, err)
	}

	st, err := Open(ctx, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	err = SyncObjects(ctx, st, []string{"gone/x"})
	var pe *PathError
	if !errors.Is(err, ErrNotFound) || !errors.As(err, &pe) || pe.Path != "gone/x" || pe.Op != "sync" {
		t.Fatalf("SyncObjects of a missing object = %v, want a sync PathError of gone/x wrapping ErrNotFound", err)
	}
}

// TestDeferredWriterCreatesInTheBackground: NewDeferredWriter on local disk
// returns before its file (and a missing partition directory) is created,
// at most createWorkers writers of a store create theirs at once, and
// Write and Close wait for the creation: the writes land in the file. A
// creation that fails (the directory's name is a file) fails Write and
// Close with a *PathError naming the object, and Abort then has nothing to
// remove. (The partitioned ingest's writing goroutines waited on each new
// airport's mkdir and create before.)
func TestDeferredWriterCreatesInTheBackground(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	st, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Put(ctx, "_delta_log/x", []byte("x")); err != nil { // the location exists
		t.Fatal(err)
	}
	// Every creation of a file in a missing directory makes it first
	// (mkdirLocal): held there until release is closed, unless it runs on
	// the test's goroutine (inside NewDeferredWriter).
	release := make(chan struct{})
	var mu sync.Mutex
	inside, most, onCaller := 0, 0, 0
	caller := goroutineID()
	prev := mkdirLocal
	t.Cleanup(func() { mkdirLocal = prev })
	mkdirLocal = func(name string, perm os.FileMode) error {
		if goroutineID() == caller {
			onCaller++
		} else {
			mu.Lock()
			inside++
			most = max(most, inside)
			mu.Unlock()
			<-release
			mu.Lock()
			inside--
			mu.Unlock()
		}
		return prev(name, perm)
	}
	const n = 3 * createWorkers
	ws := make([]Writer, n)
	for i := range ws {
		w, err := NewDeferredWriter(ctx, st, fmt.Sprintf("k=%d/part-%d.parquet", i, i))
		if err != nil {
			t.Fatal(err)
		}
		ws[i] = w
	}
	// Every NewDeferredWriter returned with the creations held.
	if onCaller > 0 {
		t.Errorf("%d of %d files were created inside NewDeferredWriter", onCaller, n)
	}
	if _, err := os.Stat(filepath.Join(dir, "k=0")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("k=0 exists before its creation was released: %v", err)
	}
	close(release)
	for i, w := range ws {
		if _, err := w.Write(fmt.Appendf(nil, "file %d", i)); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if most == 0 || most > createWorkers {
		t.Errorf("%d creations at once at most, want 1..%d", most, createWorkers)
	}
	for i := range n {
		got, err := os.ReadFile(filepath.Join(dir, fmt.Sprintf("k=%d", i), fmt.Sprintf("part-%d.parquet", i)))
		if err != nil || string(got) != fmt.Sprintf("file %d", i) {
			t.Errorf("file %d: %q, %v", i, got, err)
		}
	}

	mkdirLocal = prev
	if err := st.Put(ctx, "f", []byte("a file")); err != nil {
		t.Fatal(err)
	}
	for _, op := range []string{"write", "close", "abort"} {
		w, err := NewDeferredWriter(ctx, st, "f/part-0.parquet")
		if err != nil {
			t.Fatalf("%s: NewDeferredWriter: %v (creation errors come from Write and Close)", op, err)
		}
		var pe *PathError
		switch op {
		case "write":
			if _, err := w.Write([]byte("x")); !errors.As(err, &pe) || pe.Path != "f/part-0.parquet" {
				t.Errorf("Write into a file's name: %v, want a *PathError for f/part-0.parquet", err)
			}
			if err := w.Close(); err == nil {
				t.Error("Close after the failed creation succeeded")
			}
		case "close":
			if err := w.Close(); !errors.As(err, &pe) || pe.Path != "f/part-0.parquet" {
				t.Errorf("Close of a writer into a file's name: %v, want a *PathError for f/part-0.parquet", err)
			}
		case "abort":
			if err := w.Abort(); err != nil {
				t.Errorf("Abort after a failed creation: %v", err)
			}
		}
	}
	if got, err := os.ReadFile(filepath.Join(dir, "f")); err != nil || string(got) != "a file" {
		t.Errorf("f: %q, %v", got, err)
	}
}

// goroutineID is the calling goroutine's id, from its stack trace's first
// line ("goroutine 7 [running]:").
func goroutineID() string {
	var buf [64]byte
	f := strings.Fields(string(buf[:runtime.Stack(buf[:], false)]))
	return f[1]
}

// TestDeferredWriterCancelledBeforeCreation: a deferred writer whose ctx is
// cancelled while its creation waits for a slot (every slot held) creates
// neither its file nor its directory once a slot frees: the creation ends,
// Write and Close return ctx's error, Abort has nothing to remove, the slot
// is given back, and no temporary file is left. Without the ctx check the
// creation took the freed slot and created the temporary file and the
// partition directory of a write nobody would make.
func TestDeferredWriterCancelledBeforeCreation(t *testing.T) {
	dir := t.TempDir()
	st, err := Open(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	lb := st.(*store).be.(*localBackend)
	for range createWorkers {
		lb.createSlots <- struct{}{}
	}
	ctx, cancel := context.WithCancel(context.Background())
	ws := make([]Writer, 3)
	for i := range ws {
		if ws[i], err = NewDeferredWriter(ctx, st, fmt.Sprintf("k=%d/part-0.parquet", i)); err != nil {
			t.Fatal(err)
		}
	}
	cancel()
	for range createWorkers {
		<-lb.createSlots
	}
	for i, w := range ws {
		w := w.(*pathWriter).w.(*localWriter)
		<-w.created
		if w.f != nil || !errors.Is(w.createErr, context.Canceled) {
			t.Errorf("writer %d: creation after cancel: file %v, error %v; want none and context.Canceled", i, w.f != nil, w.createErr)
		}
	}
	if _, err := ws[0].Write([]byte("x")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write: %v, want context.Canceled", err)
	}
	if err := ws[1].Close(); !errors.Is(err, context.Canceled) {
		t.Errorf("Close: %v, want context.Canceled", err)
	}
	for i, w := range ws {
		if err := w.Abort(); err != nil {
			t.Errorf("Abort %d: %v", i, err)
		}
	}
	// Every slot is free again.
	for range createWorkers {
		select {
		case lb.createSlots <- struct{}{}:
		default:
			t.Fatal("a cancelled creation kept its slot")
		}
	}
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Errorf("left behind: %s", e.Name())
	}
}

// putDeferred writes p, with its own name as content, through a deferred
// writer and closes it.
func putDeferred(t *testing.T, st Store, p string) {
	t.Helper()
	w, err := NewDeferredWriter(context.Background(), st, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(p)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
}
