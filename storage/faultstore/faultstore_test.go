package faultstore_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"testing"
	"testing/synctest"
	"time"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/storage/storagetest"
)

func memStore(t *testing.T) storage.Store {
	t.Helper()
	o, err := storage.NewOpener(storage.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	s, err := o.Open(t.Context(), "mem://faultstore")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func newFS(t *testing.T, inner storage.Store, rules ...faultstore.Rule) *faultstore.Store {
	t.Helper()
	fs, err := faultstore.New(inner, faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.Add(rules...); err != nil {
		t.Fatal(err)
	}
	return fs
}

// Without rules the wrapper is a conforming store.
func TestConformanceWithoutFaults(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		return newFS(t, memStore(t))
	})
}

func TestFailBeforeByOpAndGlob(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	fs := newFS(t, base, faultstore.Rule{Ops: faultstore.OpPut | faultstore.OpPutIfAbsent, Path: "_delta_log/*.json"})
	err := fs.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("c"))
	if !errors.Is(err, faultstore.ErrInjected) || errors.Is(err, storage.ErrCommitStateUnknown) {
		t.Fatalf("PutIfAbsent: got %v, want ErrInjected only", err)
	}
	if _, err := base.Read(ctx, "_delta_log/00000000000000000000.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a FailBefore write landed: %v", err)
	}
	for _, p := range []string{"_delta_log/_last_checkpoint", "_delta_log/x/y.json", "part-0.json"} {
		if err := fs.Put(ctx, p, []byte("x")); err != nil {
			t.Errorf("Put(%q) outside the glob: %v", p, err)
		}
	}
	if _, err := fs.Read(ctx, "part-0.json"); err != nil {
		t.Errorf("Read is not selected by the rule: %v", err)
	}
	if got := fs.Counts().Injected; got != 1 {
		t.Errorf("Injected = %d, want 1", got)
	}
}

func TestFailAfterIsLostResponse(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	fs := newFS(t, base,
		faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Mode: faultstore.FailAfter},
		faultstore.Rule{Ops: faultstore.OpPut, Mode: faultstore.FailAfter},
	)
	err := fs.PutIfAbsent(ctx, "c.json", []byte("ours"))
	if !errors.Is(err, storage.ErrCommitStateUnknown) || !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("PutIfAbsent FailAfter: got %v, want ErrCommitStateUnknown and ErrInjected", err)
	}
	if got, err := base.Read(ctx, "c.json"); err != nil || string(got) != "ours" {
		t.Errorf("the write must have landed: %q, %v", got, err)
	}
	err = fs.Put(ctx, "p", []byte("x"))
	if !errors.Is(err, faultstore.ErrInjected) || errors.Is(err, storage.ErrCommitStateUnknown) {
		t.Errorf("Put FailAfter: got %v", err)
	}
	if _, err := base.Read(ctx, "p"); err != nil {
		t.Errorf("Put FailAfter must land: %v", err)
	}
}

func TestNthAndDoubleStarGlob(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	if err := base.Put(ctx, "t/_delta_log/a", []byte("a")); err != nil {
		t.Fatal(err)
	}
	fs := newFS(t, base, faultstore.Rule{Ops: faultstore.OpRead, Path: "t/**", Nth: 3})
	var failed []int
	for i := 1; i <= 5; i++ {
		if _, err := fs.Read(ctx, "t/_delta_log/a"); err != nil {
			if !errors.Is(err, faultstore.ErrInjected) {
				t.Fatal(err)
			}
			failed = append(failed, i)
		}
	}
	if !slices.Equal(failed, []int{3}) {
		t.Errorf("failed calls %v, want [3]", failed)
	}
	// A Sub's paths are matched relative to the faultstore's root.
	fs2 := newFS(t, base, faultstore.Rule{Ops: faultstore.OpRead, Path: "t/_delta_log/*"})
	if _, err := fs2.Sub("t").Read(ctx, "_delta_log/a"); !errors.Is(err, faultstore.ErrInjected) {
		t.Errorf("Read through Sub: got %v, want ErrInjected", err)
	}
}

func TestProbabilityIsSeeded(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	if err := base.Put(ctx, "x", []byte("x")); err != nil {
		t.Fatal(err)
	}
	pattern := func(seed uint64) []bool {
		opts := faultstore.DefaultOptions()
		opts.Seed = seed
		fs, err := faultstore.New(base, opts)
		if err != nil {
			t.Fatal(err)
		}
		if err := fs.Add(faultstore.Rule{Ops: faultstore.OpStat, Probability: 0.3}); err != nil {
			t.Fatal(err)
		}
		out := make([]bool, 1000)
		for i := range out {
			_, err := fs.Stat(ctx, "x")
			out[i] = err != nil
		}
		return out
	}
	const seed = 42
	t.Logf("seed %d", seed)
	a, b, c := pattern(seed), pattern(seed), pattern(seed+1)
	if !slices.Equal(a, b) {
		t.Error("same seed gave different fault patterns")
	}
	if slices.Equal(a, c) {
		t.Error("different seeds gave the same fault pattern")
	}
	n := 0
	for _, f := range a {
		if f {
			n++
		}
	}
	if n < 230 || n > 370 {
		t.Errorf("%d of 1000 calls failed with probability 0.3", n)
	}
}

// commitLike performs three writes, as a Delta commit does: a data file
// through a writer, a checkpoint with Put, the commit with PutIfAbsent.
func commitLike(ctx context.Context, s storage.Store) error {
	w, err := s.NewWriter(ctx, "part-0.parquet")
	if err != nil {
		return err
	}
	if _, err := io.WriteString(w, "rows"); err != nil {
		_ = w.Abort()
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("close data file: %w", err)
	}
	if err := s.Put(ctx, "_delta_log/_last_checkpoint", []byte("{}")); err != nil {
		return err
	}
	return s.PutIfAbsent(ctx, "_delta_log/00000000000000000001.json", []byte("commit"))
}

func TestCrashLoop(t *testing.T) {
	ctx := t.Context()
	order := []string{"part-0.parquet", "_delta_log/_last_checkpoint", "_delta_log/00000000000000000001.json"}
	for k := 0; ; k++ {
		if k > 10 {
			t.Fatal("the operation never completed")
		}
		base := memStore(t)
		for fi := range base.List(ctx, "", "") {
			_ = base.Delete(ctx, fi.Path)
		}
		fs := newFS(t, base)
		fs.CrashAfterWrites(k)
		err := commitLike(ctx, fs)
		var got []string
		for fi, err := range base.List(ctx, "", "") {
			if err != nil {
				t.Fatal(err)
			}
			got = append(got, fi.Path)
		}
		want := slices.Clone(order[:min(k, len(order))])
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("k=%d: store holds %q, want %q", k, got, want)
		}
		if err == nil {
			if k != len(order) {
				t.Errorf("completed at k=%d, want %d", k, len(order))
			}
			if fs.Crashed() {
				t.Error("Crashed after a completed run")
			}
			return
		}
		if !errors.Is(err, faultstore.ErrInjected) || !fs.Crashed() {
			t.Fatalf("k=%d: got %v (crashed %v), want an injected crash", k, err, fs.Crashed())
		}
		// Once crashed, every write fails.
		if err := fs.Delete(ctx, "anything"); !errors.Is(err, faultstore.ErrInjected) {
			t.Errorf("k=%d: write after the crash: %v", k, err)
		}
	}
}

// TestDelay runs in a synctest bubble, whose clock advances only when every
// goroutine in it is blocked: the Put takes exactly its 30 ms of fake time,
// and a deadline shorter than the delay always wins, however loaded the
// machine is.
func TestDelay(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		base := memStore(t)
		fs := newFS(t, base, faultstore.Rule{Ops: faultstore.OpPut, Mode: faultstore.Delay, Latency: 30 * time.Millisecond})
		start := time.Now()
		if err := fs.Put(t.Context(), "x", []byte("x")); err != nil {
			t.Fatal(err)
		}
		if d := time.Since(start); d != 30*time.Millisecond {
			t.Errorf("Put took %v of the bubble's clock, want 30ms", d)
		}
		ctx, cancel := context.WithTimeout(t.Context(), 5*time.Millisecond)
		defer cancel()
		start = time.Now()
		if err := fs.Put(ctx, "y", []byte("y")); !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("Put with a short deadline: got %v", err)
		}
		if d := time.Since(start); d != 5*time.Millisecond {
			t.Errorf("Put with a 5ms deadline returned after %v of the bubble's clock", d)
		}
		if _, err := base.Read(t.Context(), "y"); !errors.Is(err, storage.ErrNotFound) {
			t.Errorf("a cancelled delayed Put landed: %v", err)
		}
	})
}

func TestWriterCloseFault(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	fs := newFS(t, base, faultstore.Rule{Ops: faultstore.OpWriterClose, Path: "*.parquet"})
	w, err := fs.NewWriter(ctx, "a.parquet")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte("data")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Close: got %v, want ErrInjected", err)
	}
	if _, err := base.Read(ctx, "a.parquet"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("failed Close published the object: %v", err)
	}
}

func TestCounts(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	fs := newFS(t, base)
	for i := range 2500 {
		if err := fs.Put(ctx, fmt.Sprintf("k/%05d", i), nil); err != nil {
			t.Fatal(err)
		}
	}
	for range fs.List(ctx, "k/", "") {
	}
	for range fs.List(ctx, "none/", "") {
	}
	n := 0
	for range fs.List(ctx, "k/", "") {
		if n++; n == 10 {
			break
		}
	}
	_, _ = fs.Read(ctx, "k/00000")
	_, _ = fs.Stat(ctx, "missing")
	_ = fs.Delete(ctx, "k/00001")
	c := fs.Counts()
	want := faultstore.Counts{Put: 2500, List: 3, ListItems: 2510, ListPages: 3 + 1 + 1, Read: 1, Stat: 1, Delete: 1, Writes: 2501}
	if c != want {
		t.Errorf("Counts = %+v\nwant     %+v", c, want)
	}
	fs.ResetCounts()
	if c := fs.Counts(); c.Put != 0 || c.List != 0 {
		t.Errorf("after ResetCounts: %+v", c)
	}
}

func TestInvalidRules(t *testing.T) {
	fs := newFS(t, memStore(t))
	for _, r := range []faultstore.Rule{
		{Nth: -1},
		{Probability: 1.5},
		{Mode: faultstore.Delay},
		{Path: "[unclosed"},
		{Mode: faultstore.Mode(9)},
	} {
		if err := fs.Add(r); !errors.Is(err, faultstore.ErrInvalidRule) {
			t.Errorf("Add(%+v): got %v, want ErrInvalidRule", r, err)
		}
	}
}

// Counts.WriterAbort counts each writer's first Abort, none after Close, so
// NewWriter - WriterClose - WriterAbort is the number of open writers.
func TestCountsOpenWriters(t *testing.T) {
	fs := newFS(t, memStore(t))
	ctx := t.Context()
	open := func() int64 { c := fs.Counts(); return c.NewWriter - c.WriterClose - c.WriterAbort }
	a, err := fs.NewWriter(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	b, err := fs.NewWriter(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if n := open(); n != 2 {
		t.Fatalf("%d open writers, want 2", n)
	}
	_ = a.Abort()
	_ = a.Abort() // a second abort is not a second writer gone
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
	_ = b.Abort() // after Close: nothing to abort
	if c := fs.Counts(); open() != 0 || c.WriterAbort != 1 {
		t.Fatalf("counts %+v: %d open, want 0 and WriterAbort 1", c, open())
	}
}

// TestNowAndSetModTime: writes through the Store are dated by Options.Now,
// SetModTime overrides one object, a rewrite takes the clock again, and a
// delete forgets the time; List and Stat agree, through a Sub too.
func TestNowAndSetModTime(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	opts := faultstore.DefaultOptions()
	opts.Now = func() time.Time { return now }
	fs, err := faultstore.New(base, opts)
	if err != nil {
		t.Fatal(err)
	}
	modTimes := func() map[string]time.Time {
		out := map[string]time.Time{}
		for fi, err := range fs.List(ctx, "", "") {
			if err != nil {
				t.Fatal(err)
			}
			out[fi.Path] = fi.ModTime
			st, err := fs.Stat(ctx, fi.Path)
			if err != nil || !st.ModTime.Equal(fi.ModTime) {
				t.Fatalf("Stat(%s) = %v, %v; List says %v", fi.Path, st.ModTime, err, fi.ModTime)
			}
		}
		return out
	}
	if err := fs.Put(ctx, "a", []byte("1")); err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour)
	if err := fs.PutIfAbsent(ctx, "d/b", []byte("2")); err != nil {
		t.Fatal(err)
	}
	w, err := fs.Sub("d").NewWriter(ctx, "c")
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(time.Hour) // the time of Close, not of NewWriter
	if _, err := w.Write([]byte("3")); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	want := map[string]time.Time{"a": t0, "d/b": t0.Add(time.Hour), "d/c": t0.Add(2 * time.Hour)}
	if got := modTimes(); !maps.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("mod times %v, want %v", got, want)
	}
	if fi, err := fs.Sub("d").Stat(ctx, "c"); err != nil || !fi.ModTime.Equal(want["d/c"]) {
		t.Fatalf("Sub Stat = %v, %v", fi.ModTime, err)
	}
	old := time.Unix(5, 0)
	fs.SetModTime("a", old)
	want["a"] = old
	if got := modTimes(); !maps.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("after SetModTime: %v, want %v", got, want)
	}
	now = now.Add(time.Hour)
	if err := fs.Put(ctx, "a", []byte("again")); err != nil {
		t.Fatal(err)
	}
	want["a"] = now
	if err := fs.Delete(ctx, "d/b"); err != nil {
		t.Fatal(err)
	}
	delete(want, "d/b")
	if got := modTimes(); !maps.EqualFunc(got, want, time.Time.Equal) {
		t.Fatalf("after rewrite and delete: %v, want %v", got, want)
	}
	// An object written around the Store has the inner store's time.
	if err := base.Put(ctx, "d/b", []byte("x")); err != nil {
		t.Fatal(err)
	}
	if fi, err := fs.Stat(ctx, "d/b"); err != nil || fi.ModTime.Equal(t0.Add(time.Hour)) {
		t.Fatalf("a deleted object's time came back: %v, %v", fi.ModTime, err)
	}
}

// TestURL: Options.URL is what URL reports, with a Sub's directory.
func TestURL(t *testing.T) {
	opts := faultstore.DefaultOptions()
	opts.URL = "file:///data/out/"
	fs, err := faultstore.New(memStore(t), opts)
	if err != nil {
		t.Fatal(err)
	}
	if got := fs.URL(); got != "file:///data/out" {
		t.Errorf("URL = %q", got)
	}
	if got := fs.Sub("a/b/").URL(); got != "file:///data/out/a/b" {
		t.Errorf("Sub URL = %q", got)
	}
	if got := newFS(t, memStore(t)).URL(); got != "mem://faultstore" {
		t.Errorf("URL without Options.URL = %q, want the inner store's", got)
	}
}

// TestCallRule: a Call rule runs its Func before each matching call (here
// another writer's commit lands first), the call then runs normally, and
// a later FailBefore rule with Err still applies.
func TestCallRule(t *testing.T) {
	ctx := t.Context()
	base := memStore(t)
	var calls []string
	fs := newFS(t, base,
		faultstore.Rule{Ops: faultstore.OpPutIfAbsent | faultstore.OpRead, Path: "_delta_log/*", Mode: faultstore.Call,
			Func: func(op faultstore.Op, p string) {
				calls = append(calls, op.String()+" "+p)
				if op == faultstore.OpPutIfAbsent {
					_ = base.Put(ctx, "_delta_log/1.json", []byte("theirs"))
				}
			}},
		faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Path: "_delta_log/2.json", Mode: faultstore.FailBefore, Err: storage.ErrCommitStateUnknown},
	)
	err := fs.PutIfAbsent(ctx, "_delta_log/1.json", []byte("ours"))
	if !errors.Is(err, storage.ErrAlreadyExists) {
		t.Fatalf("PutIfAbsent after the Func's write: %v, want ErrAlreadyExists", err)
	}
	if _, err := fs.Read(ctx, "_delta_log/1.json"); err != nil {
		t.Fatal(err)
	}
	err = fs.PutIfAbsent(ctx, "_delta_log/2.json", []byte("ours"))
	if !errors.Is(err, storage.ErrCommitStateUnknown) || !errors.Is(err, faultstore.ErrInjected) {
		t.Fatalf("Err rule: %v, want ErrCommitStateUnknown and ErrInjected", err)
	}
	if _, err := base.Read(ctx, "_delta_log/2.json"); !errors.Is(err, storage.ErrNotFound) {
		t.Errorf("a FailBefore write landed: %v", err)
	}
	want := []string{"put-if-absent _delta_log/1.json", "read _delta_log/1.json", "put-if-absent _delta_log/2.json"}
	if !slices.Equal(calls, want) {
		t.Errorf("Func calls %q, want %q", calls, want)
	}
	for _, r := range []faultstore.Rule{
		{Mode: faultstore.Call},
		{Mode: faultstore.FailBefore, Func: func(faultstore.Op, string) {}},
		{Mode: faultstore.Delay, Latency: time.Millisecond, Err: storage.ErrCommitStateUnknown},
	} {
		if err := fs.Add(r); !errors.Is(err, faultstore.ErrInvalidRule) {
			t.Errorf("Add(%+v) = %v, want ErrInvalidRule", r, err)
		}
	}
}
