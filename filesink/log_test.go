package filesink

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/storage"
)

// sparkLogDir holds Spark's own compatibility resources for the file-sink log
// (apache/spark sql/core/src/test/resources/structured-streaming/file-sink-log-version-2.1.0),
// copied from ../shared/testdata/spark.
const sparkLogDir = "testdata/spark-2.1.0"

func loadSparkLog(t *testing.T, m *memStore) map[string][]byte {
	t.Helper()
	files := map[string][]byte{}
	ents, err := os.ReadDir(sparkLogDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		data, err := os.ReadFile(filepath.Join(sparkLogDir, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		files[e.Name()] = data
		m.putAt(MetadataDir+"/"+e.Name(), data, time.Unix(0, 0))
	}
	if len(files) != 3 {
		t.Fatalf("want Spark's 3 log files (7.compact, 8, 9), got %d", len(files))
	}
	return files
}

func testOptions(clock *fakeClock) Options {
	o := DefaultOptions()
	if clock != nil {
		o.Now = clock.Now
	}
	return o
}

func paths(es []SinkFileStatus) []string {
	var out []string
	for _, e := range es {
		out = append(out, e.Path)
	}
	return out
}

func TestSparkLogReadsWithSparkEntries(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		legacy    bool
		wantPaths []string
	}{
		// Spark 3.1+ ignores "action": every line is listed; /a/b/0 appears
		// twice (its add and the legacy delete line), 10 distinct files.
		{"spark-3.1+", false, []string{"/a/b/0", "/a/b/1", "/a/b/2", "/a/b/3", "/a/b/4", "/a/b/5", "/a/b/6", "/a/b/7", "/a/b/8", "/a/b/0", "/a/b/9"}},
		// Spark up to 3.0 removes the deleted path: 9 files /a/b/1..9.
		{"legacy-delete", true, []string{"/a/b/1", "/a/b/2", "/a/b/3", "/a/b/4", "/a/b/5", "/a/b/6", "/a/b/7", "/a/b/8", "/a/b/9"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemStore(t, "file:///a/b", nil)
			loadSparkLog(t, m)
			o := DefaultOptions()
			o.LegacyDeleteAction = tc.legacy
			l, err := NewLog(m, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.AllFiles(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(paths(got), tc.wantPaths) {
				t.Fatalf("paths = %v, want %v", paths(got), tc.wantPaths)
			}
			// Spot-check fields against Spark's FileStreamSinkLogSuite expectations.
			last := got[len(got)-1]
			want := SinkFileStatus{Path: "/a/b/9", Size: 900, IsDir: false, ModificationTime: 900, BlockReplication: 3, BlockSize: 200, Action: ActionAdd}
			if last != want {
				t.Fatalf("last entry = %+v, want %+v", last, want)
			}
			snap, err := l.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if snap.LatestBatchID != 9 || snap.CompactBatchID != 7 || snap.CompactInterval != 8 {
				t.Fatalf("snapshot = %+v, want latest 9, compact 7, interval 8 (deriveCompactInterval(10, 7))", snap)
			}
		})
	}
}

func TestSparkLogReencodesByteIdentical(t *testing.T) {
	ents, err := os.ReadDir(sparkLogDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		t.Run(e.Name(), func(t *testing.T) {
			data, err := os.ReadFile(filepath.Join(sparkLogDir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			entries, err := DecodeLog(e.Name(), data)
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) == 0 {
				t.Fatal("no entries decoded")
			}
			got, err := EncodeLog(entries)
			if err != nil {
				t.Fatal(err)
			}
			// The resource files in Spark's repository end with one newline
			// (added by the repository, not by Spark's writer, which never
			// writes one): compare the lines.
			if !bytes.Equal(got, bytes.TrimSuffix(data, []byte("\n"))) {
				t.Fatalf("re-encoded differs from Spark's file:\n got %q\nwant %q", got, data)
			}
		})
	}
}

func TestEncodeLogFormat(t *testing.T) {
	for _, tc := range []struct {
		name    string
		entries []SinkFileStatus
		want    string
	}{
		{"empty batch is only the version line", nil, "v1"},
		{"no html escaping, no spaces, no trailing newline",
			[]SinkFileStatus{{Path: "file:///out/a=%3C&%3E/part-00000-x-c000.snappy.parquet", Size: 10, ModificationTime: 5, BlockReplication: 1, BlockSize: 33554432, Action: ActionAdd}},
			`v1` + "\n" + `{"path":"file:///out/a=%3C&%3E/part-00000-x-c000.snappy.parquet","size":10,"isDir":false,"modificationTime":5,"blockReplication":1,"blockSize":33554432,"action":"add"}`},
		{"non-ascii kept raw as Jackson writes it",
			[]SinkFileStatus{{Path: "file:///out/k=é<>", Size: 1, BlockReplication: 1, BlockSize: 1, Action: ActionAdd}},
			"v1\n" + `{"path":"file:///out/k=é<>","size":1,"isDir":false,"modificationTime":0,"blockReplication":1,"blockSize":1,"action":"add"}`},
		{"line separators raw as Jackson writes them, escaped text kept",
			[]SinkFileStatus{{Path: "/a\u2028b\u2029\\u2028\\\u2028", Action: ActionAdd}},
			"v1\n" + `{"path":"/a` + "\u2028b\u2029" + `\\u2028\\` + "\u2028" + `","size":0,"isDir":false,"modificationTime":0,"blockReplication":0,"blockSize":0,"action":"add"}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EncodeLog(tc.entries)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.want {
				t.Fatalf("got  %q\nwant %q", got, tc.want)
			}
			back, err := DecodeLog("x", got)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(back, tc.entries) {
				t.Fatalf("round trip: got %+v, want %+v", back, tc.entries)
			}
		})
	}
}

func TestDecodeLogErrors(t *testing.T) {
	good := `{"path":"/a","size":1,"isDir":false,"modificationTime":1,"blockReplication":1,"blockSize":1,"action":"add"}`
	for _, tc := range []struct {
		name     string
		data     string
		wantN    int
		wantErr  error
		wantLine int
	}{
		{"version only", "v1", 0, nil, 0},
		{"one entry", "v1\n" + good, 1, nil, 0},
		{"hand-made trailing newline", "v1\n" + good + "\n", 1, nil, 0},
		{"crlf line ends", "v1\r\n" + good + "\r\n", 1, nil, 0},
		{"empty file", "", 0, ErrIncompleteLog, 0},
		{"newer version", "v2\n" + good, 0, ErrUnsupportedLogVersion, 0},
		{"much newer version", "v10", 0, ErrUnsupportedLogVersion, 0},
		{"no version line", good, 0, ErrCorruptLog, 1},
		{"malformed version", "vx\n" + good, 0, ErrCorruptLog, 1},
		{"v0", "v0", 0, ErrCorruptLog, 1},
		{"truncated entry", "v1\n" + good + "\n" + good[:30], 1, ErrCorruptLog, 3},
		{"garbage line", "v1\n" + good + "\nhello\n" + good, 1, ErrCorruptLog, 3},
		{"empty line in the middle", "v1\n\n" + good, 0, ErrCorruptLog, 2},
		{"missing path", "v1\n" + `{"size":1}`, 0, ErrCorruptLog, 2},
		{"wrong type", "v1\n" + `{"path":"/a","size":"big"}`, 0, ErrCorruptLog, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n := 0
			err := decodeLog("_spark_metadata/3", strings.NewReader(tc.data), func(SinkFileStatus, []byte) error { n++; return nil })
			if !errors.Is(err, tc.wantErr) || (tc.wantErr == nil) != (err == nil) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if n != tc.wantN {
				t.Fatalf("entries before error = %d, want %d", n, tc.wantN)
			}
			if tc.wantLine > 0 {
				var ce *CorruptLogError
				if !errors.As(err, &ce) {
					t.Fatalf("err %v is not a *CorruptLogError", err)
				}
				if ce.Line != tc.wantLine || ce.Path != "_spark_metadata/3" {
					t.Fatalf("CorruptLogError{Path %q, Line %d}, want line %d", ce.Path, ce.Line, tc.wantLine)
				}
			}
		})
	}
}

func TestDecodeLongLine(t *testing.T) {
	e := SinkFileStatus{Path: "file:///" + strings.Repeat("x", 200_000), Size: 7, BlockReplication: 1, BlockSize: 2, Action: ActionAdd}
	data, err := EncodeLog([]SinkFileStatus{e, e})
	if err != nil {
		t.Fatal(err)
	}
	got, err := DecodeLog("x", data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != e || got[1] != e {
		t.Fatalf("long lines not decoded intact (%d entries)", len(got))
	}
}

func TestLatestFileIncomplete(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name    string
		latest  string
		wantErr error
	}{
		{"empty latest file", "", ErrIncompleteLog},
		{"truncated latest file", "v1\n{\"path\":\"/a/b/9\",\"si", ErrIncompleteLog},
		{"newer version", "v2\n{}", ErrUnsupportedLogVersion},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := newMemStore(t, "file:///a/b", nil)
			loadSparkLog(t, m)
			m.putAt(MetadataDir+"/10", []byte(tc.latest), time.Unix(0, 0))
			l, err := NewLog(m, DefaultOptions())
			if err != nil {
				t.Fatal(err)
			}
			_, err = l.AllFiles(ctx)
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("err = %v, want %v", err, tc.wantErr)
			}
			if !strings.Contains(err.Error(), "_spark_metadata/10") {
				t.Fatalf("error %q does not name the file", err)
			}
		})
	}
	t.Run("corrupt older file is corrupt, not incomplete", func(t *testing.T) {
		m := newMemStore(t, "file:///a/b", nil)
		loadSparkLog(t, m)
		m.putAt(MetadataDir+"/8", []byte("v1\nnot json"), time.Unix(0, 0))
		l, _ := NewLog(m, DefaultOptions())
		_, err := l.AllFiles(ctx)
		var ce *CorruptLogError
		if !errors.As(err, &ce) || ce.Path != MetadataDir+"/8" || ce.Line != 2 || errors.Is(err, ErrIncompleteLog) {
			t.Fatalf("err = %v, want CorruptLogError at _spark_metadata/8 line 2", err)
		}
	})
	t.Run("missing batch after compaction", func(t *testing.T) {
		m := newMemStore(t, "file:///a/b", nil)
		loadSparkLog(t, m)
		_ = m.Delete(ctx, MetadataDir+"/8")
		l, _ := NewLog(m, DefaultOptions())
		if _, err := l.AllFiles(ctx); !errors.Is(err, ErrMissingLogFile) {
			t.Fatalf("err = %v, want ErrMissingLogFile", err)
		}
	})
}

func TestCompactionRule(t *testing.T) {
	for _, tc := range []struct {
		batch    int64
		interval int
		want     bool
	}{
		{0, 1, true}, {9, 10, true}, {10, 10, false}, {19, 10, true}, {2, 3, true}, {3, 3, false}, {5, 3, true}, {8, 10, false},
	} {
		if got := IsCompactionBatch(tc.batch, tc.interval); got != tc.want {
			t.Errorf("IsCompactionBatch(%d, %d) = %v, want %v", tc.batch, tc.interval, got, tc.want)
		}
	}
	// CompactibleFileStreamLogSuite "deriveCompactInterval" cases.
	for _, tc := range []struct {
		def    int
		latest int64
		want   int
	}{
		{4, 1, 2}, {1, 1, 2}, {3, 5, 6}, {4, 5, 6}, {5, 11, 6}, {10, 7, 8}, {10, 9, 10}, {10, 19, 20}, {3, 9, 5}, {7, 5, 6}, {2, 11, 2}, {5, 23, 6},
	} {
		if got := DeriveCompactInterval(tc.def, tc.latest); got != tc.want {
			t.Errorf("DeriveCompactInterval(%d, %d) = %d, want %d", tc.def, tc.latest, got, tc.want)
		}
	}
}

func TestOptionsValidate(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Options)
		want   []error
	}{
		{"defaults", func(*Options) {}, nil},
		{"interval above 10", func(o *Options) { o.CompactInterval = 11 }, []error{ErrInvalidOptions}},
		{"interval 0", func(o *Options) { o.CompactInterval = 0 }, []error{ErrInvalidOptions}},
		{"complete mode", func(o *Options) { o.OutputMode = "complete" }, []error{ErrInvalidOptions, ErrUnsupportedOutputMode}},
		{"bad format", func(o *Options) { o.Format = "csv" }, []error{ErrInvalidOptions}},
		{"json gzip ok", func(o *Options) { o.Format = FormatJSON; o.Compression = "gzip" }, nil},
		{"json with the default compression", func(o *Options) { o.Format = FormatJSON }, nil},
		{"json snappy refused", func(o *Options) { o.Format = FormatJSON; o.Compression = "snappy" }, []error{ErrInvalidOptions}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := DefaultOptions()
			tc.mutate(&o)
			err := o.Validate()
			if (err == nil) != (tc.want == nil) {
				t.Fatalf("Validate() = %v, want %v", err, tc.want)
			}
			for _, w := range tc.want {
				if !errors.Is(err, w) {
					t.Fatalf("Validate() = %v, want it to match %v", err, w)
				}
			}
		})
	}
	o := DefaultOptions()
	o.CompactInterval, o.MinBatchesToRetain, o.S3Scheme = 50, 0, "gs"
	if err := o.Validate(); err == nil || strings.Count(err.Error(), "invalid options") != 3 {
		t.Fatalf("Validate should list all 3 violations, got %v", err)
	}
}

func TestParseRetention(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
		bad  bool
	}{
		{"12h", 12 * time.Hour, false}, {"7d", 7 * 24 * time.Hour, false}, {"3600000", time.Hour, false},
		{"30m", 30 * time.Minute, false}, {"90s", 90 * time.Second, false}, {"500ms", 500 * time.Millisecond, false},
		{"5min", 5 * time.Minute, false}, {"", 0, true}, {"abc", 0, true}, {"-5", 0, true}, {"1.5h", 0, true},
	} {
		got, err := ParseRetention(tc.in)
		if (err != nil) != tc.bad || got != tc.want {
			t.Errorf("ParseRetention(%q) = %v, %v; want %v, bad=%v", tc.in, got, err, tc.want, tc.bad)
		}
	}
}

func entry(path string, mod time.Time) SinkFileStatus {
	return SinkFileStatus{Path: path, Size: 100, ModificationTime: mod.UnixMilli(), BlockReplication: 1, BlockSize: 33554432, Action: ActionAdd}
}

func TestAddCompactsEveryInterval(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.CompactInterval = 3
	l, err := NewLog(m, o)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for b := int64(0); b < 8; b++ {
		var es []SinkFileStatus
		if b != 4 { // batch 4 is empty
			p := fmt.Sprintf("file:///out/part-%05d", b)
			es = append(es, entry(p, clock.Now()))
			want = append(want, p)
		}
		if err := l.Add(ctx, b, es); err != nil {
			t.Fatalf("Add(%d): %v", b, err)
		}
	}
	var logKeys []string
	for _, k := range m.keys() {
		logKeys = append(logKeys, strings.TrimPrefix(k, MetadataDir+"/"))
	}
	if wantKeys := []string{"0", "1", "2.compact", "3", "4", "5.compact", "6", "7"}; !slices.Equal(logKeys, wantKeys) {
		t.Fatalf("log files = %v, want %v", logKeys, wantKeys)
	}
	if d, _ := m.Read(ctx, MetadataDir+"/4"); string(d) != "v1" {
		t.Fatalf("empty batch file = %q, want \"v1\"", d)
	}
	c5, _ := l.ReadBatch(ctx, 5)
	if got := paths(c5); !slices.Equal(got, want[:5]) {
		t.Fatalf("5.compact = %v, want %v", got, want[:5])
	}
	all, err := l.AllFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(paths(all), want) {
		t.Fatalf("AllFiles = %v, want %v", paths(all), want)
	}
	// Skip and gap are refused at the log level.
	if err := l.Add(ctx, 7, nil); !errors.Is(err, ErrConcurrentWriter) {
		t.Fatalf("re-adding batch 7: %v, want ErrConcurrentWriter", err)
	}
	if err := l.Add(ctx, 9, nil); !errors.Is(err, ErrBatchGap) || !strings.Contains(err.Error(), "9") || !strings.Contains(err.Error(), "7") {
		t.Fatalf("adding batch 9 after 7: %v, want ErrBatchGap naming both", err)
	}
	// A second writer racing on the same batch file loses the put-if-absent.
	m.putAt(MetadataDir+"/8", []byte("v1"), clock.Now())
	l2, _ := NewLog(m, o)
	if err := l2.putIfAbsent(ctx, batchFileKey(8, false), []byte("v1")); !errors.Is(err, ErrConcurrentWriter) {
		t.Fatalf("put-if-absent clash: %v, want ErrConcurrentWriter", err)
	}
}

func TestIntervalInferredFromExistingLog(t *testing.T) {
	ctx := context.Background()
	m := newMemStore(t, "file:///a/b", nil)
	loadSparkLog(t, m) // 7.compact, 8, 9: interval 8
	o := DefaultOptions()
	l, _ := NewLog(m, o)
	for b := int64(10); b <= 15; b++ {
		if err := l.Add(ctx, b, []SinkFileStatus{entry(fmt.Sprintf("/a/b/%d", b), time.Unix(1, 0))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.Stat(ctx, MetadataDir+"/15.compact"); err != nil {
		t.Fatalf("batch 15 should be compacted with the inferred interval 8: %v", err)
	}
	all, err := l.AllFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) != 11+6 {
		t.Fatalf("AllFiles after compaction: %d entries, want 17", len(all))
	}
}

func TestStreamedCompactionMatchesInMemory(t *testing.T) {
	ctx := context.Background()
	build := func(maxInMem int64, queryID string) (*memStore, *Log) {
		clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
		m := newMemStore(t, "file:///out", clock.Now)
		o := testOptions(clock)
		o.MaxInMemoryCompactBytes = maxInMem
		o.QueryID = queryID
		l, err := NewLog(m, o)
		if err != nil {
			t.Fatal(err)
		}
		for b := int64(0); b < 9; b++ {
			if err := l.Add(ctx, b, []SinkFileStatus{entry(fmt.Sprintf("file:///out/p%d", b), clock.Now())}); err != nil {
				t.Fatal(err)
			}
		}
		return m, l
	}
	mA, lA := build(64<<20, "q")
	mB, lB := build(0, "q")
	for _, l := range []*Log{lA, lB} {
		if err := l.Add(ctx, 9, []SinkFileStatus{entry("file:///out/p9", time.Unix(5, 0))}); err != nil {
			t.Fatal(err)
		}
	}
	a, _ := mA.Read(ctx, MetadataDir+"/9.compact")
	b, _ := mB.Read(ctx, MetadataDir+"/9.compact")
	if len(a) == 0 || !bytes.Equal(a, b) {
		t.Fatalf("streamed compaction differs from in-memory:\n%q\n%q", a, b)
	}
	if _, err := mB.Stat(ctx, claimKey(9)); err != nil {
		t.Fatalf("streamed compaction should leave its claim: %v", err)
	}
	// Another writer holding the claim of the next compaction batch wins.
	mC, lC := build(0, "mine")
	mC.putAt(claimKey(9), []byte("someone-else"), time.Unix(0, 0))
	if err := lC.Add(ctx, 9, nil); !errors.Is(err, ErrConcurrentWriter) || !strings.Contains(err.Error(), "someone-else") {
		t.Fatalf("claimed by another writer: %v, want ErrConcurrentWriter", err)
	}
	// Our own stale claim (a crash after claiming) is taken over.
	mD, lD := build(0, "mine")
	mD.putAt(claimKey(9), []byte("mine"), time.Unix(0, 0))
	if err := lD.Add(ctx, 9, nil); err != nil {
		t.Fatalf("own stale claim: %v", err)
	}
}

func TestRetentionAndLogDeletion(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.CompactInterval = 10
	o.Retention = RetentionOf(time.Hour)
	o.MinBatchesToRetain = 100
	o.CleanupDelay = 10 * time.Minute
	l, err := NewLog(m, o)
	if err != nil {
		t.Fatal(err)
	}
	const batches, perBatch = 1000, 2
	step := time.Minute
	maxEntries, maxLogFiles := 0, 0
	var sizeAt500 int64
	for b := int64(0); b < batches; b++ {
		var es []SinkFileStatus
		for i := 0; i < perBatch; i++ {
			es = append(es, entry(fmt.Sprintf("file:///out/b%d-%d", b, i), clock.Now()))
		}
		if err := l.Add(ctx, b, es); err != nil {
			t.Fatalf("Add(%d): %v", b, err)
		}
		if IsCompactionBatch(b, 10) {
			c, err := l.ReadBatch(ctx, b)
			if err != nil {
				t.Fatal(err)
			}
			maxEntries = max(maxEntries, len(c))
			// Retention: nothing older than now - 1h survives a compaction.
			for _, e := range c {
				if clock.Now().UnixMilli()-e.ModificationTime > time.Hour.Milliseconds() {
					t.Fatalf("batch %d: %s is older than the retention", b, e.Path)
				}
			}
		}
		maxLogFiles = max(maxLogFiles, len(m.keys()))
		if b == 500 {
			sizeAt500 = logSize(t, m)
		}
		clock.Advance(step)
	}
	// Live entries: 1h of batches at 1/minute, 2 entries each (plus one
	// batch at the boundary).
	if liveMax := (60 + 1) * perBatch; maxEntries > liveMax || maxEntries < 50*perBatch {
		t.Fatalf("compaction files held up to %d entries, want about %d", maxEntries, liveMax)
	}
	// Log files: minBatchesToRetain + one interval + cleanup delay slack.
	if maxLogFiles > 100+10+10+1 {
		t.Fatalf("log grew to %d files, want <= %d", maxLogFiles, 121)
	}
	// Size: at most (compaction files kept) x (live entries) + the batch
	// files kept, whatever the number of batches; and it no longer grows.
	const lineBytes = 140
	bound := int64((100/10+2)*(60+1)*perBatch*lineBytes + 121*perBatch*lineBytes)
	if size := logSize(t, m); size > bound || size > sizeAt500*11/10 {
		t.Fatalf("log is %d bytes after %d batches (%d at batch 500), want <= %d and not growing", size, batches, sizeAt500, bound)
	}
	// The state read through the log is the retained window.
	all, err := l.AllFiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(all) == 0 || len(all) > (60+1)*perBatch {
		t.Fatalf("AllFiles = %d entries, want the last hour's", len(all))
	}
	latestCompact := int64(999 - 999%10 - 1 + 10) // 999 is a compaction batch
	if _, err := m.Stat(ctx, batchFileKey(latestCompact, true)); err != nil {
		t.Fatalf("latest compaction file deleted: %v", err)
	}
	ids := map[int64]bool{}
	for _, k := range m.keys() {
		if id, _, ok := parseBatchName(strings.TrimPrefix(k, MetadataDir+"/")); ok {
			ids[id] = true
		}
	}
	for b := int64(batches - 100); b < batches; b++ {
		if !ids[b] {
			t.Fatalf("batch %d deleted, but the last 100 batches must be kept", b)
		}
	}
	if ids[0] {
		t.Fatal("batch 0 should have been deleted")
	}
}

func TestLogDeletionRespectsCleanupDelay(t *testing.T) {
	ctx := context.Background()
	clock := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	m := newMemStore(t, "file:///out", clock.Now)
	o := testOptions(clock)
	o.CompactInterval, o.MinBatchesToRetain = 2, 2
	l, _ := NewLog(m, o)
	for b := int64(0); b < 10; b++ { // clock never advances: all files are young
		if err := l.Add(ctx, b, nil); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(m.keys()); n != 10 {
		t.Fatalf("%d log files, want all 10 kept within the cleanup delay", n)
	}
	clock.Advance(11 * time.Minute)
	if err := l.Add(ctx, 10, nil); err != nil {
		t.Fatal(err)
	}
	// current 10, minBatchId 9, minCompactionBatchId 7: batches < 7 go.
	var left []string
	for _, k := range m.keys() {
		left = append(left, strings.TrimPrefix(k, MetadataDir+"/"))
	}
	if want := []string{"10", "7.compact", "8", "9.compact"}; !slices.Equal(left, want) {
		t.Fatalf("log files = %v, want %v", left, want)
	}
}

var _ storage.Store = (*memStore)(nil)

func logSize(t *testing.T, m *memStore) int64 {
	t.Helper()
	var size int64
	for fi, err := range m.List(context.Background(), MetadataDir+"/", "") {
		if err != nil {
			t.Fatal(err)
		}
		size += fi.Size
	}
	return size
}
