package txlog

import (
	"bytes"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"

	"github.com/lakesink/lakesink/internal/parquetio"
)

// The row writer the checkpoint used before the column-wise shredder
// (checkpoint_shred.go): each action converted to a ckptRow of pointers
// and written by parquet-go's GenericWriter. Kept as the reference the
// shredder must match byte for byte.

// rowWriterCheckpoint writes acts as Checkpoint wrote them with the row
// writer: chunks of rowsPerChunk rows, one row group each.
func rowWriterCheckpoint(t *testing.T, acts []Action, rowsPerChunk int) []byte {
	t.Helper()
	codec, err := parquetio.Codec("snappy")
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	sl := parquetio.NewStatsLimitingWriter(&buf)
	pw := parquet.NewGenericWriter[ckptRow](sl, parquetio.SparkWriterOptions(codec)...)
	chunk := make([]ckptRow, 0, rowsPerChunk)
	flush := func() {
		if len(chunk) == 0 {
			return
		}
		if _, err := pw.Write(chunk); err != nil {
			t.Fatal(err)
		}
		chunk = chunk[:0]
		if err := pw.Flush(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range acts {
		chunk = append(chunk, toCkptRow(&acts[i]))
		if len(chunk) == cap(chunk) {
			flush()
		}
	}
	flush()
	if err := sl.Finish(pw); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func ptrMap(m map[string]string) map[string]*string {
	if m == nil {
		return nil
	}
	out := make(map[string]*string, len(m))
	for k, v := range m {
		out[k] = ptr(v)
	}
	return out
}

func dvToCkpt(d *DeletionVector) *ckptDV {
	if d == nil {
		return nil
	}
	return &ckptDV{StorageType: ptr(d.StorageType), PathOrInlineDv: ptr(d.PathOrInlineDV), Offset: d.Offset,
		SizeInBytes: ptr(d.SizeInBytes), Cardinality: ptr(d.Cardinality)}
}

// toCkptRow converts an action for a V1 checkpoint.
func toCkptRow(a *Action) ckptRow {
	var r ckptRow
	if t := a.Txn; t != nil {
		r.Txn = &ckptTxn{AppID: ptr(t.AppID), Version: ptr(t.Version), LastUpdated: t.LastUpdated}
	}
	if x := a.Add; x != nil {
		pv := x.PartitionValues
		if pv == nil {
			pv = map[string]*string{}
		}
		r.Add = &ckptAdd{Path: ptr(x.Path), PartitionValues: pv, Size: ptr(x.Size), ModificationTime: ptr(x.ModificationTime),
			DataChange: ptr(x.DataChange), Tags: ptrMap(x.Tags), DeletionVector: dvToCkpt(x.DeletionVector),
			BaseRowID: x.BaseRowID, DefaultRowCommitVersion: x.DefaultRowCommitVersion}
		if x.Stats != "" {
			r.Add.Stats = ptr(x.Stats)
		}
		if x.ClusteringProvider != "" {
			r.Add.ClusteringProvider = ptr(x.ClusteringProvider)
		}
	}
	if x := a.Remove; x != nil {
		r.Remove = &ckptRemove{Path: ptr(x.Path), DeletionTimestamp: x.DeletionTimestamp, DataChange: ptr(x.DataChange),
			ExtendedFileMetadata: x.ExtendedFileMetadata, PartitionValues: x.PartitionValues, Size: x.Size,
			Tags: ptrMap(x.Tags), DeletionVector: dvToCkpt(x.DeletionVector), BaseRowID: x.BaseRowID,
			DefaultRowCommitVersion: x.DefaultRowCommitVersion}
	}
	if m := a.MetaData; m != nil {
		r.MetaData = &ckptMetadata{ID: ptr(m.ID), SchemaString: ptr(m.SchemaString),
			Format:           &ckptFormat{Provider: ptr(m.Format.Provider), Options: ptrMap(m.Format.Options)},
			PartitionColumns: m.PartitionColumns, Configuration: ptrMap(m.Configuration), CreatedTime: m.CreatedTime}
		if r.MetaData.Format.Options == nil {
			r.MetaData.Format.Options = map[string]*string{}
		}
		if r.MetaData.PartitionColumns == nil {
			r.MetaData.PartitionColumns = []string{}
		}
		if r.MetaData.Configuration == nil {
			r.MetaData.Configuration = map[string]*string{}
		}
		if m.Name != "" {
			r.MetaData.Name = ptr(m.Name)
		}
		if m.Description != "" {
			r.MetaData.Description = ptr(m.Description)
		}
	}
	if p := a.Protocol; p != nil {
		r.Protocol = &ckptProtocol{MinReaderVersion: ptr(int32(p.MinReaderVersion)), MinWriterVersion: ptr(int32(p.MinWriterVersion)),
			ReaderFeatures: p.ReaderFeatures, WriterFeatures: p.WriterFeatures}
	}
	if d := a.DomainMetadata; d != nil {
		r.DomainMetadata = &ckptDomain{Domain: ptr(d.Domain), Configuration: ptr(d.Configuration), Removed: ptr(d.Removed)}
	}
	return r
}

// shredderCheckpoint writes acts with the checkpoint's writer.
func shredderCheckpoint(t *testing.T, acts []Action, rowsPerChunk int) []byte {
	t.Helper()
	var buf bytes.Buffer
	fw, err := newCkptFileWriter(&buf, rowsPerChunk)
	if err != nil {
		t.Fatal(err)
	}
	for i := range acts {
		if err := fw.add(&acts[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := fw.finish(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// ckptEdgeActions are actions of every type with every optional field
// present, absent and (maps, lists) empty, and, with big, enough adds
// with long stats that columns cut several pages per row group.
func ckptEdgeActions(big bool) []Action {
	s := func(v string) *string { return &v }
	i64 := func(v int64) *int64 { return &v }
	i32 := func(v int32) *int32 { return &v }
	yes, no := true, false
	acts := []Action{
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7,
			ReaderFeatures: []string{FeatureDeletionVectors, FeatureTimestampNTZ},
			WriterFeatures: []string{FeatureDeletionVectors, FeatureDomainMetadata, FeatureTimestampNTZ, FeatureAppendOnly}}},
		{Protocol: &Protocol{MinReaderVersion: 1, MinWriterVersion: 2}},
		{Protocol: &Protocol{MinReaderVersion: 3, MinWriterVersion: 7, ReaderFeatures: []string{}, WriterFeatures: []string{}}},
		{MetaData: &Metadata{ID: "id-1", Name: "t", Description: "a table", Format: Format{Provider: "parquet", Options: map[string]string{"b": "2", "a": "1"}},
			SchemaString: testSchema, PartitionColumns: []string{"p", "q"}, Configuration: map[string]string{"delta.appendOnly": "false", "user.x": "y", "": ""},
			CreatedTime: i64(1_700_000_000_000)}},
		{MetaData: &Metadata{ID: "id-2", Format: Format{Provider: "parquet"}, SchemaString: testSchema}},
		{MetaData: &Metadata{ID: "", Format: Format{Provider: "", Options: map[string]string{}}, PartitionColumns: []string{}, Configuration: map[string]string{}}},
		{Txn: &Txn{AppID: "app", Version: 7, LastUpdated: i64(1_700_000_000_001)}},
		{Txn: &Txn{AppID: "other", Version: 0}},
		{DomainMetadata: &DomainMetadata{Domain: "user.d", Configuration: `{"k":1}`}},
		{DomainMetadata: &DomainMetadata{Domain: "delta.x", Configuration: "", Removed: true}},
		{Add: &Add{Path: "p=1/q=/a.parquet", PartitionValues: map[string]*string{"q": s(""), "p": s("1"), "r": nil}, Size: 10, ModificationTime: 5,
			DataChange: true, Stats: `{"numRecords":3}`, Tags: map[string]string{"z": "26", "a": "1", "m": ""},
			DeletionVector: &DeletionVector{StorageType: "u", PathOrInlineDV: "vBn[lx{q8@P<9BNH/isA", Offset: i32(1), SizeInBytes: 36, Cardinality: 2},
			BaseRowID:      i64(100), DefaultRowCommitVersion: i64(4), ClusteringProvider: "liquid"}},
		{Add: &Add{Path: "b.parquet", PartitionValues: map[string]*string{}, Tags: map[string]string{},
			DeletionVector: &DeletionVector{StorageType: "i", PathOrInlineDV: "abc", SizeInBytes: 3, Cardinality: 1}}},
		{Add: &Add{Path: "c%20d.parquet"}}, // nil partitionValues: written as an empty map
		{Remove: &Remove{Path: "r1.parquet", DeletionTimestamp: i64(1_700_000_000_000), DataChange: true, ExtendedFileMetadata: &yes,
			PartitionValues: map[string]*string{"p": s("1"), "q": nil}, Size: i64(9), Tags: map[string]string{"t": "v", "s": "w"},
			DeletionVector: &DeletionVector{StorageType: "p", PathOrInlineDV: "dv/x.bin", Offset: i32(0), SizeInBytes: 40, Cardinality: 3},
			BaseRowID:      i64(7), DefaultRowCommitVersion: i64(3), Stats: `{"numRecords":1}`}},
		{Remove: &Remove{Path: "r2.parquet", ExtendedFileMetadata: &no, PartitionValues: map[string]*string{}, Tags: map[string]string{}}},
		{Remove: &Remove{Path: "r3.parquet"}},
	}
	n := 5
	if big {
		n = 700
	}
	stats := strings.Repeat(`{"numRecords":1,"minValues":{"id":1},"maxValues":{"id":2},"nullCount":{"id":0}}`, 12)
	for i := range n {
		pv := fmt.Sprint(i % 7)
		a := &Add{Path: fmt.Sprintf("p=%s/part-%05d.parquet", pv, i), PartitionValues: map[string]*string{"p": &pv},
			Size: int64(i), ModificationTime: int64(1_700_000_000_000 + i), DataChange: i%3 != 0, Stats: stats[:len(stats)-i%50]}
		if i%5 == 0 {
			a.Tags = map[string]string{"INSERTION_TIME": fmt.Sprint(i), "a": "b"}
		}
		if i%11 == 0 {
			a.DeletionVector = &DeletionVector{StorageType: "u", PathOrInlineDV: fmt.Sprintf("dv%05d", i), SizeInBytes: int32(i), Cardinality: int64(i)}
		}
		acts = append(acts, Action{Add: a})
		if i%13 == 0 {
			acts = append(acts, Action{Remove: &Remove{Path: a.Path, DeletionTimestamp: i64(int64(i)), DataChange: true, PartitionValues: a.PartitionValues}})
		}
	}
	return acts
}

// TestCheckpointShredderMatchesRowWriter: the column-wise checkpoint
// writer writes the very bytes the row writer (GenericWriter of toCkptRow
// rows) wrote for every action type and field shape, for chunk sizes that
// cut row groups and 64-row batches at different rows and with columns
// that cut several pages; and what it writes reads back as the same
// actions.
func TestCheckpointShredderMatchesRowWriter(t *testing.T) {
	for _, big := range []bool{false, true} {
		acts := ckptEdgeActions(big)
		for _, chunk := range []int{1, 3, 7, 64, 65, 100, 10_000} {
			t.Run(fmt.Sprintf("rows=%d/chunk=%d", len(acts), chunk), func(t *testing.T) {
				want := rowWriterCheckpoint(t, acts, chunk)
				got := shredderCheckpoint(t, acts, chunk)
				if !bytes.Equal(got, want) {
					t.Fatalf("checkpoint of %d rows, chunks of %d: %d bytes, the row writer wrote %d (first difference at %d)",
						len(acts), chunk, len(got), len(want), firstDiff(got, want))
				}
				f, err := parquet.OpenFile(bytes.NewReader(got), int64(len(got)))
				if err != nil {
					t.Fatal(err)
				}
				if !checkColumnsAgree(t, "shredded checkpoint", got) {
					t.Fatal("the shredded checkpoint is not read column-wise")
				}
				back := readCkptGeneric(t, f)
				wb, _ := EncodeCommit(readBackAsWritten(acts))
				gb, _ := EncodeCommit(back)
				if string(gb) != string(wb) {
					t.Fatalf("read back:\n%s\nwant\n%s", gb, wb)
				}
			})
		}
	}
}

// readBackAsWritten is what a checkpoint row of each action reads back as
// (toAction): the fields a checkpoint does not keep (remove.stats) or
// normalises (nil maps and lists, an action without its key) as the reader
// gives them.
func readBackAsWritten(acts []Action) []Action {
	var out []Action
	for _, a := range acts {
		r := toCkptRow(&a)
		rr := ckptReadRow{Txn: r.Txn, Add: r.Add, Remove: r.Remove, MetaData: r.MetaData, Protocol: r.Protocol, DomainMetadata: r.DomainMetadata}
		if b, ok := rr.toAction(); ok {
			out = append(out, b)
		}
	}
	return out
}

// processCPU is the user + system CPU time of the process so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func firstDiff(a, b []byte) int {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return i
		}
	}
	return min(len(a), len(b))
}

// BenchmarkCheckpointWriter writes the checkpoint rows of a 10,000-file
// table (one partition value, stats, as a blind-append table has) with
// the column-wise writer and with the row writer it replaced, in the same
// run.
func BenchmarkCheckpointWriter(b *testing.B) {
	p := Protocol{MinReaderVersion: 1, MinWriterVersion: 2}
	md := Metadata{ID: "big", Format: Format{Provider: "parquet"}, SchemaString: testSchema, PartitionColumns: []string{"p"}}
	acts := []Action{{Protocol: &p}, {MetaData: &md}}
	for i := range 10_000 {
		pv := fmt.Sprint(i % 100)
		acts = append(acts, Action{Add: &Add{Path: fmt.Sprintf("p=%s/part-%08d-0a1b2c3d.snappy.parquet", pv, i), Size: int64(i),
			ModificationTime: 1_700_000_000_000, DataChange: true, PartitionValues: map[string]*string{"p": &pv},
			Stats: `{"numRecords":1000,"minValues":{"id":1},"maxValues":{"id":1000},"nullCount":{"id":0}}`}})
	}
	t := &testing.T{}
	for _, w := range []struct {
		name  string
		write func(*testing.T, []Action, int) []byte
	}{{"rows", rowWriterCheckpoint}, {"columns", shredderCheckpoint}} {
		b.Run(w.name, func(b *testing.B) {
			cpu0 := processCPU()
			for b.Loop() {
				b.SetBytes(int64(len(w.write(t, acts, 10_000))))
			}
			// CPU time of the process (GC included), not wall: this machine is shared.
			b.ReportMetric(float64((processCPU()-cpu0).Microseconds())/1e3/float64(b.N), "cpu-ms/op")
		})
	}
}
