package tests

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
	"github.com/lakesink/lakesink/stream"
	"github.com/lakesink/lakesink/stream/source"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// Soak parameters. The failure rates give ~5% of all storage calls failing:
// 3% before the call runs, and of the rest 2% after it ran (the answer is
// lost: the write landed, the read was done). 5% of calls get a latency
// uniform in (0, 20ms].
const (
	soakFailBefore    = 0.03
	soakFailAfter     = 0.02
	soakLatencyP      = 0.05
	soakLatencyMax    = 20 * time.Millisecond
	soakDefaultLength = 15 * time.Second
	// soakRetention is the table's delta.deletedFileRetentionDuration, the
	// retention VACUUM runs with (never Force, never a shorter Retention).
	//
	// What "safe" means: VACUUM must never delete a file that a snapshot a
	// component may still commit or read needs. It deletes a file that the
	// latest snapshot does not reference when the file is older than the
	// retention (modification time) or its tombstone is. So (1) a writer
	// must commit a data file within the retention of writing it, else
	// VACUUM may take it as an orphan first: every write operation (one sink
	// batch, one OPTIMIZE) runs under soakOpTimeout, a quarter of the
	// retention; (2) a reader of a version may find a file gone that a later
	// commit removed longer than the retention ago: that is Delta's contract
	// (time travel holds within the retention only), and the soak counts it
	// "expired" only after checking the file's tombstone (removedLongAgo).
	soakRetention = 8 * time.Second
	// soakOpTimeout bounds every write operation and each VACUUM.
	soakOpTimeout = soakRetention / 4
	// soakReadTimeout bounds one reader check. It need not be below the
	// retention: a check that finds a file vacuumed under it is explained by
	// the file's tombstone (see removedLongAgo).
	soakReadTimeout = 20 * time.Second
)

// The soak table: id (unique per input row), file (the input file), p (the
// partition, id mod 4).
var soakSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "id", Type: schema.TypeLong, Nullable: false},
	{Name: "file", Type: schema.TypeString, Nullable: true},
	{Name: "p", Type: schema.TypeString, Nullable: true},
}}

// TestSoak is the fault soak (issue #9). One table, on a store that fails
// ~5% of all calls at random (reads, range reads, lists, stats, puts,
// put-if-absent, writer opens and closes, deletes; 3/5 before the call, 2/5
// after it with the answer lost) and delays 5% of them, is driven for
// LAKESINK_SOAK_DURATION (default 15s; `make soak` runs 10m) by these
// goroutines at once (errgroup):
//
//   - a generator writing new JSON input files (ids known) every 150ms,
//     in turn into the input directories of the queries;
//   - two streaming queries (stream.Run, ProcessingTime, Delta sink through
//     a recording wrapper), each with its own input and checkpoint, so two
//     txn appIds, appending to the table at once; each is restarted like a
//     supervisor would whenever it returns an error;
//   - OPTIMIZE in a loop;
//   - VACUUM in a loop with the table's retention (soakRetention);
//   - checkpoint, and expired-log cleanup with a clock shifted two days
//     ahead (Delta truncates the log cutoff to midnight, so on a run of
//     minutes only a shifted clock makes cleanup delete anything: it then
//     deletes every commit before the newest checkpoint);
//   - a reader that, after each new commit, opens that version through the
//     faulty store and checks it against the model (when more than four
//     versions appeared since its last pass, as happens on two cores, it
//     checks the newest and two at random in between; the rest are
//     checked at the end if still in the log).
//
// The model: the recording sink learns each batch's ids before the Delta
// sink sees them (a rerun batch must carry exactly the same ids, and no id
// may appear in two batches). At version v the table must hold exactly the
// ids of each query's batches 0..txn(v) (txn(v): the table's txn version
// for that query's id), each once: no lost row, no duplicate, no row of an
// uncommitted batch. Also: the log replays at v, commitInfo names a known
// operation, a STREAMING UPDATE's queryId and epochId name the txn it
// commits, that query's txn advances by exactly one and no other txn moves,
// no txn ever goes back, every file the snapshot lists exists (it is read),
// and the commit files from the newest checkpoint on are contiguous. Old
// versions are re-read (time travel) now and then.
//
// Errors: an error wrapping faultstore.ErrInjected is expected (the
// component is retried or restarted); a timeout of one bounded operation is
// retried; a missing log file older than the newest checkpoint is the
// modelled race with log cleanup (retried); a missing data file removed
// longer than the retention ago, or a version whose log was cleaned, is
// "expired" (as in Delta, time travel beyond the retention is not
// guaranteed). Anything else, or wrong data, is a violation.
//
// At the end the queries drain the input on the clean store, every version
// still in the log is checked without faults, and the last version must hold
// every generated id exactly once.
//
// Above the faults sits a model of the storage client (readRetryStore): an
// idempotent read (Read, range read, Stat, a List whose first page failed)
// is re-sent after a fault, as an S3 client's retryer re-sends a GET;
// writes are never re-sent. Without it no operation that makes hundreds of
// calls (a read of the whole table) would ever complete at 5% per call.
// The components' client re-sends once, so ~0.25% of their reads and 5% of
// their writes still fail into them; the checker's re-sends twice (the
// SDK's 3 attempts), so that a check reading the whole table mostly
// completes (~0.01% of its reads still fail into the reader).
//
// "Faults survived" is the number of injected faults (faults the store
// returned; delays excluded) before the last invariant check that passed,
// counted only while no violation has been seen: each of them was either
// absorbed inside a component (a retry, a read-back of a lost commit
// answer) or surfaced as an error after which the component was retried or
// restarted, and every check after it passed. With zero violations it
// equals the faults injected, since the final fault-free check comes last.
//
// The one summary line goes to stdout. LAKESINK_SOAK_SEED fixes the seed of
// the fault and latency draws (logged); the goroutines' interleaving still
// varies from run to run.
func TestSoak(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	if testing.Short() {
		t.Skip("soak: skipped under -short")
	}
	dur := soakDefaultLength
	if v := os.Getenv("LAKESINK_SOAK_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("LAKESINK_SOAK_DURATION=%q: want a Go duration", v)
		}
		dur = d
	}
	seed := uint64(time.Now().UnixNano())
	if v := os.Getenv("LAKESINK_SOAK_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			t.Fatalf("LAKESINK_SOAK_SEED=%q: %v", v, err)
		}
		seed = s
	}
	t.Logf("soak: seed %d (LAKESINK_SOAK_SEED=%d), duration %s", seed, seed, dur)
	s := newSoak(t, seed, dur)
	s.run()
}

// soak is one run's stores, model and counters.
type soak struct {
	t    *testing.T
	seed uint64
	dur  time.Duration

	base                    storage.Store // the real store (temp dir)
	tableB, tableF, tableR  storage.Store // the table: clean, faulty, faulty for the checker
	queries                 []*soakQuery
	before, after           *faultstore.Store
	lat                     *latencyStore
	client                  *readRetryStore
	tableURL                string
	injectedAtLastGoodCheck atomic.Int64

	model soakModel
	c     soakCounters

	vmu        sync.Mutex
	violations []string
	examples   map[string]int // errors logged per component
}

// example logs the first few errors of a component, to explain the counts.
func (s *soak) example(component string, err error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	if s.examples == nil {
		s.examples = map[string]int{}
	}
	if s.examples[component] < 3 {
		s.examples[component]++
		s.t.Logf("%s: %v", component, err)
	}
}

// soakQueries streaming queries write into the table at once, each from
// its own input directory with its own checkpoint (and so its own txn
// appId): appends of several writers commute, and a lost commit answer must
// be resolved while another writer may have taken the next version.
const soakQueries = 2

// soakQuery is one streaming query's input and checkpoint directories.
type soakQuery struct {
	i          int
	inB, inF   storage.Store // clean, faulty
	chkB, chkF storage.Store
	id         atomic.Value // string: the query id (txn appId) once known
}

func (q *soakQuery) queryID() string { return q.id.Load().(string) }

// batchKey names a batch of one query.
type batchKey struct {
	q int
	b int64
}

type soakModel struct {
	mu      sync.Mutex
	nextID  int64
	files   int
	batches map[batchKey][]int64 // batch -> sorted ids
	owner   map[int64]batchKey   // id -> batch
	ops     map[int64]string     // version -> commitInfo.operation, as checked
}

type soakCounters struct {
	batchCalls, batchesCommitted, batchesSkipped, batchReruns                    atomic.Int64
	streamRestarts, restartsInjected, restartsTimeout, restartsCleanupRace       atomic.Int64
	optimizeRuns, optimizeCommits, optimizeInjected, optimizeTimeout, optimizeRc atomic.Int64
	optimizeConflicts                                                            atomic.Int64
	vacuumRuns, vacuumOK, vacuumInjected, vacuumTimeout, vacuumRace, vacuumFiles atomic.Int64
	checkpoints, checkpointFails, cleanups, cleanupFails, logFilesCleaned        atomic.Int64
	checksPassed, versionsChecked, timeTravel, readerFaults, readerTimeouts      atomic.Int64
	readerRaces, expiredVersions, expiredFiles, versionsSkipped                  atomic.Int64
	lostRows, duplicates, uncommitted                                            atomic.Int64
	checkNanos, checkAttempts                                                    atomic.Int64
}

// violation is an invariant that did not hold.
type violation struct{ msg string }

func (v *violation) Error() string { return v.msg }

func violationf(format string, args ...any) error {
	return &violation{msg: fmt.Sprintf(format, args...)}
}

func newSoak(t *testing.T, seed uint64, dur time.Duration) *soak {
	ctx := context.Background()
	dir := t.TempDir()
	base, err := storage.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { base.Close() })
	// Stack: latency -> fail-before -> fail-after -> disk. A call the outer
	// store fails never reaches the inner one, so the two counters are
	// exact: Injected of `before` counts calls failed before they ran,
	// Injected of `after` calls that ran and lost their answer.
	after, err := faultstore.New(base, faultstore.Options{Seed: seed, ListPageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	before, err := faultstore.New(after, faultstore.Options{Seed: seed + 1, ListPageSize: 1000})
	if err != nil {
		t.Fatal(err)
	}
	if err := after.Add(faultstore.Rule{Ops: faultstore.OpAll, Probability: soakFailAfter, Mode: faultstore.FailAfter}); err != nil {
		t.Fatal(err)
	}
	if err := before.Add(faultstore.Rule{Ops: faultstore.OpAll, Probability: soakFailBefore, Mode: faultstore.FailBefore}); err != nil {
		t.Fatal(err)
	}
	lat := newLatencyStore(before, seed+2, soakLatencyP, soakLatencyMax)
	client := &readRetryStore{inner: lat, resends: 1, retried: new(atomic.Int64)}
	checker := &readRetryStore{inner: lat, resends: 2, retried: client.retried}
	s := &soak{
		t: t, seed: seed, dur: dur, base: base,
		tableB: base.Sub("table"), tableF: client.Sub("table"), tableR: checker.Sub("table"),
		before: before, after: after, lat: lat, client: client,
		tableURL: "file://" + dir + "/table",
	}
	for i := range soakQueries {
		in, chk := fmt.Sprintf("in%d", i), fmt.Sprintf("chk%d", i)
		q := &soakQuery{i: i, inB: base.Sub(in), inF: client.Sub(in), chkB: base.Sub(chk), chkF: client.Sub(chk)}
		q.id.Store("")
		s.queries = append(s.queries, q)
	}
	s.model.batches = map[batchKey][]int64{}
	s.model.owner = map[int64]batchKey{}
	s.model.ops = map[int64]string{}
	// The table exists before the run (created without faults), with a short
	// file retention, small files and frequent checkpoints.
	tb, err := table.Create(ctx, s.tableURL, table.CreateOptions{
		Schema: soakSchema, PartitionColumns: []string{"p"},
		Properties: map[string]string{
			txlog.PropDeletedFileRetentionDuration: fmt.Sprintf("interval %d seconds", int(soakRetention/time.Second)),
			txlog.PropLogRetentionDuration:         "interval 1 hours",
			txlog.PropCheckpointInterval:           "5",
			"delta.targetFileSize":                 "65536",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	tb.Close()
	return s
}

func (s *soak) injected() int64 { return s.before.Counts().Injected + s.after.Counts().Injected }

func (s *soak) violate(err error) {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	s.violations = append(s.violations, err.Error())
	s.t.Logf("VIOLATION: %v", err)
}

func (s *soak) numViolations() int {
	s.vmu.Lock()
	defer s.vmu.Unlock()
	return len(s.violations)
}

// passed counts an invariant check that held, and moves the "survived"
// mark while no violation has been seen.
func (s *soak) passed() {
	s.c.checksPassed.Add(1)
	if s.numViolations() == 0 {
		inj := s.injected()
		for {
			cur := s.injectedAtLastGoodCheck.Load()
			if inj <= cur || s.injectedAtLastGoodCheck.CompareAndSwap(cur, inj) {
				break
			}
		}
	}
}

// sleep waits d or until ctx is done; false when ctx is done.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func (s *soak) run() {
	t := s.t
	ctx, cancel := context.WithTimeout(context.Background(), s.dur)
	defer cancel()
	start := time.Now()
	g, gctx := errgroup.WithContext(ctx)
	g.Go(func() error { return s.generate(gctx) })
	for _, q := range s.queries {
		g.Go(func() error { return s.ingest(gctx, q) })
	}
	g.Go(func() error { return s.optimize(gctx) })
	g.Go(func() error { return s.vacuum(gctx) })
	g.Go(func() error { return s.logMaintenance(gctx) })
	g.Go(func() error { return s.read(gctx) })
	if err := g.Wait(); err != nil {
		t.Fatalf("soak goroutine: %v", err)
	}
	elapsed := time.Since(start).Round(time.Second)

	// Drain the remaining input without faults, then check everything
	// without faults.
	fctx := context.Background()
	if err := s.drain(fctx); err != nil {
		s.violate(violationf("final drain on the clean store: %v", err))
	}
	latest := s.finalCheck(fctx)

	bf, af := s.before.Counts().Injected, s.after.Counts().Injected
	survived := s.injectedAtLastGoodCheck.Load()
	c := &s.c
	s.model.mu.Lock()
	var ingest, optimize, other int
	for v := int64(1); v <= latest; v++ {
		switch s.model.ops[v] {
		case "STREAMING UPDATE":
			ingest++
		case "OPTIMIZE":
			optimize++
		default: // VACUUM START/END, and versions the checker did not classify
			other++
		}
	}
	rows, files := s.model.nextID, s.model.files
	s.model.mu.Unlock()
	nv := s.numViolations()
	surfaced := c.restartsInjected.Load() + c.optimizeInjected.Load() + c.vacuumInjected.Load() +
		c.checkpointFails.Load() + c.cleanupFails.Load() + c.readerFaults.Load()
	fmt.Printf("soak: %s, seed %d, %d commits (%d ingest, %d optimize, %d unclassified), %d input files / %d rows, "+
		"%d batches (%d skipped as already committed), %d stream restarts (%d fault, %d timeout, %d log-cleanup race), "+
		"%d vacuums deleted %d files, %d checkpoints, %d log files cleaned, "+
		"%d storage calls failed on purpose (%d before, %d after/lost answer) of %d, %d delayed, "+
		"%d faults survived (%d re-sent by the client, %d surfaced as errors and were retried or restarted), "+
		"%d lost rows, %d duplicates, %d uncommitted rows visible, %d invariant violations, "+
		"%d invariant checks passed (%d versions, %d time travel; %d expired versions, %d expired files)\n",
		elapsed, s.seed, latest, ingest, optimize, other, files, rows,
		c.batchCalls.Load(), c.batchesSkipped.Load(), c.streamRestarts.Load(), c.restartsInjected.Load(), c.restartsTimeout.Load(), c.restartsCleanupRace.Load(),
		c.vacuumOK.Load(), c.vacuumFiles.Load(), c.checkpoints.Load(), c.logFilesCleaned.Load(),
		bf+af, bf, af, s.calls(), s.lat.st.delayed.Load(),
		survived, s.client.retried.Load(), surfaced,
		c.lostRows.Load(), c.duplicates.Load(), c.uncommitted.Load(), nv,
		c.checksPassed.Load(), c.versionsChecked.Load(), c.timeTravel.Load(), c.expiredVersions.Load(), c.expiredFiles.Load())
	t.Logf("optimize: %d runs, %d commits, %d fault, %d timeout, %d conflicts; vacuum: %d runs, %d fault, %d timeout, %d race; "+
		"cleanup: %d runs, %d failed; checkpoint failures %d; reader: %d faults retried, %d timeouts, %d cleanup races, %d versions skipped (lag), %d check attempts, %s each",
		c.optimizeRuns.Load(), c.optimizeCommits.Load(), c.optimizeInjected.Load(), c.optimizeTimeout.Load(), c.optimizeConflicts.Load(),
		c.vacuumRuns.Load(), c.vacuumInjected.Load(), c.vacuumTimeout.Load(), c.vacuumRace.Load(),
		c.cleanups.Load(), c.cleanupFails.Load(), c.checkpointFails.Load(),
		c.readerFaults.Load(), c.readerTimeouts.Load(), c.readerRaces.Load(), c.versionsSkipped.Load(),
		c.checkAttempts.Load(), time.Duration(c.checkNanos.Load()/max(1, c.checkAttempts.Load())))

	if nv > 0 {
		s.vmu.Lock()
		defer s.vmu.Unlock()
		t.Fatalf("%d invariant violations (seed %d); first: %s", nv, s.seed, strings.Join(s.violations[:min(nv, 10)], "\n  "))
	}
	// The soak must have exercised what it claims to.
	if bf == 0 || af == 0 || ingest == 0 || c.checksPassed.Load() == 0 {
		t.Fatalf("soak did not exercise the system: %d+%d faults, %d ingest commits, %d checks", bf, af, ingest, c.checksPassed.Load())
	}
	if s.dur >= 10*time.Second && (optimize == 0 || c.streamRestarts.Load() == 0) {
		t.Fatalf("soak of %s without an OPTIMIZE commit (%d) or a stream restart (%d)", s.dur, optimize, c.streamRestarts.Load())
	}
}

// calls is the number of storage calls the faulty stores saw.
func (s *soak) calls() int64 {
	c := s.before.Counts()
	return c.Read + c.RangeRead + c.Put + c.PutIfAbsent + c.NewWriter + c.WriterClose + c.List + c.Stat + c.Delete
}

// generate writes a new input file every 150ms: 1..20 rows with fresh ids.
func (s *soak) generate(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(s.seed, 7))
	for sleep(ctx, 150*time.Millisecond) {
		s.model.mu.Lock()
		q := s.queries[s.model.files%len(s.queries)]
		name := fmt.Sprintf("f%06d.json", s.model.files)
		n := 1 + rng.IntN(20)
		var b strings.Builder
		first := s.model.nextID
		for i := range int64(n) {
			fmt.Fprintf(&b, "{\"id\":%d,\"file\":%q,\"p\":\"%d\"}\n", first+i, name, (first+i)%4)
		}
		s.model.nextID += int64(n)
		s.model.files++
		s.model.mu.Unlock()
		// The clean store: the generator is the outside world, not a
		// component under test. Put is atomic (temp file + rename).
		if err := q.inB.Put(context.Background(), name, []byte(b.String())); err != nil {
			return fmt.Errorf("generate %s: %w", name, err)
		}
	}
	return nil
}

// recSink records each batch's ids in the model, then hands the batch to
// the Delta sink with a bounded context.
type recSink struct {
	s       *soak
	q       *soakQuery
	tbl     *table.Table
	qid     string
	timeout time.Duration
}

func (r *recSink) AddBatch(ctx context.Context, batchID int64, b *schema.Batch) (sink.Result, error) {
	s := r.s
	s.c.batchCalls.Add(1)
	ids, err := batchIDs(b)
	if err != nil {
		return sink.Result{}, err
	}
	if err := s.recordBatch(batchKey{r.q.i, batchID}, ids); err != nil {
		s.violate(err)
	}
	if r.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, r.timeout)
		defer cancel()
	}
	res, err := sink.NewDeltaTable(r.tbl, sink.Options{QueryID: r.qid}).AddBatch(ctx, batchID, b)
	if err == nil {
		if res.Skipped {
			s.c.batchesSkipped.Add(1)
		} else {
			s.c.batchesCommitted.Add(1)
			s.noteOp(res.Version, "STREAMING UPDATE")
		}
	}
	return res, err
}

func batchIDs(b *schema.Batch) ([]int64, error) {
	col := -1
	for i, f := range b.Schema.Fields {
		if f.Name == "id" {
			col = i
		}
	}
	if col < 0 {
		return nil, fmt.Errorf("batch without an id column: %v", b.Schema)
	}
	ids := make([]int64, 0, len(b.Rows))
	for _, r := range b.Rows {
		id, ok := r[col].(int64)
		if !ok {
			return nil, fmt.Errorf("id %v (%T) is not an int64", r[col], r[col])
		}
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids, nil
}

// recordBatch adds a batch to the model: a rerun must carry the same ids,
// and an id belongs to one batch only.
func (s *soak) recordBatch(k batchKey, ids []int64) error {
	s.model.mu.Lock()
	defer s.model.mu.Unlock()
	if prev, ok := s.model.batches[k]; ok {
		s.c.batchReruns.Add(1)
		if !slices.Equal(prev, ids) {
			return violationf("query %d batch %d rerun with %d ids, first run had %d (a rerun must read exactly the same files)", k.q, k.b, len(ids), len(prev))
		}
		return nil
	}
	for _, id := range ids {
		if o, ok := s.model.owner[id]; ok {
			return violationf("id %d in query %d batch %d and query %d batch %d (a file ingested twice)", id, o.q, o.b, k.q, k.b)
		}
		if id < 0 || id >= s.model.nextID {
			return violationf("id %d in query %d batch %d was never generated", id, k.q, k.b)
		}
	}
	for _, id := range ids {
		s.model.owner[id] = k
	}
	s.model.batches[k] = ids
	return nil
}

// runStream runs one streaming query on the given stores.
func (s *soak) runStream(ctx context.Context, q *soakQuery, tableSt, inSt, chkSt storage.Store, trig stream.Trigger, timeout time.Duration) error {
	tbl, err := table.OpenStore(tableSt)
	if err != nil {
		return err
	}
	defer tbl.Close()
	src, err := source.NewFileSource(inSt, source.Options{Format: source.FormatJSON, Schema: soakSchema})
	if err != nil {
		return err
	}
	rs := &recSink{s: s, q: q, tbl: tbl, timeout: timeout}
	o := stream.DefaultOptions()
	o.CheckpointStore, o.Source, o.Sink = chkSt, src, rs
	o.SinkKind, o.SinkURL = "delta", s.tableURL
	o.Trigger, o.MaxFilesPerTrigger = trig, 4
	o.CheckFresh = func(_ context.Context, qid string, _ bool) error {
		if prev := q.queryID(); prev != "" && prev != qid {
			s.violate(violationf("query %d: query id changed across restarts: %s then %s", q.i, prev, qid))
		}
		q.id.Store(qid)
		rs.qid = qid
		return nil
	}
	return stream.Run(ctx, o)
}

// ingest is the supervisor: it runs the query and restarts it after every
// error.
func (s *soak) ingest(ctx context.Context, q *soakQuery) error {
	for ctx.Err() == nil {
		err := s.runStream(ctx, q, s.tableF, q.inF, q.chkF, stream.ProcessingTime(200*time.Millisecond), soakOpTimeout)
		if ctx.Err() != nil {
			return nil
		}
		s.c.streamRestarts.Add(1)
		s.example("stream", err)
		switch s.classify(ctx, err) {
		case errInjected:
			s.c.restartsInjected.Add(1)
		case errTimeout:
			s.c.restartsTimeout.Add(1)
		case errCleanupRace:
			s.c.restartsCleanupRace.Add(1)
		default:
			s.violate(violationf("stream: error without an injected cause: %v", err))
			sleep(ctx, 100*time.Millisecond)
		}
	}
	return nil
}

type errKind int

const (
	errOther errKind = iota
	errInjected
	errTimeout
	errCleanupRace
)

// classify sorts an error of a component. A missing log file is the
// modelled race with log cleanup only if its version is older than the
// newest checkpoint (cleanup deletes nothing else).
func (s *soak) classify(ctx context.Context, err error) errKind {
	switch {
	case err == nil:
		return errOther
	case errors.Is(err, faultstore.ErrInjected):
		return errInjected
	case errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil:
		return errTimeout
	}
	var pe *storage.PathError
	if errors.Is(err, storage.ErrNotFound) && errors.As(err, &pe) && strings.HasPrefix(pe.Path, txlog.LogDir+"/") {
		if v, ok := logVersion(pe.Path); ok && v < s.newestCheckpoint() {
			return errCleanupRace
		}
	}
	return errOther
}

// logVersion parses the version of a log file name.
func logVersion(p string) (int64, bool) {
	b := path.Base(p)
	if len(b) < 20 {
		return 0, false
	}
	v, err := strconv.ParseInt(b[:20], 10, 64)
	return v, err == nil
}

// oldestCheckpoint is the oldest checkpoint version in the log (clean
// listing), -1 if none.
func (s *soak) oldestCheckpoint() int64 {
	oldest := int64(-1)
	for fi, err := range s.tableB.List(context.Background(), txlog.LogDir+"/", "") {
		if err != nil {
			return oldest
		}
		if v, ok := logVersion(fi.Path); ok && strings.Contains(fi.Path, ".checkpoint") && (oldest < 0 || v < oldest) {
			oldest = v
		}
	}
	return oldest
}

// newestCheckpoint is the newest checkpoint version in the log (clean
// listing), -1 if none.
func (s *soak) newestCheckpoint() int64 {
	newest := int64(-1)
	for fi, err := range s.tableB.List(context.Background(), txlog.LogDir+"/", "") {
		if err != nil {
			return newest
		}
		if strings.Contains(fi.Path, ".checkpoint") {
			if v, ok := logVersion(fi.Path); ok && v > newest {
				newest = v
			}
		}
	}
	return newest
}

func (s *soak) optimize(ctx context.Context) error {
	for sleep(ctx, 400*time.Millisecond) {
		tbl, err := table.OpenStore(s.tableF)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, soakOpTimeout)
		_, res, err := compaction.Optimize(cctx, tbl, compaction.PlanOptions{MaxBins: 2}, compaction.ExecOptions{Workers: 1})
		cancel()
		tbl.Close()
		if ctx.Err() != nil {
			return nil
		}
		s.c.optimizeRuns.Add(1)
		if err != nil {
			s.example("optimize", err)
		}
		if err == nil {
			if res.Version >= 0 {
				s.c.optimizeCommits.Add(1)
				s.noteOp(res.Version, "OPTIMIZE")
			}
			continue
		}
		switch s.classify(ctx, err) {
		case errInjected:
			s.c.optimizeInjected.Add(1)
		case errTimeout:
			s.c.optimizeTimeout.Add(1)
		case errCleanupRace:
			s.c.optimizeRc.Add(1)
		default:
			if errors.Is(err, txlog.ErrConcurrentModification) || errors.Is(err, compaction.ErrPlanStale) {
				s.c.optimizeConflicts.Add(1)
				continue
			}
			s.violate(violationf("optimize: error without an injected cause: %v", err))
		}
	}
	return nil
}

func (s *soak) vacuum(ctx context.Context) error {
	for sleep(ctx, 700*time.Millisecond) {
		tbl, err := table.OpenStore(s.tableF)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, soakOpTimeout)
		// The table's retention: no Retention, no Force.
		res, err := compaction.Vacuum(cctx, tbl, compaction.VacuumOptions{Workers: 2})
		cancel()
		tbl.Close()
		if ctx.Err() != nil {
			return nil
		}
		s.c.vacuumRuns.Add(1)
		if err != nil {
			s.example("vacuum", err)
		}
		if res != nil {
			s.c.vacuumFiles.Add(int64(res.FilesDeleted))
		}
		if err == nil {
			s.c.vacuumOK.Add(1)
			continue
		}
		switch s.classify(ctx, err) {
		case errInjected:
			s.c.vacuumInjected.Add(1)
		case errTimeout:
			s.c.vacuumTimeout.Add(1)
		case errCleanupRace:
			s.c.vacuumRace.Add(1)
		default:
			s.violate(violationf("vacuum: error without an injected cause: %v", err))
		}
	}
	return nil
}

// logMaintenance writes a checkpoint and cleans the expired log every 1.5s,
// with the clock two days ahead (see TestSoak). A cleanup stops at its
// first failed delete (oldest first, so that the retained log stays
// contiguous), so under 5% failures one run deletes ~20 files: running it
// this often lets it keep up with the commits.
func (s *soak) logMaintenance(ctx context.Context) error {
	for sleep(ctx, 1500*time.Millisecond) {
		tbl, err := table.OpenStore(s.tableF)
		if err != nil {
			return err
		}
		cctx, cancel := context.WithTimeout(ctx, soakOpTimeout)
		_, err = compaction.Checkpoint(cctx, tbl)
		if err == nil {
			s.c.checkpoints.Add(1)
		} else if ctx.Err() == nil {
			s.example("checkpoint", err)
			if k := s.classify(ctx, err); k == errOther {
				s.violate(violationf("checkpoint: error without an injected cause: %v", err))
			}
			s.c.checkpointFails.Add(1)
		}
		if ctx.Err() == nil {
			res, err := compaction.CleanupLog(cctx, tbl, compaction.CleanupLogOptions{Now: func() time.Time { return time.Now().Add(48 * time.Hour) }})
			s.c.cleanups.Add(1)
			if res != nil {
				// On an error, the files of the plan deleted before it.
				for _, p := range res.Files {
					if _, serr := s.tableB.Stat(context.Background(), p); errors.Is(serr, storage.ErrNotFound) {
						s.c.logFilesCleaned.Add(1)
					}
				}
			}
			if err != nil && ctx.Err() == nil {
				s.example("log cleanup", err)
				if k := s.classify(ctx, err); k == errOther {
					s.violate(violationf("log cleanup: error without an injected cause: %v", err))
				}
				s.c.cleanupFails.Add(1)
			}
		}
		cancel()
		tbl.Close()
	}
	return nil
}

// read checks each new version as it appears, and an older one now and then.
func (s *soak) read(ctx context.Context) error {
	rng := rand.New(rand.NewPCG(s.seed, 11))
	last := int64(-1)
	lg, err := txlog.New(s.tableR, txlog.Options{})
	if err != nil {
		return err
	}
	// hi is what the check of the highest version so far (hiV) learned.
	hiV, hi := int64(-1), (*versionInfo)(nil)
	for i := 0; sleep(ctx, 20*time.Millisecond); i++ {
		cctx, cancel := context.WithTimeout(ctx, soakOpTimeout)
		latest, err := lg.LatestVersion(cctx)
		cancel()
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			switch s.classify(ctx, err) {
			case errInjected:
				s.c.readerFaults.Add(1)
			case errTimeout:
				s.c.readerTimeouts.Add(1)
			case errCleanupRace:
				s.c.readerRaces.Add(1)
			default:
				s.violate(violationf("reader: latest version: %v", err))
			}
			continue
		}
		// Every new version when there are at most 4; else the newest and
		// two at random in between (a check reads the whole table; on two
		// cores it cannot always keep up with the commits). The final check
		// covers every version still in the log.
		var vs []int64
		if latest-last <= 4 {
			for v := last + 1; v <= latest; v++ {
				vs = append(vs, v)
			}
		} else if latest > last {
			a, b := last+1+rng.Int64N(latest-last-1), last+1+rng.Int64N(latest-last-1)
			vs = slices.Compact([]int64{latest, max(a, b), min(a, b)})
			s.c.versionsSkipped.Add(latest - last - int64(len(vs)))
		}
		for _, v := range vs {
			if ctx.Err() != nil {
				break
			}
			info, ok := s.checkWithRetry(ctx, v)
			if !ok || info == nil {
				continue
			}
			s.c.versionsChecked.Add(1)
			var err error
			switch {
			case v == 0 || (hi != nil && v == hiV+1):
				err = checkTxnStep(v, hi, info)
			case hi != nil && v > hiV:
				err = checkTxnsMonotone(hiV, hi, v, info)
			case hi != nil:
				err = checkTxnsMonotone(v, info, hiV, hi)
			}
			if err != nil {
				s.violate(err)
			}
			if v > hiV {
				hiV, hi = v, info
			}
		}
		last = max(last, latest)
		if i%10 == 9 && latest > 1 && ctx.Err() == nil {
			v := rng.Int64N(latest)
			if _, ok := s.checkWithRetry(ctx, v); ok {
				s.c.timeTravel.Add(1)
			}
		}
		if err := s.checkContiguous(ctx, false); err != nil {
			s.violate(err)
		}
	}
	return nil
}

// checkTxnStep: a streaming commit advances its query's txn by exactly
// one, and nothing else changes a txn. prev is the info of version v-1 (nil
// for version 0).
func checkTxnStep(v int64, prev, info *versionInfo) error {
	for q, txn := range info.txns {
		want := int64(-1)
		if prev != nil {
			want = prev.txns[q]
		}
		if info.by == q {
			want++
		}
		if txn != want {
			return violationf("version %d (%s): txns %v after %v", v, info.op, info.txns, prevTxns(prev))
		}
	}
	return nil
}

func prevTxns(p *versionInfo) any {
	if p == nil {
		return "none"
	}
	return p.txns
}

// checkTxnsMonotone: across unchecked versions, no txn goes back.
func checkTxnsMonotone(lowV int64, low *versionInfo, highV int64, high *versionInfo) error {
	for q, txn := range high.txns {
		if txn < low.txns[q] {
			return violationf("version %d: txns %v, but at version %d they were %v", highV, high.txns, lowV, low.txns)
		}
	}
	return nil
}

// versionInfo is what a check learned about a version.
type versionInfo struct {
	op   string
	txns []int64 // per query; -1: no txn for the query yet
	by   int     // the query of a STREAMING UPDATE, else -1
}

// checkWithRetry checks version v through the faulty store, retrying
// injected faults and timeouts. ok reports a check that passed; an expired
// version is not ok and not a violation.
func (s *soak) checkWithRetry(ctx context.Context, v int64) (*versionInfo, bool) {
	for attempt := 0; ctx.Err() == nil; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, soakReadTimeout)
		t0 := time.Now()
		info, err := s.checkVersion(cctx, s.tableR, v)
		s.c.checkNanos.Add(int64(time.Since(t0)))
		s.c.checkAttempts.Add(1)
		cancel()
		if err == nil {
			s.passed()
			return info, true
		}
		if ctx.Err() != nil {
			return nil, false
		}
		var vio *violation
		switch {
		case errors.As(err, &vio):
			s.violate(err)
			return nil, false
		case errors.Is(err, faultstore.ErrInjected):
			s.c.readerFaults.Add(1)
			continue
		case errors.Is(err, context.DeadlineExceeded):
			s.c.readerTimeouts.Add(1)
			continue
		case errors.Is(err, storage.ErrNotFound) || errors.Is(err, txlog.ErrVersionNotFound):
			switch s.diagnose(ctx, v) {
			case diagExpired:
				return nil, false
			case diagRetry:
				s.c.readerRaces.Add(1)
				if attempt < 20 {
					sleep(ctx, 10*time.Millisecond)
					continue
				}
				s.violate(violationf("version %d: %v (still after %d attempts)", v, err, attempt+1))
				return nil, false
			default:
				return nil, false // diagnose reported the violation
			}
		default:
			s.violate(violationf("version %d: read error without an injected cause: %v", v, err))
			return nil, false
		}
	}
	return nil, false
}

type diagnosis int

const (
	diagViolation diagnosis = iota
	diagRetry
	diagExpired
)

// diagnose explains a missing file at version v on the clean store: the
// version's log was cleaned (expired), a data file was removed longer than
// the retention ago (expired), the clean read passes (a race with log
// cleanup: retry), or a violation, which it reports.
func (s *soak) diagnose(ctx context.Context, v int64) diagnosis {
	_, err := s.checkVersion(ctx, s.tableB, v)
	var vio *violation
	var pe *storage.PathError
	switch {
	case err == nil:
		return diagRetry
	case errors.As(err, &vio):
		s.violate(err)
		return diagViolation
	case errors.Is(err, txlog.ErrVersionNotFound):
		if v < s.newestCheckpoint() {
			s.c.expiredVersions.Add(1)
			return diagExpired
		}
		s.violate(violationf("version %d is not reconstructible but newer than every checkpoint: %v", v, err))
		return diagViolation
	case errors.Is(err, storage.ErrNotFound) && errors.As(err, &pe) && strings.HasPrefix(pe.Path, txlog.LogDir+"/"):
		return diagRetry
	case errors.Is(err, storage.ErrNotFound) && errors.As(err, &pe):
		if err := s.removedLongAgo(ctx, pe.Path); err != nil {
			s.violate(violationf("version %d: %v", v, err))
			return diagViolation
		}
		s.c.expiredFiles.Add(1)
		return diagExpired
	}
	s.violate(violationf("version %d: clean read failed: %v", v, err))
	return diagViolation
}

// removedLongAgo returns nil if the data file key may have been vacuumed: it
// is not live in the latest snapshot and its tombstone (if the latest
// snapshot still has one) is older than the retention. A checkpoint drops
// expired tombstones, so no tombstone means an expired one.
func (s *soak) removedLongAgo(ctx context.Context, key string) error {
	tbl, err := table.OpenStore(s.tableB)
	if err != nil {
		return err
	}
	defer tbl.Close()
	snap, err := tbl.Snapshot(ctx)
	if err != nil {
		return err
	}
	if _, ok := snap.File(key); ok {
		return fmt.Errorf("data file %s is missing but live in the latest version %d", key, snap.Version())
	}
	for _, r := range snap.Tombstones() {
		k, err := snap.FileKey(r.Path)
		if err != nil || k != key || r.DeletionTimestamp == nil {
			continue
		}
		// One second of slack for clock reads around the commit.
		if removed := time.UnixMilli(*r.DeletionTimestamp); time.Since(removed) < soakRetention-time.Second {
			return fmt.Errorf("data file %s deleted %s after its removal, before the retention %s", key, time.Since(removed).Round(time.Millisecond), soakRetention)
		}
	}
	return nil
}

// checkVersion checks version v through st against the model. It returns a
// *violation when an invariant does not hold, another error when it could
// not read.
func (s *soak) checkVersion(ctx context.Context, st storage.Store, v int64) (*versionInfo, error) {
	snap, err := reader.Open(ctx, st.URL(), reader.WithStore(st), reader.AtVersion(v))
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	ds := snap.Delta()
	if ds.Version() != v {
		return nil, violationf("asked for version %d, got %d", v, ds.Version())
	}
	ci := ds.CommitInfo()
	info := &versionInfo{op: ci.Operation(), txns: make([]int64, len(s.queries)), by: -1}
	known := 0
	var qids []string
	for i, q := range s.queries {
		info.txns[i] = -1
		qid := q.queryID()
		qids = append(qids, qid)
		if tv, ok := ds.TxnVersion(qid); ok && qid != "" {
			info.txns[i] = tv
			known++
		}
	}
	// A query's id is known (CheckFresh) before its first batch.
	if len(ds.Txns()) != known {
		return nil, violationf("version %d: txns %v, the queries are %q", v, ds.Txns(), qids)
	}
	switch info.op {
	case "CREATE TABLE", "OPTIMIZE", compaction.OpVacuumStart, compaction.OpVacuumEnd:
	case "STREAMING UPDATE":
		params := ci.StringMap("operationParameters")
		info.by = slices.Index(qids, params["queryId"])
		if info.by < 0 || params["queryId"] == "" || params["epochId"] != strconv.FormatInt(info.txns[info.by], 10) {
			return nil, violationf("version %d: STREAMING UPDATE epochId %q queryId %q, but the txns are %v for %q", v, params["epochId"], params["queryId"], info.txns, qids)
		}
	default:
		return nil, violationf("version %d: unexpected commitInfo operation %q", v, info.op)
	}
	// Every listed file is read below, so every listed file exists.
	expected, err := s.expected(info.txns)
	if err != nil {
		return nil, violationf("version %d: %v", v, err)
	}
	got := make(map[int64]int, len(expected))
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id"}, Workers: 2}) {
		if err != nil {
			return nil, err
		}
		id, ok := rec.Values[0].(int64)
		if !ok {
			return nil, violationf("version %d: id %v (%T)", v, rec.Values[0], rec.Values[0])
		}
		got[id]++
	}
	var lost, dup, extra int64
	var example []string
	for id := range expected {
		if got[id] == 0 {
			lost++
			if len(example) < 3 {
				example = append(example, fmt.Sprintf("id %d lost", id))
			}
		}
	}
	for id, n := range got {
		switch {
		case !expected[id]:
			extra += int64(n)
			if len(example) < 3 {
				example = append(example, fmt.Sprintf("id %d not committed", id))
			}
		case n > 1:
			dup += int64(n - 1)
			if len(example) < 3 {
				example = append(example, fmt.Sprintf("id %d x%d", id, n))
			}
		}
	}
	if lost+dup+extra > 0 {
		s.c.lostRows.Add(lost)
		s.c.duplicates.Add(dup)
		s.c.uncommitted.Add(extra)
		return nil, violationf("version %d (%s, txns %v): %d lost, %d duplicate, %d uncommitted rows (%s)", v, info.op, info.txns, lost, dup, extra, strings.Join(example, ", "))
	}
	s.noteOp(v, info.op)
	return info, nil
}

// noteOp records the operation a component reports it committed as
// version v; two components claiming one version is a violation.
func (s *soak) noteOp(v int64, op string) {
	s.model.mu.Lock()
	prev, ok := s.model.ops[v]
	if !ok {
		s.model.ops[v] = op
	}
	s.model.mu.Unlock()
	if ok && prev != op {
		s.violate(violationf("version %d reported committed as %s, but it is %s", v, op, prev))
	}
}

// expected is the id set of each query's batches 0..txns[query].
func (s *soak) expected(txns []int64) (map[int64]bool, error) {
	s.model.mu.Lock()
	defer s.model.mu.Unlock()
	out := map[int64]bool{}
	for q, txn := range txns {
		for b := int64(0); b <= txn; b++ {
			ids, ok := s.model.batches[batchKey{q, b}]
			if !ok {
				return nil, fmt.Errorf("the txn says batch %d of query %d is committed, but the sink never received it", b, q)
			}
			for _, id := range ids {
				out[id] = true
			}
		}
	}
	return out, nil
}

// checkContiguous checks that the commit files form one run of versions:
// from the newest checkpoint on during the run (cleanup may be deleting
// older ones), the whole log at the end.
func (s *soak) checkContiguous(ctx context.Context, whole bool) error {
	var versions []int64
	cp := int64(-1)
	for fi, err := range s.tableB.List(ctx, txlog.LogDir+"/", "") {
		if err != nil {
			return nil // only a cancelled ctx fails a clean listing
		}
		v, ok := logVersion(fi.Path)
		switch {
		case !ok:
		case strings.HasSuffix(fi.Path, ".json"):
			versions = append(versions, v)
		case strings.Contains(fi.Path, ".checkpoint"):
			cp = max(cp, v)
		}
	}
	slices.Sort(versions)
	for i := 1; i < len(versions); i++ {
		if (whole || versions[i-1] >= cp) && versions[i] != versions[i-1]+1 {
			return violationf("commit files not contiguous: %d then %d", versions[i-1], versions[i])
		}
	}
	return nil
}

// drain ingests the rest of the input on the clean stores.
func (s *soak) drain(ctx context.Context) error {
	for _, q := range s.queries {
		if err := s.runStream(ctx, q, s.tableB, q.inB, q.chkB, stream.AvailableNow(), 0); err != nil {
			return fmt.Errorf("query %d: %w", q.i, err)
		}
	}
	return nil
}

// finalCheck checks every version in the log on the clean store and that
// the last one holds every generated id once. It returns the last version.
func (s *soak) finalCheck(ctx context.Context) int64 {
	lg, err := txlog.New(s.tableB, txlog.Options{})
	if err != nil {
		s.violate(err)
		return -1
	}
	versions, err := lg.Versions(ctx)
	if err != nil || len(versions) == 0 {
		s.violate(violationf("final: versions %v: %v", versions, err))
		return -1
	}
	if err := s.checkContiguous(ctx, true); err != nil {
		s.violate(err)
	}
	cp := s.newestCheckpoint()
	// When cleanup truncated the log (commit 0 gone), the versions below the
	// oldest checkpoint cannot be rebuilt: the first and the last of them
	// must say so (ErrVersionNotFound), and all count as expired without a
	// listing each.
	if oldest := s.oldestCheckpoint(); versions[0] > 0 && oldest > versions[0] {
		i := slices.IndexFunc(versions, func(v int64) bool { return v >= oldest })
		if i < 0 {
			i = len(versions)
		}
		for _, v := range []int64{versions[0], versions[i-1]} {
			if _, err := lg.SnapshotAt(ctx, v); !errors.Is(err, txlog.ErrVersionNotFound) {
				s.violate(violationf("final: version %d below the oldest checkpoint %d of a cleaned log: %v, want version not found", v, oldest, err))
			}
		}
		s.c.expiredVersions.Add(int64(i))
		versions = versions[i:]
	}
	var prev *versionInfo
	for _, v := range versions {
		info, err := s.checkVersion(ctx, s.tableB, v)
		if err != nil {
			prev = nil
			var pe *storage.PathError
			switch {
			case errors.Is(err, txlog.ErrVersionNotFound) && v < cp:
				s.c.expiredVersions.Add(1)
				continue
			case errors.Is(err, storage.ErrNotFound) && errors.As(err, &pe) && !strings.HasPrefix(pe.Path, txlog.LogDir+"/"):
				if rerr := s.removedLongAgo(ctx, pe.Path); rerr == nil {
					s.c.expiredFiles.Add(1)
					continue
				}
			}
			s.violate(violationf("final check of version %d: %v", v, err))
			continue
		}
		s.c.versionsChecked.Add(1)
		if v == 0 || prev != nil {
			if err := checkTxnStep(v, prev, info); err != nil {
				s.violate(err)
			}
		}
		prev = info
		s.passed()
	}
	latest := versions[len(versions)-1]
	// Every generated id exactly once at the last version: the drain took
	// every input file, and the last version's txn covers every batch.
	info, err := s.checkVersion(ctx, s.tableB, latest)
	s.model.mu.Lock()
	all := s.model.nextID
	owned := int64(len(s.model.owner))
	maxBatch := make([]int64, len(s.queries))
	for q := range maxBatch {
		maxBatch[q] = -1
	}
	for k := range s.model.batches {
		maxBatch[k.q] = max(maxBatch[k.q], k.b)
	}
	s.model.mu.Unlock()
	switch {
	case err != nil:
		s.violate(violationf("final: last version %d: %v", latest, err))
	case owned != all:
		s.violate(violationf("final: %d ids generated, %d ingested after the drain", all, owned))
	case !slices.Equal(info.txns, maxBatch):
		s.violate(violationf("final: last version %d has txns %v, the sinks received batches up to %v", latest, info.txns, maxBatch))
	default:
		s.passed()
	}
	return latest
}
