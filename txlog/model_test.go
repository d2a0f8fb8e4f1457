package txlog_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"maps"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
	"pgregory.net/rapid"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

// Model-based property test of log replay and the commit protocol (issue 9,
// "Faults"): random sequences of blind appends, removes, re-adds, txn
// updates, metadata changes, checkpoints (of the latest and of older
// versions) and pairs of concurrent transactions run against a txlog.Log on
// a mem:// store and against a plain in-memory model. After every step the
// latest snapshot, and a random earlier version loaded with SnapshotAt, must
// equal the model of that version: live files (storage key -> size and
// partition values), txn versions, schema string, configuration, version.
//
// Concurrent commits follow Delta's conflict rules as txlog documents them
// (delta-io/delta ConflictChecker.scala): the second transaction of a pair
// either rebases over the first and commits at the next version, or fails
// with the *ConflictError kind the model predicts.
//
// Replaying checkpoints with parquet-go costs most of the time, so plain
// `go test` runs modelDefaultChecks sequences (about 10 s on 2 busy cores). More:
// RAPID_CHECKS=1000 go test ./txlog -run TestModel (or -rapid.checks=1000).

// modelFile is what the model keeps of a live file.
type modelFile struct {
	size int64
	pv   map[string]*string
}

// modelState is the table at one version.
type modelState struct {
	version int64
	files   map[string]modelFile // storage key -> file
	txns    map[string]int64
	cols    []string // nullable long columns after id and p
	config  map[string]string
}

func (m *modelState) clone() *modelState {
	c := &modelState{version: m.version, files: maps.Clone(m.files), txns: maps.Clone(m.txns),
		cols: slices.Clone(m.cols), config: maps.Clone(m.config)}
	return c
}

func (m *modelState) schemaString() string {
	var b strings.Builder
	b.WriteString(`{"type":"struct","fields":[{"name":"id","type":"long","nullable":true,"metadata":{}},{"name":"p","type":"string","nullable":true,"metadata":{}}`)
	for _, c := range m.cols {
		fmt.Fprintf(&b, `,{"name":%q,"type":"long","nullable":true,"metadata":{}}`, c)
	}
	b.WriteString(`]}`)
	return b.String()
}

func (m *modelState) metadata() txlog.Metadata {
	return txlog.Metadata{ID: "model-table", Format: txlog.Format{Provider: "parquet", Options: map[string]string{}},
		SchemaString: m.schemaString(), PartitionColumns: []string{"p"}, Configuration: maps.Clone(m.config)}
}

// Storage keys with characters that need URI encoding in add.path.
var modelKeyShapes = []string{"part-%05d.parquet", "p=x y/part-%05d.c000.parquet", "dir/ü-%d.parquet", "a%%25b-%d.parquet", "p=__HIVE_DEFAULT_PARTITION__/f %d.parquet"}

var modelApps = []string{"q1", "q2", "q3"}

func strp(s string) *string { return &s }

type modelMachine struct {
	ctx     context.Context
	log     *txlog.Log
	cur     *modelState
	history []*modelState // by version
	removed []string      // keys removed at some point (candidates for re-add)
	nextID  int
	nCols   int
	// post is the PostCommitSnapshot of the last commit, held as a writer
	// holds it; held an older one, brought up to date by Log.Update.
	post, held *txlog.Snapshot
}

func (mm *modelMachine) freshKey(t *rapid.T) string {
	mm.nextID++
	shape := rapid.SampledFrom(modelKeyShapes).Draw(t, "keyShape")
	return fmt.Sprintf(shape, mm.nextID)
}

func drawPV(t *rapid.T) map[string]*string {
	switch rapid.IntRange(0, 3).Draw(t, "pv") {
	case 0:
		return map[string]*string{"p": nil}
	case 1:
		return map[string]*string{"p": strp("")}
	case 2:
		return map[string]*string{"p": strp("x y")}
	default:
		return map[string]*string{"p": strp(rapid.StringMatching(`[a-z0-9=/%]{1,6}`).Draw(t, "pvString"))}
	}
}

func addOf(key string, f modelFile, dataChange bool) txlog.Action {
	return txlog.Action{Add: &txlog.Add{Path: txlog.EncodePath(key), PartitionValues: f.pv, Size: f.size,
		ModificationTime: 1700000000000, DataChange: dataChange}}
}

func removeOf(key string, f modelFile) txlog.Action {
	size := f.size
	return txlog.Action{Remove: &txlog.Remove{Path: txlog.EncodePath(key), DataChange: true,
		PartitionValues: f.pv, Size: &size}}
}

// plannedTxn is one side of a step: the actions, what it read, and how it
// changes the model when it commits.
type plannedTxn struct {
	acts      []txlog.Action
	readWhole bool
	readPaths []string
	readTxns  []string
	isolation txlog.Isolation
	// effects
	adds     map[string]modelFile
	removes  []string
	txns     map[string]int64
	metadata *modelState // cols/config after the commit, nil: unchanged
	// for the conflict prediction
	blind bool
}

func (p *plannedTxn) begin(l *txlog.Log, snap *txlog.Snapshot) *txlog.Transaction {
	tx := l.Begin(snap)
	tx.SetIsolation(p.isolation)
	if p.readWhole {
		tx.ReadWholeTable()
	}
	tx.ReadFiles(p.readPaths...)
	for _, a := range p.readTxns {
		tx.ReadTxn(a)
	}
	tx.Add(p.acts...)
	return tx
}

func (p *plannedTxn) apply(m *modelState) {
	for _, k := range p.removes {
		delete(m.files, k)
	}
	for k, f := range p.adds {
		m.files[k] = f
	}
	for a, v := range p.txns {
		m.txns[a] = v
	}
	if p.metadata != nil {
		m.cols = slices.Clone(p.metadata.cols)
		m.config = maps.Clone(p.metadata.config)
	}
}

// planTxn draws one transaction against base. exclude holds live keys the
// other transaction of a pair adds (fresh keys are never shared).
func (mm *modelMachine) planTxn(t *rapid.T, base *modelState, label string) *plannedTxn {
	p := &plannedTxn{adds: map[string]modelFile{}, txns: map[string]int64{}, blind: true}
	if rapid.Bool().Draw(t, label+"writeSerializable") {
		p.isolation = txlog.WriteSerializable
	}
	kind := rapid.SampledFrom([]string{"append", "append", "appendTxn", "remove", "removeNoRead", "readWhole", "metadata", "txnOnly"}).Draw(t, label+"kind")
	addSome := func() {
		for range rapid.IntRange(1, 3).Draw(t, label+"nAdds") {
			k := mm.freshKey(t)
			f := modelFile{size: rapid.Int64Range(0, 1<<40).Draw(t, label+"size"), pv: drawPV(t)}
			p.adds[k] = f
			p.acts = append(p.acts, addOf(k, f, true))
		}
	}
	live := slices.Sorted(maps.Keys(base.files))
	switch kind {
	case "append":
		addSome()
	case "appendTxn", "txnOnly":
		if kind == "appendTxn" {
			addSome()
		}
		app := rapid.SampledFrom(modelApps).Draw(t, label+"app")
		v := base.txns[app] + 1 + rapid.Int64Range(0, 3).Draw(t, label+"txnStep")
		p.txns[app] = v
		p.acts = append(p.acts, txlog.Action{Txn: &txlog.Txn{AppID: app, Version: v}})
		p.readTxns = append(p.readTxns, app)
	case "remove", "removeNoRead":
		if len(live) == 0 {
			addSome()
			break
		}
		k := rapid.SampledFrom(live).Draw(t, label+"removeKey")
		p.removes = append(p.removes, k)
		p.acts = append(p.acts, removeOf(k, base.files[k]))
		if kind == "remove" {
			p.readPaths = append(p.readPaths, txlog.EncodePath(k))
		}
		p.blind = false
		if rapid.Bool().Draw(t, label+"replaceWithNew") { // compaction-like rewrite
			addSome()
		}
	case "readWhole":
		p.readWhole = true
		p.blind = false
		addSome()
	case "metadata":
		next := base.clone()
		if rapid.Bool().Draw(t, label+"addColumn") {
			mm.nCols++
			next.cols = append(next.cols, fmt.Sprintf("c%d", mm.nCols))
		} else {
			if next.config == nil {
				next.config = map[string]string{}
			}
			next.config["user.k"+rapid.StringMatching(`[a-c]`).Draw(t, label+"confKey")] = rapid.StringMatching(`[a-z0-9 ]{0,8}`).Draw(t, label+"confVal")
		}
		md := next.metadata()
		p.acts = append(p.acts, txlog.Action{MetaData: &md})
		p.metadata = next
		p.blind = false
	}
	return p
}

// predictConflict returns the conflict kind the second transaction of a
// pair must fail with after first committed, or "" when it must rebase.
func predictConflict(first, second *plannedTxn) string {
	if first.metadata != nil {
		return txlog.ConflictMetadataChanged
	}
	if (second.readWhole || second.metadata != nil) && len(first.adds) > 0 {
		ignoreBlind := second.isolation == txlog.WriteSerializable && second.metadata == nil
		if !(ignoreBlind && first.blind) {
			return txlog.ConflictConcurrentAppend
		}
	}
	secondRead := map[string]bool{}
	for _, p := range second.readPaths {
		secondRead[p] = true
	}
	for _, k := range first.removes {
		if second.readWhole || secondRead[txlog.EncodePath(k)] {
			return txlog.ConflictConcurrentDeleteRead
		}
	}
	for _, k := range first.removes {
		if slices.Contains(second.removes, k) {
			return txlog.ConflictConcurrentDeleteDelete
		}
	}
	for a := range first.txns {
		if slices.Contains(second.readTxns, a) {
			return txlog.ConflictConcurrentTransaction
		}
	}
	return ""
}

func (mm *modelMachine) commit(t *rapid.T, p *plannedTxn, snap *txlog.Snapshot) (int64, error) {
	tx := p.begin(mm.log, snap)
	v, err := tx.Commit(mm.ctx, "WRITE", nil, nil)
	if err == nil {
		if tx.PostCommitSnapshot() == nil || tx.PostCommitSnapshot().Version() != v {
			t.Fatalf("commit of version %d: post-commit snapshot %v", v, tx.PostCommitSnapshot())
		}
		if mm.held == nil || rapid.IntRange(0, 3).Draw(t, "holdPost") == 0 {
			mm.held = mm.post
		}
		mm.post = tx.PostCommitSnapshot()
	}
	return v, err
}

// record makes the model's next version.
func (mm *modelMachine) record(t *rapid.T, v int64, p *plannedTxn) {
	if v != mm.cur.version+1 {
		t.Fatalf("committed version %d, model expects %d", v, mm.cur.version+1)
	}
	next := mm.cur.clone()
	next.version = v
	p.apply(next)
	for _, k := range p.removes {
		mm.removed = append(mm.removed, k)
	}
	mm.cur = next
	mm.history = append(mm.history, next)
}

func (mm *modelMachine) latest(t *rapid.T) *txlog.Snapshot {
	s, err := mm.log.Snapshot(mm.ctx)
	if err != nil {
		t.Fatalf("snapshot: %v", err)
	}
	return s
}

// Single transaction on the latest snapshot.
func (mm *modelMachine) Write(t *rapid.T) {
	snap := mm.latest(t)
	p := mm.planTxn(t, mm.cur, "")
	v, err := mm.commit(t, p, snap)
	if err != nil {
		t.Fatalf("commit: %v", err)
	}
	mm.record(t, v, p)
}

// Re-add a file that was removed earlier (add after remove revives it).
func (mm *modelMachine) Readd(t *rapid.T) {
	var cands []string
	for _, k := range mm.removed {
		if _, live := mm.cur.files[k]; !live {
			cands = append(cands, k)
		}
	}
	if len(cands) == 0 {
		t.Skip("no removed file to re-add")
	}
	k := rapid.SampledFrom(cands).Draw(t, "readdKey")
	f := modelFile{size: rapid.Int64Range(0, 1<<20).Draw(t, "readdSize"), pv: drawPV(t)}
	p := &plannedTxn{adds: map[string]modelFile{k: f}, acts: []txlog.Action{addOf(k, f, true)}, blind: true}
	v, err := mm.commit(t, p, mm.latest(t))
	if err != nil {
		t.Fatalf("re-add commit: %v", err)
	}
	mm.record(t, v, p)
}

// Two transactions begun on the same snapshot; both commit, in order.
func (mm *modelMachine) Concurrent(t *rapid.T) {
	snap := mm.latest(t)
	base := mm.cur
	nColsBefore := mm.nCols
	first := mm.planTxn(t, base, "first.")
	second := mm.planTxn(t, base, "second.")
	// both adding a column must not produce the same column name: the
	// counter already makes them distinct.
	_ = nColsBefore
	v1, err := mm.commit(t, first, snap)
	if err != nil {
		t.Fatalf("first commit: %v", err)
	}
	mm.record(t, v1, first)
	want := predictConflict(first, second)
	v2, err := mm.commit(t, second, snap)
	if want != "" {
		var ce *txlog.ConflictError
		if !errors.As(err, &ce) || !errors.Is(err, txlog.ErrConcurrentModification) {
			t.Fatalf("second commit: want *ConflictError %s, got v=%d err=%v", want, v2, err)
		}
		if ce.Kind != want {
			t.Fatalf("second commit: conflict kind %s, model predicts %s (%v)", ce.Kind, want, err)
		}
		if ce.ReadVersion != snap.Version() || ce.WinningVersion != v1 {
			t.Fatalf("conflict versions read=%d winning=%d, want %d and %d", ce.ReadVersion, ce.WinningVersion, snap.Version(), v1)
		}
		return
	}
	if err != nil {
		t.Fatalf("second commit: model predicts a rebase, got %v", err)
	}
	mm.record(t, v2, second)
}

// Checkpoint the latest version, or an older one.
func (mm *modelMachine) Checkpoint(t *rapid.T) {
	v := mm.cur.version
	if rapid.IntRange(0, 3).Draw(t, "olderCheckpoint") == 0 {
		v = rapid.Int64Range(0, v).Draw(t, "checkpointVersion")
	}
	snap, err := mm.log.SnapshotAt(mm.ctx, v)
	if err != nil {
		t.Fatalf("snapshot at %d: %v", v, err)
	}
	lc, err := mm.log.Checkpoint(mm.ctx, snap)
	if err != nil {
		t.Fatalf("checkpoint %d: %v", v, err)
	}
	if lc.Version != v {
		t.Fatalf("checkpoint of %d reports version %d", v, lc.Version)
	}
}

// Time travel to a random earlier version.
func (mm *modelMachine) TimeTravel(t *rapid.T) {
	v := rapid.Int64Range(0, mm.cur.version).Draw(t, "travelTo")
	s, err := mm.log.SnapshotAt(mm.ctx, v)
	if err != nil {
		t.Fatalf("SnapshotAt(%d): %v", v, err)
	}
	compareModel(t, s, mm.history[v])
}

// Check is the invariant after every step.
func (mm *modelMachine) Check(t *rapid.T) {
	compareModel(t, mm.latest(t), mm.cur)
	// The snapshot a writer holds after its commit, and one brought up to
	// date from an older one, are the replayed state.
	if mm.post != nil && mm.post.Version() == mm.cur.version {
		compareModel(t, mm.post, mm.cur)
	}
	if mm.held != nil {
		u, err := mm.log.Update(mm.ctx, mm.held)
		if err != nil {
			t.Fatalf("update from version %d: %v", mm.held.Version(), err)
		}
		compareModel(t, u, mm.cur)
	}
}

func compareModel(t *rapid.T, s *txlog.Snapshot, m *modelState) {
	if s.Version() != m.version {
		t.Fatalf("version %d, model %d", s.Version(), m.version)
	}
	got := map[string]modelFile{}
	for _, a := range s.Files() {
		k, err := s.FileKey(a.Path)
		if err != nil {
			t.Fatalf("v%d: file key of %q: %v", m.version, a.Path, err)
		}
		if _, dup := got[k]; dup {
			t.Fatalf("v%d: file %q live twice", m.version, k)
		}
		got[k] = modelFile{size: a.Size, pv: a.PartitionValues}
	}
	for k, f := range m.files {
		g, ok := got[k]
		if !ok {
			t.Fatalf("v%d (checkpoint %d): model file %q missing from the snapshot", m.version, s.CheckpointVersion(), k)
		}
		if g.size != f.size || !pvEqual(g.pv, f.pv) {
			t.Fatalf("v%d (checkpoint %d): file %q: size %d pv %s, model size %d pv %s", m.version, s.CheckpointVersion(), k, g.size, pvString(g.pv), f.size, pvString(f.pv))
		}
		if a, ok := s.File(k); !ok || a.Size != f.size {
			t.Fatalf("v%d: File(%q) lookup failed", m.version, k)
		}
	}
	if len(got) != len(m.files) {
		var extra []string
		for k := range got {
			if _, ok := m.files[k]; !ok {
				extra = append(extra, k)
			}
		}
		t.Fatalf("v%d (checkpoint %d): snapshot has files the model does not: %q", m.version, s.CheckpointVersion(), extra)
	}
	if s.NumFiles() != len(m.files) {
		t.Fatalf("v%d: NumFiles %d, model %d", m.version, s.NumFiles(), len(m.files))
	}
	var size int64
	for _, f := range m.files {
		size += f.size
	}
	if s.SizeInBytes() != size {
		t.Fatalf("v%d: SizeInBytes %d, model %d", m.version, s.SizeInBytes(), size)
	}
	if txns := s.Txns(); !maps.Equal(txns, m.txns) {
		t.Fatalf("v%d (checkpoint %d): txns %v, model %v", m.version, s.CheckpointVersion(), txns, m.txns)
	}
	md := s.Metadata()
	if md.SchemaString != m.schemaString() {
		t.Fatalf("v%d: schema %s, model %s", m.version, md.SchemaString, m.schemaString())
	}
	if len(md.Configuration) != 0 || len(m.config) != 0 {
		if !maps.Equal(md.Configuration, m.config) {
			t.Fatalf("v%d: configuration %v, model %v", m.version, md.Configuration, m.config)
		}
	}
	if st, err := s.Schema(); err != nil || len(st.Fields) != 2+len(m.cols) {
		t.Fatalf("v%d: parsed schema %v err %v, model has %d columns", m.version, st, err, 2+len(m.cols))
	}
}

func pvEqual(a, b map[string]*string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, va := range a {
		vb, ok := b[k]
		if !ok || (va == nil) != (vb == nil) || (va != nil && *va != *vb) {
			return false
		}
	}
	return true
}

func pvString(m map[string]*string) string {
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(m)) {
		if m[k] == nil {
			parts = append(parts, k+"=<null>")
		} else {
			parts = append(parts, fmt.Sprintf("%s=%q", k, *m[k]))
		}
	}
	return "{" + strings.Join(parts, ",") + "}"
}

// modelDefaultChecks is the number of sequences when neither -rapid.checks
// nor RAPID_CHECKS asks for another.
const modelDefaultChecks = 4

func TestModelReplayAndCommits(t *testing.T) {
	explicit := false
	flag.Visit(func(f *flag.Flag) { explicit = explicit || f.Name == "rapid.checks" })
	if _, ok := os.LookupEnv("RAPID_CHECKS"); !ok && !explicit {
		if f := flag.Lookup("rapid.checks"); f != nil {
			old := f.Value.String()
			if err := f.Value.Set(fmt.Sprint(modelDefaultChecks)); err == nil {
				t.Cleanup(func() { _ = f.Value.Set(old) })
			}
		}
	}
	rapid.Check(t, func(t *rapid.T) {
		ctx := context.Background()
		// a private Opener per sequence: its mem:// bucket is freed with it
		op, err := storage.NewOpener(storage.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		st, err := op.Open(ctx, "mem://txlog-model-"+uuid.NewString())
		if err != nil {
			t.Fatal(err)
		}
		defer st.Close()
		opts := txlog.DefaultOptions()
		// auto checkpoints on or off, with a small interval when on
		if rapid.Bool().Draw(t, "autoCheckpoint") {
			opts.CheckpointInterval = rapid.IntRange(2, 5).Draw(t, "interval")
		} else {
			opts.DisableAutoCheckpoint = true
		}
		l, err := txlog.New(st, opts)
		if err != nil {
			t.Fatal(err)
		}
		mm := &modelMachine{ctx: ctx, log: l}
		m0 := &modelState{version: 0, files: map[string]modelFile{}, txns: map[string]int64{}}
		tx := l.Begin(nil)
		proto := txlog.NewTableProtocol(m0.schemaString())
		md := m0.metadata()
		tx.Add(txlog.Action{Protocol: &proto}, txlog.Action{MetaData: &md})
		if v, err := tx.Commit(ctx, "CREATE TABLE", nil, nil); err != nil || v != 0 {
			t.Fatalf("create: v=%d err=%v", v, err)
		}
		mm.cur = m0
		mm.history = []*modelState{m0}
		t.Repeat(map[string]func(*rapid.T){
			"write":      mm.Write,
			"readd":      mm.Readd,
			"concurrent": mm.Concurrent,
			"checkpoint": mm.Checkpoint,
			"timeTravel": mm.TimeTravel,
			"":           mm.Check,
		})
	})
}
