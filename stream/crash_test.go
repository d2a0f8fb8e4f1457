package stream

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/lakesink/lakesink/internal/storage"
	"github.com/lakesink/lakesink/internal/storage/faultstore"
	"github.com/lakesink/lakesink/stream/source"
)

// localEnv is an input directory and a checkpoint directory on local disk.
type localEnv struct {
	in, cp storage.Store
	sink   *fakeSink
	files  int
}

func newLocalEnv(t *testing.T, files int) *localEnv {
	t.Helper()
	ctx := context.Background()
	dir := t.TempDir()
	inDir := filepath.Join(dir, "in")
	if err := os.MkdirAll(inDir, 0o755); err != nil {
		t.Fatal(err)
	}
	base := time.Unix(1700000000, 0)
	for i := 0; i < files; i++ {
		p := filepath.Join(inDir, fmt.Sprintf("f%03d.json", i))
		data := fmt.Sprintf("{\"file\":\"f%03d.json\",\"n\":1}\n{\"file\":\"f%03d.json\",\"n\":2}\n", i, i)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		mt := base.Add(time.Duration(i) * time.Second)
		if err := os.Chtimes(p, mt, mt); err != nil {
			t.Fatal(err)
		}
	}
	in, err := storage.Open(ctx, inDir)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := storage.Open(ctx, filepath.Join(dir, "chk"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { in.Close(); cp.Close() })
	return &localEnv{in: in, cp: cp, sink: newFakeSink(), files: files}
}

func (e *localEnv) options(t *testing.T, cp storage.Store) Options {
	t.Helper()
	src, err := source.NewFileSource(e.in, source.Options{Format: source.FormatJSON, Schema: schema})
	if err != nil {
		t.Fatal(err)
	}
	o := DefaultOptions()
	o.CheckpointStore, o.Source, o.Sink, o.MaxFilesPerTrigger = cp, src, e.sink, 2
	o.SinkKind, o.SinkURL = "fake", "mem://table"
	return o
}

func (e *localEnv) checkExactlyOnce(t *testing.T) {
	t.Helper()
	(&env{sink: e.sink, files: e.files}).checkExactlyOnce(t)
}

// TestCrashAtEveryCheckpointWrite kills the driver at its k-th checkpoint
// write (metadata, sources/0/N, offsets/N, commits/N) for k = 0, 1, 2, ...
// until a run completes, restarts it on the real store, and checks that the
// sink holds every row exactly once and that no batch is lost.
func TestCrashAtEveryCheckpointWrite(t *testing.T) {
	for k := 0; ; k++ {
		e := newLocalEnv(t, 5)
		fs, err := faultstore.New(e.cp, faultstore.DefaultOptions())
		if err != nil {
			t.Fatal(err)
		}
		fs.CrashAfterWrites(k)
		_, err = run(t, e.options(t, fs))
		if !fs.Crashed() {
			if err != nil {
				t.Fatalf("k=%d: run without a crash failed: %v", k, err)
			}
			e.checkExactlyOnce(t)
			if k < 8 {
				t.Fatalf("only %d writes for 3 batches", k)
			}
			return
		}
		if err == nil {
			t.Fatalf("k=%d: a crashed run reported success", k)
		}
		ps, err := run(t, e.options(t, e.cp))
		if err != nil {
			t.Fatalf("k=%d: restart: %v", k, err)
		}
		for i, p := range ps {
			if p.Recovered && i != 0 {
				t.Errorf("k=%d: batch %d marked recovered but not first", k, p.BatchID)
			}
		}
		e.checkExactlyOnce(t)
	}
}

// TestLostAnswerOnCheckpointPut: a put-if-absent whose answer is lost (the
// file landed) is resolved by reading it back, so the run goes on.
func TestLostAnswerOnCheckpointPut(t *testing.T) {
	for _, p := range []string{"offsets/1", "commits/1", "sources/0/1"} {
		t.Run(p, func(t *testing.T) {
			e := newLocalEnv(t, 4)
			fs, _ := faultstore.New(e.cp, faultstore.DefaultOptions())
			if err := fs.Add(faultstore.Rule{Ops: faultstore.OpPutIfAbsent, Path: p, Mode: faultstore.FailAfter}); err != nil {
				t.Fatal(err)
			}
			if _, err := run(t, e.options(t, fs)); err != nil {
				t.Fatalf("lost answer not resolved: %v", err)
			}
			e.checkExactlyOnce(t)
		})
	}
}
