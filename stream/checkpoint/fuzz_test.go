package checkpoint

import (
	"reflect"
	"testing"
)

// FuzzOffsetSeq: whatever parses must survive a write/read round trip.
func FuzzOffsetSeq(f *testing.F) {
	f.Add([]byte("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1480981499528}\n{\"logOffset\":345}\n{\"topic-0\":{\"0\":1}}\n"))
	f.Add([]byte("v1\n{\"batchWatermarkMs\":0,\"batchTimestampMs\":1489180207737}\n0"))
	f.Add([]byte("v1\n\n-\n7"))
	f.Fuzz(func(t *testing.T, data []byte) {
		seq, _, err := ParseOffsetSeq(data)
		if err != nil || (seq.Metadata == nil && len(seq.Offsets) == 0) {
			// "v1\n" + blank line: Spark writes "v1\n" for it, which neither
			// Spark nor we read back (no metadata line); we never write it.
			return
		}
		out, err := MarshalOffsetSeq(seq)
		if err != nil {
			t.Fatalf("parsed %q but cannot write it back: %v", data, err)
		}
		back, _, err := ParseOffsetSeq(out)
		if err != nil {
			t.Fatalf("round trip of %q: %v", data, err)
		}
		if !reflect.DeepEqual(back.Offsets, seq.Offsets) || (back.Metadata == nil) != (seq.Metadata == nil) {
			t.Fatalf("round trip changed %q: %+v -> %+v", data, seq, back)
		}
		if seq.Metadata != nil && (back.Metadata.BatchTimestampMs != seq.Metadata.BatchTimestampMs || back.Metadata.BatchWatermarkMs != seq.Metadata.BatchWatermarkMs) {
			t.Fatalf("metadata changed: %+v -> %+v", seq.Metadata, back.Metadata)
		}
	})
}

// FuzzFileSourceLog: whatever parses must survive a write/read round trip.
func FuzzFileSourceLog(f *testing.F) {
	f.Add([]byte("v1\n{\"path\":\"/a/b/0\",\"timestamp\":1480730949000,\"batchId\":0}\n{\"path\":\"/a/b/1\",\"timestamp\":1480730950000,\"batchId\":1}"))
	f.Add([]byte("v1\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		entries, _, err := ParseFileSourceLog(data)
		if err != nil {
			return
		}
		back, _, err := ParseFileSourceLog(MarshalFileSourceLog(entries))
		if err != nil {
			t.Fatalf("round trip of %q: %v", data, err)
		}
		if len(back) != len(entries) || (len(entries) > 0 && !reflect.DeepEqual(back, entries)) {
			t.Fatalf("round trip changed %q: %v -> %v", data, entries, back)
		}
	})
}
