package faultstore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
)

// Crash point names: every durable step (a write-class call: Put,
// PutIfAbsent, Writer.Close, Delete) is classified by PointOf into one of
// these. doc.go has the table of what is durable at each one and who
// writes it; docs/crash-points.md has the same for the whole project.
const (
	// Data area (outside _delta_log, _spark_metadata and a stream
	// checkpoint's log directories).
	PointDataFile   = "data-file"   // a data file published (Writer.Close or Put)
	PointDataDelete = "data-delete" // a data file deleted (VACUUM, orphans, a failed write's cleanup)

	// Delta log (_delta_log/).
	PointCommit           = "commit"             // PutIfAbsent of _delta_log/<20 digits>.json
	PointCheckpoint       = "checkpoint"         // _delta_log/<v>.checkpoint[.*].parquet|json published
	PointCheckpointSide   = "checkpoint-sidecar" // _delta_log/_sidecars/* published
	PointLastCheckpoint   = "last-checkpoint"    // _delta_log/_last_checkpoint overwritten
	PointChecksum         = "checksum"           // _delta_log/<v>.crc
	PointLogCompaction    = "log-compaction"     // _delta_log/<a>.<b>.compacted.json
	PointLogCleanupDelete = "log-cleanup-delete" // any Delete under _delta_log/ (metadata cleanup)
	PointConditionalProbe = "conditional-write-probe"

	// Spark file-sink log (_spark_metadata/).
	PointSparkBatch   = "spark-metadata-batch"   // PutIfAbsent of _spark_metadata/<N>
	PointSparkCompact = "spark-metadata-compact" // _spark_metadata/<N>.compact published
	PointSparkClaim   = "spark-metadata-claim"   // PutIfAbsent of _spark_metadata/.<N>.compact.claim
	PointSparkDelete  = "spark-metadata-delete"  // any Delete under _spark_metadata/

	// Spark streaming checkpoint directory.
	PointStreamMetadata  = "stream-metadata"   // metadata (created, or rewritten on reset)
	PointStreamOffsets   = "stream-offsets"    // PutIfAbsent of offsets/<N>
	PointStreamCommits   = "stream-commits"    // PutIfAbsent of commits/<N>
	PointStreamSources   = "stream-sources"    // a file under sources/<i>/
	PointStreamLogDelete = "stream-log-delete" // Delete under offsets/, commits/ or sources/

	// OtherPrefix starts the name of a durable step no rule classifies:
	// "other:put", "other:put-if-absent", "other:write", "other:delete". A
	// crash test fails when an operation performs one, so a new durable
	// step must be given a name here (and in doc.go) before it ships.
	OtherPrefix = "other:"
)

// PointOf names the durable step that a call of op on path (relative to the
// faultstore's root, Subs included) performs; "" for a call that is not a
// write (OpWrites). The name depends on the path and, where the protocol
// requires an atomic create, on the op too: a commit or a _spark_metadata
// batch file written with a plain Put is "other:put", a protocol violation
// the crash tests catch.
func PointOf(op Op, p string) string {
	if op&OpWrites == 0 || op&(op-1) != 0 { // not a single write op
		return ""
	}
	other := OtherPrefix + op.String()
	create := op != OpDelete
	elems := strings.Split(p, "/")
	for i, e := range elems {
		rest := strings.Join(elems[i+1:], "/")
		switch e {
		case "_delta_log":
			return deltaLogPoint(op, rest, other)
		case "_spark_metadata":
			return sparkPoint(op, rest, other)
		}
	}
	// Spark streaming checkpoint: metadata, offsets/N, commits/N, sources/i/...
	n := len(elems)
	base := elems[n-1]
	switch {
	case n >= 2 && (elems[n-2] == "offsets" || elems[n-2] == "commits") && isDigits(base):
		switch {
		case op == OpDelete:
			return PointStreamLogDelete
		case op != OpPutIfAbsent:
			return other
		case elems[n-2] == "offsets":
			return PointStreamOffsets
		}
		return PointStreamCommits
	case n >= 3 && elems[n-3] == "sources" && isDigits(elems[n-2]):
		if op == OpDelete {
			return PointStreamLogDelete
		}
		return PointStreamSources
	case base == "metadata":
		if create {
			return PointStreamMetadata
		}
		return other
	}
	for _, e := range elems {
		if (strings.HasPrefix(e, "_") || strings.HasPrefix(e, ".")) && !strings.Contains(e, "=") {
			return other // a hidden name that is not a partition directory
		}
	}
	if op == OpDelete {
		return PointDataDelete
	}
	return PointDataFile
}

func deltaLogPoint(op Op, rest, other string) string {
	if strings.HasPrefix(rest, ".lakesink-probe-") {
		if op == OpPutIfAbsent || op == OpDelete {
			return PointConditionalProbe
		}
		return other
	}
	if op == OpDelete {
		return PointLogCleanupDelete
	}
	if strings.HasPrefix(rest, "_sidecars/") {
		return PointCheckpointSide
	}
	if rest == "_last_checkpoint" {
		return PointLastCheckpoint
	}
	v, tail, ok := strings.Cut(rest, ".")
	if !ok || len(v) != 20 || !isDigits(v) {
		return other
	}
	switch {
	case tail == "json":
		if op == OpPutIfAbsent {
			return PointCommit
		}
		return other // a commit must be created atomically
	case tail == "crc":
		return PointChecksum
	case strings.HasPrefix(tail, "checkpoint.") && (strings.HasSuffix(tail, ".parquet") || strings.HasSuffix(tail, ".json")):
		return PointCheckpoint
	case strings.HasSuffix(tail, ".compacted.json"):
		if v2, _, _ := strings.Cut(tail, "."); len(v2) == 20 && isDigits(v2) {
			return PointLogCompaction
		}
	}
	return other
}

func sparkPoint(op Op, rest, other string) string {
	if op == OpDelete {
		return PointSparkDelete
	}
	switch {
	case isDigits(rest):
		if op == OpPutIfAbsent {
			return PointSparkBatch
		}
		return other // a batch file must be created atomically
	case strings.HasSuffix(rest, ".compact") && isDigits(strings.TrimSuffix(rest, ".compact")):
		return PointSparkCompact
	case strings.HasPrefix(rest, ".") && strings.HasSuffix(rest, ".compact.claim") &&
		isDigits(strings.TrimSuffix(strings.TrimPrefix(rest, "."), ".compact.claim")):
		if op == OpPutIfAbsent {
			return PointSparkClaim
		}
	}
	return other
}

func isDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// Point is one durable step a Store saw: the N-th (0-based) write-class
// call classified as Name since the Store was created.
type Point struct {
	Name string // the point's name (PointOf)
	N    int    // 0-based occurrence of Name
	Op   Op     // the operation of the call
	Path string // relative to the root of the Store it was recorded by
	// Injected: the call failed with an injected fault (before or after it
	// was performed).
	Injected bool
}

// String is "name#N", the form crash tests use as a subtest name.
func (p Point) String() string { return fmt.Sprintf("%s#%d", p.Name, p.N) }

// Unnamed reports whether no rule of PointOf classifies the step.
func (p Point) Unnamed() bool { return strings.HasPrefix(p.Name, OtherPrefix) }

// maxRecordedPoints bounds the recorder of Points, so that a long soak does
// not grow it without end; occurrence counting (CrashAt) is not bounded.
const maxRecordedPoints = 1 << 16

// Points returns the durable steps (write-class calls) seen so far, in the
// order they were decided, with each one's occurrence index. At most the
// first 65536 are kept.
func (s *Store) Points() []Point {
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	return slices.Clone(s.st.mu.points)
}

// PointNames returns the distinct names of points, sorted.
func PointNames(points []Point) []string {
	var names []string
	for _, p := range points {
		names = append(names, p.Name)
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// CrashAt arms a named crash: every write-class call goes through until
// the nth (0-based) occurrence from now on of the crash point named point
// (see PointOf). That call fails according to mode, and every later write
// fails before it is performed, as if the process had died:
//
//   - FailBefore: the step is not performed (the process died just before
//     it);
//   - FailAfter: the step is performed and then fails, its answer lost (the
//     process died right after it, or a timeout hid the success); for
//     PutIfAbsent the error matches storage.ErrCommitStateUnknown.
//
// Reads are not failed, so an operation may still resolve a lost answer
// by reading back (a commit recognised by its txnId) and report success
// when no write was left to do. Crashed reports whether the point was
// reached. Clear disarms it. Delay is not a crash mode (ErrInvalidRule).
func (s *Store) CrashAt(point string, nth int, mode Mode) error {
	if point == "" || nth < 0 || (mode != FailBefore && mode != FailAfter) {
		return fmt.Errorf("%w: CrashAt(%q, %d, mode %d)", ErrInvalidRule, point, nth, mode)
	}
	s.st.mu.Lock()
	defer s.st.mu.Unlock()
	s.st.mu.crashAt = &crashAt{point: point, target: s.st.mu.occurrences[point] + nth, mode: mode}
	s.st.mu.crashed = false
	return nil
}

type crashAt struct {
	point  string
	target int
	mode   Mode
	fired  bool
}

// decidePoint records a write-class call and evaluates CrashAt. It returns
// the index of the recorded point (-1 if not recorded) and whether the call
// fails before or after. st.mu is held.
func (st *state) decidePoint(op Op, full string) (rec int, fail, after bool) {
	name := PointOf(op, full)
	if st.mu.occurrences == nil {
		st.mu.occurrences = map[string]int{}
	}
	n := st.mu.occurrences[name]
	st.mu.occurrences[name] = n + 1
	rec = -1
	if len(st.mu.points) < maxRecordedPoints {
		rec = len(st.mu.points)
		st.mu.points = append(st.mu.points, Point{Name: name, N: n, Op: op, Path: full})
	}
	ca := st.mu.crashAt
	switch {
	case ca == nil:
	case ca.fired:
		fail = true
	case name == ca.point && n == ca.target:
		ca.fired = true
		st.mu.crashed = true
		if ca.mode == FailBefore {
			fail = true
		} else {
			after = true
		}
	}
	return rec, fail, after
}

// Crash is one crash a crash test runs: at one occurrence of a named point,
// before or after the step.
type Crash struct {
	Point Point // where it crashes
	Mode  Mode  // FailBefore or FailAfter
}

// String is "name#N/before" or "name#N/after": the subtest name.
func (c Crash) String() string { return c.Point.String() + "/" + c.Mode.String() }

// Arm arms the crash on s (CrashAt).
func (c Crash) Arm(s *Store) error { return s.CrashAt(c.Point.Name, c.Point.N, c.Mode) }

// Crashes lists every crash for the points of a recorded run: each
// occurrence of each point, FailBefore then FailAfter, in the run's order.
func Crashes(points []Point) []Crash {
	out := make([]Crash, 0, 2*len(points))
	for _, p := range points {
		p.Injected = false
		out = append(out, Crash{Point: p, Mode: FailBefore}, Crash{Point: p, Mode: FailAfter})
	}
	return out
}

// CheckPoints compares the names of the points an operation performed with
// the names a test expects: every name in want must occur, and no other
// (an "other:" step, or a named step the test did not expect). The error
// lists the differences and the offending steps' paths.
func CheckPoints(points []Point, want ...string) error {
	var errs []error
	got := PointNames(points)
	for _, w := range want {
		if !slices.Contains(got, w) {
			errs = append(errs, fmt.Errorf("expected crash point %q was not performed", w))
		}
	}
	for _, p := range points {
		if !slices.Contains(want, p.Name) {
			errs = append(errs, fmt.Errorf("unexpected crash point %s (%v %s)", p, p.Op, p.Path))
		}
	}
	return errors.Join(errs...)
}
