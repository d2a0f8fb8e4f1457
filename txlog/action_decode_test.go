package txlog

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
)

// actionFastCases are lines where the one-pass decode must either decline
// or agree with the generic decode.
var actionFastCases = []struct {
	line string
	fast bool // the one-pass decode takes it
}{
	{`{"add":{"path":"a","partitionValues":{"p":null},"size":1,"modificationTime":2,"dataChange":true,"stats":"{}"}}`, true},
	{`{"add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true,"x":1}}`, false}, // unknown field kept in Extra
	{`{"Add":{"path":"a","partitionValues":{},"size":1,"modificationTime":2,"dataChange":true}}`, false},       // not the add key: Unknown
	{`{"add":{"path":"a"},"add":{"path":"b"}}`, false},                                                         // duplicate key
	{`{"add":null}`, false},                                 // a line of nulls is an error
	{`{"add":null,"txn":{"appId":"q","version":1}}`, false}, // the null is ignored
	{`{"add":{"path":"a"},"remove":{"path":"b","dataChange":true}}`, true},
	{`{"add":{"path":"a"}} {"txn":{}}`, false},
	{`{"add":{"path":"a"}`, false},
	{`{"commitInfo":{"timestamp":1,"operation":"WRITE","x":{"y":[1,2]}}}`, true},
	{`{"commitInfo":null}`, false},
	{`{"commitInfo":[1]}`, false},
	{`{"commitInfo":{}}`, true},
	{`{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":[]}}`, true},
	{`{"metaData":{"id":"x","format":{"provider":"parquet","options":{}},"schemaString":"{}","partitionColumns":[],"configuration":{"a":"b"},"createdTime":1}}`, true},
	{`{"metaData":{"id":"x","format":{"provider":"parquet","options":{},"z":1},"schemaString":"{}"}}`, false},
	{`{"add":{"path":"a","deletionVector":{"storageType":"u","pathOrInlineDv":"x","offset":1,"sizeInBytes":1,"cardinality":1,"extra":true}}}`, true},
	{`{"txn":{"appId":"q","version":1,"lastUpdated":3}}`, true},
	{`{"txn":{"appId":"q","version":1.5}}`, false},
	{`{"domainMetadata":{"domain":"d","configuration":"{}","removed":false}}`, true},
	{`{"cdc":{"path":"c","partitionValues":{},"size":1,"dataChange":false}}`, true},
	{`{"checkpointMetadata":{"version":3,"tags":{"a":"b"}}}`, true},
	{`{"sidecar":{"path":"s.parquet","sizeInBytes":1,"modificationTime":2}}`, true},
	{`{"future":{}}`, false},
	{`{}`, false},
	{`[]`, false},
	{`{"add":{"path":""}}`, true}, // decoded, then refused by validate on both paths
	// Inputs a byte fuzzer is unlikely to build:
	{`{"\u0061dd":{"p\u0061th":"a\u00e9\ud83d\ude00\u0000b","partitionValues":{"p":null,"q":"\u2028"}}}`, true}, // escapes in keys and values
	{`{"add":{"PATH":"a","Size":3,"DATACHANGE":true}}`, true},                                                   // encoding/json's case-insensitive field match
	{`{"add":{"path":"a","path":"b","size":1,"size":2}}`, true},                                                 // duplicate field: the last wins
	{`{"add":{"path":"a","size":9223372036854775808}}`, false},                                                  // int64 overflow: refused on both
	{`{"add":{"path":"a","size":1e3}}`, false},
	{`{"add":{"path":"a","partitionValues":null,"tags":null,"stats":null,"deletionVector":null}}`, true},
	{`{"add":{"path":"a","partitionValues":{"p":1}}}`, false},
	{`{"add":{"path":"a","partitionValues":[]}}`, false},
	{`{"commitInfo":{"x":[[[[[[[[[[{"y":{"z":[null,1e400,"\ud800"]}}]]]]]]]]]],"x":2}}`, true}, // nested unknown, duplicate key
	{`{"txn":{"appId":"q","version":-0,"lastUpdated":null}}`, true},
	{"\ufeff{\"txn\":{\"appId\":\"q\",\"version\":1}}", false}, // a BOM is not JSON
}

// TestDecodeActionFastAgrees checks the one-pass decode of a commit line
// against the generic one: it takes the lines it can, and on those gives
// the same Action and the same validation result.
func TestDecodeActionFastAgrees(t *testing.T) {
	for _, tc := range actionFastCases {
		var fast Action
		took := decodeActionFast([]byte(tc.line), &fast)
		if took != tc.fast {
			t.Errorf("%s: one-pass decode took it: %v, want %v", tc.line, took, tc.fast)
		}
		checkFastAgrees(t, []byte(tc.line))
	}
}

func checkFastAgrees(t *testing.T, line []byte) {
	t.Helper()
	var fast, slow Action
	if !decodeActionFast(line, &fast) {
		if !reflect.DeepEqual(fast, Action{}) {
			t.Fatalf("%s: declined but left %+v", line, fast)
		}
		return
	}
	serr := slow.unmarshalSlow(line)
	ferr := fast.validate()
	if (serr == nil) != (ferr == nil) {
		t.Fatalf("%s: one-pass error %v, generic error %v", line, ferr, serr)
	}
	if serr == nil && !reflect.DeepEqual(fast, slow) {
		t.Fatalf("%s:\none-pass %#v\ngeneric  %#v", line, fast, slow)
	}
}

// FuzzDecodeActionFast: on any line the one-pass decode takes, it agrees
// with the generic decode.
func FuzzDecodeActionFast(f *testing.F) {
	for _, tc := range actionFastCases {
		f.Add([]byte(tc.line))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		checkFastAgrees(t, line)
	})
}

// TestDecodeActionNestingLimit: a line nested one level past
// encoding/json's limit (10,000) inside commitInfo is refused by the
// decode commit lines go through (json.Unmarshal into an Action), as the
// generic decode refuses it, although the one-pass decode alone, which
// counts depth from the action's value, would take it; one level less is
// taken by both.
func TestDecodeActionNestingLimit(t *testing.T) {
	line := func(depth int) []byte { // depth of the deepest array, the line's object counted
		n := depth - 2
		return []byte(`{"commitInfo":{"x":` + strings.Repeat("[", n) + strings.Repeat("]", n) + `}}`)
	}
	for _, tc := range []struct {
		depth int
		ok    bool
	}{{10000, true}, {10001, false}} {
		var a, slow Action
		err := json.Unmarshal(line(tc.depth), &a)
		serr := slow.unmarshalSlow(line(tc.depth))
		if (err == nil) != tc.ok || (serr == nil) != tc.ok {
			t.Errorf("depth %d: decode error %v, generic error %v; want ok=%v", tc.depth, err, serr, tc.ok)
		}
	}
}
