package engines

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"
)

// The one engine server of this test package and what TestMain found.
var (
	srv *engineServer
	// skipReason is why the engine tests cannot run ("" when they can).
	skipReason string
	// lakesinkBin is the CLI built for the tests.
	lakesinkBin string
	// versions of the engines, for the results table.
	versions engineVersions
	results  = &resultLog{}
)

type engineVersions struct {
	Spark     string `json:"spark"`
	Delta     string `json:"delta"`
	PySpark   string `json:"pyspark"`
	DeltaLake string `json:"deltalake"`
}

func TestMain(m *testing.M) {
	os.Exit(runMain(m))
}

func runMain(m *testing.M) int {
	require := os.Getenv("LAKESINK_REQUIRE_ENGINES") == "1"
	if os.Getenv("LAKESINK_ENGINES") != "1" && !require {
		skipReason = "engine tests (Spark + Delta, delta-rs) run only with LAKESINK_ENGINES=1: use `make interop`"
		fmt.Println("engines: skipped: " + skipReason)
		code := m.Run()
		if path := os.Getenv("LAKESINK_CORPUS_REPORT"); path != "" && os.Getenv("LAKESINK_CORPUS_ANSWERS") != "" {
			// A saved corpus was checked without the engines.
			if err := writeCorpusReport(path); err != nil {
				fmt.Fprintln(os.Stderr, "engines: write corpus report:", err)
				return 1
			}
		}
		return code
	}
	tmp, err := os.MkdirTemp("", "lakesink-engines-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(tmp)
	if reason := setup(tmp); reason != "" {
		skipReason = reason
		if require {
			fmt.Fprintln(os.Stderr, "engines: LAKESINK_REQUIRE_ENGINES=1 and "+reason)
			return 1
		}
		fmt.Println("engines: skipped: " + reason)
		return m.Run()
	}
	code := m.Run()
	if err := srv.close(); err != nil {
		fmt.Fprintln(os.Stderr, "engines: stop engine server:", err)
	}
	if path := os.Getenv("LAKESINK_INTEROP_REPORT"); path != "" {
		if err := results.writeReport(path); err != nil {
			fmt.Fprintln(os.Stderr, "engines: write report:", err)
			return 1
		}
	}
	if path := os.Getenv("LAKESINK_CORPUS_REPORT"); path != "" {
		if err := writeCorpusReport(path); err != nil {
			fmt.Fprintln(os.Stderr, "engines: write corpus report:", err)
			return 1
		}
	}
	return code
}

// setup finds the engines, builds the CLI and starts the engine server; it
// returns why the tests cannot run, or "".
func setup(tmp string) string {
	root, err := repoRoot()
	if err != nil {
		return err.Error()
	}
	py, jars := os.Getenv("LAKESINK_ENGINES_PYTHON"), os.Getenv("LAKESINK_DELTA_JARS")
	if py == "" || jars == "" {
		out, err := exec.Command(filepath.Join(root, "scripts", "install-engines.sh"), "--env").Output()
		if err != nil {
			return "engines not installed (Spark + Delta, delta-rs): run scripts/install-engines.sh or `make interop` (" + exitText(err) + ")"
		}
		for _, line := range strings.Split(string(out), "\n") {
			k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
			if !ok {
				continue
			}
			switch k {
			case "LAKESINK_ENGINES_PYTHON":
				py = v
			case "LAKESINK_DELTA_JARS":
				jars = v
			}
		}
	}
	if _, err := os.Stat(py); err != nil {
		return "engine Python (pyspark, delta-spark, deltalake) not found at LAKESINK_ENGINES_PYTHON=" + py
	}
	for _, j := range strings.Split(jars, ",") {
		if _, err := os.Stat(j); err != nil {
			return "Delta jar for Spark not found (LAKESINK_DELTA_JARS): " + j
		}
	}
	if _, err := exec.LookPath("java"); err != nil {
		return "java not found on PATH: Spark needs Java 17"
	}
	lakesinkBin = filepath.Join(tmp, "lakesink")
	if runtime.GOOS == "windows" {
		lakesinkBin += ".exe"
	}
	build := exec.Command("go", "build", "-o", lakesinkBin, "./cmd/lakesink")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		return "build lakesink: " + string(out)
	}
	srv, err = startServer(py, jars, filepath.Join("py", "engine_server.py"), tmp)
	if err != nil {
		return err.Error()
	}
	var rs engineVersions
	if err := srv.call(map[string]any{"op": "rs_version"}, &rs); err != nil {
		return "delta-rs (deltalake) does not load: " + err.Error() + srv.logTail()
	}
	if err := srv.call(map[string]any{"op": "spark_version"}, &versions); err != nil {
		return "Spark with Delta does not start: " + err.Error() + srv.logTail()
	}
	versions.DeltaLake = rs.DeltaLake
	fmt.Printf("engines: Spark %s (pyspark %s) with Delta %s, delta-rs (deltalake) %s\n",
		versions.Spark, versions.PySpark, versions.Delta, versions.DeltaLake)
	return ""
}

func exitText(err error) string {
	var ee *exec.ExitError
	if errors.As(err, &ee) && len(ee.Stderr) > 0 {
		return strings.TrimSpace(string(ee.Stderr))
	}
	return err.Error()
}

// repoRoot is the lakesink repository root (two levels up from this package).
func repoRoot() (string, error) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(root, "scripts", "install-engines.sh")); err != nil {
		return "", fmt.Errorf("repo root not found from the package directory: %w", err)
	}
	return root, nil
}

// needEngines skips (or, under LAKESINK_REQUIRE_ENGINES=1, TestMain already
// failed) when the engines are not there, and records the test's outcome for
// the results table under the given engine and case names.
func needEngines(t *testing.T, engine, kase string) {
	t.Helper()
	if skipReason != "" {
		t.Skip(skipReason)
	}
	t.Cleanup(func() {
		r := "pass"
		if t.Failed() {
			r = "FAIL"
		} else if t.Skipped() {
			r = "skipped"
		}
		results.add(engine, kase, t.Name(), r)
	})
}

// engineServer is py/engine_server.py: one request line in, one answer line out.
type engineServer struct {
	mu      sync.Mutex
	cmd     *exec.Cmd
	in      io.WriteCloser
	out     *bufio.Reader
	logPath string
}

func startServer(py, jars, script, tmp string) (*engineServer, error) {
	logPath := filepath.Join(tmp, "engine-server.log")
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(py, script)
	cmd.Env = append(os.Environ(),
		"LAKESINK_DELTA_JARS="+jars,
		"LAKESINK_SPARK_WAREHOUSE="+filepath.Join(tmp, "spark-warehouse"),
		"PYSPARK_PYTHON="+py,
		"TZ=UTC",
		"PYTHONUNBUFFERED=1",
	)
	cmd.Dir, _ = os.Getwd()
	cmd.Stderr = logf
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start engine server %s: %w", script, err)
	}
	go func() { _ = cmd.Wait(); logf.Close() }()
	return &engineServer{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), logPath: logPath}, nil
}

// call sends one request and decodes the answer's result into res (may be nil).
func (s *engineServer) call(req map[string]any, res any) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	line, err := json.Marshal(req)
	if err != nil {
		return err
	}
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		return fmt.Errorf("engine server %s: %w", req["op"], err)
	}
	ans, err := s.out.ReadBytes('\n')
	if err != nil {
		return fmt.Errorf("engine server %s: no answer: %w", req["op"], err)
	}
	var a struct {
		OK     bool            `json:"ok"`
		Result json.RawMessage `json:"result"`
		Error  string          `json:"error"`
	}
	if err := json.Unmarshal(ans, &a); err != nil {
		return fmt.Errorf("engine server %s: bad answer %q: %w", req["op"], ans, err)
	}
	if !a.OK {
		return fmt.Errorf("%s: %s", req["op"], a.Error)
	}
	if res == nil {
		return nil
	}
	d := json.NewDecoder(bytes.NewReader(a.Result))
	d.UseNumber()
	return d.Decode(res)
}

// must is call for tests: a failed request fails the test with the log's tail.
func (s *engineServer) must(t *testing.T, req map[string]any, res any) {
	t.Helper()
	if err := s.call(req, res); err != nil {
		t.Fatalf("%v%s", err, s.logTail())
	}
}

// logTail is the end of the server's stderr (Spark's and Python's errors).
func (s *engineServer) logTail() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return ""
	}
	if len(b) > 6000 {
		b = b[len(b)-6000:]
	}
	return "\n--- engine server log (tail) ---\n" + string(b)
}

func (s *engineServer) close() error {
	done := make(chan error, 1)
	go func() { done <- s.call(map[string]any{"op": "quit"}, nil) }()
	select {
	case err := <-done:
		s.in.Close()
		return err
	case <-time.After(60 * time.Second):
		return s.cmd.Process.Kill()
	}
}

// resultLog collects each case's outcome for docs/interop.md.
type resultLog struct {
	mu   sync.Mutex
	rows []resultRow
}

type resultRow struct{ engine, kase, test, result string }

func (r *resultLog) add(engine, kase, test, result string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.rows = append(r.rows, resultRow{engine, kase, test, result})
}

const (
	reportBegin = "<!-- results:begin (written by make interop) -->"
	reportEnd   = "<!-- results:end -->"
)

// writeReport replaces the results table of the markdown file at path.
func (r *resultLog) writeReport(path string) error {
	r.mu.Lock()
	rows := append([]resultRow(nil), r.rows...)
	r.mu.Unlock()
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].test < rows[j].test })
	var b strings.Builder
	fmt.Fprintf(&b, "%s\n\nEngines: Spark %s (pyspark %s) with Delta Lake %s; delta-rs (deltalake) %s. Run of %s.\n\n",
		reportBegin, versions.Spark, versions.PySpark, versions.Delta, versions.DeltaLake, time.Now().UTC().Format("2006-01-02"))
	b.WriteString("| engine | case | test | result |\n|---|---|---|---|\n")
	for _, row := range rows {
		fmt.Fprintf(&b, "| %s | %s | `%s` | %s |\n", row.engine, row.kase, row.test, row.result)
	}
	b.WriteString("\n" + reportEnd)
	old, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	s := string(old)
	i, j := strings.Index(s, reportBegin), strings.Index(s, reportEnd)
	if i < 0 || j < i {
		return fmt.Errorf("%s has no %q ... %q markers", path, reportBegin, reportEnd)
	}
	return os.WriteFile(path, []byte(s[:i]+b.String()+s[j+len(reportEnd):]), 0o644)
}
