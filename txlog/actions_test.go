package txlog

import (
	"encoding/json"
	"errors"
	"net/url"
	"path"
	"strings"
	"testing"
)

func TestActionRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		line string
	}{
		{"protocol", `{"protocol":{"minReaderVersion":1,"minWriterVersion":2}}`},
		{"protocol features", `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":[],"writerFeatures":["timestampNtz"]}}`},
		{"metadata", `{"metaData":{"id":"5fba94ed","format":{"provider":"parquet","options":{}},"schemaString":"{\"type\":\"struct\",\"fields\":[]}","partitionColumns":[],"configuration":{},"createdTime":1587968585495}}`},
		{"add with null partition", `{"add":{"path":"a=__HIVE_DEFAULT_PARTITION__/part-0.parquet","partitionValues":{"a":null},"size":262,"modificationTime":1587968586000,"dataChange":true,"stats":"{\"numRecords\":1,\"minValues\":{\"s\":\"<&>\"}}"}}`},
		{"add dv", `{"add":{"path":"p.parquet","partitionValues":{},"size":635,"modificationTime":1,"dataChange":true,"tags":{"INSERTION_TIME":"1"},"deletionVector":{"storageType":"u","pathOrInlineDv":"vBn[lx{q8@P<9BNH/isA","offset":1,"sizeInBytes":36,"cardinality":2},"baseRowId":4071,"defaultRowCommitVersion":41,"clusteringProvider":"liquid"}}`},
		{"remove extended", `{"remove":{"path":"p.parquet","deletionTimestamp":1677811194426,"dataChange":true,"extendedFileMetadata":true,"partitionValues":{},"size":635,"tags":{}}}`},
		{"txn", `{"txn":{"appId":"q","version":3,"lastUpdated":5}}`},
		{"domain", `{"domainMetadata":{"domain":"delta.x","configuration":"{\"k\":1}","removed":false}}`},
		{"cdc", `{"cdc":{"path":"_change_data/c.parquet","partitionValues":{},"size":1213,"dataChange":false}}`},
		{"commitInfo", `{"commitInfo":{"timestamp":1587968586154,"operation":"WRITE","operationParameters":{"mode":"ErrorIfExists","partitionBy":"[]"},"isBlindAppend":true,"zzz":{"nested":[1,2]}}}`},
		{"unknown fields kept", `{"add":{"path":"p","partitionValues":{},"size":1,"modificationTime":2,"dataChange":false,"futureField":{"x":1}}}`},
		{"unknown action kept", `{"futureAction":{"x":[1,2,3]}}`},
		{"checkpointMetadata", `{"checkpointMetadata":{"version":1,"tags":{}}}`},
		{"sidecar", `{"sidecar":{"path":"016ae953.parquet","sizeInBytes":2304522,"modificationTime":1512909768000,"tags":{}}}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Action
			if err := json.Unmarshal([]byte(tc.line), &a); err != nil {
				t.Fatal(err)
			}
			got, err := a.MarshalJSON()
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != tc.line {
				t.Errorf("round trip:\n got %s\nwant %s", got, tc.line)
			}
		})
	}
}

func TestActionNullPartitionKept(t *testing.T) {
	var a Action
	if err := json.Unmarshal([]byte(`{"add":{"path":"x","partitionValues":{"a":null,"b":"1"},"size":1,"modificationTime":1,"dataChange":true}}`), &a); err != nil {
		t.Fatal(err)
	}
	v, ok := a.Add.PartitionValues["a"]
	if !ok || v != nil {
		t.Fatalf("null partition value: got %v, %v", v, ok)
	}
	if b := a.Add.PartitionValues["b"]; b == nil || *b != "1" {
		t.Fatalf("b = %v", b)
	}
}

func TestActionInvalid(t *testing.T) {
	for _, tc := range []struct{ name, line string }{
		{"empty object", `{}`},
		{"only nulls", `{"add":null,"remove":null}`},
		{"not json", `{"add":`},
		{"array", `[1]`},
		{"add without path", `{"add":{"size":1}}`},
		{"txn without appId", `{"txn":{"version":1}}`},
		{"wrong type", `{"add":{"path":"p","size":"big"}}`},
		{"commitInfo not object", `{"commitInfo":5}`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var a Action
			if err := json.Unmarshal([]byte(tc.line), &a); err == nil {
				t.Fatalf("accepted %s", tc.line)
			}
		})
	}
}

func TestCommitInfoHelpers(t *testing.T) {
	ci := CommitInfo{}
	for k, v := range map[string]any{"timestamp": int64(1700000000123), "operation": "WRITE", "txnId": "abc", "inCommitTimestamp": int64(1700000000124), "isBlindAppend": true,
		"operationParameters": map[string]string{"mode": "Append"}} {
		if err := ci.Set(k, v); err != nil {
			t.Fatal(err)
		}
	}
	if ts, ok := ci.Timestamp(); !ok || ts != 1700000000123 {
		t.Errorf("timestamp %d %v", ts, ok)
	}
	if ts, ok := ci.InCommitTimestamp(); !ok || ts != 1700000000124 {
		t.Errorf("ict %d %v", ts, ok)
	}
	if ci.Operation() != "WRITE" || ci.TxnID() != "abc" || !ci.IsBlindAppend() {
		t.Errorf("helpers: %q %q %v", ci.Operation(), ci.TxnID(), ci.IsBlindAppend())
	}
	if m := ci.StringMap("operationParameters"); m["mode"] != "Append" {
		t.Errorf("params %v", m)
	}
	b, _ := ci.MarshalJSON()
	if !strings.HasPrefix(string(b), `{"inCommitTimestamp":1700000000124,"timestamp":1700000000123,"operation":"WRITE"`) {
		t.Errorf("order: %s", b)
	}
}

func TestEncodeNoHTMLEscape(t *testing.T) {
	a := Action{Add: &Add{Path: "a&b<c>.parquet", Stats: `{"minValues":{"s":"<x>"}}`}}
	b, err := EncodeCommit([]Action{a})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(b), `\u003c`) || strings.Contains(string(b), `\u0026`) {
		t.Errorf("HTML escaped: %s", b)
	}
	if !strings.HasSuffix(string(b), "}\n") {
		t.Errorf("no trailing newline: %q", b)
	}
	if !strings.Contains(string(b), `"partitionValues":{}`) {
		t.Errorf("partitionValues missing: %s", b)
	}
}

func TestDecodeCommitErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		data     string
		maxLine  int
		wantLine int
	}{
		{"bad json line 2", "{\"txn\":{\"appId\":\"a\",\"version\":1}}\n{bad\n", 0, 2},
		{"empty object line 1", "{}\n", 0, 1},
		{"too long", "{\"txn\":{\"appId\":\"" + strings.Repeat("a", 200) + "\",\"version\":1}}\n", 100, 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ParseCommit([]byte(tc.data), CommitPath(7), 7, tc.maxLine)
			var ce *CorruptLogError
			if !errors.As(err, &ce) || !errors.Is(err, ErrCorruptLog) {
				t.Fatalf("err = %v", err)
			}
			if ce.Line != tc.wantLine || ce.Version != 7 || ce.Path != CommitPath(7) {
				t.Errorf("got %+v", ce)
			}
		})
	}
}

func TestDecodeCommitTolerant(t *testing.T) {
	acts, err := ParseCommit([]byte("{\"txn\":{\"appId\":\"a\",\"version\":1}}\r\n\n{\"txn\":{\"appId\":\"b\",\"version\":2}}"), "x", 0, 0)
	if err != nil || len(acts) != 2 || acts[1].Txn.AppID != "b" {
		t.Fatalf("acts=%v err=%v", acts, err)
	}
}

func TestParseLogName(t *testing.T) {
	for _, tc := range []struct {
		name string
		ok   bool
		kind fileKind
		v    int64
	}{
		{"00000000000000000010.json", true, kindCommit, 10},
		{"00000000000000000010.checkpoint.parquet", true, kindCheckpointClassic, 10},
		{"00000000000000000010.checkpoint.0000000001.0000000003.parquet", true, kindCheckpointMultiPart, 10},
		{"00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.json", true, kindCheckpointV2, 10},
		{"00000000000000000010.checkpoint.80a083e8-7026-4e79-81be-64bd76c43a11.parquet", true, kindCheckpointV2, 10},
		{"00000000000000000004.00000000000000000006.compacted.json", true, kindCompaction, 4},
		{"00000000000000000010.crc", true, kindChecksum, 10},
		{"_last_checkpoint", false, 0, 0},
		{"0000000000000000001.json", false, 0, 0},
		{"00000000000000000010.json.tmp", false, 0, 0},
		{"0000000000000000001x.json", false, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lf, ok := parseLogName(tc.name)
			if ok != tc.ok || (ok && (lf.kind != tc.kind || lf.version != tc.v)) {
				t.Errorf("got %+v %v", lf, ok)
			}
		})
	}
}

func TestResolvePath(t *testing.T) {
	for _, tc := range []struct {
		root, raw, want string
		outside         bool
	}{
		{"file:///data/t", "part-0.parquet", "part-0.parquet", false},
		{"file:///data/t", "a%20b/c%253A.parquet", "a b/c%3A.parquet", false},
		{"file:///data/t", "file:/data/t/x/p.parquet", "x/p.parquet", false},
		{"file:///data/t", "file:///data/t/p.parquet", "p.parquet", false},
		{"file:///data/t", "file:///data/other/p.parquet", "", true},
		{"file:///data/t", "../t2/p.parquet", "", true},
		{"file:///data/t", "x/../../p.parquet", "", true},
		{"file:///data/t", "x/./p.parquet", "x/p.parquet", false},
		{"s3://b/t?region=x", "s3a://b/t/p.parquet", "p.parquet", false},
		{"s3://b/t", "s3://other/t/p.parquet", "", true},
		{"mem://t", "/etc/passwd", "", true},
		{"file:///data/t", "/data/t/p.parquet", "p.parquet", false},
	} {
		got, err := ResolvePath(tc.root, tc.raw)
		if tc.outside {
			if !errors.Is(err, ErrPathOutsideTable) {
				t.Errorf("%s %s: want ErrPathOutsideTable, got %q %v", tc.root, tc.raw, got, err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s: got %q %v want %q", tc.root, tc.raw, got, err, tc.want)
		}
	}
	if got := EncodePath("a b/c%3A.parquet"); got != "a%20b/c%253A.parquet" {
		t.Errorf("EncodePath = %q", got)
	}
}

// TestPlainRelativeIsWhatDecodingGives: every path plainRelative takes as
// is, unescaping and path.Clean leave as it is, and the paths they change
// (or refuse) it does not take.
func TestPlainRelativeIsWhatDecodingGives(t *testing.T) {
	for _, raw := range []string{"p.parquet", "a/b/c.parquet", "p=1/part-0.snappy.parquet", "a+b/c d", "a//b", "a/./b", "./a", "a/.", "a/..", "..",
		".", "/a", "a/", "a%20b", "a%zz", "x/../y", ".../a", "..a/b", "a/.b", "a:b/c", "%", "a/b/", "//"} {
		dec, err := url.PathUnescape(raw)
		same := err == nil && !strings.HasPrefix(dec, "/") && path.Clean(dec) == raw && raw != "." && raw != ".." && !strings.HasPrefix(raw, "../")
		if got := plainRelative(raw); got != same {
			t.Errorf("plainRelative(%q) = %v, decoding leaves it as is: %v", raw, got, same)
		}
	}
}

func TestParseLastCheckpoint(t *testing.T) {
	lc, err := ParseLastCheckpoint([]byte(`{"version":10,"size":13,"parts":2,"sizeInBytes":100,"numOfAddFiles":5}`))
	if err != nil || lc.Version != 10 || *lc.Parts != 2 {
		t.Fatalf("%+v %v", lc, err)
	}
	for _, bad := range []string{``, `{`, `[]`, `{"size":1}`, `{"version":-1}`, `{"version":"x"}`, `{"version":1,"parts":0}`} {
		if _, err := ParseLastCheckpoint([]byte(bad)); !errors.Is(err, ErrCorruptLog) {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
}
