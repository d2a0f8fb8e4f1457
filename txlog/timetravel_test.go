package txlog

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// versionOf is s's version for messages (-1: none).
func versionOf(s *Snapshot) int64 {
	if s == nil {
		return -1
	}
	return s.Version()
}

// skewedLog writes a hand-made log: version i's commit file has
// modification time mods[i] seconds (and commitInfo.timestamp commitTs[i]
// ms when commitTs is given, else the same time), as two writers with
// skewed clocks leave it. meta is the table's configuration; icts, when
// given, are the commits' inCommitTimestamps in ms.
func skewedLog(t *testing.T, mods []int64, commitTs []int64, conf map[string]string, icts []int64) (*Log, *memStore) {
	t.Helper()
	st := newMemStore()
	for i, sec := range mods {
		ci := CommitInfo{}
		ts := sec * 1000
		if commitTs != nil {
			ts = commitTs[i]
		}
		_ = ci.Set("timestamp", ts)
		_ = ci.Set("operation", "WRITE")
		if icts != nil && icts[i] >= 0 {
			_ = ci.Set("inCommitTimestamp", icts[i])
		}
		acts := []Action{{CommitInfo: ci}}
		if i == 0 {
			p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
			if conf["delta.enableInCommitTimestamps"] == "true" { // PROTOCOL.md "In-Commit Timestamps"
				p = Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{FeatureAppendOnly, FeatureInvariants, FeatureInCommitTimestamp}}
			}
			acts = append(acts, Action{Protocol: &p}, Action{MetaData: &Metadata{ID: "tbl", Format: Format{Provider: "parquet"}, SchemaString: testSchema, Configuration: conf}})
		}
		acts = append(acts, addAction(fmt.Sprintf("f%d", i), true))
		data, err := EncodeCommit(acts)
		if err != nil {
			t.Fatal(err)
		}
		st.putAt(CommitPath(int64(i)), data, time.Unix(sec, 0))
	}
	return newTestLog(t, st, Options{}), st
}

// TestTimeTravelWithClockSkew is issue 14 item 3: commit times 10 s, 30 s,
// 20 s, 40 s (version 2's writer's clock is behind) made "as of 25 s"
// return version 2, which holds a commit made after 25 s by every clock
// that agrees with the log order. Monotonized as Delta's
// DeltaHistoryManager does, the times are 10, 30, 30.001, 40 s.
func TestTimeTravelWithClockSkew(t *testing.T) {
	ctx := context.Background()
	l, _ := skewedLog(t, []int64{10, 30, 20, 40}, nil, nil, nil)
	for _, tc := range []struct {
		atMs int64
		want int64
	}{{10_000, 0}, {25_000, 0}, {29_999, 0}, {30_000, 1}, {30_000 + 1, 2}, {35_000, 2}, {40_000, 3}} {
		s, err := l.SnapshotAsOf(ctx, time.UnixMilli(tc.atMs))
		if err != nil || s.Version() != tc.want {
			t.Errorf("as of %d ms: %v, %v; want version %d", tc.atMs, versionOf(s), err, tc.want)
		}
	}
	if _, err := l.SnapshotAsOf(ctx, time.UnixMilli(9_999)); !errors.Is(err, ErrTimestampOutOfRange) {
		t.Errorf("before the first commit: %v", err)
	}
	// history shows the times time travel uses, as DESCRIBE HISTORY does
	h, err := l.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, e := range h {
		got = append(got, e.Timestamp.UnixMilli())
	}
	if want := []int64{40_000, 30_001, 30_000, 10_000}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history times %v, want %v", got, want)
	}
	if raw, _ := h[1].CommitInfo.Timestamp(); raw != 20_000 {
		t.Errorf("commitInfo.timestamp of version 2 = %d, want the writer's 20000", raw)
	}
	// a limited history is monotonized over the whole log too
	if h, err := l.History(ctx, 2); err != nil || h[1].Timestamp.UnixMilli() != 30_001 {
		t.Errorf("History(2): %+v %v", h, err)
	}
}

// TestCommitOwnTimestampIsNotAfterTheLatest: with times 10, 30, 20 s the
// latest commit's raw time (20 s) precedes version 1's, and asking for
// version 1's own time (30 s) was refused as "after the latest commit".
// Monotonized, the latest is at 30.001 s: 30 s is version 1, 30.001 s the
// latest, and only a time after that is refused.
func TestCommitOwnTimestampIsNotAfterTheLatest(t *testing.T) {
	ctx := context.Background()
	l, _ := skewedLog(t, []int64{10, 30, 20}, nil, nil, nil)
	if s, err := l.SnapshotAsOf(ctx, time.UnixMilli(30_000)); err != nil || s.Version() != 1 {
		t.Fatalf("as of version 1's own time: %v, %v; want version 1", versionOf(s), err)
	}
	if s, err := l.SnapshotAsOf(ctx, time.UnixMilli(30_001)); err != nil || s.Version() != 2 {
		t.Fatalf("as of the latest's monotonized time: %v, %v; want version 2", versionOf(s), err)
	}
	_, err := l.SnapshotAsOf(ctx, time.UnixMilli(30_002))
	if !errors.Is(err, ErrTimestampOutOfRange) || !strings.Contains(err.Error(), "after the latest commit (version 2") {
		t.Fatalf("after the latest: %v", err)
	}
}

// TestTimeTravelUsesModificationTimes: without in-commit timestamps Delta
// (DeltaHistoryManager.getCommits, Delta Kernel) searches the commit
// files' modification times, not the writers' commitInfo.timestamp, so
// Spark and lakesink give one answer for one timestamp.
func TestTimeTravelUsesModificationTimes(t *testing.T) {
	ctx := context.Background()
	// the writers' clocks say 100, 200, 300 s; the store says 10, 20, 30 s
	l, _ := skewedLog(t, []int64{10, 20, 30}, []int64{100_000, 200_000, 300_000}, nil, nil)
	if s, err := l.SnapshotAsOf(ctx, time.UnixMilli(25_000)); err != nil || s.Version() != 1 {
		t.Fatalf("as of 25 s: %v, %v; want version 1", versionOf(s), err)
	}
	if s, err := l.SnapshotAt(ctx, 1); err != nil || s.Timestamp().UnixMilli() != 20_000 {
		t.Fatalf("Snapshot.Timestamp of version 1: %v, %v; want its file's 20 s", s.Timestamp(), err)
	}
}

// TestTimeTravelWithInCommitTimestamps: with delta.enableInCommitTimestamps
// enabled at version 2 (delta.inCommitTimestampEnablementVersion/Timestamp,
// PROTOCOL.md "In-Commit Timestamps"), versions 2 and 3 are searched by
// their inCommitTimestamp (50 s, 60 s) whatever their files' modification
// times say (5 s and 1 s here), and versions 0 and 1 by their
// modification times; history shows the same.
func TestTimeTravelWithInCommitTimestamps(t *testing.T) {
	ctx := context.Background()
	conf := map[string]string{"delta.enableInCommitTimestamps": "true",
		"delta.inCommitTimestampEnablementVersion": "2", "delta.inCommitTimestampEnablementTimestamp": "50000"}
	l, _ := skewedLog(t, []int64{10, 20, 5, 1}, nil, conf, []int64{-1, -1, 50_000, 60_000})
	for _, tc := range []struct {
		atMs int64
		want int64
	}{{15_000, 0}, {20_000, 1}, {49_999, 1}, {50_000, 2}, {59_999, 2}, {60_000, 3}} {
		s, err := l.SnapshotAsOf(ctx, time.UnixMilli(tc.atMs))
		if err != nil || s.Version() != tc.want {
			t.Errorf("as of %d ms: %v, %v; want version %d", tc.atMs, versionOf(s), err, tc.want)
		}
	}
	if _, err := l.SnapshotAsOf(ctx, time.UnixMilli(60_001)); !errors.Is(err, ErrTimestampOutOfRange) {
		t.Errorf("after the latest in-commit timestamp: %v", err)
	}
	h, err := l.History(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, e := range h {
		got = append(got, e.Timestamp.UnixMilli())
	}
	if want := []int64{60_000, 50_000, 20_000, 10_000}; fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("history times %v, want %v", got, want)
	}
	// enabled at creation: no enablement properties, every commit by ICT
	conf0 := map[string]string{"delta.enableInCommitTimestamps": "true"}
	l0, _ := skewedLog(t, []int64{30, 20, 10}, nil, conf0, []int64{1_000, 2_000, 3_000})
	if s, err := l0.SnapshotAsOf(ctx, time.UnixMilli(2_500)); err != nil || s.Version() != 1 {
		t.Errorf("ICT from creation, as of 2.5 s: %v, %v; want version 1", versionOf(s), err)
	}
}

// TestInCommitTimestampNeedsTheFeature is the adversarial repro 01's read
// side: delta.enableInCommitTimestamps=true on a 1/2 table (no
// inCommitTimestamp writer feature) is not in-commit timestamps; the time
// is the commit file's modification time, as Spark and delta-rs read it.
func TestInCommitTimestampNeedsTheFeature(t *testing.T) {
	m := parseTableProperties(map[string]string{"delta.enableInCommitTimestamps": "true"}, -1)
	ci := CommitInfo{"inCommitTimestamp": json.RawMessage("5000")}
	mod := time.UnixMilli(9000)
	if got := commitTimestamp(Protocol{MinReaderVersion: 1, MinWriterVersion: 2}, m, ci, mod); !got.Equal(mod) {
		t.Errorf("1/2 table: %v, want the modification time %v", got, mod)
	}
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 7, WriterFeatures: []string{FeatureInCommitTimestamp}}
	if got := commitTimestamp(p, m, ci, mod); got.UnixMilli() != 5000 {
		t.Errorf("with the feature: %v, want 5000 ms", got)
	}
}
