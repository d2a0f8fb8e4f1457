package txlog

import (
	"encoding/json"
	"errors"
	"testing"
)

// FuzzParseCommit: any input either parses, and then re-encodes and
// re-parses to the same encoding, or fails with *CorruptLogError; never a
// panic.
func FuzzParseCommit(f *testing.F) {
	for _, s := range []string{
		`{"add":{"path":"a","partitionValues":{"p":null},"size":1,"modificationTime":2,"dataChange":true,"stats":"{}","x":1}}`,
		`{"remove":{"path":"a","deletionTimestamp":1,"dataChange":true}}` + "\n" + `{"txn":{"appId":"q","version":1}}`,
		`{"commitInfo":{"timestamp":1,"operation":"WRITE"}}`,
		`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{}}}`,
		`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":[]}}`,
		`{"future":{}}`, `{}`, `{"add":null}`, "\n\n", `{"add":{"path":"a","deletionVector":{"storageType":"u","pathOrInlineDv":"x","offset":1,"sizeInBytes":1,"cardinality":1}}}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		acts, err := ParseCommit(data, CommitPath(1), 1, 1<<20)
		if err != nil {
			var ce *CorruptLogError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("error is not *CorruptLogError: %v", err)
			}
			return
		}
		enc, err := EncodeCommit(acts)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		acts2, err := ParseCommit(enc, CommitPath(1), 1, 1<<20)
		if err != nil {
			t.Fatalf("re-parse %q: %v", enc, err)
		}
		enc2, _ := EncodeCommit(acts2)
		if string(enc) != string(enc2) {
			t.Fatalf("round trip not stable:\n%s\n%s", enc, enc2)
		}
	})
}

// FuzzParseLastCheckpoint: corrupt input is *CorruptLogError, never a panic;
// accepted input has a non-negative version and survives re-encoding.
func FuzzParseLastCheckpoint(f *testing.F) {
	for _, s := range []string{`{"version":10,"size":13}`, `{"version":1,"parts":2}`, `{"size":1}`, `{`, `null`, `{"version":-1}`,
		`{"size":6,"size_in_bytes":23521,"version":1}`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		lc, err := ParseLastCheckpoint(data)
		if err != nil {
			if !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("not ErrCorruptLog: %v", err)
			}
			return
		}
		if lc.Version < 0 {
			t.Fatalf("negative version accepted")
		}
		b, err := json.Marshal(lc)
		if err != nil {
			t.Fatal(err)
		}
		if lc2, err := ParseLastCheckpoint(b); err != nil || lc2.Version != lc.Version {
			t.Fatalf("re-parse %s: %v", b, err)
		}
	})
}
