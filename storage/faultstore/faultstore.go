package faultstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"math/rand/v2"
	"path"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// Op is a kind of storage operation; Ops combine with |.
type Op uint16

const (
	OpRead        Op = 1 << iota // Store.Read
	OpRangeRead                  // Store.NewRangeReader
	OpPut                        // Store.Put
	OpPutIfAbsent                // Store.PutIfAbsent
	OpNewWriter                  // Store.NewWriter (opening the writer)
	OpWriterClose                // Writer.Close (publishing the object)
	OpList                       // Store.List (the path is the prefix)
	OpStat                       // Store.Stat
	OpDelete                     // Store.Delete

	// OpWrites are the operations that change the store; crash mode fails
	// them.
	OpWrites = OpPut | OpPutIfAbsent | OpWriterClose | OpDelete
	// OpAll matches every operation.
	OpAll = OpRead | OpRangeRead | OpPut | OpPutIfAbsent | OpNewWriter | OpWriterClose | OpList | OpStat | OpDelete
)

var opNames = []string{"read", "read-range", "put", "put-if-absent", "write", "write", "list", "stat", "delete"}

// String names the operations of the set joined by "|" (e.g. "put|delete"), "none" for the empty set.
func (o Op) String() string {
	var names []string
	for i, n := range opNames {
		if o&(1<<i) != 0 {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return "none"
	}
	return strings.Join(names, "|")
}

// Mode is what a firing rule does.
type Mode int

const (
	// FailBefore returns an error without performing the operation.
	FailBefore Mode = iota
	// FailAfter performs the operation, then returns an error: the write
	// landed but its answer was lost. For PutIfAbsent the error also
	// matches storage.ErrCommitStateUnknown.
	FailAfter
	// Delay sleeps Rule.Latency (honouring ctx), then performs the
	// operation normally; other rules still apply.
	Delay
	// Call runs Rule.Func before the operation, outside the Store's lock
	// (Func may use the Store or its inner store), then performs the
	// operation normally; other rules still apply. It stands another
	// writer's move between two steps of the code under test ("a commit
	// lands just before ours"), or counts the calls of one path.
	Call
)

// String is "before", "after" or "delay", the suffix crash tests give
// their subtests ("commit#0/after").
func (m Mode) String() string {
	switch m {
	case FailBefore:
		return "before"
	case FailAfter:
		return "after"
	case Delay:
		return "delay"
	case Call:
		return "call"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Rule is one composable injector. A call matches when its operation is in
// Ops and its path matches Path; a matching call fires when it is the Nth
// match (if Nth > 0) and a coin with Probability comes up (if Probability >
// 0). With neither set, every matching call fires.
type Rule struct {
	// Ops selects operations; 0 means OpAll.
	Ops Op
	// Path is a path.Match pattern on the path relative to the faultstore's
	// root (for List, the prefix). "" matches everything; a pattern ending
	// in "/**" matches everything under that directory ("_delta_log/**"),
	// and "**" alone matches everything.
	Path string
	// Nth makes the rule fire only on its Nth matching call (1-based).
	Nth int
	// Probability makes the rule fire with this probability, drawn from the
	// store's seeded generator (Options.Seed), so runs are reproducible.
	Probability float64
	// Mode is what firing does.
	Mode Mode
	// Latency is the sleep of a Delay rule.
	Latency time.Duration
	// Func is what a Call rule runs, with the operation and the path
	// relative to the faultstore's root (for List, the prefix).
	Func func(op Op, path string)
	// Err, when set, is the class of the error a FailBefore or FailAfter
	// rule returns instead of ErrInjected: the *storage.PathError has Err
	// as its Err and ErrInjected as its Cause, so both match. Err
	// storage.ErrCommitStateUnknown with FailBefore is a timeout whose
	// write did not land.
	Err error
}

func (r Rule) validate() error {
	var errs []error
	if r.Nth < 0 {
		errs = append(errs, fmt.Errorf("%w: Nth %d < 0", ErrInvalidRule, r.Nth))
	}
	if r.Probability < 0 || r.Probability > 1 {
		errs = append(errs, fmt.Errorf("%w: Probability %v outside [0, 1]", ErrInvalidRule, r.Probability))
	}
	if r.Mode < FailBefore || r.Mode > Call {
		errs = append(errs, fmt.Errorf("%w: unknown Mode %d", ErrInvalidRule, r.Mode))
	}
	if r.Latency < 0 {
		errs = append(errs, fmt.Errorf("%w: Latency %v < 0", ErrInvalidRule, r.Latency))
	}
	if r.Mode == Delay && r.Latency == 0 {
		errs = append(errs, fmt.Errorf("%w: Delay rule without Latency", ErrInvalidRule))
	}
	if (r.Mode == Call) != (r.Func != nil) {
		errs = append(errs, fmt.Errorf("%w: Func is set exactly on Call rules (Mode %v)", ErrInvalidRule, r.Mode))
	}
	if r.Err != nil && r.Mode != FailBefore && r.Mode != FailAfter {
		errs = append(errs, fmt.Errorf("%w: Err on a %v rule (only FailBefore and FailAfter fail)", ErrInvalidRule, r.Mode))
	}
	if _, err := path.Match(r.Path, ""); err != nil {
		errs = append(errs, fmt.Errorf("%w: Path %q: %w", ErrInvalidRule, r.Path, err))
	}
	return errors.Join(errs...)
}

func (r Rule) matchPath(p string) bool {
	switch {
	case r.Path == "" || r.Path == "**":
		return true
	case strings.HasSuffix(r.Path, "/**"):
		return strings.HasPrefix(p, strings.TrimSuffix(r.Path, "**"))
	}
	ok, _ := path.Match(r.Path, p)
	return ok
}

// Options configure a Store.
type Options struct {
	// Seed seeds the generator behind Rule.Probability. Default 1; log it
	// in randomized tests.
	Seed uint64
	// ListPageSize is the page size used to count list pages (Counts.ListPages):
	// the pages an S3 listing of the same result would take. Default 1000.
	ListPageSize int
	// Now, when set, is the clock of modification times: an object
	// written through the Store (Put, PutIfAbsent, Writer.Close) is
	// reported by List and Stat with the time Now gave at the write,
	// instead of the inner store's, until it is written again or deleted
	// through the Store. Tests of retention rules (VACUUM, log cleanup,
	// file-sink log expiry, time travel by timestamp) set a fake clock.
	// Default nil: the inner store's times. SetModTime works either way.
	Now func() time.Time
	// URL, when set, is what URL reports instead of the inner store's URL
	// (a Sub reports URL + "/" + dir). It lets code whose behaviour
	// depends on the location, such as the file sink's absolute paths
	// ("file:///data/out/part-0", "s3a://bucket/t/part-0"), be tested on
	// an in-memory store. Default "": the inner store's.
	URL string
}

// DefaultOptions returns the documented defaults.
func DefaultOptions() Options { return Options{Seed: 1, ListPageSize: 1000} }

// Validate lists every violation.
func (o Options) Validate() error {
	if o.ListPageSize <= 0 {
		return fmt.Errorf("%w: ListPageSize %d <= 0", ErrInvalidRule, o.ListPageSize)
	}
	return nil
}

// Counts are the calls a Store has seen (including failed ones).
type Counts struct {
	// Read, RangeRead, Put, PutIfAbsent, NewWriter, WriterClose, List, Stat
	// and Delete count the calls of each operation.
	Read, RangeRead, Put, PutIfAbsent, NewWriter, WriterClose, List, Stat, Delete int64
	// WriterAbort counts Writer.Abort calls on writers not closed or
	// aborted before: NewWriter - WriterClose - WriterAbort writers are open.
	WriterAbort int64
	// ListItems is the number of objects List yielded.
	ListItems int64
	// ListPages is the number of list pages the calls cost, counted as
	// max(1, ceil(items/ListPageSize)) per List call that ran to the end or
	// was stopped (items seen so far).
	ListPages int64
	// Writes is the number of write attempts (OpWrites) so far; crash mode
	// counts against it.
	Writes int64
	// Injected is the number of faults that fired (Delay excluded).
	Injected int64
}

// Store wraps a storage.Store and injects faults. It is safe for concurrent
// use; a Store and its Subs share rules, counters and crash state.
type Store struct {
	inner  storage.Store
	prefix string // "" or "dir/": path prefix of a Sub, for rule matching
	url    string // Options.URL for this view, "" for the inner store's
	st     *state
}

type state struct {
	pageSize int
	now      func() time.Time // Options.Now
	mu       struct {
		sync.Mutex
		modTimes   map[string]time.Time // full path -> reported ModTime (Options.Now, SetModTime)
		rng        *rand.Rand
		rules      []*ruleState
		counts     Counts
		crashAfter int // -1: crash mode off
		crashed    bool
		// named crash points (points.go)
		crashAt     *crashAt
		occurrences map[string]int
		points      []Point
	}
}

type ruleState struct {
	Rule
	matches int
}

var _ storage.Store = (*Store)(nil)

// New wraps inner. inner stays owned by the caller: Close on the Store
// closes inner too, as any storage.Store would.
func New(inner storage.Store, opts Options) (*Store, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	st := &state{pageSize: opts.ListPageSize, now: opts.Now}
	st.mu.rng = rand.New(rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15))
	st.mu.crashAfter = -1
	return &Store{inner: inner, url: strings.TrimSuffix(opts.URL, "/"), st: st}, nil
}

// SetModTime makes List and Stat report t as the modification time of
// path (relative to this Store), as os.Chtimes would, until the object is
// written again or deleted through the Store; a zero t drops the override
// (the inner store's time again). It does no I/O and does not check that
// the object exists.
func (s *Store) SetModTime(path string, t time.Time) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.setModTime(s.prefix+path, t)
}

// setModTime records t for full (zero t: forget it); st.mu is held.
func (st *state) setModTime(full string, t time.Time) {
	if t.IsZero() {
		delete(st.mu.modTimes, full)
		return
	}
	if st.mu.modTimes == nil {
		st.mu.modTimes = map[string]time.Time{}
	}
	st.mu.modTimes[full] = t
}

// written records that p was written (deleted: its time is forgotten).
func (s *Store) written(p string, deleted bool) {
	if s.st.now == nil && deleted {
		s.st.mu.Lock()
		delete(s.st.mu.modTimes, s.prefix+p)
		s.st.mu.Unlock()
		return
	}
	var t time.Time
	if s.st.now != nil && !deleted {
		t = s.st.now()
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.setModTime(s.prefix+p, t)
}

// withModTime replaces fi.ModTime by the recorded time of fi.Path, if any.
func (s *Store) withModTime(fi storage.FileInfo) storage.FileInfo {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	if t, ok := s.st.mu.modTimes[s.prefix+fi.Path]; ok {
		fi.ModTime = t
	}
	return fi
}

// Add appends rules; they are checked in order on every call.
func (s *Store) Add(rules ...Rule) error {
	var errs []error
	for i, r := range rules {
		if err := r.validate(); err != nil {
			errs = append(errs, fmt.Errorf("rule %d: %w", i, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return err
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	for _, r := range rules {
		if r.Ops == 0 {
			r.Ops = OpAll
		}
		s.st.mu.rules = append(s.st.mu.rules, &ruleState{Rule: r})
	}
	return nil
}

// Clear removes every rule and turns crash mode off; counters stay.
func (s *Store) Clear() {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.mu.rules = nil
	s.st.mu.crashAfter = -1
	s.st.mu.crashAt = nil
	s.st.mu.crashed = false
}

// CrashAfterWrites arms crash mode: the first k write attempts (Put,
// PutIfAbsent, Writer.Close, Delete) from now on succeed, every later one
// fails with ErrInjected before it is performed, as if the process had died
// right after the k-th write. k = 0 fails the first write.
func (s *Store) CrashAfterWrites(k int) {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.mu.crashAfter = int(s.st.mu.counts.Writes) + k
	s.st.mu.crashed = false
}

// Crashed reports whether crash mode has failed a write.
func (s *Store) Crashed() bool {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.mu.crashed
}

// Counts returns a snapshot of the counters.
func (s *Store) Counts() Counts {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return s.st.mu.counts
}

// ResetCounts zeroes the counters (crash mode keeps counting from its own
// starting point).
func (s *Store) ResetCounts() {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	w := s.st.mu.counts.Writes
	s.st.mu.counts = Counts{}
	s.st.mu.counts.Writes = w // crash mode's reference point
}

// verdict is what the rules decided for one call.
type verdict struct {
	calls []*ruleState // Call rules that fired, run outside the lock
	err   error        // Rule.Err of the failing rule
	delay time.Duration
	fail  bool // before
	after bool // lost response
}

// decide counts the call and evaluates crash mode and the rules.
func (s *Store) decide(op Op, p string) verdict {
	full := s.prefix + p
	st := s.st
	st.mu.Lock()
	defer st.mu.Unlock()
	c := &st.mu.counts
	switch op {
	case OpRead:
		c.Read++
	case OpRangeRead:
		c.RangeRead++
	case OpPut:
		c.Put++
	case OpPutIfAbsent:
		c.PutIfAbsent++
	case OpNewWriter:
		c.NewWriter++
	case OpWriterClose:
		c.WriterClose++
	case OpList:
		c.List++
	case OpStat:
		c.Stat++
	case OpDelete:
		c.Delete++
	}
	var v verdict
	if op&OpWrites != 0 {
		c.Writes++
		rec, fail, after := st.decidePoint(op, full)
		if rec >= 0 {
			defer func() { st.mu.points[rec].Injected = v.fail || v.after }()
		}
		if fail || (st.mu.crashAfter >= 0 && c.Writes > int64(st.mu.crashAfter)) {
			st.mu.crashed = true
			c.Injected++
			v.fail = true
			return v
		}
		if after {
			c.Injected++
			v.after = true
			return v
		}
	}
	for _, r := range st.mu.rules {
		if r.Ops&op == 0 || !r.matchPath(full) {
			continue
		}
		r.matches++
		if r.Nth > 0 && r.matches != r.Nth {
			continue
		}
		if r.Probability > 0 && st.mu.rng.Float64() >= r.Probability {
			continue
		}
		switch r.Mode {
		case Delay:
			v.delay += r.Latency
			continue
		case Call:
			v.calls = append(v.calls, r)
			continue
		case FailBefore:
			v.fail = true
		case FailAfter:
			v.after = true
		}
		v.err = r.Err
		c.Injected++
		break
	}
	return v
}

func (s *Store) injected(op Op, p string, after bool, class error) error {
	name := op.String()
	if class != nil {
		return &storage.PathError{Op: name, Path: p, Err: class, Cause: ErrInjected}
	}
	if after && op == OpPutIfAbsent {
		return &storage.PathError{Op: name, Path: p, Err: storage.ErrCommitStateUnknown, Cause: ErrInjected}
	}
	return &storage.PathError{Op: name, Path: p, Err: ErrInjected}
}

// decideAndCall is decide, then the Func of every Call rule that fired.
func (s *Store) decideAndCall(op Op, p string) verdict {
	v := s.decide(op, p)
	for _, r := range v.calls {
		r.Func(op, p)
	}
	return v
}

// run performs fn under the verdict for (op, p).
func (s *Store) run(ctx context.Context, op Op, p string, fn func() error) error {
	v := s.decideAndCall(op, p)
	if v.delay > 0 {
		t := time.NewTimer(v.delay)
		select {
		case <-ctx.Done():
			t.Stop()
			return &storage.PathError{Op: op.String(), Path: p, Err: ctx.Err()}
		case <-t.C:
		}
	}
	if v.fail {
		return s.injected(op, p, false, v.err)
	}
	if err := fn(); err != nil {
		return err
	}
	switch op {
	case OpPut, OpPutIfAbsent:
		s.written(p, false)
	case OpDelete:
		s.written(p, true)
	}
	if v.after {
		return s.injected(op, p, true, v.err)
	}
	return nil
}

// Read is storage.Store.Read with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) Read(ctx context.Context, p string) ([]byte, error) {
	var data []byte
	err := s.run(ctx, OpRead, p, func() (err error) {
		data, err = s.inner.Read(ctx, p)
		return err
	})
	if err != nil {
		return nil, err
	}
	return data, nil
}

// NewRangeReader is storage.Store.NewRangeReader with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) NewRangeReader(ctx context.Context, p string, offset, length int64) (io.ReadCloser, error) {
	var r io.ReadCloser
	err := s.run(ctx, OpRangeRead, p, func() (err error) {
		r, err = s.inner.NewRangeReader(ctx, p, offset, length)
		return err
	})
	if err != nil {
		if r != nil {
			_ = r.Close()
		}
		return nil, err
	}
	return r, nil
}

// Put is storage.Store.Put with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) Put(ctx context.Context, p string, data []byte) error {
	return s.run(ctx, OpPut, p, func() error { return s.inner.Put(ctx, p, data) })
}

// PutIfAbsent is storage.Store.PutIfAbsent with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) PutIfAbsent(ctx context.Context, p string, data []byte) error {
	return s.run(ctx, OpPutIfAbsent, p, func() error { return s.inner.PutIfAbsent(ctx, p, data) })
}

// NewWriter is storage.Store.NewWriter with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) NewWriter(ctx context.Context, p string) (storage.Writer, error) {
	var w storage.Writer
	err := s.run(ctx, OpNewWriter, p, func() (err error) {
		w, err = s.inner.NewWriter(ctx, p)
		return err
	})
	if err != nil {
		if w != nil {
			_ = w.Abort()
		}
		return nil, err
	}
	return &writer{s: s, ctx: ctx, w: w, path: p}, nil
}

// writer injects faults into Close (OpWriterClose). A fault before the close
// aborts the inner writer: nothing is published.
type writer struct {
	s    *Store
	ctx  context.Context //nolint:containedctx // the ctx of NewWriter, for Delay rules on Close
	w    storage.Writer
	path string
	done atomic.Bool // closed or aborted
}

func (w *writer) Write(b []byte) (int, error) { return w.w.Write(b) }
func (w *writer) Abort() error {
	if !w.done.Swap(true) {
		w.s.st.mu.Lock()
		w.s.st.mu.counts.WriterAbort++
		w.s.st.mu.Unlock()
	}
	return w.w.Abort()
}
func (w *writer) Close() error {
	w.done.Store(true)
	v := w.s.decideAndCall(OpWriterClose, w.path)
	if v.delay > 0 {
		select {
		case <-w.ctx.Done():
		case <-time.After(v.delay):
		}
	}
	if v.fail {
		_ = w.w.Abort()
		return w.s.injected(OpWriterClose, w.path, false, v.err)
	}
	if err := w.w.Close(); err != nil {
		return err
	}
	w.s.written(w.path, false)
	if v.after {
		return w.s.injected(OpWriterClose, w.path, true, v.err)
	}
	return nil
}

// List is storage.Store.List with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) List(ctx context.Context, prefix, startAfter string) iter.Seq2[storage.FileInfo, error] {
	return func(yield func(storage.FileInfo, error) bool) {
		v := s.decideAndCall(OpList, prefix)
		if v.delay > 0 {
			t := time.NewTimer(v.delay)
			select {
			case <-ctx.Done():
				t.Stop()
				yield(storage.FileInfo{}, &storage.PathError{Op: "list", Path: prefix, Err: ctx.Err()})
				return
			case <-t.C:
			}
		}
		if v.fail {
			s.countList(0)
			yield(storage.FileInfo{}, s.injected(OpList, prefix, false, v.err))
			return
		}
		n := int64(0)
		defer func() { s.countList(n) }()
		for fi, err := range s.inner.List(ctx, prefix, startAfter) {
			if err == nil {
				n++
				fi = s.withModTime(fi)
			}
			if !yield(fi, err) {
				return
			}
			if err != nil {
				return
			}
		}
		if v.after {
			yield(storage.FileInfo{}, s.injected(OpList, prefix, true, v.err))
		}
	}
}

func (s *Store) countList(items int64) {
	pages := max(1, (items+int64(s.st.pageSize)-1)/int64(s.st.pageSize))
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.mu.counts.ListItems += items
	s.st.mu.counts.ListPages += pages
}

// Stat is storage.Store.Stat with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) Stat(ctx context.Context, p string) (storage.FileInfo, error) {
	var fi storage.FileInfo
	err := s.run(ctx, OpStat, p, func() (err error) {
		fi, err = s.inner.Stat(ctx, p)
		return err
	})
	if err != nil {
		return storage.FileInfo{}, err
	}
	return s.withModTime(fi), nil
}

// Delete is storage.Store.Delete with the injected faults: a fault fires before the call, or after it with its answer lost.
func (s *Store) Delete(ctx context.Context, p string) error {
	return s.run(ctx, OpDelete, p, func() error { return s.inner.Delete(ctx, p) })
}

// URL is Options.URL (with a Sub's directory), or else the inner store's
// URL.
func (s *Store) URL() string {
	if s.url != "" {
		return s.url
	}
	return s.inner.URL()
}

// Sub returns a faultstore over inner.Sub(dir) that shares this store's
// rules, counters, crash state and modification times; rule paths stay
// relative to this store's root.
func (s *Store) Sub(dir string) storage.Store {
	sub := &Store{inner: s.inner.Sub(dir), prefix: s.prefix + strings.TrimSuffix(dir, "/") + "/", st: s.st}
	if s.url != "" {
		sub.url = s.url + "/" + strings.Trim(dir, "/")
	}
	return sub
}

// Close closes the inner store.
func (s *Store) Close() error { return s.inner.Close() }
