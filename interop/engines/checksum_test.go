package engines

// Version checksum files (PROTOCOL.md "Version Checksum File") across
// engines: Delta validates the N.crc lakesink writes, lakesink validates the
// N.crc Delta writes, and the two compute the same checksum for one state.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

// sparkChecksum is the engine server's spark_checksum answer for a version.
type sparkChecksum struct {
	Version  json.Number    `json:"version"`
	Checksum map[string]any `json:"checksum"` // Snapshot.checksumOpt: the .crc Delta read (nil: none)
	Valid    *bool          `json:"valid"`    // Snapshot.validateChecksum()
	Error    *string        `json:"error"`    // what validateChecksum raised
	Computed map[string]any `json:"computed"` // Snapshot.computeChecksum
}

func sparkChecksumAt(t *testing.T, path string, v int64) sparkChecksum {
	t.Helper()
	var a sparkChecksum
	srv.must(t, map[string]any{"op": "spark_checksum", "path": path, "version": v}, &a)
	return a
}

// crcFile reads path's N.crc as a JSON object (numbers kept as text).
func crcFile(t *testing.T, path string, v int64) map[string]any {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(path, filepath.FromSlash(txlog.ChecksumPath(v))))
	if err != nil {
		t.Fatal(err)
	}
	return decodeJSONObject(t, b)
}

func decodeJSONObject(t *testing.T, b []byte) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("checksum JSON %q: %v", b, err)
	}
	return m
}

// copyTable copies a table directory; skip names files left out.
func copyTable(t *testing.T, from, to string, skip func(name string) bool) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(to, rel), 0o755)
		}
		if skip != nil && skip(d.Name()) {
			return nil
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(to, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}

func noCRC(name string) bool { return strings.HasSuffix(name, ".crc") }

// histogramOf is a checksum's file size histogram under either name:
// PROTOCOL.md's "fileSizeHistogram" or Delta-Spark's legacy "histogramOpt".
func histogramOf(m map[string]any) (any, bool) {
	for _, k := range []string{"fileSizeHistogram", "histogramOpt"} {
		if h, ok := m[k]; ok && h != nil {
			return h, true
		}
	}
	return nil, false
}

// sameChecksum compares two checksums of one table state field by field:
// tableSizeBytes, numFiles, numMetadata, numProtocol, the file size
// histogram (bins, counts, bytes), setTransactions and domainMetadata (as
// sets), the DV counts, metadata (id, schemaString, partitionColumns,
// configuration, createdTime) and protocol; a field only one side holds is
// reported in the log, not compared. It returns the fields compared.
func sameChecksum(t *testing.T, what string, ours, theirs map[string]any) []string {
	t.Helper()
	var compared, oneSided []string
	eq := func(field string, a, b any) {
		compared = append(compared, field)
		if canon(a) != canon(b) {
			t.Errorf("%s: %s: lakesink %s, Spark %s", what, field, canon(a), canon(b))
		}
	}
	for _, k := range []string{"tableSizeBytes", "numFiles", "numMetadata", "numProtocol", "numDeletedRecordsOpt", "numDeletionVectorsOpt"} {
		a, okA := ours[k]
		b, okB := theirs[k]
		switch {
		case okA && okB && a != nil && b != nil:
			eq(k, a, b)
		case (okA && a != nil) != (okB && b != nil):
			oneSided = append(oneSided, k)
		}
	}
	ha, okA := histogramOf(ours)
	hb, okB := histogramOf(theirs)
	if okA && okB {
		for _, k := range []string{"sortedBinBoundaries", "fileCounts", "totalBytes"} {
			eq("histogram."+k, pick(ha, k), pick(hb, k))
		}
	} else if okA != okB {
		oneSided = append(oneSided, "histogram")
	}
	asSet := func(v any, keys ...string) []string {
		list, _ := v.([]any)
		out := []string{}
		for _, e := range list {
			m := map[string]any{}
			for _, k := range keys {
				if x := pick(e, k); x != nil {
					m[k] = x
				}
			}
			if r, _ := m["removed"].(bool); !r {
				delete(m, "removed")
			}
			out = append(out, canon(m))
		}
		sort.Strings(out)
		return out
	}
	for k, keys := range map[string][]string{"setTransactions": {"appId", "version", "lastUpdated"}, "domainMetadata": {"domain", "configuration", "removed"}} {
		a, okA := ours[k]
		b, okB := theirs[k]
		if okA && okB && a != nil && b != nil {
			eq(k, asSet(a, keys...), asSet(b, keys...))
		} else if (okA && a != nil) != (okB && b != nil) {
			oneSided = append(oneSided, k)
		}
	}
	for _, k := range []string{"id", "schemaString", "partitionColumns", "configuration", "createdTime"} {
		a, b := pick(ours["metadata"], k), pick(theirs["metadata"], k)
		if k == "configuration" || k == "partitionColumns" {
			if a == nil {
				a = map[string]any{}
				if k == "partitionColumns" {
					a = []any{}
				}
			}
			if b == nil {
				b = map[string]any{}
				if k == "partitionColumns" {
					b = []any{}
				}
			}
		}
		if a == nil && b == nil {
			continue
		}
		eq("metadata."+k, a, b)
	}
	proto := func(v any) map[string]any {
		m := map[string]any{"minReaderVersion": pick(v, "minReaderVersion"), "minWriterVersion": pick(v, "minWriterVersion")}
		for _, k := range []string{"readerFeatures", "writerFeatures"} {
			var fs []string
			list, _ := pick(v, k).([]any)
			for _, f := range list {
				fs = append(fs, fmt.Sprint(f))
			}
			sort.Strings(fs)
			m[k] = fs
		}
		return m
	}
	eq("protocol", proto(ours["protocol"]), proto(theirs["protocol"]))
	var ignored []string
	for k := range theirs {
		if _, ok := ours[k]; !ok {
			ignored = append(ignored, k)
		}
	}
	sort.Strings(ignored)
	t.Logf("%s: compared %s; one side only: %v; Spark-only keys %v", what, strings.Join(compared, ", "), oneSided, ignored)
	return compared
}

// TestChecksumFilesAcrossEngines: (1) Delta (checksum.mismatch.fatal) reads
// and validates (Snapshot.validateChecksum) the N.crc lakesink wrote after
// an idempotent write (two appIds in setTransactions), after OPTIMIZE, and
// at the last version, and its own state reconstruction of the last (the
// table copied without .crc files) computes the checksum lakesink wrote,
// field by field, histogram included; a .crc with numFiles or a histogram count
// changed is refused, so the validation did run.
// (2) Spark appends and OPTIMIZEs with forced validation of the .crc it
// starts from; lakesink's snapshot load validates each .crc Spark wrote,
// and lakesink's Snapshot.Checksum of that version equals Spark's file
// field by field. (3) lakesink commits on top; Delta validates that .crc.
func TestChecksumFilesAcrossEngines(t *testing.T) {
	needEngines(t, "Spark", "version checksums (.crc): Delta validates lakesink's, lakesink validates Delta's, same fields for one state")
	ctx := context.Background()
	dir := t.TempDir()
	path := localURL(t, filepath.Join(dir, "table"))
	s, err := sink.NewDelta(ctx, path, sink.Options{QueryID: "crc-query", PartitionColumns: []string{"part"}})
	if err != nil {
		t.Fatal(err)
	}
	for i := int64(0); i < 4; i++ {
		if _, err := s.AddBatch(ctx, i, smallBatch(int(i)*20, 20, false)); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	latest := func() int64 {
		tb, err := table.Open(ctx, path)
		if err != nil {
			t.Fatal(err)
		}
		defer tb.Close()
		v, err := tb.Log().LatestVersion(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	write(t, path, smallBatch(500, 9, false), table.WriteOptions{AppID: "nightly", Version: 3})
	vTxn := latest() // two appIds in setTransactions
	cli(t, "compact", path)
	vOptimize := latest()
	write(t, path, smallBatch(600, 4, false), table.WriteOptions{})

	srv.must(t, map[string]any{"op": "spark_conf", "conf": map[string]any{"spark.databricks.delta.checksum.mismatch.fatal": "true"}}, nil)
	defer srv.must(t, map[string]any{"op": "spark_conf", "conf": map[string]any{
		"spark.databricks.delta.checksum.mismatch.fatal":                               nil,
		"spark.databricks.delta.versionChecksum.forcedValidationInterval":              nil,
		"spark.databricks.delta.versionChecksum.forcedValidationMinTimeIntevalMinutes": nil,
	}}, nil)

	tb, err := table.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	lkVersions, err := tb.Log().Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bare := filepath.Join(dir, "bare") // the same log without any .crc
	copyTable(t, path, bare, noCRC)
	if len(lkVersions) == 0 {
		t.Fatal("no versions")
	}

	// (1) Delta validates lakesink's .crc; Delta computes what lakesink wrote.
	// Each check is a Delta state reconstruction (a Spark job, slow on a
	// loaded 2-core machine): the versions after the txns of the sink and
	// of the idempotent write (two appIds), after OPTIMIZE (removes and a
	// rewritten file) and the last one.
	checkAt := []int64{vTxn, vOptimize, lkVersions[len(lkVersions)-1]}
	for _, v := range checkAt {
		a := sparkChecksumAt(t, path, v)
		if a.Checksum == nil {
			t.Errorf("version %d: Delta read no checksum (Snapshot.checksumOpt empty) from lakesink's %s", v, txlog.ChecksumPath(v))
		}
		if a.Error != nil || a.Valid == nil || !*a.Valid {
			t.Errorf("version %d: Delta's validateChecksum refuses lakesink's .crc: valid %v, %v", v, a.Valid, deref(a.Error))
		}
	}
	// validateChecksum compared what both hold; here every field, from
	// Delta's state reconstruction of the last version alone.
	last := lkVersions[len(lkVersions)-1]
	b := sparkChecksumAt(t, bare, last)
	if b.Checksum != nil {
		t.Fatalf("version %d of the copy without .crc files: Delta read a checksum", last)
	}
	sameChecksum(t, fmt.Sprintf("version %d: lakesink's .crc vs Delta's state reconstruction", last), crcFile(t, path, last), b.Computed)
	for _, tamper := range []struct {
		name, wantErr string
		change        func(m map[string]any)
	}{
		{"numFiles+1", "Number of files", func(m map[string]any) { m["numFiles"] = json.Number(fmt.Sprint(num(t, m["numFiles"]) + 1)) }},
		{"a histogram count moved to the next bin", "FileSizeHistogram", func(m map[string]any) {
			h, _ := histogramOf(m)
			counts := pick(h, "fileCounts").([]any)
			for i := range counts {
				if n := num(t, counts[i]); n > 0 {
					counts[i], counts[i+1] = json.Number(fmt.Sprint(n-1)), json.Number(fmt.Sprint(num(t, counts[i+1])+1))
					return
				}
			}
			t.Fatal("empty histogram")
		}},
	} {
		bad := filepath.Join(dir, "tampered-"+strings.Fields(tamper.name)[0])
		copyTable(t, path, bad, nil)
		m := crcFile(t, path, last)
		tamper.change(m)
		b, _ := json.Marshal(m)
		if err := os.WriteFile(filepath.Join(bad, filepath.FromSlash(txlog.ChecksumPath(last))), b, 0o644); err != nil {
			t.Fatal(err)
		}
		a := sparkChecksumAt(t, bad, last)
		if a.Error == nil || !strings.Contains(*a.Error, tamper.wantErr) {
			t.Errorf("lakesink's .crc with %s: Delta's validateChecksum: valid %v, error %v (want an error naming %q)", tamper.name, a.Valid, deref(a.Error), tamper.wantErr)
		}
	}

	// (2) Spark writes, validating the .crc it starts from before each
	// commit (forced validation, fatal on a mismatch).
	srv.must(t, map[string]any{"op": "spark_conf", "conf": map[string]any{
		"spark.databricks.delta.versionChecksum.forcedValidationInterval":              "0",
		"spark.databricks.delta.versionChecksum.forcedValidationMinTimeIntevalMinutes": "0",
	}}, nil)
	srv.must(t, map[string]any{"op": "spark_append", "path": path, "schema": smallDDL, "rows": jsonRows(smallBatch(700, 11, false))}, nil)
	srv.must(t, map[string]any{"op": "spark_append", "path": path, "schema": smallDDL, "rows": jsonRows(smallBatch(800, 3, false))}, nil)
	srv.must(t, map[string]any{"op": "spark_delta", "what": "optimize", "path": path}, nil)
	all, err := tb.Log().Versions(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sparkVersions := all[len(lkVersions):]
	if len(sparkVersions) != 3 {
		t.Fatalf("versions after Spark's 2 appends and OPTIMIZE: %v", all)
	}
	for _, v := range sparkVersions {
		if _, err := os.Stat(filepath.Join(path, filepath.FromSlash(txlog.ChecksumPath(v)))); err != nil {
			t.Fatalf("Spark wrote no .crc for version %d: %v", v, err)
		}
		snap, err := tb.SnapshotAt(ctx, v) // validates v.crc
		if err != nil {
			t.Errorf("lakesink refuses the snapshot of version %d with Spark's .crc: %v", v, err)
			continue
		}
		b, err := snap.Checksum().MarshalJSON()
		if err != nil {
			t.Fatal(err)
		}
		sameChecksum(t, fmt.Sprintf("version %d: lakesink's Snapshot.Checksum vs Spark's .crc", v), decodeJSONObject(t, b), crcFile(t, path, v))
	}
	// A Spark .crc with numFiles changed is refused by lakesink (the check ran).
	bad := filepath.Join(dir, "tampered-spark")
	copyTable(t, path, bad, nil)
	sv := sparkVersions[len(sparkVersions)-1]
	m := crcFile(t, path, sv)
	m["numFiles"] = json.Number(fmt.Sprint(num(t, m["numFiles"]) + 1))
	tampered, _ := json.Marshal(m)
	if err := os.WriteFile(filepath.Join(bad, filepath.FromSlash(txlog.ChecksumPath(sv))), tampered, 0o644); err != nil {
		t.Fatal(err)
	}
	badTable, err := table.Open(ctx, localURL(t, bad))
	if err != nil {
		t.Fatal(err)
	}
	defer badTable.Close()
	var mm *txlog.ChecksumMismatchError
	if _, err := badTable.SnapshotAt(ctx, sv); !errors.As(err, &mm) {
		t.Errorf("Spark's .crc of version %d with numFiles+1: lakesink loaded it (%v), want a ChecksumMismatchError", sv, err)
	}

	// (3) lakesink goes on from Spark's .crc; Delta validates the result.
	write(t, path, smallBatch(900, 5, false), table.WriteOptions{AppID: "nightly", Version: 4})
	final, err := tb.Log().LatestVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a := sparkChecksumAt(t, path, final)
	if a.Checksum == nil || a.Error != nil || a.Valid == nil || !*a.Valid {
		t.Errorf("version %d (lakesink after Spark): Delta: checksum read %v, valid %v, %v", final, a.Checksum != nil, a.Valid, deref(a.Error))
	}
}

func deref(s *string) string {
	if s == nil {
		return "no error"
	}
	return *s
}

func num(t *testing.T, v any) int64 {
	t.Helper()
	n, ok := v.(json.Number)
	if !ok {
		t.Fatalf("%v (%T) is not a JSON number", v, v)
	}
	i, err := n.Int64()
	if err != nil {
		t.Fatal(err)
	}
	return i
}
