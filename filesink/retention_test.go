package filesink

import (
	"context"
	"slices"
	"testing"
	"time"
)

// TestCompactLogRetentionEdges is issue 14 item 6: `filesink compact-log
// --retention 0s` kept every entry (0 meant "no retention") while 1s dropped
// every entry. Retention is Spark's FileStreamSink "retention" option
// (FileStreamSinkLog.shouldRetain): an entry is dropped when now -
// modificationTime > retention in milliseconds, so 0 drops everything older
// than now, an entry exactly retention old is kept, and no retention (nil)
// keeps everything. The clock is injected.
func TestCompactLogRetentionEdges(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	ages := []struct {
		name string
		age  time.Duration
	}{{"age0", 0}, {"age1ms", time.Millisecond}, {"age999ms", 999 * time.Millisecond}, {"age1s", time.Second}, {"age1001ms", 1001 * time.Millisecond}, {"age1h", time.Hour}}
	cases := []struct {
		name      string
		retention *time.Duration
		want      []string
	}{
		{"no retention keeps all", nil, []string{"age0", "age1ms", "age999ms", "age1s", "age1001ms", "age1h"}},
		{"0s keeps only entries not older than now", RetentionOf(0), []string{"age0"}},
		{"1s keeps entries up to exactly 1s old", RetentionOf(time.Second), []string{"age0", "age1ms", "age999ms", "age1s"}},
		{"1ms edge", RetentionOf(time.Millisecond), []string{"age0", "age1ms"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			clock := &fakeClock{t: now}
			m := newMemStore(t, "file:///out", clock.Now)
			o := testOptions(clock)
			o.CompactInterval = 2
			l, err := NewLog(m, o)
			if err != nil {
				t.Fatal(err)
			}
			var es []SinkFileStatus
			for _, a := range ages {
				es = append(es, entry("file:///out/"+a.name, now.Add(-a.age)))
			}
			if err := l.Add(ctx, 0, es); err != nil {
				t.Fatal(err)
			}
			if err := l.Add(ctx, 1, nil); err != nil { // 1.compact, no retention yet
				t.Fatal(err)
			}
			co := testOptions(clock)
			co.Retention = c.retention
			res, _, err := CompactLog(ctx, m, co)
			if err != nil {
				t.Fatal(err)
			}
			got, err := l.ReadBatch(ctx, res.BatchID)
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			for _, e := range got {
				names = append(names, e.Path[len("file:///out/"):])
			}
			if res.BatchID != 1 || !slices.Equal(names, c.want) {
				t.Fatalf("compaction file %d holds %v, want %v", res.BatchID, names, c.want)
			}
		})
	}
}
