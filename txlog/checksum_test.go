package txlog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"
)

// TestTruncatedCommitIsCorrupt is issue 14 item 1: a commit file emptied
// (": > 00000000000000000001.json") or cut at a line boundary keeping only
// its commitInfo was replayed as a commit that changed nothing, so a read
// returned version 0's rows with no error. An empty commit is corrupt by
// itself; a cut one is caught by the .crc lakesink wrote after it.
func TestTruncatedCommitIsCorrupt(t *testing.T) {
	ctx := context.Background()
	setup := func(t *testing.T) (*memStore, *Log) {
		st := newMemStore()
		l := newTestLog(t, st, Options{})
		s := createTable(t, l)
		mustCommit(t, l, s, addAction("a", true), Action{Txn: &Txn{AppID: "q", Version: 1}})
		return st, l
	}
	p1 := CommitPath(1)
	for _, tc := range []struct {
		name     string
		truncate func([]byte) []byte
		path     string // the file the error must name
	}{
		{"empty file", func([]byte) []byte { return nil }, p1},
		{"blank lines only", func([]byte) []byte { return []byte("\n\n") }, p1},
		{"only commitInfo kept", func(b []byte) []byte { return b[:bytes.IndexByte(b, '\n')+1] }, ChecksumPath(1)},
		{"txn line lost", func(b []byte) []byte {
			lines := bytes.SplitAfter(b, []byte("\n"))
			var out []byte
			for _, ln := range lines {
				if !bytes.HasPrefix(ln, []byte(`{"txn"`)) {
					out = append(out, ln...)
				}
			}
			return out
		}, ChecksumPath(1)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, l := setup(t)
			data, err := st.Read(ctx, p1)
			if err != nil {
				t.Fatal(err)
			}
			if !st.has(ChecksumPath(1)) {
				t.Fatalf("no %s written after the commit", ChecksumPath(1))
			}
			st.put(p1, string(tc.truncate(data)))
			_, err = l.Snapshot(ctx)
			var ce *CorruptLogError
			if !errors.As(err, &ce) || ce.Path != tc.path || ce.Version != 1 {
				t.Fatalf("Snapshot: got %v, want a *CorruptLogError naming %s version 1", err, tc.path)
			}
			if !strings.Contains(err.Error(), tc.path) || !strings.Contains(err.Error(), "version 1") {
				t.Errorf("message %q does not name %s and version 1", err, tc.path)
			}
			// the next writer does not build on it
			if _, err := l.SnapshotAt(ctx, 1); !errors.Is(err, ErrCorruptLog) {
				t.Errorf("SnapshotAt(1): %v", err)
			}
			if tc.path == p1 {
				if _, err := l.History(ctx, 0); !errors.As(err, &ce) || ce.Path != p1 {
					t.Errorf("History: %v, want the empty commit reported", err)
				}
				return
			}
			// An explicit option reads what the commit file says.
			skip := newTestLog(t, st, Options{SkipChecksumValidation: true})
			s, err := skip.Snapshot(ctx)
			if err != nil || s.Version() != 1 {
				t.Fatalf("with SkipChecksumValidation: %v", err)
			}
		})
	}
}

// TestChecksumWrittenAfterEachCommit checks the .crc every commit writes
// against a full replay of its version: appends, a replaced file, removes
// of live and unknown files, a DV table's counts, a txn and a domain, and a
// commit rebased over winning commits (its .crc is derived from the read
// snapshot and the winners, not from a new replay).
func TestChecksumWrittenAfterEachCommit(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{})
	s0 := createTable(t, l)
	sizes := func(p string, n int64) Action {
		a := addAction(p, true)
		a.Add.Size = n
		return a
	}
	mustCommit(t, l, s0, sizes("a", 100), sizes("b", 20000))
	s, _ := l.Snapshot(ctx)
	mustCommit(t, l, s, sizes("a", 300), removeAction("b", true), removeAction("never-added", true),
		Action{Txn: &Txn{AppID: "q", Version: 7}}, Action{DomainMetadata: &DomainMetadata{Domain: "d", Configuration: "{}"}})
	stale, _ := l.Snapshot(ctx) // version 2
	mustCommit(t, l, stale, sizes("c", 5_000_000))
	s, _ = l.Snapshot(ctx)
	mustCommit(t, l, s, removeAction("c", true))
	// a commit on the stale snapshot is rebased over versions 3 and 4
	v := mustCommit(t, l, stale, sizes("d", 7))
	if v != 5 {
		t.Fatalf("rebased commit at %d", v)
	}
	for v := int64(0); v <= 5; v++ {
		vc, err := l.ReadChecksum(ctx, v)
		if err != nil {
			t.Fatalf("version %d: %v", v, err)
		}
		want, err := l.SnapshotAt(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		if vc.NumFiles != int64(want.NumFiles()) || vc.TableSizeBytes != want.SizeInBytes() ||
			vc.NumMetadata != 1 || vc.NumProtocol != 1 || vc.Metadata == nil || vc.Metadata.ID != "tbl" ||
			vc.Protocol == nil || vc.TxnID != want.CommitInfo().TxnID() || vc.TxnID == "" {
			t.Errorf("version %d: .crc %+v, replayed %d files %d bytes", v, vc, want.NumFiles(), want.SizeInBytes())
		}
		var files, bytes int64
		for i := range vc.FileSizeHistogram.FileCounts {
			files += vc.FileSizeHistogram.FileCounts[i]
			bytes += vc.FileSizeHistogram.TotalBytes[i]
		}
		if files != vc.NumFiles || bytes != vc.TableSizeBytes {
			t.Errorf("version %d: histogram sums %d files %d bytes", v, files, bytes)
		}
		if v >= 2 && (len(vc.SetTransactions) != 1 || vc.SetTransactions[0].Version != 7 || len(vc.DomainMetadata) != 1) {
			t.Errorf("version %d: txns %+v domains %+v", v, vc.SetTransactions, vc.DomainMetadata)
		}
	}
	// version 5 = a(300) + d(7); c went in 3 and out in 4
	if vc, _ := l.ReadChecksum(ctx, 5); vc.NumFiles != 2 || vc.TableSizeBytes != 307 {
		t.Errorf("rebased commit's .crc: %d files %d bytes, want 2 and 307", vc.NumFiles, vc.TableSizeBytes)
	}
	// The first key names the file as Spark's does, and the spec's
	// required keys are there.
	raw, _ := st.Read(ctx, ChecksumPath(5))
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"txnId", "tableSizeBytes", "numFiles", "numMetadata", "numProtocol", "metadata", "protocol", "fileSizeHistogram", "setTransactions", "domainMetadata"} {
		if _, ok := m[k]; !ok {
			t.Errorf("%s has no %q", ChecksumPath(5), k)
		}
	}

	// DisableChecksumFile writes none.
	st2 := newMemStore()
	l2 := newTestLog(t, st2, Options{DisableChecksumFile: true})
	createTable(t, l2)
	if st2.has(ChecksumPath(0)) {
		t.Error("a .crc was written with DisableChecksumFile")
	}
}

// TestEngineChecksumsValidate replays every version of tables written by
// Spark 4.1 / Delta 4.3 (in-commit timestamps, fileSizeHistogram), and
// Databricks runtimes 11.3 (histogramOpt, allFiles), 12.2 (deletion
// vectors: numDeletedRecordsOpt) and 17.0 (V2 checkpoints) with their .crc
// files (copied from ../shared/testdata/delta-rs): each validates, and the
// same file with numFiles or tableSizeBytes changed does not, so the check
// did run.
func TestEngineChecksumsValidate(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"cdc_ict_table", "simple_table_with_cdc", "table_with_deletion_logs", "checkpoint-v2-table"} {
		t.Run(name, func(t *testing.T) {
			l, st := openDir(t, filepath.Join("testdata/tables", name))
			versions, err := l.Versions(ctx)
			if err != nil {
				t.Fatal(err)
			}
			checked := 0
			for _, v := range versions {
				p := ChecksumPath(v)
				if !st.has(p) {
					continue
				}
				cf, err := l.readChecksum(ctx, v)
				if err != nil {
					t.Fatalf("%s: %v", p, err)
				}
				s, err := l.SnapshotAt(ctx, v)
				if err != nil {
					t.Fatalf("version %d: %v", v, err)
				}
				if mm := validateChecksum(cf, s); mm != nil {
					t.Fatalf("version %d: %v", v, mm)
				}
				checked++
				orig, _ := st.Read(ctx, p)
				for _, key := range []string{"numFiles", "tableSizeBytes"} {
					var m map[string]any
					if err := json.Unmarshal(orig, &m); err != nil {
						t.Fatal(err)
					}
					m[key] = m[key].(float64) + 1
					bad, _ := json.Marshal(m)
					st.put(p, string(bad))
					_, err := l.SnapshotAt(ctx, v)
					var ce *CorruptLogError
					var mme *ChecksumMismatchError
					if !errors.As(err, &ce) || !errors.As(err, &mme) || ce.Version != v || !strings.Contains(err.Error(), key) {
						t.Fatalf("version %d with %s+1: %v", v, key, err)
					}
				}
				st.put(p, string(orig))
			}
			if checked == 0 {
				t.Fatal("no .crc checked")
			}
			t.Logf("%d versions checked", checked)
		})
	}
}

// TestUnreadableChecksumIsIgnored: a .crc is written after the commit, best
// effort, so a torn one (a crash mid-write on a store without atomic puts)
// must not make the table unreadable, as Spark ignores a .crc it cannot
// parse.
func TestUnreadableChecksumIsIgnored(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{})
	s := createTable(t, l)
	mustCommit(t, l, s, addAction("a", true))
	for _, data := range []string{"", `{"numFiles":`, "not json"} {
		st.put(ChecksumPath(1), data)
		if s, err := l.Snapshot(ctx); err != nil || s.NumFiles() != 1 {
			t.Errorf(".crc %q: %v", data, err)
		}
	}
	// a parsed one that leaves fields out is checked on what it holds
	st.put(ChecksumPath(1), `{"numFiles":1}`)
	if _, err := l.Snapshot(ctx); err != nil {
		t.Errorf("partial .crc: %v", err)
	}
	st.put(ChecksumPath(1), `{"numFiles":2}`)
	if _, err := l.Snapshot(ctx); !errors.Is(err, ErrCorruptLog) {
		t.Errorf("partial wrong .crc: %v", err)
	}
}

// TestTruncatedCommitCaughtByEarlierChecksum is the adversarial repro 07:
// commit 1 keeps only its commitInfo and its 1.crc disagrees, but version 2
// has no .crc (best effort: the writer died after 2.json). Only the latest
// version's .crc was looked at, so the snapshot of version 2 lost commit 1's
// file without error (and VACUUM could then delete it). The replay now
// checks the newest .crc it passes, with one .crc read.
func TestTruncatedCommitCaughtByEarlierChecksum(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{})
	s := createTable(t, l)
	mustCommit(t, l, s, addAction("a", true), Action{Txn: &Txn{AppID: "q", Version: 1}})
	s, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	mustCommit(t, l, s, addAction("b", true))
	st.del(ChecksumPath(2))

	// An intact log with the latest .crc absent still loads, checking 1.crc once.
	st.resetCounters()
	if s, err := l.Snapshot(ctx); err != nil || s.Version() != 2 || len(s.Files()) != 2 {
		t.Fatalf("intact log: %v", err)
	}
	if n := st.readsOf(func(p string) bool { return strings.HasSuffix(p, ".crc") }); n != 1 {
		t.Errorf("read %d .crc files, want 1 (%s)", n, ChecksumPath(1))
	}

	data, err := st.Read(ctx, CommitPath(1))
	if err != nil {
		t.Fatal(err)
	}
	st.put(CommitPath(1), string(data[:bytes.IndexByte(data, '\n')+1]))
	for _, load := range []func() (*Snapshot, error){
		func() (*Snapshot, error) { return l.Snapshot(ctx) },
		func() (*Snapshot, error) { return l.SnapshotAt(ctx, 2) },
	} {
		_, err := load()
		var ce *CorruptLogError
		var mm *ChecksumMismatchError
		if !errors.As(err, &ce) || ce.Path != ChecksumPath(1) || ce.Version != 1 || !errors.As(err, &mm) {
			t.Fatalf("got %v, want a *CorruptLogError naming %s version 1 with a *ChecksumMismatchError", err, ChecksumPath(1))
		}
	}
	skip := newTestLog(t, st, Options{SkipChecksumValidation: true})
	if s, err := skip.Snapshot(ctx); err != nil || len(s.Files()) != 1 {
		t.Fatalf("with SkipChecksumValidation: %v", err)
	}
}

// TestSnapshotChecksumIsTheWrittenOne: Snapshot.Checksum of each version
// replayed from the log is, key for key, the .crc the commit of that
// version wrote (derived from the commit's actions alone), including the
// histogram, the txns and the domains; a commit rebased over others too.
func TestSnapshotChecksumIsTheWrittenOne(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	l := newTestLog(t, st, Options{})
	s0 := createTable(t, l)
	sized := func(p string, n int64) Action {
		a := addAction(p, true)
		a.Add.Size = n
		return a
	}
	mustCommit(t, l, s0, sized("a", 100), sized("b", 20000), Action{Txn: &Txn{AppID: "q", Version: 1}})
	stale, _ := l.Snapshot(ctx)
	mustCommit(t, l, stale, removeAction("b", true), sized("c", 9_000_000),
		Action{DomainMetadata: &DomainMetadata{Domain: "d", Configuration: `{"k":1}`}})
	mustCommit(t, l, stale, sized("e", 7), Action{Txn: &Txn{AppID: "r", Version: 3}}) // rebased over version 2
	versions, err := l.Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range versions {
		raw, err := st.Read(ctx, ChecksumPath(v))
		if err != nil {
			t.Fatal(err)
		}
		snap, err := l.SnapshotAt(ctx, v)
		if err != nil {
			t.Fatal(err)
		}
		got, err := snap.Checksum().MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		if string(got) != strings.TrimSpace(string(raw)) {
			t.Errorf("version %d:\n Snapshot.Checksum %s\n written .crc       %s", v, got, raw)
		}
	}
	if len(versions) != 4 {
		t.Fatalf("versions %v, want 0..3", versions)
	}
}
