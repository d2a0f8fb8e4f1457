package txlog

import (
	"testing"
)

// BenchmarkChecksumPerCommit is the CPU of a blind append's .crc short of
// its write to the store (Log.afterCommit): the checksum derived from the
// base snapshot of a 10,000-file table and a one-add commit
// (nextChecksum), and its JSON (MarshalJSON), per commit.
func BenchmarkChecksumPerCommit(b *testing.B) {
	rt := newReuseTable(b, 10_000, 10_000)
	acts := []Action{{Add: reuseAdd("new", 7)}}
	b.ReportAllocs()
	var n int
	for b.Loop() {
		vc, err := rt.l.nextChecksum(rt.snap, nil, acts, nil, "")
		if err != nil {
			b.Fatal(err)
		}
		data, err := vc.MarshalJSON()
		if err != nil {
			b.Fatal(err)
		}
		n = len(data)
	}
	b.ReportMetric(float64(n), "bytes")
}
