package txlog

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/testutil/corpus"
)

// readCkptGeneric reads every action of a checkpoint file row by row
// (the GenericReader path, the reference).
func readCkptGeneric(t *testing.T, f *parquet.File) []Action {
	t.Helper()
	r := parquet.NewGenericReader[ckptReadRow](f)
	defer r.Close()
	var out []Action
	for {
		rows := make([]ckptReadRow, 7)
		n, err := r.Read(rows)
		for i := range rows[:n] {
			if a, ok := rows[i].toAction(); ok {
				out = append(out, a)
			}
		}
		if errors.Is(err, io.EOF) || (err == nil && n == 0) {
			return out
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// checkColumnsAgree reads the checkpoint file at path both ways and
// compares; it reports whether the column-wise path applied.
func checkColumnsAgree(t *testing.T, name string, data []byte) bool {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	c, ok := lookupAddColumns(f.Schema())
	if !ok {
		return false
	}
	want := readCkptGeneric(t, f)
	var got []Action
	if err := readCheckpointColumns(f, c, newMapInterner(), nil, func() error { return nil }, func(a *Action) error {
		got = append(got, *a)
		return nil
	}); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if len(got) != len(want) {
		t.Fatalf("%s: %d actions column-wise, %d row by row", name, len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Fatalf("%s: action %d:\ncolumn-wise %s\nrow by row  %s", name, i, dumpAction(got[i]), dumpAction(want[i]))
		}
	}
	return true
}

func dumpAction(a Action) string {
	b, _ := a.MarshalJSON()
	if a.Add != nil {
		return string(b) + " tags-nil=" + boolStr(a.Add.Tags == nil)
	}
	return string(b)
}

func boolStr(b bool) string {
	if b {
		return "true"
	}
	return "false"
}

// TestCheckpointColumnsAgree reads every checkpoint and sidecar Parquet
// file of the repository's fixtures and of the shared interop corpus
// (Spark, delta-rs and DAT tables; skipped when absent) column-wise and
// row by row, and requires the same actions in the same order.
func TestCheckpointColumnsAgree(t *testing.T) {
	roots := []string{"testdata", filepath.Join("..", "reader", "testdata"), filepath.Join("..", "internal", "parquetio", "testdata")}
	if dir, err := corpus.Find(corpus.Testdata, ""); err == nil {
		roots = append(roots, dir)
	} else if corpus.Required() {
		t.Fatal(err)
	} else {
		t.Logf("shared corpus absent (%v): repository fixtures only", err)
	}
	files, columnWise := 0, 0
	for _, root := range roots {
		err := filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
			if err != nil || d.IsDir() || !strings.HasSuffix(p, ".parquet") || !strings.Contains(filepath.Base(p), "checkpoint") && !strings.Contains(p, "_sidecars") {
				return err
			}
			data, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			files++
			if checkColumnsAgree(t, p, data) {
				columnWise++
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	if files == 0 || columnWise == 0 {
		t.Fatalf("%d checkpoint files, %d read column-wise", files, columnWise)
	}
	t.Logf("%d checkpoint files, %d read column-wise", files, columnWise)
}

// TestCheckpointColumnsMixedRows writes checkpoints with every add field
// set or null, several row groups, and rows that hold an add together with
// another action, and reads them both ways.
func TestCheckpointColumnsMixedRows(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	buildLog(t, st, 25)
	st.put(CommitPath(25), `{"domainMetadata":{"domain":"user.d","configuration":"cfg","removed":false}}`+"\n"+
		`{"add":{"path":"nullpart.parquet","partitionValues":{"p":null},"size":1,"modificationTime":1,"dataChange":true,"tags":{"a":"1","b":"2"},"baseRowId":4,"defaultRowCommitVersion":5,"clusteringProvider":"liquid","deletionVector":{"storageType":"u","pathOrInlineDv":"vBn[lx{q8@P<9BNH/isA","offset":1,"sizeInBytes":36,"cardinality":2}}}`+"\n"+
		`{"add":{"path":"emptytags.parquet","partitionValues":{},"size":2,"modificationTime":1,"dataChange":false,"tags":{},"deletionVector":{"storageType":"i","pathOrInlineDv":"abc","sizeInBytes":3,"cardinality":1}}}`+"\n"+
		`{"add":{"path":"two%20parts.parquet","partitionValues":{"p":"1","q":""},"size":3,"modificationTime":1,"dataChange":true}}`+"\n"+
		`{"txn":{"appId":"other","version":3}}`+"\n")
	for _, chunk := range []int{3, 7, 1000} {
		l := newTestLog(t, st, Options{CheckpointRowsPerChunk: chunk, Now: func() time.Time { return time.UnixMilli(1_700_000_000_000) }})
		snap, err := l.Snapshot(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := l.Checkpoint(ctx, snap); err != nil {
			t.Fatal(err)
		}
		data, err := st.Read(ctx, CheckpointPath(25))
		if err != nil {
			t.Fatal(err)
		}
		if !checkColumnsAgree(t, "lakesink checkpoint", data) {
			t.Fatal("a lakesink checkpoint is not read column-wise")
		}
	}
	// A row holding an add and a txn, and one with an add group whose
	// path is null, go through the row reader.
	var buf bytes.Buffer
	w := parquet.NewGenericWriter[ckptRow](&buf)
	pv := "x"
	rows := []ckptRow{
		{Protocol: &ckptProtocol{MinReaderVersion: ptr(int32(1)), MinWriterVersion: ptr(int32(2))}},
		{Add: &ckptAdd{Path: ptr("a"), PartitionValues: map[string]*string{"p": &pv}, Size: ptr(int64(1))}},
		{Add: &ckptAdd{Path: ptr("b"), Size: ptr(int64(2))}, Txn: &ckptTxn{AppID: ptr("q"), Version: ptr(int64(1))}},
		{Add: &ckptAdd{Size: ptr(int64(3))}},
		{Add: &ckptAdd{Path: ptr(""), Size: ptr(int64(4))}},
		{Remove: &ckptRemove{Path: ptr("r"), DataChange: ptr(true)}},
		{Add: &ckptAdd{Path: ptr("c"), PartitionValues: map[string]*string{"p": nil}, Tags: map[string]*string{"t": ptr("v")}}},
	}
	if _, err := w.Write(rows[:4]); err != nil {
		t.Fatal(err)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write(rows[4:]); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if !checkColumnsAgree(t, "mixed rows", buf.Bytes()) {
		t.Fatal("mixed rows not read column-wise")
	}
}

// TestSortedFilesMergeAfterCheckpoint checks the merge of the
// checkpoint's ordered set with the commits after it (replayer.files):
// the keys strictly ascending, each holding its add: adds before, between and after the
// checkpoint's paths, a checkpoint file removed, one removed and added
// again, one re-added with a deletion vector (a second key).
func TestSortedFilesMergeAfterCheckpoint(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	buildLog(t, st, 20)
	l := newTestLog(t, st, Options{})
	s, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Checkpoint(ctx, s); err != nil {
		t.Fatal(err)
	}
	live := s.Files()
	st.put(CommitPath(20), `{"add":{"path":"a-first.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`+"\n"+
		`{"add":{"path":"zz-last.parquet","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`+"\n"+
		`{"add":{"path":"`+live[0].Path+`x","partitionValues":{},"size":1,"modificationTime":1,"dataChange":true}}`+"\n"+
		`{"remove":{"path":"`+live[1].Path+`","deletionTimestamp":1,"dataChange":true}}`+"\n"+
		`{"remove":{"path":"`+live[2].Path+`","deletionTimestamp":1,"dataChange":true}}`+"\n")
	st.put(CommitPath(21), `{"add":{"path":"`+live[2].Path+`","partitionValues":{},"size":2,"modificationTime":1,"dataChange":true}}`+"\n"+
		`{"add":{"path":"`+live[3].Path+`","partitionValues":{},"size":2,"modificationTime":1,"dataChange":true,"deletionVector":{"storageType":"i","pathOrInlineDv":"abc","sizeInBytes":3,"cardinality":1}}}`+"\n"+
		`{"add":{"path":"a-first.parquet","partitionValues":{},"size":3,"modificationTime":1,"dataChange":true}}`+"\n")
	got, err := l.Snapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got.CheckpointVersion() != 19 {
		t.Fatalf("loaded from checkpoint %d", got.CheckpointVersion())
	}
	var keys []fileKey
	for k, a := range got.files.all() {
		p, err := resolvePath(got.root, a.Path)
		if err != nil || p != k.path || a.DeletionVector.UniqueID() != k.dvID {
			t.Fatalf("key %v holds the add of %s", k, a.Path)
		}
		keys = append(keys, k)
	}
	if !slices.IsSortedFunc(keys, compareKeys) || len(slices.CompactFunc(slices.Clone(keys), func(a, b fileKey) bool { return a == b })) != len(keys) {
		t.Fatalf("merged order %v", keys)
	}
	if len(keys) != len(live)-1+4 || got.NumFiles() != len(keys) || len(got.Files()) != len(keys) {
		t.Fatalf("%d live files, want %d", len(keys), len(live)-1+4)
	}
	if a, ok := got.File("a-first.parquet"); !ok || a.Size != 3 {
		t.Fatalf("File(a-first.parquet) = %v, %v", a, ok)
	}
	if _, ok := got.File(live[1].Path); ok {
		t.Fatalf("removed %s still live", live[1].Path)
	}
}
