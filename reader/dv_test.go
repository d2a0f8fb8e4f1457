package reader

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"github.com/lakesink/lakesink/txlog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/RoaringBitmap/roaring/v2"

	"github.com/lakesink/lakesink/internal/parquetio"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

// z85Encode is parquetio.Z85Encode (len(b) % 4 == 0).
func z85Encode(b []byte) string {
	s, err := parquetio.Z85Encode(b)
	if err != nil {
		panic(err)
	}
	return s
}

func TestZ85(t *testing.T) {
	// The example of ZeroMQ RFC 32.
	got, err := z85Decode("HelloWorld")
	if err != nil {
		t.Fatal(err)
	}
	if want := []byte{0x86, 0x4F, 0xD2, 0x6F, 0xB5, 0x59, 0xF7, 0x5B}; !bytes.Equal(got, want) {
		t.Fatalf("z85Decode(HelloWorld) = %x, want %x", got, want)
	}
	for _, bad := range []string{"abcd", "abcd\x00", "#####"} {
		if _, err := z85Decode(bad); err == nil {
			t.Errorf("z85Decode(%q) succeeded", bad)
		}
	}
}

// serializeDV builds Delta's DV bytes: magic, then the portable 64-bit
// roaring format.
func serializeDV(t testing.TB, rows ...uint64) []byte {
	t.Helper()
	byKey := map[uint32][]uint32{}
	for _, r := range rows {
		byKey[uint32(r>>32)] = append(byKey[uint32(r>>32)], uint32(r))
	}
	var keys []uint32
	for k := range byKey {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var buf bytes.Buffer
	binary.Write(&buf, binary.LittleEndian, uint32(dvMagic))
	binary.Write(&buf, binary.LittleEndian, uint64(len(keys)))
	for _, k := range keys {
		binary.Write(&buf, binary.LittleEndian, k)
		if _, err := roaring.BitmapOf(byKey[k]...).WriteTo(&buf); err != nil {
			t.Fatal(err)
		}
	}
	return buf.Bytes()
}

func TestParseDeletionVector(t *testing.T) {
	data := serializeDV(t, 0, 7, 1<<32+5)
	dv, err := parseDeletionVector(data)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		i    int64
		want bool
	}{{0, true}, {7, true}, {1<<32 + 5, true}, {1, false}, {5, false}, {1 << 32, false}} {
		if dv.Contains(tc.i) != tc.want {
			t.Errorf("contains(%d) = %v", tc.i, !tc.want)
		}
	}
	if dv.Cardinality() != 3 {
		t.Errorf("cardinality %d", dv.Cardinality())
	}
	corrupt := map[string][]byte{
		"bad magic":    append([]byte{1, 2, 3, 4}, data[4:]...),
		"truncated":    data[:len(data)-3],
		"trailing":     append(slices.Clone(data), 0),
		"negative key": serializeDV(t, 1<<63),
		"short":        data[:8],
		"huge buckets": append(append(slices.Clone(data[:4]), 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0), data[12:]...),
	}
	for name, b := range corrupt {
		if _, err := parseDeletionVector(b); err == nil {
			t.Errorf("%s: parsed", name)
		}
	}
}

// dvTable writes a 10-row table (values 0..9 in one file) and returns its
// dir and the data file's add fields.
func dvTable(t *testing.T) (string, File) {
	t.Helper()
	ctx := context.Background()
	type row struct {
		Value int32 `parquet:"value"`
	}
	var rows []row
	for i := range 10 {
		rows = append(rows, row{int32(i)})
	}
	b, err := schema.FromStructs(rows)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tb, err := table.Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer tb.Close()
	if _, err := tb.Write(ctx, b, table.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	snap, err := Open(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	defer snap.Close()
	files, err := snap.Files(ctx, nil)
	if err != nil || len(files) != 1 {
		t.Fatalf("%v %v", files, err)
	}
	return dir, files[0]
}

// commitDV replaces the file by itself with a deletion vector descriptor.
func commitDV(t *testing.T, dir string, f File, dvJSON string) {
	t.Helper()
	protocol := `{"protocol":{"minReaderVersion":3,"minWriterVersion":7,"readerFeatures":["deletionVectors"],"writerFeatures":["deletionVectors"]}}`
	remove := fmt.Sprintf(`{"remove":{"path":%q,"deletionTimestamp":1,"dataChange":true}}`, f.Path)
	add := fmt.Sprintf(`{"add":{"path":%q,"partitionValues":{},"size":%d,"modificationTime":1,"dataChange":true,"stats":"{\"numRecords\":10,\"tightBounds\":false}","deletionVector":%s}}`, f.Path, f.Size, dvJSON)
	if err := os.WriteFile(filepath.Join(dir, "_delta_log", fmt.Sprintf("%020d.json", 1)), []byte(protocol+"\n"+remove+"\n"+add+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
}

func values(t *testing.T, dir string) ([]int32, error) {
	t.Helper()
	snap, err := Open(context.Background(), dir)
	if err != nil {
		return nil, err
	}
	defer snap.Close()
	recs, err := readAll(t, snap, ReadOptions{})
	var out []int32
	for _, r := range recs {
		out = append(out, r.Values[0].(int32))
	}
	return out, err
}

func TestDeletionVectorInline(t *testing.T) {
	data := serializeDV(t, 0, 3, 9)
	size := len(data)
	for len(data)%4 != 0 {
		data = append(data, 0)
	}
	enc := z85Encode(data)
	t.Run("rows dropped", func(t *testing.T) {
		dir, f := dvTable(t)
		commitDV(t, dir, f, fmt.Sprintf(`{"storageType":"i","pathOrInlineDv":%q,"sizeInBytes":%d,"cardinality":3}`, enc, size))
		got, err := values(t, dir)
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{1, 2, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
			t.Fatalf("values %v, want %v", got, want)
		}
	})
	t.Run("cardinality mismatch", func(t *testing.T) {
		dir, f := dvTable(t)
		commitDV(t, dir, f, fmt.Sprintf(`{"storageType":"i","pathOrInlineDv":%q,"sizeInBytes":%d,"cardinality":4}`, enc, size))
		if _, err := values(t, dir); !errors.Is(err, ErrCorruptDeletionVector) {
			t.Fatalf("error %v, want ErrCorruptDeletionVector", err)
		}
	})
}

func TestDeletionVectorOnDisk(t *testing.T) {
	// table-with-dv-small (Databricks): DELETE WHERE value IN (0, 9) as a
	// 'u' DV at offset 1 of deletion_vector_61d16c75-….bin.
	copyDir := func(t *testing.T) string {
		dst := t.TempDir()
		src := localDir(t, "deltars/table-with-dv-small")
		filepath.WalkDir(src, func(p string, d os.DirEntry, err error) error {
			rel, _ := filepath.Rel(src, p)
			if d.IsDir() {
				return os.MkdirAll(filepath.Join(dst, rel), 0o755)
			}
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
		})
		return dst
	}
	dvFile := "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
	t.Run("rows dropped", func(t *testing.T) {
		got, err := values(t, copyDir(t))
		if err != nil {
			t.Fatal(err)
		}
		if want := []int32{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
			t.Fatalf("values %v, want %v", got, want)
		}
	})
	corrupt := []struct {
		name string
		off  int
	}{{"version byte", 0}, {"size", 4}, {"magic", 6}, {"bitmap byte", 30}, {"checksum", 42}}
	for _, c := range corrupt {
		t.Run("corrupt "+c.name, func(t *testing.T) {
			dir := copyDir(t)
			p := filepath.Join(dir, dvFile)
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			b[c.off] ^= 0x40
			os.WriteFile(p, b, 0o644)
			if _, err := values(t, dir); !errors.Is(err, ErrCorruptDeletionVector) {
				t.Fatalf("error %v, want ErrCorruptDeletionVector", err)
			}
		})
	}
	t.Run("missing file", func(t *testing.T) {
		dir := copyDir(t)
		os.Remove(filepath.Join(dir, dvFile))
		if _, err := values(t, dir); !errors.Is(err, ErrCorruptDeletionVector) || !strings.Contains(err.Error(), "part-00000") {
			t.Fatalf("error %v, want ErrCorruptDeletionVector naming the data file", err)
		}
	})
}

func TestDVFileKey(t *testing.T) {
	// "vBn[lx{q8@P<9BNH/isA" is the Z85 form of 61d16c75-6994-46b7-a15b-8b538852e50e.
	for _, tc := range []struct {
		dv   string
		want string
	}{
		{"vBn[lx{q8@P<9BNH/isA", "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"},
		{"abvBn[lx{q8@P<9BNH/isA", "ab/deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"},
	} {
		got, err := dvFileKey("file:///t", &txlogDV{StorageType: "u", PathOrInlineDV: tc.dv})
		if err != nil || got != tc.want {
			t.Errorf("dvFileKey(%q) = %q, %v; want %q", tc.dv, got, err, tc.want)
		}
	}
	got, err := dvFileKey("file:///t", &txlogDV{StorageType: "p", PathOrInlineDV: "file:///t/dv/x.bin"})
	if err != nil || got != "dv/x.bin" {
		t.Errorf("absolute: %q %v", got, err)
	}
	if _, err := dvFileKey("file:///t", &txlogDV{StorageType: "p", PathOrInlineDV: "file:///elsewhere/x.bin"}); err == nil {
		t.Error("absolute path outside the table accepted")
	}
}

type txlogDV = txlog.DeletionVector

// TestDeletionVectorAbsolutePath: storageType 'p' names the DV file by an
// absolute URI inside the table.
func TestDeletionVectorAbsolutePath(t *testing.T) {
	src := localDir(t, "deltars/table-with-dv-small")
	dir := t.TempDir()
	dvName := "deletion_vector_61d16c75-6994-46b7-a15b-8b538852e50e.bin"
	for _, name := range []string{dvName, "part-00000-fae5310a-a37d-4e51-827b-c3d5516560ca-c000.snappy.parquet"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			t.Fatal(err)
		}
		os.MkdirAll(filepath.Join(dir, "dvs"), 0o755)
		dst := filepath.Join(dir, name)
		if name == dvName {
			dst = filepath.Join(dir, "dvs", "moved.bin")
		}
		if err := os.WriteFile(dst, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var commits []string
	for _, v := range []string{"00000000000000000000.json", "00000000000000000001.json"} {
		b, err := os.ReadFile(filepath.Join(src, "_delta_log", v))
		if err != nil {
			t.Fatal(err)
		}
		commits = append(commits, strings.ReplaceAll(string(b),
			`"storageType":"u","pathOrInlineDv":"vBn[lx{q8@P<9BNH/isA"`,
			fmt.Sprintf(`"storageType":"p","pathOrInlineDv":"file://%s/dvs/moved.bin"`, dir)))
	}
	if !strings.Contains(commits[1], `"storageType":"p"`) {
		t.Fatal("fixture changed: no 'u' descriptor to rewrite")
	}
	writeLog(t, dir, commits...)
	got, err := values(t, dir)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int32{1, 2, 3, 4, 5, 6, 7, 8}; !slices.Equal(got, want) {
		t.Fatalf("values %v, want %v", got, want)
	}
}
