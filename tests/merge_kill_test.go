package tests

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/lakesink/lakesink/reader"
)

// TestKillDashNineMergeIsExactlyOnce streams Debezium change events (10,000
// changes over 100 files, in the full run: creates, updates that may move a
// key to another partition, deletes, of 1,000 keys) into a table
// partitioned by region with `ingest --output-mode update --cdc-format
// debezium`, one file per batch, SIGKILLs the process at random moments and
// restarts it, and checks that the final table equals the model: every
// event applied in order, none lost, none applied twice (one commit per
// batch: a batch applied again can leave the same rows), no deleted key
// back. The kills go on until both recovery paths were seen (a rerun
// committed, a rerun skipped as its commit had landed); a run that drains
// the source before its kill gets 10 more files of changes, so the kills do
// not depend on the machine's speed. In `make test` it is smaller (30
// files, 5 kills); LAKESINK_MERGE_KILL_FULL=1, or LAKESINK_KILL_TRIALS as
// `make soak` sets it, runs the full 100 files and 20 kills.
func TestKillDashNineMergeIsExactlyOnce(t *testing.T) {
	files, perFile, minKills := 30, 100, 5
	if os.Getenv("LAKESINK_MERGE_KILL_FULL") != "" || os.Getenv("LAKESINK_KILL_TRIALS") != "" {
		files, minKills = 100, 20
	}
	dir := t.TempDir()
	src := filepath.Join(dir, "source")
	if err := os.MkdirAll(src, 0o755); err != nil {
		t.Fatal(err)
	}
	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))
	type row struct {
		ID     int64  `json:"id"`
		Region string `json:"region"`
		V      int64  `json:"v"`
	}
	model := map[int64]row{}
	regions := []string{"eu", "us", "ap", "sa"}
	ts := int64(0)
	write := func(from, to int) {
		for f := from; f < to; f++ {
			var b strings.Builder
			for range perFile {
				id := rng.Int63n(1000)
				ts++
				ev := map[string]any{"ts_ms": ts, "source": map[string]any{"db": "shop", "lsn": ts}}
				old, exists := model[id]
				switch {
				case exists && rng.Intn(4) == 0:
					ev["op"], ev["before"], ev["after"] = "d", old, nil
					delete(model, id)
				default:
					nr := row{ID: id, Region: regions[rng.Intn(len(regions))], V: ts}
					if exists {
						ev["op"], ev["before"], ev["after"] = "u", old, nr
					} else {
						ev["op"], ev["before"], ev["after"] = "c", nil, nr
					}
					model[id] = nr
				}
				line, err := json.Marshal(ev)
				if err != nil {
					t.Fatal(err)
				}
				b.Write(line)
				b.WriteByte('\n')
			}
			if err := os.WriteFile(filepath.Join(src, fmt.Sprintf("changes-%04d.json", f)), []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	write(0, files)
	schema := filepath.Join(dir, "schema.json")
	if err := os.WriteFile(schema, []byte(`{"type":"struct","fields":[`+
		`{"name":"id","type":"long","nullable":false,"metadata":{}},`+
		`{"name":"region","type":"string","nullable":true,"metadata":{}},`+
		`{"name":"v","type":"long","nullable":true,"metadata":{}}]}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(dir, "table")
	args := []string{"ingest", "--json", "--source", src, "--format", "json", "--schema", schema,
		"--checkpoint", filepath.Join(dir, "checkpoint"), "--table", out, "--partition-by", "region",
		"--output-mode", "update", "--merge-key", "id", "--cdc-format", "debezium",
		"--trigger", "available-now", "--max-files-per-trigger", "1"}
	// A run that drains the source before its kill gets 10 more files of
	// changes, the model going on with them.
	more := func() {
		write(files, files+10)
		files += 10
	}
	kills, counts := killLoop(t, args, 300*time.Millisecond, rng, minKills, bothRecoveries, more)
	counts.add(ingestToEnd(t, args))
	t.Logf("%d kills, %d files, %d batches reported, %d reruns committed, %d reruns skipped (commit had landed)",
		kills, files, counts.batches, counts.rerunCommitted, counts.rerunSkipped)

	var want []string
	for _, r := range model {
		want = append(want, fmt.Sprintf("%d|%s|%d", r.ID, r.Region, r.V))
	}
	slices.Sort(want)
	ctx := context.Background()
	snap, err := reader.Open(ctx, out)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	var got []string
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"id", "region", "v"}}) {
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, fmt.Sprintf("%v|%v|%v", rec.Values[0], rec.Values[1], rec.Values[2]))
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("table (%d rows) differs from the model (%d rows); first table rows %v, model %v", len(got), len(want), head(got), head(want))
	}
	if v := snap.Version(); v > int64(files)+1 {
		t.Fatalf("table version %d: more than one commit per batch (%d batches + create)", v, files)
	}
	if kills < minKills {
		t.Fatalf("only %d kills, want %d", kills, minKills)
	}
	if !bothRecoveries(counts) {
		t.Fatalf("recovery paths not both exercised: %d reruns committed, %d reruns skipped", counts.rerunCommitted, counts.rerunSkipped)
	}
}
