package tests

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/lakesink/lakesink/reader"
	"github.com/lakesink/lakesink/stream/kafka"
	"github.com/lakesink/lakesink/table"
)

// groupRun is a group kill -9 scenario.
type groupRun struct {
	parts    int32
	total    int // records produced while the workers run
	workers  int // at the start
	kills    int // SIGKILLs of random workers, each restarted
	addDrop  bool
	maxDelay string // --trigger interval
	// reapKilled: a killed worker's group member is removed a session
	// timeout after the kill if the broker kept it (killedMemberReaper:
	// kfake keeps a member killed in its first join).
	reapKilled bool
}

// groupSession is the workers' session.timeout.ms.
const groupSession = 6 * time.Second

// TestGroupKillDashNine is the small consumer-group scenario of `make
// test` on kfake: 2 workers in one group on a 4-partition topic, 6,000
// records produced while they run, 6 SIGKILLs with restarts.
func TestGroupKillDashNine(t *testing.T) {
	t.Parallel() // mostly waiting on processes and timers: overlaps the CPU-bound tests
	groupKillTest(t, kfakeCluster, groupRun{parts: 4, total: 6000, workers: 2, kills: 6, maxDelay: "200ms", reapKilled: true})
}

// TestGroupKillDashNineBroker is the full scenario against the real
// broker: 3 worker processes in one group on a 6-partition topic, 60,000
// records produced while they run, 30 SIGKILLs of random workers with
// restarts, one worker added and one removed mid-run. At the end every
// record is in the table exactly once by (topic, partition, offset), and
// each partition's txn version is its last offset.
func TestGroupKillDashNineBroker(t *testing.T) {
	groupKillTest(t, brokerCluster, groupRun{parts: 6, total: 60000, workers: 3, kills: envInt("LAKESINK_GROUP_KILLS", 30), addDrop: true, maxDelay: "300ms"})
}

// worker is one `lakesink ingest --kafka-group` process.
type worker struct {
	id     string // its Kafka client.id, when the test set one
	start  time.Time
	cmd    *exec.Cmd
	stderr *bytes.Buffer
	done   chan struct{} // closed when the process exited
	err    error         // its exit error, once done
}

func startWorker(t testing.TB, args []string) *worker {
	t.Helper()
	w := &worker{start: time.Now(), stderr: &bytes.Buffer{}, done: make(chan struct{})}
	w.cmd = exec.Command(lakesinkBin, args...)
	w.cmd.Stderr = w.stderr
	if err := w.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		w.err = w.cmd.Wait()
		close(w.done)
	}()
	return w
}

// stop ends the worker with sig and waits for it; on a worker that has
// exited it returns its exit error. A SIGTERM waits until the worker ran
// for 3 s: a process signalled before main installed its handler dies of
// the signal.
func (w *worker) stop(sig syscall.Signal) error {
	select {
	case <-w.done:
		return w.err
	default:
	}
	if sig != syscall.SIGKILL {
		time.Sleep(time.Until(w.start.Add(3 * time.Second)))
	}
	_ = w.cmd.Process.Signal(sig)
	select {
	case <-w.done:
		return w.err
	case <-time.After(2 * time.Minute):
		_ = w.cmd.Process.Kill()
		return fmt.Errorf("worker did not stop after %v", sig)
	}
}

func groupKillTest(t *testing.T, cluster kafkaCluster, cfg groupRun) {
	topic := topicFor(t)
	addrs := cluster(t, topic, cfg.parts)
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	group := "g-" + topic
	args := []string{"ingest", "--json", "--format", "kafka", "--kafka-bootstrap", addrs[0], "--kafka-topic", topic,
		"--kafka-group", group, "--starting-offsets", "earliest", "--table", out, "--partition-by", "partition",
		"--trigger", "interval=" + cfg.maxDelay, "--max-offsets-per-trigger", "3000",
		"--kafka-option", "session.timeout.ms=" + strconv.Itoa(int(groupSession.Milliseconds())) + ",heartbeat.interval.ms=500,max.poll.interval.ms=20000," +
			// franz-go waits for a JoinGroup answer for the rebalance
			// timeout (max.poll.interval.ms) plus this overhead, then
			// joins again. kfake restarts its rebalance deadline on every
			// join while the group prepares a rebalance (Kafka's
			// coordinator does not: GroupCoordinator.maybePrepareRebalance
			// only prepares from a state that canRebalance), so with the
			// default 10 s two workers whose joins were 10-20 s apart
			// re-joined before the deadline, each restarting it for the
			// other, and the group never rebalanced after the kills
			// (the stall seen on main 2 times in 8 runs: every JoinGroup
			// timed out, 15 s apart). With an overhead of at least the
			// rebalance timeout no worker joins again before the deadline.
			"request.timeout.ms=20000"}

	seed := time.Now().UnixNano()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewSource(seed))

	// Produce while the workers run: record i to partition i%parts, so it
	// lands at offset i/parts.
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// Spread the records over the time the kills take (about 0.9 s per
	// kill), so that kills land while batches are being built and
	// committed, not after the topic was drained.
	const chunk = 250
	pace := time.Duration(cfg.kills) * 900 * time.Millisecond / time.Duration(cfg.total/chunk)
	prng := rand.New(rand.NewSource(seed + 1))
	prodErr := make(chan error, 1)
	go func() {
		cl, err := kgo.NewClient(kgo.SeedBrokers(addrs...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
		if err != nil {
			prodErr <- err
			return
		}
		defer cl.Close()
		for from := 0; from < cfg.total; from += chunk {
			var recs []*kgo.Record
			for i := from; i < min(from+chunk, cfg.total); i++ {
				recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(i % int(cfg.parts)), Key: []byte(strconv.Itoa(i)), Value: []byte("v" + strconv.Itoa(i))})
			}
			if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
				prodErr <- err
				return
			}
			select {
			case <-ctx.Done():
				prodErr <- ctx.Err()
				return
			case <-time.After(pace/2 + time.Duration(prng.Int63n(int64(pace)))):
			}
		}
		prodErr <- nil
	}()

	var reaper *killedMemberReaper
	var reaping sync.WaitGroup
	if cfg.reapKilled {
		reaper = newKilledMemberReaper(t, addrs, group, groupSession)
		rctx, stopReaping := context.WithCancel(ctx)
		reaping.Add(1)
		go func() {
			defer reaping.Done()
			reaper.run(rctx)
		}()
		defer func() {
			stopReaping()
			reaping.Wait()
			reaper.mu.Lock()
			t.Logf("members of killed workers removed a session timeout after the kill: %d", len(reaper.reaped))
			reaper.mu.Unlock()
		}()
	}
	var mu sync.Mutex
	var workers []*worker
	var logs bytes.Buffer
	started := 0
	// Each worker has its own client.id: DescribeGroups names each
	// member's, so the reaper and a failure's group listing tell the
	// workers apart.
	start := func() *worker {
		started++
		id := "w" + strconv.Itoa(started)
		w := startWorker(t, append(slices.Clip(args), "--kafka-option", "client.id="+id))
		w.id = id
		return w
	}
	defer func() {
		mu.Lock()
		defer mu.Unlock()
		if t.Failed() {
			// Before the kills: who holds which partitions at the failure.
			t.Logf("%s", groupMembersString(context.Background(), addrs, group))
		}
		for _, w := range workers {
			_ = w.stop(syscall.SIGKILL)
		}
		if t.Failed() {
			t.Logf("output of the stopped and killed workers (tail):\n%s", tailString(logs.String(), 4000))
			// The workers still running at the failure are the ones a
			// stall is in: each one's own output.
			for i, w := range workers {
				t.Logf("live worker %d output (tail):\n%s", i, tailString(w.stderr.String(), 3000))
			}
		}
	}()
	for range cfg.workers {
		workers = append(workers, start())
	}
	kills := 0
	for kills < cfg.kills {
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
		mu.Lock()
		i := rng.Intn(len(workers))
		w := workers[i]
		_ = w.stop(syscall.SIGKILL)
		if reaper != nil {
			reaper.markKilled(w.id)
		}
		logs.WriteString(w.stderr.String())
		workers[i] = start()
		kills++
		if cfg.addDrop && kills == cfg.kills/3 {
			workers = append(workers, start())
			t.Logf("kill %d: added a worker (%d now)", kills, len(workers))
		}
		if cfg.addDrop && kills == 2*cfg.kills/3 {
			last := workers[len(workers)-1]
			workers = workers[:len(workers)-1]
			if err := last.stop(syscall.SIGTERM); err != nil {
				t.Errorf("removed worker: %v\n%s", err, last.stderr.String())
			}
			logs.WriteString(last.stderr.String())
			t.Logf("kill %d: removed a worker (%d now)", kills, len(workers))
		}
		mu.Unlock()
	}
	if err := <-prodErr; err != nil {
		t.Fatalf("produce: %v", err)
	}
	t.Logf("%d kills done; all %d records produced", kills, cfg.total)

	// Wait until every partition's txn is its last offset.
	last := int64(cfg.total/int(cfg.parts)) - 1
	deadline := time.Now().Add(5 * time.Minute)
	for {
		txns := groupTxns(t, out, group, topic, cfg.parts)
		doneParts := 0
		for _, v := range txns {
			if v == last {
				doneParts++
			}
		}
		if doneParts == int(cfg.parts) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("txn versions %v after 5 minutes, want %d for each of %d partitions", txns, last, cfg.parts)
		}
		time.Sleep(500 * time.Millisecond)
	}
	mu.Lock()
	for _, w := range workers {
		if err := w.stop(syscall.SIGTERM); err != nil {
			t.Errorf("worker stopped by SIGTERM: %v\n%s", err, w.stderr.String())
		}
		logs.WriteString(w.stderr.String())
	}
	workers = nil
	mu.Unlock()
	checkGroupTable(t, out, topic, cfg.total, int(cfg.parts))
	if tb, err := table.Open(context.Background(), out); err == nil {
		if hist, err := tb.History(context.Background(), 0); err == nil {
			t.Logf("%d records in %d commits", cfg.total, len(hist))
		}
		tb.Close()
	}
	for tp, v := range groupTxns(t, out, group, topic, cfg.parts) {
		if v != last {
			t.Fatalf("txn of %s = %d, want the last offset %d", tp, v, last)
		}
	}
}

// groupTxns returns the table's txn version of each partition (-1: none).
func groupTxns(t testing.TB, dir, group, topic string, parts int32) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	if _, err := os.Stat(filepath.Join(dir, "_delta_log")); err != nil {
		return out
	}
	ctx := context.Background()
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	snap, err := tb.Snapshot(ctx)
	if err != nil {
		return out
	}
	for p := range parts {
		app := kafka.AppID(group, kafka.TP{Topic: topic, Partition: p})
		v, ok := snap.TxnVersion(app)
		if !ok {
			v = -1
		}
		out[app] = v
	}
	return out
}

// checkGroupTable fails unless the table holds record i (key i, value
// "v<i>") exactly once at partition i%parts, offset i/parts, for every
// i < total.
func checkGroupTable(t *testing.T, dir, topic string, total, parts int) {
	t.Helper()
	ctx := context.Background()
	snap, err := reader.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	seen := make([]bool, total)
	n := 0
	for rec, err := range snap.Rows(ctx, reader.ReadOptions{Columns: []string{"topic", "partition", "offset", "key", "value"}}) {
		if err != nil {
			t.Fatal(err)
		}
		n++
		tp, _ := rec.Values[0].(string)
		p, _ := rec.Values[1].(int32)
		off, _ := rec.Values[2].(int64)
		key, _ := rec.Values[3].([]byte)
		val, _ := rec.Values[4].([]byte)
		i, err := strconv.Atoi(string(key))
		if tp != topic || err != nil || i < 0 || i >= total || int(p) != i%parts || off != int64(i/parts) || string(val) != "v"+string(key) {
			t.Fatalf("row %s-%d offset %d key %q value %q does not match the produced record", tp, p, off, key, val)
		}
		if seen[i] {
			t.Fatalf("%s-%d offset %d is in the table twice", tp, p, off)
		}
		seen[i] = true
	}
	if n != total {
		t.Fatalf("table holds %d rows, want %d (each record once)", n, total)
	}
}

func tailString(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}
