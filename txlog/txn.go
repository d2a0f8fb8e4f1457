package txlog

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"time"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/storage"
)

// Isolation is a transaction's isolation level (delta-io/delta
// IsolationLevel.scala).
type Isolation int

const (
	// Serializable: the commit conflicts with any concurrent append that its
	// reads depend on, blind appends included. The default.
	Serializable Isolation = iota
	// WriteSerializable: concurrent blind appends do not conflict with a
	// transaction that read the table (unless it changes the metadata).
	WriteSerializable
)

// String is Delta's name of the level: Serializable or WriteSerializable.
func (i Isolation) String() string {
	if i == WriteSerializable {
		return "WriteSerializable"
	}
	return "Serializable"
}

// Transaction is one optimistic commit attempt sequence: it records the
// version it read, what it read (for conflict detection), and the actions to
// commit. Not safe for concurrent use.
type Transaction struct {
	log         *Log
	snap        *Snapshot
	readVersion int64
	readWhole   bool
	readPaths   map[string]bool
	readTxns    map[string]bool
	readPreds   []func(*Add) bool
	actions     []Action
	isolation   Isolation
	done        bool
	txnID       string
	extraInfo   CommitInfo
	post        *Snapshot // after a successful Commit, the snapshot it wrote
	honoured    []string
}

// Begin starts a transaction on snap. A nil snap creates the table: the
// transaction commits version 0 and must contain protocol and metaData
// actions (see NewTableProtocol).
func (l *Log) Begin(snap *Snapshot) *Transaction {
	rv := int64(-1)
	if snap != nil {
		rv = snap.version
	}
	return &Transaction{log: l, snap: snap, readVersion: rv, readPaths: map[string]bool{},
		readTxns: map[string]bool{}, txnID: uuid.NewString()}
}

// ReadVersion is the version the transaction read (-1 for a new table).
func (t *Transaction) ReadVersion() int64 { return t.readVersion }

// TxnID is the transaction's unique id, written as commitInfo.txnId.
func (t *Transaction) TxnID() string { return t.txnID }

// Honour declares the writer features of HonourableWriterFeatures that the
// caller honours in the actions it adds (e.g. columnMapping: its data files
// name columns by physical name), so that Commit accepts a table that has
// them (CheckWriteSupported's honoured). rowTracking needs nothing of the
// caller but that it only adds new rows: Commit assigns the row ids.
func (t *Transaction) Honour(features ...string) { t.honoured = append(t.honoured, features...) }

// SetIsolation sets the isolation level (default Serializable).
func (t *Transaction) SetIsolation(i Isolation) { t.isolation = i }

// ReadWholeTable records that the transaction depends on every file of the
// table (e.g. complete-mode replace): any concurrent data change conflicts.
func (t *Transaction) ReadWholeTable() { t.readWhole = true }

// ReadFiles records that the transaction depends on these files (paths as in
// add actions, or storage keys): a concurrent remove of one conflicts.
func (t *Transaction) ReadFiles(paths ...string) {
	for _, p := range paths {
		if k, err := resolvePath(t.log.root, p); err == nil {
			t.readPaths[k] = true
		} else {
			t.readPaths[p] = true
		}
	}
}

// ReadPredicate records that the transaction depends on every file for
// which match reports true (a predicate over an add action's partition
// values and stats, e.g. "may hold one of these keys"): a concurrent commit
// adding such a file conflicts with ConcurrentAppend, as a winning add that
// matches the transaction's read predicates does in Delta
// (ConflictChecker.checkForAddedFilesThatShouldHaveBeenReadByCurrentTxn).
// Under WriteSerializable the adds of a blind append are not checked, as in
// Delta; under Serializable they are. match must be conservative (true when
// it cannot tell) and safe to call after Commit has started.
func (t *Transaction) ReadPredicate(match func(*Add) bool) {
	t.readPreds = append(t.readPreds, match)
}

// ReadTxn records that the transaction depends on the txn version of appID
// (idempotent writes): a concurrent txn for appID conflicts. A txn action in
// the transaction's own actions implies ReadTxn for its appId.
func (t *Transaction) ReadTxn(appID string) { t.readTxns[appID] = true }

// Add appends actions to commit. commitInfo actions are ignored (Commit
// writes its own).
func (t *Transaction) Add(actions ...Action) {
	for _, a := range actions {
		if a.CommitInfo != nil && a.Protocol == nil && a.MetaData == nil && a.Add == nil && a.Remove == nil &&
			a.Txn == nil && a.DomainMetadata == nil && a.CDC == nil {
			continue
		}
		a.CommitInfo = nil
		t.actions = append(t.actions, a)
	}
}

// SetCommitInfo adds an extra field to the commitInfo action (e.g.
// "userMetadata"); the fields Commit writes itself take precedence.
func (t *Transaction) SetCommitInfo(key string, value any) error {
	if t.extraInfo == nil {
		t.extraInfo = CommitInfo{}
	}
	return t.extraInfo.Set(key, value)
}

// Snapshot is the snapshot the transaction read (nil for a new table).
func (t *Transaction) Snapshot() *Snapshot { return t.snap }

// PostCommitSnapshot is, after Commit succeeded, the snapshot of the
// version it wrote, advanced in memory from the snapshot the transaction
// read over the winning commits it was rebased on and its own commit (as
// delta-kernel-rs's CommittedTransaction::post_commit_snapshot), without
// reading the log: a writer keeps it for its next transaction (and
// Log.Update brings it up to date). nil before Commit, after a failed one,
// or when the commit file's modification time could not be read.
func (t *Transaction) PostCommitSnapshot() *Snapshot { return t.post }

// postCommitSnapshot builds PostCommitSnapshot: version's commit holds
// data; winners are the commits (versions and actions) between the read
// snapshot and it. nil when it cannot be built; it is an optimisation.
func (t *Transaction) postCommitSnapshot(ctx context.Context, version int64, data []byte, winners []int64, between [][]Action) *Snapshot {
	l := t.log
	p := CommitPath(version)
	acts, err := ParseCommit(data, p, version, l.opts.MaxLineBytes)
	if err != nil {
		return nil
	}
	fi, err := l.store.Stat(ctx, p)
	if err != nil {
		return nil
	}
	s := t.snap
	if s == nil {
		s = emptySnapshot(l.root)
	}
	for i, w := range between {
		if s, err = s.advance(winners[i], w, CommitPath(winners[i]), time.Time{}); err != nil {
			return nil
		}
	}
	if s, err = s.advance(version, acts, p, fi.ModTime); err != nil {
		return nil
	}
	s.tip = commitFileIDOf(fi)
	return s
}

// Actions returns the actions added so far.
func (t *Transaction) Actions() []Action { return t.actions }

// NewTableProtocol returns the smallest protocol for a new table with this
// schema: reader 1 / writer 2 for a plain table; reader 3 / writer 7 with
// exactly the features needed when the schema uses timestamp_ntz
// (PROTOCOL.md, "Timestamp without timezone").
func NewTableProtocol(schemaString string) Protocol {
	if containsTimestampNTZ(schemaString) {
		return Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{FeatureTimestampNTZ}, WriterFeatures: []string{FeatureTimestampNTZ}}
	}
	return Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
}

func containsTimestampNTZ(schemaString string) bool {
	st, err := schema.ParseSchema([]byte(schemaString))
	if err != nil {
		// unparseable here: be conservative, any "timestamp_ntz" literal counts
		return slices.Contains(splitQuoted(schemaString), "timestamp_ntz")
	}
	return typeHasNTZ(st)
}

func typeHasNTZ(t schema.DataType) bool {
	switch x := t.(type) {
	case schema.PrimitiveType:
		return x == schema.TypeTimestampNTZ
	case *schema.StructType:
		for _, f := range x.Fields {
			if typeHasNTZ(f.Type) {
				return true
			}
		}
	case *schema.ArrayType:
		return typeHasNTZ(x.ElementType)
	case *schema.MapType:
		return typeHasNTZ(x.KeyType) || typeHasNTZ(x.ValueType)
	}
	return false
}

// splitQuoted returns the JSON string literals of s (cheap schema scan).
func splitQuoted(s string) []string {
	var out []string
	for i := 0; i < len(s); i++ {
		if s[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(s) && s[j] != '"' {
			if s[j] == '\\' {
				j++
			}
			j++
		}
		if j <= len(s) {
			out = append(out, s[i+1:min(j, len(s))])
		}
		i = j
	}
	return out
}

// commitSummary is what conflict detection needs from one commit.
type commitSummary struct {
	version     int64
	protocol    bool
	metadata    bool
	blindAppend bool
	addedData   []string // storage keys of all adds (Delta counts dataChange=false adds too)
	adds        []*Add   // the add actions themselves, in addedData's order
	removed     []string // storage keys of all removes
	txns        []string
	domains     []string
	commitInfo  CommitInfo
	actions     []Action // the whole commit (for the next .crc)
}

func (l *Log) summarize(version int64, acts []Action) commitSummary {
	s := commitSummary{version: version, actions: acts}
	for i := range acts {
		a := &acts[i]
		if a.CommitInfo != nil {
			s.commitInfo = a.CommitInfo
			s.blindAppend = a.CommitInfo.IsBlindAppend()
		}
		if a.Protocol != nil {
			s.protocol = true
		}
		if a.MetaData != nil {
			s.metadata = true
		}
		if a.Add != nil {
			k, err := resolvePath(l.root, a.Add.Path)
			if err != nil {
				k = a.Add.Path
			}
			s.addedData = append(s.addedData, k)
			s.adds = append(s.adds, a.Add)
		}
		if a.Remove != nil {
			k, err := resolvePath(l.root, a.Remove.Path)
			if err != nil {
				k = a.Remove.Path
			}
			s.removed = append(s.removed, k)
		}
		if a.Txn != nil {
			s.txns = append(s.txns, a.Txn.AppID)
		}
		if a.DomainMetadata != nil {
			s.domains = append(s.domains, a.DomainMetadata.Domain)
		}
	}
	return s
}

// checkConflict applies Delta's conflict rules (delta-io/delta
// ConflictChecker.scala; delta-rs conflict_checker.rs) for one winning
// commit against this transaction, in Delta's order: protocol, metadata,
// added files the transaction should have read, deleted files it read,
// files both deleted, application transactions, domains.
func (t *Transaction) checkConflict(win commitSummary, ours commitSummary) error {
	conflict := func(kind, path, detail string) error {
		return &ConflictError{Kind: kind, ReadVersion: t.readVersion, WinningVersion: win.version, Path: path, Detail: detail}
	}
	if win.protocol {
		return conflict(ConflictProtocolChanged, "", "the protocol was changed by a concurrent commit")
	}
	if win.metadata {
		return conflict(ConflictMetadataChanged, "", "the metadata was changed by a concurrent commit")
	}
	// Added files: only a transaction that read the whole table depends on
	// new files (we record no partition predicates); a metadata or protocol
	// change counts as reading the whole table (files written under the old
	// schema must not slip in). Under WriteSerializable blind appends are
	// ignored unless this transaction changes metadata.
	if (t.readWhole || ours.metadata || ours.protocol) && len(win.addedData) > 0 {
		ignoreBlind := t.isolation == WriteSerializable && !ours.metadata
		if !(ignoreBlind && win.blindAppend) {
			return conflict(ConflictConcurrentAppend, win.addedData[0], "files were added by a concurrent commit to data this transaction read")
		}
	}
	if len(t.readPreds) > 0 && !(t.isolation == WriteSerializable && !ours.metadata && win.blindAppend) {
		for i, a := range win.adds {
			for _, match := range t.readPreds {
				if match(a) {
					return conflict(ConflictConcurrentAppend, win.addedData[i], "a file added by a concurrent commit matches what this transaction read")
				}
			}
		}
	}
	oursRemoved := make(map[string]bool, len(ours.removed))
	for _, p := range ours.removed {
		oursRemoved[p] = true
	}
	for _, p := range win.removed {
		if t.readWhole || t.readPaths[p] {
			return conflict(ConflictConcurrentDeleteRead, p, "a file this transaction read was removed by a concurrent commit")
		}
	}
	for _, p := range win.removed {
		if oursRemoved[p] {
			return conflict(ConflictConcurrentDeleteDelete, p, "a file this transaction removes was removed by a concurrent commit")
		}
	}
	for _, app := range win.txns {
		if t.readTxns[app] || slices.Contains(ours.txns, app) {
			return conflict(ConflictConcurrentTransaction, app, "a concurrent commit wrote a txn for the same appId")
		}
	}
	for _, d := range win.domains {
		if slices.Contains(ours.domains, d) {
			return conflict(ConflictConcurrentDomain, d, "a concurrent commit changed the same metadata domain")
		}
	}
	return nil
}

// Commit writes the transaction as the next version and returns it
// (PROTOCOL.md, "Creation of New Log Entries"). The commit file starts with a
// commitInfo action (timestamp, operation, operationParameters and
// operationMetrics as strings like Spark writes them, isBlindAppend,
// readVersion, isolationLevel, engineInfo, txnId; inCommitTimestamp when
// enabled). It is created with put-if-absent; when another writer won the
// version, the winning commits are checked with Delta's conflict rules and
// the commit is retried at the next version, at most Options.CommitAttempts
// puts. Logical conflicts return *ConflictError; running out of attempts
// returns an error matching ErrVersionAlreadyExists and
// ErrConcurrentModification. An unknown put outcome is resolved by reading
// the version back and comparing txnId; if that fails the error matches
// ErrCommitStateUnknown (never retried blindly).
func (t *Transaction) Commit(ctx context.Context, operation string, params OperationParameters, metrics map[string]any) (int64, error) {
	if t.done {
		return -1, fmt.Errorf("%w: transaction %s already committed", ErrInvalidTransaction, t.txnID)
	}
	if t.log.opts.ReadOnly {
		return -1, fmt.Errorf("commit after reading version %d: %w", t.readVersion, ErrReadOnly)
	}
	acts, err := t.prepare()
	if err != nil {
		return -1, err
	}
	l := t.log
	ours := l.summarize(-1, acts)
	ci, err := t.commitInfo(operation, params, metrics, ours)
	if err != nil {
		return -1, err
	}
	version := t.readVersion + 1
	prevICT := int64(-1)
	if t.snap != nil {
		if ts, ok := t.snap.commitInfo.InCommitTimestamp(); ok {
			prevICT = ts
		} else {
			prevICT = t.snap.timestamp.UnixMilli()
		}
	}
	// PROTOCOL.md "In-Commit Timestamps": writers write it when the feature is
	// supported (writer 7 with inCommitTimestamp) and enabled by the property.
	ict := ictActive(t.effectiveProtocol(), t.effectiveProperties())
	// PROTOCOL.md "Writer Requirements for Row Tracking": with the feature
	// supported, every new add gets a baseRowId above the high-water mark
	// and defaultRowCommitVersion = the commit's version, reassigned on each
	// attempt (Delta's ConflictChecker reassigns them after a lost race).
	rowTracking := slices.Contains(t.effectiveProtocol().WriterFeatures, FeatureRowTracking)
	hwm := int64(-1) // RowId.MISSING_HIGH_WATER_MARK
	if rowTracking && t.snap != nil {
		if hwm, err = RowIDHighWaterMark(t.snap.domains); err != nil {
			return -1, err
		}
	}
	var between [][]Action  // the winning commits since readVersion, for the .crc
	var winVersions []int64 // their versions
	var staged storage.Staged
	var stagedData []byte
	var out []Action // acts as committed (row ids assigned)
	var data []byte  // out encoded with ci
	defer func() {
		if staged != nil {
			_ = staged.Close()
		}
	}()
	for attempt := 1; ; attempt++ {
		if ict {
			ts := max(l.opts.Now().UnixMilli(), prevICT+1)
			if err := ci.Set("inCommitTimestamp", ts); err != nil {
				return -1, err
			}
		}
		// The bytes change between attempts only with the in-commit
		// timestamp or row ids (both depend on the winners); otherwise
		// the first attempt's bytes are put again as they are.
		if stagedData == nil || ict || rowTracking {
			out = acts
			if rowTracking {
				if out, err = assignRowIDs(acts, version, hwm); err != nil {
					return -1, err
				}
			}
			if data, err = EncodeCommit(append([]Action{{CommitInfo: ci}}, out...)); err != nil {
				return -1, err
			}
		}
		p := CommitPath(version)
		// The commit's bytes are staged once (on local disk: written and
		// fsynced to a temporary file) and put at each version tried; a
		// retry whose bytes changed (in-commit timestamp, row ids) stages
		// them anew.
		if staged == nil || !bytes.Equal(data, stagedData) {
			if staged != nil {
				_ = staged.Close()
			}
			if staged, err = storage.Stage(ctx, l.store, p, data); err != nil {
				return -1, fmt.Errorf("write commit %s: %w", p, err)
			}
			stagedData = data
		}
		err = staged.PutIfAbsent(ctx, p)
		if errors.Is(err, storage.ErrCommitStateUnknown) {
			won, rerr := t.resolveUnknown(ctx, version)
			if rerr != nil {
				return -1, &commitStateUnknownError{path: p, err: errors.Join(err, rerr)}
			}
			if won {
				err = nil
			} else {
				err = fmt.Errorf("%s: %w", p, storage.ErrAlreadyExists)
			}
		}
		if err == nil {
			_ = staged.Close() // the commit file is its own link now
			staged = nil
			t.done = true
			t.post = t.postCommitSnapshot(ctx, version, data, winVersions, between)
			l.afterCommit(ctx, version, t, ci, out, between)
			return version, nil
		}
		if !errors.Is(err, storage.ErrAlreadyExists) {
			return -1, fmt.Errorf("write commit %s: %w", p, err)
		}
		if t.readVersion < 0 {
			return -1, fmt.Errorf("%w: %s exists", ErrTableExists, p)
		}
		// Lost the race: check every winning commit from version on.
		winners, err := l.commitsFrom(ctx, version)
		if err != nil {
			return -1, err
		}
		for _, w := range winners {
			if err := t.checkConflict(w, ours); err != nil {
				return -1, err
			}
			if ts, ok := w.commitInfo.InCommitTimestamp(); ok {
				prevICT = max(prevICT, ts)
			} else if ts, ok := w.commitInfo.Timestamp(); ok {
				prevICT = max(prevICT, ts)
			}
			version = w.version + 1
			between = append(between, w.actions)
			winVersions = append(winVersions, w.version)
			if rowTracking {
				whwm, err := rowIDHighWaterMarkOf(w.actions)
				if err != nil {
					return -1, err
				}
				hwm = max(hwm, whwm)
			}
		}
		if attempt >= l.opts.CommitAttempts {
			return -1, fmt.Errorf("commit %s after %d attempts: %w: %w", p, attempt, ErrVersionAlreadyExists, ErrConcurrentModification)
		}
		if err := ctx.Err(); err != nil {
			return -1, err
		}
	}
}

// effectiveMetadata is the metadata the commit will leave in force.
func (t *Transaction) effectiveMetadata() Metadata {
	for i := len(t.actions) - 1; i >= 0; i-- {
		if t.actions[i].MetaData != nil {
			return *t.actions[i].MetaData
		}
	}
	if t.snap != nil {
		return t.snap.metadata
	}
	return Metadata{}
}

// effectiveProperties are the table properties the commit will leave in
// force: the snapshot's, or those of the commit's own metaData action.
func (t *Transaction) effectiveProperties() TableProperties {
	for i := len(t.actions) - 1; i >= 0; i-- {
		if t.actions[i].MetaData != nil {
			return parseTableProperties(t.actions[i].MetaData.Configuration, -1)
		}
	}
	if t.snap != nil {
		return t.snap.props
	}
	return DefaultTableProperties()
}

func (t *Transaction) effectiveProtocol() Protocol {
	for i := len(t.actions) - 1; i >= 0; i-- {
		if t.actions[i].Protocol != nil {
			return *t.actions[i].Protocol
		}
	}
	if t.snap != nil {
		return t.snap.protocol
	}
	return Protocol{}
}

// prepare validates the actions and fills defaults (txn.lastUpdated,
// remove.deletionTimestamp). Protocol and metaData actions go first.
func (t *Transaction) prepare() ([]Action, error) {
	nowMs := t.log.opts.Now().UnixMilli()
	var head, rest []Action
	var nProto, nMeta int
	for _, a := range t.actions {
		if err := a.validate(); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidTransaction, err)
		}
		if a.Txn != nil && a.Txn.LastUpdated == nil {
			tx := *a.Txn
			tx.LastUpdated = &nowMs
			a.Txn = &tx
		}
		if a.Remove != nil && a.Remove.DeletionTimestamp == nil {
			r := *a.Remove
			r.DeletionTimestamp = &nowMs
			a.Remove = &r
		}
		for _, p := range []string{pathOf(a)} {
			if p == "" {
				continue
			}
			if _, err := resolvePath(t.log.root, p); err != nil {
				return nil, fmt.Errorf("%w: %w", ErrInvalidTransaction, err)
			}
		}
		if a.Protocol != nil {
			nProto++
		}
		if a.MetaData != nil {
			nMeta++
		}
		if a.Protocol != nil || a.MetaData != nil {
			head = append(head, a)
		} else {
			rest = append(rest, a)
		}
	}
	if nProto > 1 || nMeta > 1 {
		return nil, fmt.Errorf("%w: at most one protocol and one metaData action per commit", ErrInvalidTransaction)
	}
	if t.readVersion < 0 && (nProto == 0 || nMeta == 0) {
		return nil, fmt.Errorf("%w: a new table needs protocol and metaData actions", ErrInvalidTransaction)
	}
	p, m := t.effectiveProtocol(), t.effectiveMetadata()
	if err := CheckWriteSupported(p, m, t.honoured...); err != nil {
		return nil, err
	}
	props := t.effectiveProperties()
	for _, a := range rest {
		if a.Remove == nil || !a.Remove.DataChange {
			continue
		}
		// Delta's DeltaLog.assertRemovable reads delta.appendOnly with
		// DeltaConfig.fromMetaData: an invalid value fails the remove.
		if err := props.Err(PropAppendOnly); err != nil {
			return nil, fmt.Errorf("%w: %w", ErrInvalidTransaction, err)
		}
		if props.AppendOnly {
			return nil, fmt.Errorf("%w: table is append-only (delta.appendOnly=true): cannot remove %s", ErrInvalidTransaction, a.Remove.Path)
		}
	}
	for _, a := range rest {
		if a.Txn != nil {
			t.readTxns[a.Txn.AppID] = true
		}
	}
	return append(head, rest...), nil
}

func pathOf(a Action) string {
	switch {
	case a.Add != nil:
		return a.Add.Path
	case a.Remove != nil:
		return a.Remove.Path
	case a.CDC != nil:
		return a.CDC.Path
	}
	return ""
}

// commitInfo builds the commitInfo action.
func (t *Transaction) commitInfo(operation string, params OperationParameters, metrics map[string]any, ours commitSummary) (CommitInfo, error) {
	ci := CommitInfo{}
	for k, v := range t.extraInfo {
		ci[k] = v
	}
	set := func(k string, v any) error { return ci.Set(k, v) }
	blind := !t.readWhole && len(t.readPaths) == 0 && len(t.readPreds) == 0 && len(ours.removed) == 0 && !ours.metadata && !ours.protocol
	for _, a := range t.actions {
		if a.Add != nil && !a.Add.DataChange {
			blind = false
		}
	}
	if err := errors.Join(
		set("timestamp", t.log.opts.Now().UnixMilli()),
		set("operation", operation),
		set("operationParameters", stringValues(params)),
	); err != nil {
		return nil, err
	}
	if t.readVersion >= 0 {
		if err := set("readVersion", t.readVersion); err != nil {
			return nil, err
		}
	}
	if err := errors.Join(
		set("isolationLevel", t.isolation.String()),
		set("isBlindAppend", blind),
		set("operationMetrics", stringValues(metrics)),
		set("engineInfo", t.log.opts.EngineInfo),
		set("txnId", t.txnID),
	); err != nil {
		return nil, err
	}
	return ci, nil
}

// stringValues renders values the way Spark stores operationParameters and
// operationMetrics: strings as they are, everything else as its JSON text.
func stringValues(m map[string]any) map[string]string {
	out := make(map[string]string, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		switch v := m[k].(type) {
		case string:
			out[k] = v
		case int:
			out[k] = strconv.Itoa(v)
		case int64:
			out[k] = strconv.FormatInt(v, 10)
		case fmt.Stringer:
			out[k] = v.String()
		default:
			b, err := marshalNoEscape(v)
			if err != nil {
				out[k] = fmt.Sprint(v)
			} else {
				out[k] = string(b)
			}
		}
	}
	return out
}

// resolveUnknown reads version back: (true, nil) when it holds our txnId,
// (false, nil) when it holds another commit, an error when unreadable.
func (t *Transaction) resolveUnknown(ctx context.Context, version int64) (bool, error) {
	ci, err := t.log.readCommitInfo(ctx, logFile{info: storage.FileInfo{Path: CommitPath(version)}, version: version})
	if err != nil {
		return false, err
	}
	return ci.TxnID() == t.txnID, nil
}

// commitsFrom reads the summaries of the contiguous commits from version
// on (version itself exists: our put-if-absent of it failed). They are
// read one by one until a version is not found, as Log.Update reads: no
// listing of _delta_log (a local directory listing reads every entry of
// the log, and one read while other writers commit can miss a file that
// was created before a later one it does see, which read as a hole). The
// version after the first missing one is looked up too: a commit there is
// a hole in the log, which our commit must not fill (it would rewrite
// history that the later commit's writer saw differently). A hole further
// on (a stray file far beyond the last commit) is not looked for; loading
// the log reports it.
func (l *Log) commitsFrom(ctx context.Context, version int64) ([]commitSummary, error) {
	var out []commitSummary
	for v := version; ; v++ {
		p := CommitPath(v)
		// Read whole, as Log.Update reads (the read buffer is the file's
		// size; every action is kept anyway).
		data, err := l.store.Read(ctx, p)
		var acts []Action
		if err == nil {
			acts, err = ParseCommit(data, p, v, l.opts.MaxLineBytes)
		}
		if err == nil && len(acts) == 0 {
			err = &CorruptLogError{Path: p, Version: v, Err: errEmptyCommit}
		}
		if errors.Is(err, storage.ErrNotFound) {
			if v == version {
				return nil, fmt.Errorf("commit %s exists but cannot be read: %w", p, err)
			}
			next, err := l.commitExists(ctx, v+1)
			if err != nil {
				return nil, err
			}
			if !next {
				return out, nil
			}
			// A writer creates v+1 only after reading v: v missing after
			// v+1 was seen is a hole, not a race.
			now, err := l.commitExists(ctx, v)
			if err != nil {
				return nil, err
			}
			if now {
				v-- // created since: read it
				continue
			}
			return nil, &CorruptLogError{Path: LogDir, Version: v + 1,
				Err: fmt.Errorf("versions not contiguous: missing %d (found while committing after version %d)", v, version-1)}
		}
		if err != nil {
			return nil, err
		}
		out = append(out, l.summarize(v, acts))
	}
}

// commitExists stats the commit file of v.
func (l *Log) commitExists(ctx context.Context, v int64) (bool, error) {
	_, err := l.store.Stat(ctx, CommitPath(v))
	if errors.Is(err, storage.ErrNotFound) {
		return false, nil
	}
	return err == nil, err
}

// afterCommit writes the version checksum file and the automatic
// checkpoint, in that order, as Spark's post-commit hooks do; their failure
// does not fail the commit (both are optimisations a reader can do
// without). The .crc is derived from the snapshot the transaction read, the
// winning commits it was rebased over and its own actions: no replay.
func (l *Log) afterCommit(ctx context.Context, version int64, t *Transaction, ci CommitInfo, acts []Action, between [][]Action) {
	if !l.opts.DisableChecksumFile {
		if vc, err := l.nextChecksum(t.snap, between, acts, ci, t.txnID); err == nil {
			_ = l.writeChecksum(ctx, version, vc)
		}
	}
	if l.opts.DisableAutoCheckpoint || version == 0 {
		return
	}
	interval := int64(l.opts.CheckpointInterval)
	if interval == 0 {
		// An invalid delta.checkpointInterval holds the default (10):
		// the commit is done, and a checkpoint is only an optimisation.
		interval = t.effectiveProperties().CheckpointInterval
	}
	if version%interval != 0 {
		return
	}
	l.autoCheckpoint(ctx, version, t.post)
}
