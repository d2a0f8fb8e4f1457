package stream

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"go.uber.org/goleak"

	"github.com/lakesink/lakesink/internal/testutil/memtest"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/stream/checkpoint"
	"github.com/lakesink/lakesink/stream/source"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

var sch = &schema.StructType{Fields: []schema.StructField{
	{Name: "file", Type: schema.TypeString, Nullable: true},
	{Name: "n", Type: schema.TypeLong, Nullable: true},
}}

// fakeSink is an in-memory table with Delta's txn rule: a batch id at or
// below the last committed one is skipped. It can fail a batch before its
// commit (a crash between offsets/N and the sink's commit) or after it (a
// crash between the sink's commit and commits/N).
type fakeSink struct {
	mu          sync.Mutex
	lastBatch   int64
	rows        [][]any
	calls       []int64
	failBefore  map[int64]bool
	failAfter   map[int64]bool
	delay       time.Duration
	batchesSeen map[int64][][]any
}

var errCrash = errors.New("simulated crash")

func newFakeSink() *fakeSink {
	return &fakeSink{lastBatch: -1, failBefore: map[int64]bool{}, failAfter: map[int64]bool{}, batchesSeen: map[int64][][]any{}}
}

func (s *fakeSink) AddBatch(ctx context.Context, batchID int64, b *schema.Batch) (sink.Result, error) {
	if s.delay > 0 {
		select {
		case <-time.After(s.delay):
		case <-ctx.Done():
			return sink.Result{}, ctx.Err()
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, batchID)
	if prev, ok := s.batchesSeen[batchID]; ok && !reflect.DeepEqual(prev, b.Rows) {
		return sink.Result{}, fmt.Errorf("batch %d rerun with other rows: %v vs %v", batchID, b.Rows, prev)
	}
	s.batchesSeen[batchID] = b.Rows
	if s.failBefore[batchID] {
		delete(s.failBefore, batchID)
		return sink.Result{}, errCrash
	}
	if batchID <= s.lastBatch {
		return sink.Result{BatchID: batchID, Skipped: true, Version: s.lastBatch}, nil
	}
	s.rows = append(s.rows, b.Rows...)
	s.lastBatch = batchID
	if s.failAfter[batchID] {
		delete(s.failAfter, batchID)
		return sink.Result{}, errCrash
	}
	return sink.Result{BatchID: batchID, Version: batchID, NumFiles: 1, NumRows: int64(len(b.Rows))}, nil
}

type env struct {
	in    storage.Store // local disk: the file source orders files by modification time
	inDir string
	cp    *faultstore.Store
	sink  *fakeSink
	clock time.Time
	files int
}

func newEnv(t *testing.T) *env {
	t.Helper()
	in, dir := memtest.Local(t)
	cp, err := faultstore.New(memtest.New(t), faultstore.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	return &env{in: in, inDir: dir, cp: cp, sink: newFakeSink(), clock: time.Unix(1700000000, 0)}
}

// addFiles writes n NDJSON files of two rows each, each file one second newer.
func (e *env) addFiles(t *testing.T, n int) {
	t.Helper()
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("f%03d.json", e.files)
		data := fmt.Sprintf("{\"file\":%q,\"n\":1}\n{\"file\":%q,\"n\":2}\n", name, name)
		if err := e.in.Put(context.Background(), name, []byte(data)); err != nil {
			t.Fatal(err)
		}
		e.clock = e.clock.Add(time.Second)
		if err := os.Chtimes(filepath.Join(e.inDir, name), e.clock, e.clock); err != nil {
			t.Fatal(err)
		}
		e.files++
	}
}

func (e *env) options(t *testing.T) Options {
	t.Helper()
	src, err := source.NewFileSource(e.in, source.Options{Format: source.FormatJSON, Schema: sch})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.CheckpointStore, o.Source, o.Sink = e.cp, src, e.sink
	o.SinkKind, o.SinkURL = "fake", "mem://table"
	return o
}

type progressLog struct {
	mu sync.Mutex
	ps []Progress
}

func (l *progressLog) add(p Progress) { l.mu.Lock(); l.ps = append(l.ps, p); l.mu.Unlock() }
func (l *progressLog) all() []Progress {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.ps)
}

func run(t *testing.T, o Options) ([]Progress, error) {
	t.Helper()
	var pl progressLog
	o.Progress = pl.add
	err := Run(context.Background(), o)
	return pl.all(), err
}

// checkExactlyOnce asserts the sink holds every row of every file once.
func (e *env) checkExactlyOnce(t *testing.T) {
	t.Helper()
	count := map[string]int{}
	for _, r := range e.sink.rows {
		count[fmt.Sprintf("%v/%v", r[0], r[1])]++
	}
	if len(e.sink.rows) != 2*e.files {
		t.Errorf("sink has %d rows, want %d", len(e.sink.rows), 2*e.files)
	}
	for k, c := range count {
		if c != 1 {
			t.Errorf("row %s written %d times", k, c)
		}
	}
}

func TestAvailableNowHonoursMaxFiles(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 5)
	o := e.options(t)
	o.MaxFilesPerTrigger = 2
	ps, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	var files []int
	for i, p := range ps {
		if p.BatchID != int64(i) || p.Recovered || p.Recovery != "" {
			t.Errorf("progress %d: %+v", i, p)
		}
		files = append(files, p.Sources[0].NumInputFiles)
	}
	if !reflect.DeepEqual(files, []int{2, 2, 1}) {
		t.Errorf("files per batch = %v, want [2 2 1]", files)
	}
	if ps[2].NumInputRows != 2 || ps[2].Sink.NumOutputRows != 2 || ps[2].Sink.Version != 2 {
		t.Errorf("last progress = %+v", ps[2])
	}
	for _, k := range []string{"metadata", "offsets/0", "offsets/2", "commits/0", "commits/2", "sources/0/0", "sources/0/2"} {
		if !slices.Contains(memtest.Keys(t, e.cp), k) {
			t.Errorf("checkpoint lacks %s: %v", k, memtest.Keys(t, e.cp))
		}
	}
	data, _ := e.cp.Read(context.Background(), "offsets/2")
	if lines := strings.Split(string(data), "\n"); len(lines) != 3 || lines[0] != "v1" || lines[2] != `{"logOffset":2}` {
		t.Errorf("offsets/2 = %q", data)
	}
	e.checkExactlyOnce(t)
}

func TestNoNewInputWritesNothing(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 3)
	if _, err := run(t, e.options(t)); err != nil {
		t.Fatal(err)
	}
	before := memtest.Keys(t, e.cp)
	for _, tr := range []Trigger{AvailableNow(), Once()} {
		o := e.options(t)
		o.Trigger = tr
		ps, err := run(t, o)
		if err != nil || len(ps) != 0 {
			t.Errorf("%v: %d batches, %v", tr, len(ps), err)
		}
	}
	if after := memtest.Keys(t, e.cp); !reflect.DeepEqual(before, after) {
		t.Errorf("checkpoint changed without input:\n%v\n%v", before, after)
	}
	if len(e.sink.calls) != 1 {
		t.Errorf("sink calls = %v", e.sink.calls)
	}
}

func TestRecoveryCrashBeforeSinkCommit(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 4)
	e.sink.failBefore[1] = true
	o := e.options(t)
	o.MaxFilesPerTrigger = 2
	_, err := run(t, o)
	var be *BatchError
	if !errors.Is(err, errCrash) || !errors.As(err, &be) || be.BatchID != 1 || be.Stage != "addBatch" {
		t.Fatalf("first run: %v", err)
	}
	keys := memtest.Keys(t, e.cp)
	if !slices.Contains(keys, "offsets/1") || slices.Contains(keys, "commits/1") {
		t.Fatalf("after crash: %v", keys)
	}
	e.addFiles(t, 1) // new input must not change the rerun batch
	o = e.options(t)
	o.MaxFilesPerTrigger = 2
	ps, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].BatchID != 1 || ps[0].Recovery != "rerun" || !ps[0].Recovered || ps[0].Sink.Skipped {
		t.Fatalf("rerun progress = %+v", ps)
	}
	if ps[0].Sources[0].NumInputFiles != 2 || ps[1].BatchID != 2 || ps[1].Recovered || ps[1].Sources[0].NumInputFiles != 1 {
		t.Errorf("batches after recovery = %+v", ps)
	}
	e.checkExactlyOnce(t)
}

func TestRecoveryCrashAfterSinkCommit(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 4)
	e.sink.failAfter[0] = true
	o := e.options(t)
	o.MaxFilesPerTrigger = 2
	if _, err := run(t, o); !errors.Is(err, errCrash) {
		t.Fatalf("first run: %v", err)
	}
	if slices.Contains(memtest.Keys(t, e.cp), "commits/0") {
		t.Fatal("commits/0 written after a failed AddBatch")
	}
	o = e.options(t)
	o.MaxFilesPerTrigger = 2
	ps, err := run(t, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].BatchID != 0 || ps[0].Recovery != "rerun" || !ps[0].Sink.Skipped || ps[0].Sink.NumOutputRows != 0 {
		t.Fatalf("progress = %+v", ps)
	}
	// The JSON a CLI prints carries both markers.
	js, _ := json.Marshal(ps[0])
	for _, want := range []string{`"recovery":"rerun"`, `"skipped":true`, `"batchId":0`, `"durationMs":{`, `"endOffset":{"logOffset":0}`} {
		if !strings.Contains(string(js), want) {
			t.Errorf("progress JSON lacks %s: %s", want, js)
		}
	}
	e.checkExactlyOnce(t)
}

func TestCrashBetweenOffsetsAndCommitsStore(t *testing.T) {
	// The commit file write itself fails (a crash just before commits/1):
	// the next run reruns batch 1 and the sink skips it.
	e := newEnv(t)
	e.addFiles(t, 2)
	if err := e.cp.Add(faultstore.Rule{Ops: faultstore.OpWrites, Path: "commits/1", Nth: 1, Mode: faultstore.FailBefore}); err != nil {
		t.Fatal(err)
	}
	o := e.options(t)
	o.MaxFilesPerTrigger = 1
	_, err := run(t, o)
	var be *BatchError
	if !errors.As(err, &be) || be.Stage != "commit" || be.BatchID != 1 {
		t.Fatalf("err = %v", err)
	}
	ps, err := run(t, e.options(t))
	if err != nil || len(ps) != 1 || ps[0].BatchID != 1 || !ps[0].Sink.Skipped || ps[0].Recovery != "rerun" {
		t.Fatalf("rerun: %+v, %v", ps, err)
	}
	e.checkExactlyOnce(t)
}

func TestRestartWithDifferentSourceRefused(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 1)
	if _, err := run(t, e.options(t)); err != nil {
		t.Fatal(err)
	}
	other := memtest.New(t)
	src, _ := source.NewFileSource(other, source.Options{Format: source.FormatJSON, Schema: sch})
	o := e.options(t)
	o.Source = src
	_, err := run(t, o)
	var me *checkpoint.MismatchError
	if !errors.Is(err, ErrCheckpointMismatch) || !errors.As(err, &me) || me.Field != "source" {
		t.Fatalf("err = %v", err)
	}
	o = e.options(t)
	o.SinkURL = "mem://elsewhere"
	if _, err := run(t, o); !errors.Is(err, ErrCheckpointMismatch) {
		t.Errorf("other sink: %v", err)
	}
	o = e.options(t)
	o.SinkURL, o.AllowReset = "mem://elsewhere", true
	if _, err := run(t, o); err != nil {
		t.Errorf("allow reset: %v", err)
	}
}

// barrierSource holds every LatestOffset call until n callers arrived, so two
// drivers plan their first batch at the same moment.
type barrierSource struct {
	source.Source
	wg *sync.WaitGroup
}

func (b *barrierSource) LatestOffset(ctx context.Context, l source.ReadLimit) (string, error) {
	b.wg.Done()
	b.wg.Wait()
	return b.Source.LatestOffset(ctx, l)
}

// fixedSource plans one batch at {"logOffset":0} without a source log, so
// two drivers race on offsets/0 itself.
type fixedSource struct{}

func (fixedSource) URL() string                                { return "fixed://" }
func (fixedSource) Start(context.Context, storage.Store) error { return nil }
func (fixedSource) PrepareAvailableNow(context.Context) error  { return nil }
func (fixedSource) Commit(context.Context, string) error       { return nil }
func (fixedSource) LatestOffset(context.Context, source.ReadLimit) (string, error) {
	return `{"logOffset":0}`, nil
}
func (fixedSource) GetBatch(context.Context, string, string) (*schema.Batch, source.BatchStats, error) {
	return &schema.Batch{Schema: sch, Rows: [][]any{{"x", int64(1)}}}, source.BatchStats{}, nil
}

func TestSecondDriverFails(t *testing.T) {
	cases := []struct {
		name   string
		source func(e *env, wg *sync.WaitGroup) source.Source
		path   string
	}{
		{"file source log", func(e *env, wg *sync.WaitGroup) source.Source {
			src, _ := source.NewFileSource(e.in, source.Options{Format: source.FormatJSON, Schema: sch})
			return &barrierSource{Source: src, wg: wg}
		}, "sources/0/0"},
		{"offsets", func(e *env, wg *sync.WaitGroup) source.Source {
			return &barrierSource{Source: fixedSource{}, wg: wg}
		}, "offsets/0"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t)
			e.addFiles(t, 2)
			var wg sync.WaitGroup
			wg.Add(2)
			errs := make(chan error, 2)
			for i := 0; i < 2; i++ {
				o := e.options(t)
				o.Source = c.source(e, &wg)
				o.Trigger = Once()
				go func() { errs <- Run(context.Background(), o) }()
			}
			e1, e2 := <-errs, <-errs
			if (e1 == nil) == (e2 == nil) {
				t.Fatalf("want exactly one failure: %v / %v", e1, e2)
			}
			err := errors.Join(e1, e2)
			if !errors.Is(err, ErrCheckpointInUse) || !strings.Contains(err.Error(), c.path) {
				t.Errorf("err = %v, want ErrCheckpointInUse naming %s", err, c.path)
			}
			if len(e.sink.calls) != 1 {
				t.Errorf("sink calls = %v", e.sink.calls)
			}
		})
	}
}

// The ProcessingTime tests run in a synctest bubble: its clock advances only
// when every goroutine in it is blocked, so trigger intervals, idle waits
// and the sink's delay are exact and the machine's load changes nothing.

func TestProcessingTimeStopsOnCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.addFiles(t, 1)
		o := e.options(t)
		o.Trigger = ProcessingTime(10 * time.Millisecond)
		var pl progressLog
		o.Progress = pl.add
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, o) }()
		waitFor(t, func() bool { return len(pl.all()) == 1 })
		e.addFiles(t, 1)
		waitFor(t, func() bool { return len(pl.all()) == 2 })
		time.Sleep(30 * time.Millisecond) // three idle triggers: no batch
		if n := len(pl.all()); n != 2 {
			t.Errorf("%d batches without new input", n)
		}
		cancel()
		synctest.Wait() // Run is blocked again (returned or stuck)
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("Run after cancel = %v, want nil", err)
			}
		default:
			t.Fatal("Run did not return after cancel")
		}
		e.checkExactlyOnce(t)
	})
}

func TestProcessingTimeCatchesUp(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.addFiles(t, 3)
		e.sink.delay = 60 * time.Millisecond
		o := e.options(t)
		o.MaxFilesPerTrigger = 1
		o.Trigger = ProcessingTime(20 * time.Millisecond)
		var pl progressLog
		o.Progress = pl.add
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, o) }()
		waitFor(t, func() bool { return len(pl.all()) == 3 })
		cancel()
		<-done
		ps := pl.all()
		for i := 1; i < len(ps); i++ {
			// A batch of the bubble takes exactly the sink's 60 ms, longer
			// than the 20 ms interval: the next one starts at once.
			prevEnd := ps[i-1].Timestamp.Add(time.Duration(ps[i-1].DurationMs.TriggerExecution) * time.Millisecond)
			if gap := ps[i].Timestamp.Sub(prevEnd); gap != 0 {
				t.Errorf("batch %d started %v after the previous one ended; a late batch must be followed at once", i, gap)
			}
		}
	})
}

func TestCancelDuringBatchAbandonsIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		e := newEnv(t)
		e.addFiles(t, 1)
		e.sink.delay = time.Minute
		o := e.options(t)
		o.Trigger = ProcessingTime(time.Second)
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- Run(ctx, o) }()
		waitFor(t, func() bool { return slices.Contains(memtest.Keys(t, e.cp), "offsets/0") })
		cancel()
		err := <-done
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("err = %v", err)
		}
		if slices.Contains(memtest.Keys(t, e.cp), "commits/0") {
			t.Error("abandoned batch was committed")
		}
		e.sink.delay = 0
		ps, err := run(t, e.options(t))
		if err != nil || len(ps) != 1 || ps[0].Recovery != "rerun" || ps[0].Sink.Skipped {
			t.Fatalf("rerun = %+v, %v", ps, err)
		}
		e.checkExactlyOnce(t)
	})
}

// waitFor polls cond, inside a synctest bubble: each synctest.Wait lets every
// other goroutine of the bubble run until it blocks, then a 1 ms sleep
// advances the bubble's clock to the next timer. The bound is an hour of the
// bubble's clock (a Run that never gets there), not of the machine's.
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(time.Hour)
	for {
		synctest.Wait()
		if cond() {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("timed out")
		}
		time.Sleep(time.Millisecond)
	}
}

func TestForeachBatch(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 3)
	o := e.options(t)
	o.Sink, o.MaxFilesPerTrigger = nil, 2
	var got []int64
	var rows int
	o.ForeachBatch = func(ctx context.Context, id int64, b *schema.Batch) error {
		got = append(got, id)
		rows += len(b.Rows)
		return nil
	}
	ps, err := run(t, o)
	if err != nil || !reflect.DeepEqual(got, []int64{0, 1}) || rows != 6 {
		t.Fatalf("foreachBatch ids %v rows %d err %v", got, rows, err)
	}
	if ps[1].Sink.Description != "ForeachBatchSink" || ps[1].Sink.NumRows != 2 {
		t.Errorf("progress sink = %+v", ps[1].Sink)
	}
	o.Sink = e.sink
	if _, err := NewQuery(o); !errors.Is(err, ErrInvalidOptions) {
		t.Errorf("both Sink and ForeachBatch: %v", err)
	}
}

func TestCheckFreshAndFirstBatchID(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 2)
	var calls []bool
	var ids []string
	check := func(ctx context.Context, id string, fresh bool) error {
		calls, ids = append(calls, fresh), append(ids, id)
		return nil
	}
	o := e.options(t)
	o.CheckFresh, o.FirstBatchID, o.MaxFilesPerTrigger = check, 5, 1
	e.sink.failBefore[6] = true
	if _, err := run(t, o); !errors.Is(err, errCrash) {
		t.Fatal(err)
	}
	o = e.options(t)
	o.CheckFresh = check
	ps, err := run(t, o)
	if err != nil || len(ps) != 1 || ps[0].BatchID != 6 || ps[0].Recovery != "rerun" {
		t.Fatalf("%+v %v", ps, err)
	}
	if !reflect.DeepEqual(calls, []bool{true, false}) || ids[0] != ids[1] || ids[0] == "" {
		t.Errorf("CheckFresh calls fresh=%v ids=%v", calls, ids)
	}
	e.checkExactlyOnce(t)
	o = e.options(t)
	o.CheckFresh = func(context.Context, string, bool) error { return errors.New("sink is ahead") }
	if _, err := run(t, o); err == nil || !strings.Contains(err.Error(), "sink is ahead") {
		t.Errorf("CheckFresh error not returned: %v", err)
	}
}

func TestCorruptOffsetsNamesFile(t *testing.T) {
	e := newEnv(t)
	e.addFiles(t, 1)
	if _, err := run(t, e.options(t)); err != nil {
		t.Fatal(err)
	}
	_ = e.cp.Put(context.Background(), "offsets/1", nil)
	_, err := run(t, e.options(t))
	if !errors.Is(err, ErrCorruptCheckpoint) || !strings.Contains(err.Error(), "delete offsets/1 to plan batch 1 again") {
		t.Errorf("err = %v", err)
	}
}

func TestParseTrigger(t *testing.T) {
	cases := []struct {
		in   string
		want Trigger
		ok   bool
	}{
		{"available-now", AvailableNow(), true}, {"once", Once(), true},
		{"interval=30s", ProcessingTime(30 * time.Second), true}, {"interval=x", Trigger{}, false}, {"hourly", Trigger{}, false},
	}
	for _, c := range cases {
		got, err := ParseTrigger(c.in)
		if (err == nil) != c.ok || (c.ok && got != c.want) {
			t.Errorf("ParseTrigger(%q) = %v, %v", c.in, got, err)
		}
	}
}
