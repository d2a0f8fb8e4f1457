package filesink

// Hostile-input tests (issue #9): a _spark_metadata log written by a newer
// Spark ("v2" header) and a log file that is one 100 MB line. Each fails with
// a typed error naming the file, and nothing is written.

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/lakesink/lakesink/internal/testutil/heaptest"
	"github.com/lakesink/lakesink/storage"
)

// listAll returns every key of the store with its size, to show that a
// refused operation wrote nothing.
func listAll(t *testing.T, st storage.Store) []string {
	t.Helper()
	var out []string
	for fi, err := range st.List(context.Background(), "", "") {
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, fi.Path)
	}
	slices.Sort(out)
	return out
}

const goodEntry = `{"path":"file:///x/part-00000.parquet","size":10,"isDir":false,"modificationTime":1,"blockReplication":1,"blockSize":1,"action":"add"}`

// TestBombNewerLogVersion: batch 1 of the log is "v2" (a newer Spark). The
// next batch (a plain one, and a compaction batch that would fold it in)
// is refused with ErrUnsupportedLogVersion before any data file or log file
// is written, and reading the log names the file.
func TestBombNewerLogVersion(t *testing.T) {
	ctx := context.Background()
	for _, tc := range []struct {
		name     string
		interval int // 3: batch 2 is a compaction batch
	}{
		{"plain batch", 10},
		{"compaction batch", 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st, _ := openLocal(t)
			if err := st.Put(ctx, "_spark_metadata/0", []byte("v1\n"+goodEntry)); err != nil {
				t.Fatal(err)
			}
			if err := st.Put(ctx, "_spark_metadata/1", []byte("v2\n"+`{"path":"file:///x/p2.parquet","futureField":1}`)); err != nil {
				t.Fatal(err)
			}
			o := DefaultOptions()
			o.CompactInterval = tc.interval
			s, err := New(ctx, st, o)
			if err != nil {
				t.Fatal(err)
			}
			before := listAll(t, st)
			_, err = s.AddBatch(ctx, 2, rows(0, 5, nil))
			if !errors.Is(err, ErrUnsupportedLogVersion) || !strings.Contains(err.Error(), "_spark_metadata/1 is v2") {
				t.Fatalf("AddBatch = %v, want ErrUnsupportedLogVersion naming _spark_metadata/1", err)
			}
			if after := listAll(t, st); !slices.Equal(before, after) {
				t.Fatalf("refused batch wrote files: %v -> %v", before, after)
			}
			if err := s.Log().Add(ctx, 2, nil); !errors.Is(err, ErrUnsupportedLogVersion) {
				t.Fatalf("Log.Add = %v, want ErrUnsupportedLogVersion", err)
			}
			if _, err := s.Log().AllFiles(ctx); !errors.Is(err, ErrUnsupportedLogVersion) {
				t.Fatalf("AllFiles = %v, want ErrUnsupportedLogVersion", err)
			}
			if after := listAll(t, st); !slices.Equal(before, after) {
				t.Fatalf("refused Log.Add wrote files: %v -> %v", before, after)
			}
		})
	}
}

// TestBombLongLogLine: a _spark_metadata file whose second line is 100 MB.
// Reading it stops at MaxLogLineBytes (64 MiB) with a *CorruptLogError
// naming the file and line 2; the line buffer doubles up to the limit, so
// the peak is at most two buffers plus the smaller ones not yet collected:
// bound 2 × MaxLogLineBytes + 16 MiB. Before, the whole line was buffered
// (and the 1.25× growth of append left several copies as garbage).
func TestBombLongLogLine(t *testing.T) {
	ctx := context.Background()
	st, dir := openLocal(t)
	var b bytes.Buffer
	b.WriteString("v1\n")
	b.WriteString(goodEntry + "\n")
	b.WriteString(`{"path":"file:///x/`)
	b.Write(bytes.Repeat([]byte("p"), 100_000_000))
	b.WriteString(`.parquet","size":1}`)
	if err := os.MkdirAll(filepath.Join(dir, MetadataDir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetadataDir, "0"), []byte("v1\n"+goodEntry), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, MetadataDir, "1"), b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	b = bytes.Buffer{}
	l, err := NewLog(st, DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	var ce *CorruptLogError
	peak := heaptest.Peak(func() { _, err = l.AllFiles(ctx) })
	if !errors.As(err, &ce) || ce.Path != "_spark_metadata/1" || ce.Line != 3 || !strings.Contains(err.Error(), "line longer than 67108864 bytes") {
		t.Fatalf("AllFiles = %v, want *CorruptLogError for _spark_metadata/1 line 3", err)
	}
	t.Logf("100 MB log line: %v; peak heap %.1f MiB", err, float64(peak)/(1<<20))
	if bound := uint64(2*MaxLogLineBytes + 16<<20); peak > bound {
		t.Errorf("peak heap %.1f MiB > bound %.1f MiB", float64(peak)/(1<<20), float64(bound)/(1<<20))
	}
}
