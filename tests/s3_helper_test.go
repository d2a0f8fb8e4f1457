package tests

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
	"github.com/lakesink/lakesink/storage"
)

// The multi-writer tests re-execute this test binary as writer processes: an
// init function (it runs before TestMain, so the child does not rebuild the
// CLI) notices the environment variable and runs one Delta sink.
const writerEnv = "LAKESINK_S3_WRITER"

func init() {
	if os.Getenv(writerEnv) == "" {
		return
	}
	if err := runWriter(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "writer:", err)
		os.Exit(1)
	}
	os.Exit(0)
}

// writerSpec configures one writer process.
type writerSpec struct {
	Table     string `json:"table"`
	QueryID   string `json:"queryId"`
	Batches   int    `json:"batches"`
	Rows      int    `json:"rows"`
	StartWait string `json:"startWait"` // a file to wait for, so that writers start together
}

// writerResult is one line a writer prints per batch.
type writerResult struct {
	BatchID int64 `json:"batchId"`
	Version int64 `json:"version"`
	Skipped bool  `json:"skipped"`
	Rows    int64 `json:"rows"`
}

var writerSchema = &schema.StructType{Fields: []schema.StructField{
	{Name: "query", Type: schema.TypeString, Nullable: false},
	{Name: "batch", Type: schema.TypeLong, Nullable: false},
	{Name: "seq", Type: schema.TypeLong, Nullable: false},
	{Name: "payload", Type: schema.TypeString, Nullable: true},
}}

// writerBatch is the batch a writer of queryID sends as batchID: the same
// rows every time (a rerun of a micro-batch has the same input).
func writerBatch(queryID string, batchID int64, rows int) *schema.Batch {
	b := &schema.Batch{Schema: writerSchema}
	for i := range rows {
		b.Rows = append(b.Rows, []any{queryID, batchID, int64(i), fmt.Sprintf("%s/%d/%d", queryID, batchID, i)})
	}
	return b
}

func writerKey(query string, batch, seq int64) string {
	return fmt.Sprintf("%s|%d|%d", query, batch, seq)
}

func runWriter(ctx context.Context) error {
	var spec writerSpec
	if err := json.Unmarshal([]byte(os.Getenv(writerEnv)), &spec); err != nil {
		return fmt.Errorf("decode %s: %w", writerEnv, err)
	}
	if spec.StartWait != "" {
		for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(5 * time.Millisecond) {
			if _, err := os.Stat(spec.StartWait); err == nil {
				break
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("start signal %s never came", spec.StartWait)
			}
		}
	}
	opts := sink.DefaultOptions()
	opts.QueryID = spec.QueryID
	d, err := sink.NewDelta(ctx, spec.Table, opts)
	if err != nil {
		return err
	}
	defer d.Close()
	enc := json.NewEncoder(os.Stdout)
	for b := range int64(spec.Batches) {
		res, err := d.AddBatch(ctx, b, writerBatch(spec.QueryID, b, spec.Rows))
		if err != nil {
			return err
		}
		if err := enc.Encode(writerResult{BatchID: b, Version: res.Version, Skipped: res.Skipped, Rows: res.NumRows}); err != nil {
			return err
		}
	}
	return nil
}

// startWriters starts one writer process per spec and returns a function
// that waits for all of them and returns each one's results.
func startWriters(t *testing.T, specs []writerSpec) func() [][]writerResult {
	t.Helper()
	type proc struct {
		cmd            *exec.Cmd
		stdout, stderr bytes.Buffer
	}
	procs := make([]*proc, len(specs))
	for i, spec := range specs {
		js, err := json.Marshal(spec)
		if err != nil {
			t.Fatal(err)
		}
		p := &proc{cmd: exec.Command(os.Args[0])}
		p.cmd.Env = append(os.Environ(), writerEnv+"="+string(js))
		p.cmd.Stdout, p.cmd.Stderr = &p.stdout, &p.stderr
		if err := p.cmd.Start(); err != nil {
			t.Fatal(err)
		}
		procs[i] = p
	}
	t.Cleanup(func() {
		for _, p := range procs {
			if p.cmd.ProcessState == nil {
				_ = p.cmd.Process.Kill()
				_ = p.cmd.Wait()
			}
		}
	})
	return func() [][]writerResult {
		t.Helper()
		out := make([][]writerResult, len(procs))
		var failed []string
		for i, p := range procs {
			if err := p.cmd.Wait(); err != nil {
				failed = append(failed, fmt.Sprintf("writer %d (%s): %v: %s", i, specs[i].QueryID, err, strings.TrimSpace(p.stderr.String())))
			}
			sc := bufio.NewScanner(&p.stdout)
			for sc.Scan() {
				var r writerResult
				if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
					t.Fatalf("writer %d printed %q: %v", i, sc.Text(), err)
				}
				out[i] = append(out[i], r)
			}
		}
		if len(failed) > 0 {
			t.Fatalf("%d writer processes failed:\n%s", len(failed), strings.Join(failed, "\n"))
		}
		return out
	}
}

// writerTableKeys reads every live row of the writer table at url:
// key -> count.
func writerTableKeys(t *testing.T, url string) map[string]int {
	t.Helper()
	ctx := t.Context()
	snap, err := reader.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	keys := map[string]int{}
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"query", "batch", "seq"}}) {
		if err != nil {
			t.Fatal(err)
		}
		q, _ := rec.Values[0].(string)
		b, _ := rec.Values[1].(int64)
		s, _ := rec.Values[2].(int64)
		keys[writerKey(q, b, s)]++
	}
	return keys
}

// logCommit is what the multi-writer tests read from each commit file.
type logCommit struct {
	version int64
	txns    []string // "appId@version"
}

// readCommits lists _delta_log of the table at url and decodes the txn
// actions of every commit file, in version order.
func readCommits(t *testing.T, url string) []logCommit {
	t.Helper()
	ctx := t.Context()
	st, err := storage.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var out []logCommit
	for fi, err := range st.List(ctx, "_delta_log/", "") {
		if err != nil {
			t.Fatal(err)
		}
		name := strings.TrimPrefix(fi.Path, "_delta_log/")
		if len(name) != 25 || !strings.HasSuffix(name, ".json") {
			continue // checkpoints, _last_checkpoint, ...
		}
		v, err := strconv.ParseInt(strings.TrimSuffix(name, ".json"), 10, 64)
		if err != nil {
			continue
		}
		data, err := st.Read(ctx, fi.Path)
		if err != nil {
			t.Fatal(err)
		}
		c := logCommit{version: v}
		for line := range bytes.SplitSeq(bytes.TrimSpace(data), []byte("\n")) {
			var a struct {
				Txn *struct {
					AppID   string `json:"appId"`
					Version int64  `json:"version"`
				} `json:"txn"`
			}
			if err := json.Unmarshal(line, &a); err != nil {
				t.Fatalf("%s: %v", fi.Path, err)
			}
			if a.Txn != nil {
				c.txns = append(c.txns, fmt.Sprintf("%s@%d", a.Txn.AppID, a.Txn.Version))
			}
		}
		out = append(out, c)
	}
	return out
}
