package parquetio

import (
	"bytes"
	"encoding/binary"
	"strings"
	"testing"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/format"
)

// fakeTailWriter is a parquet writer whose Close writes tail and whose
// File reports md (what it claims to have encoded).
type fakeTailWriter struct {
	out  *StatsLimitingWriter
	tail []byte
	md   *format.FileMetaData
}

func (f *fakeTailWriter) Flush() error { return nil }
func (f *fakeTailWriter) Close() error {
	_, err := f.out.Write(f.tail)
	return err
}
func (f *fakeTailWriter) File() parquet.FileView { return fakeFileView{md: f.md} }

type fakeFileView struct {
	parquet.FileView
	md *format.FileMetaData
}

func (v fakeFileView) Metadata() *format.FileMetaData { return v.md }

// TestStatsLimitingWriterDecodesOnlyOverLimit: Finish decodes the footer
// (to drop statistics) only when the metadata the writer encoded has a
// column chunk over parquet-mr's 4096-byte limit. A tail whose footer
// bytes cannot be decoded passes through unchanged when every chunk is
// under the limit (no decode: every checkpoint and data file used to be
// decoded once more), and fails when one is over it (the decode ran).
func TestStatsLimitingWriterDecodesOnlyOverLimit(t *testing.T) {
	garbage := []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff}
	tail := append([]byte("index bytes"), garbage...)
	tail = binary.LittleEndian.AppendUint32(tail, uint32(len(garbage)))
	tail = append(tail, "PAR1"...)
	chunk := func(minmax int) format.ColumnChunk {
		v := []byte(strings.Repeat("x", minmax))
		return format.ColumnChunk{MetaData: format.ColumnMetaData{Statistics: format.Statistics{MinValue: v, MaxValue: v}}}
	}
	md := func(minmax int) *format.FileMetaData {
		return &format.FileMetaData{RowGroups: []format.RowGroup{{Columns: []format.ColumnChunk{chunk(10), chunk(minmax)}}}}
	}

	var buf bytes.Buffer
	sl := NewStatsLimitingWriter(&buf)
	if err := sl.Finish(&fakeTailWriter{out: sl, tail: tail, md: md(2048)}); err != nil {
		t.Fatalf("statistics under the limit: %v (the footer was decoded)", err)
	}
	if !bytes.Equal(buf.Bytes(), tail) || sl.N() != int64(len(tail)) {
		t.Errorf("tail written as %q (%d bytes counted), want it unchanged", buf.Bytes(), sl.N())
	}

	buf.Reset()
	sl = NewStatsLimitingWriter(&buf)
	if err := sl.Finish(&fakeTailWriter{out: sl, tail: tail, md: md(2049)}); err == nil {
		t.Error("statistics over the limit: undecodable footer accepted (the footer was not decoded)")
	}
}
