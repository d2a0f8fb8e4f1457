package engines

// What each engine says about a table, compared with lakesink's own view.

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"net/url"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
	"github.com/lakesink/lakesink/txlog"
)

type sparkAnswer struct {
	Schema any              `json:"schema"`
	Rows   []map[string]any `json:"rows"`
	Files  []string         `json:"files"`
}

type rsAnswer struct {
	IsDeltaTable bool             `json:"is_deltatable"`
	Rows         []map[string]any `json:"rows"`
	Schema       any              `json:"schema"`
	Protocol     struct {
		MinReaderVersion json.Number `json:"minReaderVersion"`
		MinWriterVersion json.Number `json:"minWriterVersion"`
		ReaderFeatures   []string    `json:"readerFeatures"`
		WriterFeatures   []string    `json:"writerFeatures"`
	} `json:"protocol"`
	Version    json.Number      `json:"version"`
	History    []map[string]any `json:"history"`
	AddActions []map[string]any `json:"add_actions"`
	Files      []string         `json:"files"`
}

// sparkRead is spark.read.format(format).load(path).
func sparkRead(t *testing.T, path, format string, opts map[string]any) sparkAnswer {
	t.Helper()
	var a sparkAnswer
	req := map[string]any{"op": "spark_read", "path": path, "format": format}
	if opts != nil {
		req["options"] = opts
	}
	srv.must(t, req, &a)
	return a
}

func rsRead(t *testing.T, path string, storage map[string]string) rsAnswer {
	t.Helper()
	var a rsAnswer
	req := map[string]any{"op": "rs_read", "path": path}
	if storage != nil {
		req["storage_options"] = storage
	}
	srv.must(t, req, &a)
	return a
}

// ourView is lakesink's view of a Delta table: latest snapshot and history.
type ourView struct {
	snap    *txlog.Snapshot
	schema  *schema.StructType
	history []txlog.CommitEntry
	rows    []string
}

func viewOf(t *testing.T, tableURL string) ourView {
	t.Helper()
	ctx := context.Background()
	tb, err := table.Open(ctx, tableURL)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		t.Fatalf("lakesink snapshot of %s: %v", tableURL, err)
	}
	sch, err := snap.Schema()
	if err != nil {
		t.Fatal(err)
	}
	h, err := tb.History(ctx, 0)
	if err != nil {
		t.Fatalf("lakesink history of %s: %v", tableURL, err)
	}
	return ourView{snap: snap, schema: sch, history: h, rows: lakesinkRows(t, tableURL)}
}

// checkSpark: Spark's rows equal want (and lakesink's), its schema ours,
// DESCRIBE DETAIL's numFiles/sizeInBytes ours, DESCRIBE HISTORY our versions.
func checkSpark(t *testing.T, sparkPath, tableURL string, want []string) {
	t.Helper()
	v := viewOf(t, tableURL)
	if want == nil {
		want = v.rows
	} else {
		sameRows(t, "lakesink read vs source rows", want, v.rows)
	}
	a := sparkRead(t, sparkPath, "delta", nil)
	sameRows(t, "Spark read vs source rows", want, engineRows(a.Rows))
	sameSchema(t, "Spark schema", v.schema, a.Schema)
	if len(a.Files) != v.snap.NumFiles() {
		t.Errorf("Spark inputFiles: %d files, lakesink snapshot has %d", len(a.Files), v.snap.NumFiles())
	}

	var detail []map[string]any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": "DESCRIBE DETAIL delta.`" + sparkPath + "`"}, &detail)
	if len(detail) != 1 {
		t.Fatalf("DESCRIBE DETAIL: %d rows", len(detail))
	}
	d := detail[0]
	if got := fmt.Sprint(d["numFiles"]); got != strconv.Itoa(v.snap.NumFiles()) {
		t.Errorf("DESCRIBE DETAIL numFiles = %s, lakesink %d", got, v.snap.NumFiles())
	}
	if got := fmt.Sprint(d["sizeInBytes"]); got != strconv.FormatInt(v.snap.SizeInBytes(), 10) {
		t.Errorf("DESCRIBE DETAIL sizeInBytes = %s, lakesink %d", got, v.snap.SizeInBytes())
	}
	if got, want := fmt.Sprint(d["partitionColumns"]), fmt.Sprint(v.snap.Metadata().PartitionColumns); got != want {
		t.Errorf("DESCRIBE DETAIL partitionColumns = %s, lakesink %s", got, want)
	}
	p := v.snap.Protocol()
	if fmt.Sprint(d["minReaderVersion"]) != strconv.Itoa(p.MinReaderVersion) || fmt.Sprint(d["minWriterVersion"]) != strconv.Itoa(p.MinWriterVersion) {
		t.Errorf("DESCRIBE DETAIL protocol %v/%v, lakesink %d/%d", d["minReaderVersion"], d["minWriterVersion"], p.MinReaderVersion, p.MinWriterVersion)
	}

	var hist []map[string]any
	srv.must(t, map[string]any{"op": "spark_sql", "sql": "DESCRIBE HISTORY delta.`" + sparkPath + "`"}, &hist)
	var got, wantV []string
	for _, h := range hist {
		got = append(got, fmt.Sprint(h["version"])+":"+fmt.Sprint(h["operation"]))
	}
	for _, e := range v.history {
		wantV = append(wantV, strconv.FormatInt(e.Version, 10)+":"+e.CommitInfo.Operation())
	}
	if strings.Join(got, " ") != strings.Join(wantV, " ") {
		t.Errorf("DESCRIBE HISTORY (version:operation)\n got  %v\n want %v", got, wantV)
	}
}

// checkDeltaRS: delta-rs accepts the table, reads want, parses every commit
// of the history, and its add actions carry our statistics.
func checkDeltaRS(t *testing.T, rsPath, tableURL string, want []string, storage map[string]string) {
	t.Helper()
	v := viewOf(t, tableURL)
	if want == nil {
		want = v.rows
	}
	a := rsRead(t, rsPath, storage)
	if !a.IsDeltaTable {
		t.Errorf("delta-rs DeltaTable.is_deltatable(%s) = false", rsPath)
	}
	sameRows(t, "delta-rs read vs source rows", want, engineRows(a.Rows))
	sameSchema(t, "delta-rs schema", v.schema, a.Schema)
	if a.Version.String() != strconv.FormatInt(v.snap.Version(), 10) {
		t.Errorf("delta-rs version %s, lakesink %d", a.Version, v.snap.Version())
	}
	p := v.snap.Protocol()
	if a.Protocol.MinReaderVersion.String() != strconv.Itoa(p.MinReaderVersion) || a.Protocol.MinWriterVersion.String() != strconv.Itoa(p.MinWriterVersion) {
		t.Errorf("delta-rs protocol %s/%s, lakesink %d/%d", a.Protocol.MinReaderVersion, a.Protocol.MinWriterVersion, p.MinReaderVersion, p.MinWriterVersion)
	}
	if fmt.Sprint(sorted(a.Protocol.ReaderFeatures)) != fmt.Sprint(sorted(p.ReaderFeatures)) || fmt.Sprint(sorted(a.Protocol.WriterFeatures)) != fmt.Sprint(sorted(p.WriterFeatures)) {
		t.Errorf("delta-rs features %v / %v, lakesink %v / %v", a.Protocol.ReaderFeatures, a.Protocol.WriterFeatures, p.ReaderFeatures, p.WriterFeatures)
	}
	// history(): every commit lakesink lists, with its version.
	var got, wantH []string
	for _, h := range a.History {
		got = append(got, fmt.Sprint(h["version"])+":"+fmt.Sprint(h["operation"]))
	}
	for _, e := range v.history {
		wantH = append(wantH, strconv.FormatInt(e.Version, 10)+":"+e.CommitInfo.Operation())
	}
	if strings.Join(got, " ") != strings.Join(wantH, " ") {
		t.Errorf("delta-rs history (version:operation)\n got  %v\n want %v", got, wantH)
	}
	checkAddActions(t, v, a.AddActions)
}

func sorted(s []string) []string {
	s = append([]string(nil), s...)
	sort.Strings(s)
	return s
}

// checkAddActions compares get_add_actions(flatten=True) with our adds:
// the same paths, sizes, numRecords, and every nullCount, minValues and
// maxValues entry our stats hold.
func checkAddActions(t *testing.T, v ourView, actions []map[string]any) {
	t.Helper()
	byPath := map[string]map[string]any{}
	for _, a := range actions {
		byPath[fmt.Sprint(a["path"])] = a
	}
	if len(actions) != v.snap.NumFiles() {
		t.Errorf("delta-rs get_add_actions: %d files, lakesink %d", len(actions), v.snap.NumFiles())
	}
	checked := 0
	for _, add := range v.snap.Files() {
		p, err := url.PathUnescape(add.Path)
		if err != nil {
			t.Fatal(err)
		}
		a, ok := byPath[p]
		if !ok {
			a, ok = byPath[add.Path]
		}
		if !ok {
			var have []string
			for k := range byPath {
				have = append(have, k)
			}
			t.Errorf("delta-rs get_add_actions has no %s (nor %s); it has %v", p, add.Path, have)
			continue
		}
		if fmt.Sprint(a["size_bytes"]) != strconv.FormatInt(add.Size, 10) {
			t.Errorf("%s: delta-rs size_bytes %v, lakesink %d", p, a["size_bytes"], add.Size)
		}
		if add.Stats == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(add.Stats))
		d.UseNumber()
		var st struct {
			NumRecords json.Number    `json:"numRecords"`
			MinValues  map[string]any `json:"minValues"`
			MaxValues  map[string]any `json:"maxValues"`
			NullCount  map[string]any `json:"nullCount"`
		}
		if err := d.Decode(&st); err != nil {
			t.Fatalf("%s: our stats: %v", p, err)
		}
		if fmt.Sprint(a["num_records"]) != st.NumRecords.String() {
			t.Errorf("%s: delta-rs num_records %v, lakesink %s", p, a["num_records"], st.NumRecords)
		}
		for k, ours := range flatten("", st.NullCount) {
			if got := fmt.Sprint(a["null_count."+k]); got != fmt.Sprint(ours) {
				t.Errorf("%s: delta-rs null_count.%s = %s, lakesink %v", p, k, got, ours)
			}
			checked++
		}
		for kind, m := range map[string]map[string]any{"min": st.MinValues, "max": st.MaxValues} {
			for k, ours := range flatten("", m) {
				theirs, ok := a[kind+"."+k]
				if !ok {
					t.Errorf("%s: delta-rs has no %s.%s (lakesink %v)", p, kind, k, ours)
					continue
				}
				if msg := compareStat(fieldType(v.schema, k), ours, theirs); msg != "" {
					t.Errorf("%s: %s.%s: %s", p, kind, k, msg)
				}
				checked++
			}
		}
	}
	t.Logf("delta-rs add actions: %d files, %d statistics compared", len(actions), checked)
}

func flatten(prefix string, m map[string]any) map[string]any {
	out := map[string]any{}
	for k, v := range m {
		if sub, ok := v.(map[string]any); ok {
			for k2, v2 := range flatten(prefix+k+".", sub) {
				out[k2] = v2
			}
			continue
		}
		out[prefix+k] = v
	}
	return out
}

func fieldType(s *schema.StructType, dotted string) schema.DataType {
	var t schema.DataType = s
	for _, name := range strings.Split(dotted, ".") {
		st, ok := t.(*schema.StructType)
		if !ok {
			return nil
		}
		var next schema.DataType
		for _, f := range st.Fields {
			if f.Name == name {
				next = f.Type
			}
		}
		if next == nil {
			return nil
		}
		t = next
	}
	return t
}

// compareStat compares one of our stats values (JSON) with delta-rs's
// (plain JSON of the arrow value), by the column's type; "" when equal.
func compareStat(t schema.DataType, ours, theirs any) string {
	o, th := fmt.Sprint(ours), fmt.Sprint(theirs)
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case "timestamp", "timestamp_ntz":
			ts, err := time.Parse(time.RFC3339Nano, o)
			if err != nil && t == "timestamp_ntz" {
				ts, err = time.Parse("2006-01-02T15:04:05.999999", o)
			}
			if err != nil {
				return "our value " + o + ": " + err.Error()
			}
			if th != strconv.FormatInt(ts.UnixMicro(), 10) {
				return fmt.Sprintf("delta-rs %s µs, lakesink %s (%d µs)", th, o, ts.UnixMicro())
			}
			return ""
		case "double", "float":
			// Our stats hold the shortest text of the value (of a float32 for
			// float columns); delta-rs answers it widened to a double; NaN
			// is NaN whatever its spelling.
			bits := 64
			if t == "float" {
				bits = 32
			}
			a, err1 := strconv.ParseFloat(o, bits)
			b, err2 := strconv.ParseFloat(th, bits)
			if err1 != nil || err2 != nil {
				return fmt.Sprintf("delta-rs %s, lakesink %s", th, o)
			}
			if bits == 32 {
				a, b = float64(float32(a)), float64(float32(b))
			}
			if a != b && !(math.IsNaN(a) && math.IsNaN(b)) {
				return fmt.Sprintf("delta-rs %s, lakesink %s", th, o)
			}
			return ""
		}
	case schema.DecimalType:
		a, ok1 := new(big.Rat).SetString(o)
		b, ok2 := new(big.Rat).SetString(th)
		if !ok1 || !ok2 || a.Cmp(b) != 0 {
			return fmt.Sprintf("delta-rs %s, lakesink %s", th, o)
		}
		return ""
	}
	if o != th {
		return fmt.Sprintf("delta-rs %s, lakesink %s", th, o)
	}
	return ""
}

// localURL is the path of dir as lakesink and the engines name it.
func localURL(t *testing.T, dir string) string {
	t.Helper()
	abs, err := filepath.Abs(dir)
	if err != nil {
		t.Fatal(err)
	}
	return abs
}
