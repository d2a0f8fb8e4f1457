package engines

// Issue 17: the generated corpus. py/corpus.py writes each case with the
// engine itself (Spark + Delta, or delta-rs) into a temporary folder and
// answers the engine's own rows for the latest and earlier versions, DESCRIBE
// DETAIL and the protocol; here lakesink's CLI (`scan`, `describe --json`)
// and reader.Open must agree with every answer, or refuse with exit 4 naming
// a feature it is allowed to refuse.

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
)

// corpusCase is one case's answer from py/corpus.py.
type corpusCase struct {
	Case        string `json:"case"`
	Path        string `json:"path"`
	Description string `json:"description"`
	Engine      string `json:"engine"`
	Error       string `json:"error"`
	// LogFiles are the names under _delta_log/ (DIR/NAME in subfolders)
	// after the case was written; none for a table on S3.
	LogFiles []string `json:"logFiles"`
	Latest   int64    `json:"latest"`
	Versions []struct {
		Version int64            `json:"version"`
		Rows    []map[string]any `json:"rows"`
	} `json:"versions"`
	Detail struct {
		NumFiles         json.Number `json:"numFiles"`
		SizeInBytes      json.Number `json:"sizeInBytes"`
		PartitionColumns []string    `json:"partitionColumns"`
	} `json:"detail"`
	Protocol struct {
		MinReaderVersion int      `json:"minReaderVersion"`
		MinWriterVersion int      `json:"minWriterVersion"`
		ReaderFeatures   []string `json:"readerFeatures"`
		WriterFeatures   []string `json:"writerFeatures"`
	} `json:"protocol"`
}

// protocolReaderFeatures are the reader features PROTOCOL.md specifies at the
// pinned Delta version (4.4: "Valid Feature Names in Table Features"):
// lakesink must read tables with them. It may refuse, by name with exit 4,
// only a reader feature outside this list, and the catalog-managed tables
// that only their catalog may read (PROTOCOL.md "Catalog-managed tables").
var protocolReaderFeatures = []string{"columnMapping", "deletionVectors", "timestampNtz", "v2Checkpoint",
	"vacuumProtocolCheck", "typeWidening", "variantType", "variantShredding"}

func refusalAllowed(feature string) bool {
	if feature == "catalogManaged" || feature == "catalogOwned-preview" {
		return true
	}
	return !slices.Contains(protocolReaderFeatures, feature)
}

// corpusKnownGaps are cases lakesink does not read correctly yet (issue 17
// step 3), with what goes wrong. Such a case is reported as a known gap and
// does not fail the run; once it passes, the test fails until it is removed
// from here, so the list cannot go stale.
var corpusKnownGaps = map[string]string{}

// corpusLogNeeds are, per case, log files (patterns of their names under
// _delta_log/) the engine must have written for the case to test what it
// says: an engine that stops writing them (a conf renamed by a new version)
// fails the case rather than passing it vacuously.
var corpusLogNeeds = map[string][]string{
	// PROTOCOL.md "V2 Spec": a UUID-named top-level checkpoint, here
	// Parquet, and its sidecar files.
	"spark_v2_checkpoint_parquet": {`^[0-9]{20}\.checkpoint\.[0-9a-f-]{36}\.parquet$`, `^_sidecars/[0-9a-zA-Z.-]+\.parquet$`},
	"spark_v2_checkpoint":         {`^[0-9]{20}\.checkpoint\.[0-9a-f-]{36}\.json$`, `^_sidecars/[0-9a-zA-Z.-]+\.parquet$`},
	// PROTOCOL.md "Log Compaction Files": <x>.<y>.compacted.json.
	"spark_log_compaction": {`^00000000000000000001\.00000000000000000004\.compacted\.json$`,
		`^00000000000000000005\.00000000000000000008\.compacted\.json$`},
	"spark_multipart_checkpoint": {`^[0-9]{20}\.checkpoint\.0000000001\.[0-9]{10}\.parquet$`},
}

// corpusFeatureNeeds are, per case, the reader features the engine's
// protocol must name.
var corpusFeatureNeeds = map[string][]string{
	"spark_variant_shredding": {"variantShredding-preview"},
}

// corpusResults are the outcomes for reader/testdata/conformance.md.
var corpusResults = struct {
	mu   sync.Mutex
	rows []corpusResultRow
}{}

type corpusResultRow struct{ kase, engine, versions, result string }

func TestGeneratedCorpus(t *testing.T) {
	var cases []corpusCase
	if dir := os.Getenv("LAKESINK_CORPUS_ANSWERS"); dir != "" {
		// A corpus written earlier (py/corpus.py run by hand, one
		// CASE.answer.json per case next to the tables): checked without
		// starting the engines.
		cases = savedCorpus(t, dir)
	} else {
		needEngines(t, "both", "generated corpus")
		req := map[string]any{"op": "corpus", "root": t.TempDir()}
		if only := os.Getenv("LAKESINK_CORPUS_CASES"); only != "" {
			req["cases"] = strings.Split(only, ",")
		}
		srv.must(t, req, &cases)
	}
	if len(cases) == 0 {
		t.Fatal("py/corpus.py answered no case")
	}
	for _, c := range cases {
		t.Run(c.Case, func(t *testing.T) {
			engine := "Spark"
			if strings.HasPrefix(c.Case, "rs_") {
				engine = "delta-rs"
			}
			if os.Getenv("LAKESINK_CORPUS_ANSWERS") == "" {
				needEngines(t, engine, "generated: "+c.Case)
			}
			ck := &corpusCheck{c: c}
			ck.run()
			var vs []string
			for _, v := range c.Versions {
				vs = append(vs, strconv.FormatInt(v.Version, 10))
			}
			result := ck.result()
			gap, known := corpusKnownGaps[c.Case]
			switch {
			case len(ck.errs) == 0 && known:
				t.Errorf("%s passes now: remove it from corpusKnownGaps (%s)", c.Case, gap)
			case len(ck.errs) > 0 && known:
				result = "known gap: " + gap
				t.Logf("known gap (%s):\n  %s", gap, strings.Join(ck.errs, "\n  "))
			case len(ck.errs) > 0:
				t.Errorf("%s (%s):\n  %s", c.Case, c.Description, strings.Join(ck.errs, "\n  "))
			}
			corpusResults.mu.Lock()
			corpusResults.rows = append(corpusResults.rows, corpusResultRow{c.Case, c.Engine, strings.Join(vs, ", "), result})
			corpusResults.mu.Unlock()
		})
	}
}

// savedCorpus reads the CASE.answer.json files of dir and builds the CLI
// when TestMain did not (no engines).
func savedCorpus(t *testing.T, dir string) []corpusCase {
	t.Helper()
	if lakesinkBin == "" {
		root, err := repoRoot()
		if err != nil {
			t.Fatal(err)
		}
		lakesinkBin = filepath.Join(t.TempDir(), "lakesink")
		build := exec.Command("go", "build", "-o", lakesinkBin, "./cmd/lakesink")
		build.Dir = root
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build lakesink: %v\n%s", err, out)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.answer.json"))
	if err != nil {
		t.Fatal(err)
	}
	var out []corpusCase
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var cs []corpusCase
		d := json.NewDecoder(bytes.NewReader(b))
		d.UseNumber()
		if err := d.Decode(&cs); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, cs...)
	}
	return out
}

// corpusCheck collects every disagreement of one case.
type corpusCheck struct {
	c       corpusCase
	errs    []string
	refused string // the feature lakesink refused (allowed), or ""
}

func (k *corpusCheck) errorf(format string, args ...any) {
	k.errs = append(k.errs, fmt.Sprintf(format, args...))
}

func (k *corpusCheck) result() string {
	switch {
	case len(k.errs) > 0:
		first := k.errs[0]
		if i := strings.IndexByte(first, '\n'); i > 0 {
			first = first[:i]
		}
		if len(first) > 160 {
			first = first[:160] + "..."
		}
		return "FAIL: " + strings.ReplaceAll(first, "|", "\\|")
	case k.refused != "":
		return fmt.Sprintf("refused by name (exit 4): %s, a reader feature outside PROTOCOL.md", k.refused)
	}
	return "pass"
}

var (
	// The refusal in stderr, as text or (--json) inside a JSON string.
	refusedFeature = regexp.MustCompile(`requires \\?"([^"\\]+)\\?"`)
	plainNumber    = regexp.MustCompile(`^-?[0-9]+(\.[0-9]+)?$`)
)

func (k *corpusCheck) run() {
	c := k.c
	if c.Error != "" {
		k.errorf("the engine could not write the case: %s", c.Error)
		return
	}
	for _, need := range corpusLogNeeds[c.Case] {
		re := regexp.MustCompile(need)
		if !slices.ContainsFunc(c.LogFiles, re.MatchString) {
			k.errorf("the engine wrote no log file matching %s (the case is about it): %v", need, c.LogFiles)
		}
	}
	for _, f := range corpusFeatureNeeds[c.Case] {
		if !slices.Contains(c.Protocol.ReaderFeatures, f) {
			k.errorf("the engine's protocol has no reader feature %q (the case is about it): %v", f, c.Protocol.ReaderFeatures)
		}
	}
	for _, v := range c.Versions {
		what := fmt.Sprintf("version %d", v.Version)
		if sch, err := schemaAt(c.Path, v.Version); err == nil {
			variantsAsCanonicalJSON(v.Rows, sch)
		}
		want := engineRows(v.Rows)
		scanned, refused, err := scanRows(c.Path, v.Version)
		switch {
		case err != nil:
			k.errorf("%s: lakesink scan: %v", what, err)
		case refused != "":
			if !refusalAllowed(refused) {
				k.errorf("%s: lakesink scan refuses %q, a reader feature lakesink must read (PROTOCOL.md)", what, refused)
			}
			k.refused = refused
			continue
		default:
			if d := rowDiff(want, scanned); d != "" {
				k.errorf("%s: lakesink scan vs %s: %s", what, c.Engine, d)
			}
		}
		got, err := readerRows(c.Path, v.Version)
		if err != nil {
			k.errorf("%s: reader.Open: %v", what, err)
			continue
		}
		if d := rowDiff(want, got); d != "" {
			k.errorf("%s: reader rows vs %s: %s", what, c.Engine, d)
		}
	}
	k.checkDescribe()
}

// checkDescribe: describe --json of the latest version agrees with the
// engine's DESCRIBE DETAIL and protocol.
func (k *corpusCheck) checkDescribe() {
	c := k.c
	out, code, stderr := runCLI("describe", "--json", c.Path)
	var d struct {
		Version                *int64   `json:"version"`
		LatestPublishedVersion *int64   `json:"latestPublishedVersion"`
		Readable               bool     `json:"readable"`
		UnreadableReason       string   `json:"unreadableReason"`
		NumFiles               *int64   `json:"numFiles"`
		SizeInBytes            *int64   `json:"sizeInBytes"`
		PartitionColumns       []string `json:"partitionColumns"`
		MinReaderVersion       int      `json:"minReaderVersion"`
		MinWriterVersion       int      `json:"minWriterVersion"`
		ReaderFeatures         []string `json:"readerFeatures"`
		WriterFeatures         []string `json:"writerFeatures"`
	}
	if err := json.Unmarshal([]byte(firstLine(out)), &d); err != nil {
		k.errorf("describe --json: exit %d, %v in %q: %s", code, err, out, stderr)
		return
	}
	switch {
	case k.refused != "":
		// A table lakesink may refuse is still described, with its
		// protocol and why its rows cannot be read, and exit 4; a
		// catalog-managed one with no version presented as its latest.
		if code != 4 || !strings.Contains(stderr, k.refused) || d.Readable ||
			!strings.Contains(d.UnreadableReason, strings.Replace(k.refused, "readerVersion ", "reader version ", 1)) {
			k.errorf("describe --json of a table whose rows lakesink refuses (%s): exit %d, readable %v, unreadableReason %q, stderr %s",
				k.refused, code, d.Readable, d.UnreadableReason, stderr)
		}
		if k.refused == "catalogManaged" || k.refused == "catalogOwned-preview" {
			if d.Version != nil || d.LatestPublishedVersion == nil {
				k.errorf("describe --json of a catalog-managed table: version %v, latestPublishedVersion %v; want null and the newest published commit",
					d.Version, d.LatestPublishedVersion)
			}
		}
	case code != 0 || !d.Readable || d.Version == nil || d.NumFiles == nil || d.SizeInBytes == nil:
		k.errorf("describe --json: exit %d, readable %v, unreadableReason %q: %s", code, d.Readable, d.UnreadableReason, stderr)
		return
	default:
		if *d.Version != c.Latest {
			k.errorf("describe: version %d, %s's latest %d", *d.Version, c.Engine, c.Latest)
		}
		if c.Detail.NumFiles.String() != strconv.FormatInt(*d.NumFiles, 10) {
			k.errorf("describe: numFiles %d, DESCRIBE DETAIL %s", *d.NumFiles, c.Detail.NumFiles)
		}
		if c.Detail.SizeInBytes.String() != strconv.FormatInt(*d.SizeInBytes, 10) {
			k.errorf("describe: sizeInBytes %d, DESCRIBE DETAIL %s", *d.SizeInBytes, c.Detail.SizeInBytes)
		}
	}
	if !slices.Equal(nonNilStrings(c.Detail.PartitionColumns), nonNilStrings(d.PartitionColumns)) {
		k.errorf("describe: partitionColumns %q, DESCRIBE DETAIL %q", d.PartitionColumns, c.Detail.PartitionColumns)
	}
	p := c.Protocol
	if p.MinReaderVersion != d.MinReaderVersion || p.MinWriterVersion != d.MinWriterVersion ||
		!sameSet(p.ReaderFeatures, d.ReaderFeatures) || !sameSet(p.WriterFeatures, d.WriterFeatures) {
		k.errorf("describe: protocol %d/%d reader %v writer %v, %s's %d/%d reader %v writer %v",
			d.MinReaderVersion, d.MinWriterVersion, d.ReaderFeatures, d.WriterFeatures,
			c.Engine, p.MinReaderVersion, p.MinWriterVersion, p.ReaderFeatures, p.WriterFeatures)
	}
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(s, "\n")
	return s
}

func nonNilStrings(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func sameSet(a, b []string) bool {
	a, b = slices.Clone(a), slices.Clone(b)
	sort.Strings(a)
	sort.Strings(b)
	return slices.Equal(nonNilStrings(a), nonNilStrings(b))
}

// runCLI runs bin/lakesink and returns stdout, the exit code and stderr.
func runCLI(args ...string) (string, int, string) {
	cmd := exec.Command(lakesinkBin, args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	code := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		code = ee.ExitCode()
	} else if err != nil {
		return "", -1, err.Error()
	}
	return stdout.String(), code, stderr.String()
}

// scanRows runs `lakesink scan --version v` and normalises its NDJSON rows
// with the schema of that version; refused is the feature of an exit-4
// refusal.
func scanRows(path string, version int64) (rows []string, refused string, err error) {
	out, code, stderr := runCLI("scan", "--json", "--version", strconv.FormatInt(version, 10), path)
	if code == 4 {
		if m := refusedFeature.FindStringSubmatch(stderr); m != nil {
			return nil, m[1], nil
		}
	}
	if code != 0 {
		return nil, "", fmt.Errorf("exit %d: %s", code, strings.TrimSpace(stderr))
	}
	sch, err := schemaAt(path, version)
	if err != nil {
		return nil, "", err
	}
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		if line == "" {
			continue
		}
		d := json.NewDecoder(strings.NewReader(line))
		d.UseNumber()
		var obj map[string]any
		if err := d.Decode(&obj); err != nil {
			return nil, "", fmt.Errorf("scan row %q: %w", line, err)
		}
		m := map[string]any{}
		for _, f := range sch.Fields {
			m[f.Name] = normScanValue(obj[f.Name], f.Type)
		}
		rows = append(rows, canon(m))
	}
	return rows, "", nil
}

// variantsAsCanonicalJSON rewrites the engine's to_json text of each
// top-level variant column in the canonical form of canonJSONText.
func variantsAsCanonicalJSON(rows []map[string]any, sch *schema.StructType) {
	for _, f := range sch.Fields {
		if f.Type != schema.TypeVariant {
			continue
		}
		for _, r := range rows {
			if s, ok := r[f.Name].(string); ok {
				r[f.Name] = canonJSONText(s)
			}
		}
	}
}

func schemaAt(path string, version int64) (*schema.StructType, error) {
	snap, err := reader.Open(context.Background(), path, reader.AtVersion(version))
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	return snap.Schema(), nil
}

// readerRows reads version v with reader.Open, normalised.
func readerRows(path string, version int64) ([]string, error) {
	ctx := context.Background()
	snap, err := reader.Open(ctx, path, reader.AtVersion(version))
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	b := &schema.Batch{Schema: snap.Schema()}
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{}) {
		if err != nil {
			return nil, err
		}
		b.Schema = rec.Schema
		b.Rows = append(b.Rows, rec.Values)
	}
	return batchRows(b), nil
}

// normScanValue is one value of `lakesink scan --json` (reader.JSONValue's
// forms, numbers as json.Number) of type t, normalised as engine_server.py's
// norm_value.
func normScanValue(v any, t schema.DataType) any {
	if v == nil {
		return nil
	}
	switch t := t.(type) {
	case schema.PrimitiveType:
		switch t {
		case schema.TypeBoolean, schema.TypeString:
			return v
		case schema.TypeByte, schema.TypeShort, schema.TypeInteger, schema.TypeLong:
			return fmt.Sprint(v)
		case schema.TypeFloat, schema.TypeDouble:
			switch x := v.(type) {
			case json.Number:
				f, err := strconv.ParseFloat(x.String(), 64)
				if err != nil {
					return "bad float " + x.String()
				}
				return normFloat(f)
			case string:
				f, err := strconv.ParseFloat(strings.Replace(x, "Infinity", "Inf", 1), 64)
				if err != nil {
					return "bad float " + x
				}
				return normFloat(f)
			}
		case schema.TypeBinary:
			if s, ok := v.(string); ok {
				b, err := base64.StdEncoding.DecodeString(s)
				if err != nil {
					return "bad base64 " + s
				}
				return "x:" + hex.EncodeToString(b)
			}
		case schema.TypeDate:
			if s, ok := v.(string); ok {
				d, err := time.Parse("2006-01-02", s)
				if err != nil {
					return "bad date " + s
				}
				return strconv.FormatInt(d.Unix()/86400, 10)
			}
		case schema.TypeTimestamp, schema.TypeTimestampNTZ:
			if s, ok := v.(string); ok {
				layout := time.RFC3339Nano
				if t == schema.TypeTimestampNTZ {
					layout = "2006-01-02T15:04:05.999999"
				}
				ts, err := time.Parse(layout, s)
				if err != nil {
					return "bad timestamp " + s
				}
				return strconv.FormatInt(ts.UnixMicro(), 10)
			}
		case schema.TypeVariant:
			return canonJSONText(v)
		}
	case schema.DecimalType:
		if s, ok := v.(string); ok {
			return s
		}
	case *schema.StructType:
		obj, ok := v.(map[string]any)
		if !ok {
			break
		}
		out := map[string]any{}
		for _, f := range t.Fields {
			out[f.Name] = normScanValue(obj[f.Name], f.Type)
		}
		return out
	case *schema.ArrayType:
		vals, ok := v.([]any)
		if !ok {
			break
		}
		out := make([]any, len(vals))
		for i, x := range vals {
			out[i] = normScanValue(x, t.ElementType)
		}
		return out
	case *schema.MapType:
		out := map[string]any{}
		put := func(k, x any) {
			nk := normScanValue(k, t.KeyType)
			ks, ok := nk.(string)
			if !ok {
				ks = canon(nk)
			}
			out[ks] = normScanValue(x, t.ValueType)
		}
		switch m := v.(type) {
		case map[string]any:
			for k, x := range m {
				put(k, x)
			}
			return out
		case []any:
			for _, e := range m {
				kv, _ := e.(map[string]any)
				put(kv["key"], kv["value"])
			}
			return out
		}
	}
	return fmt.Sprintf("unnormalisable scan value %T for %s", v, t.TypeName())
}

// canonJSONText is a variant's JSON text in one canonical form (keys
// sorted; integers and plain decimals exact, trailing fraction zeros
// dropped; numbers with an exponent as the shortest float64 text), so that
// Spark's to_json ("3.0E10") and lakesink's text ("3e+10") compare by value.
func canonJSONText(v any) any {
	s, ok := v.(string)
	if !ok {
		return fmt.Sprintf("variant scan value %T, want its JSON text", v)
	}
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	var x any
	if err := d.Decode(&x); err != nil {
		return "bad variant JSON " + s
	}
	return canon(canonNumbers(x))
}

func canonNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		t := x.String()
		if plainNumber.MatchString(t) {
			if strings.Contains(t, ".") {
				t = strings.TrimRight(strings.TrimRight(t, "0"), ".")
			}
			if t == "-0" {
				t = "0"
			}
			return json.Number(t)
		}
		f, err := strconv.ParseFloat(t, 64)
		if err != nil {
			return x
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
	case map[string]any:
		for k, e := range x {
			x[k] = canonNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = canonNumbers(e)
		}
	}
	return v
}

const (
	corpusBegin = "<!-- corpus:begin (written by make interop: interop/engines TestGeneratedCorpus) -->"
	corpusEnd   = "<!-- corpus:end -->"
)

// writeCorpusReport replaces (or appends) the generated-corpus section of
// the markdown file at path (reader/testdata/conformance.md).
func writeCorpusReport(path string) error {
	corpusResults.mu.Lock()
	rows := slices.Clone(corpusResults.rows)
	corpusResults.mu.Unlock()
	if len(rows) == 0 {
		return nil
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].kase < rows[j].kase })
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n## Generated corpus (tables the engines write, read back by lakesink)\n\n", corpusBegin)
	fmt.Fprintf(&b, "Written on each `make interop` run by `interop/engines/py/corpus.py` with the engines of "+
		"`scripts/install-engines.sh` (named per case), in a temporary folder. "+
		"For every answered version, `lakesink scan` and `reader.Open` must return exactly the engine's rows, and "+
		"`describe --json` must agree with DESCRIBE DETAIL (numFiles, sizeInBytes, partition columns) and the protocol. "+
		"Run of %s.\n\n", time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| case | engine | versions | result |\n|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", r.kase, r.engine, r.versions, r.result)
	}
	b.WriteString("\n" + corpusEnd + "\n")
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, "<!-- corpus:begin"), strings.Index(s, corpusEnd)
	if i < 0 || j < i {
		return os.WriteFile(path, []byte(strings.TrimRight(s, "\n")+"\n\n"+b.String()), 0o644)
	}
	rest := strings.TrimPrefix(s[j+len(corpusEnd):], "\n")
	return os.WriteFile(path, []byte(s[:i]+b.String()+rest), 0o644)
}
