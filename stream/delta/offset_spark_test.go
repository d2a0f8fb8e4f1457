package delta

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/lakesink/lakesink/stream/checkpoint"
)

// TestSparkWrittenOffsets parses offsets/N files that Spark 4.2.0 with
// Delta 4.4.0 wrote (testdata/spark-4.2-delta-4.4-offsets, copied verbatim
// from the checkpoints of a run of interop/engines
// TestSparkReadStreamOfLakesinkTable: readStream.format("delta") over a
// lakesink table of 8 batches and 2 compacts, maxFilesPerTrigger 2).
// "snapshot-N" is a query that started from the latest snapshot (version 5:
// isStartingVersion with file indexes, then version 6's base index);
// "from-version-0-N" one with startingVersion 0, whose batch 5 ends at
// (5, -1): version 4, an OPTIMIZE (dataChange=false adds), had no file to
// read. Each file is Spark's OffsetSeqLog format ("v1", the OffsetSeqMetadata
// line, one offset), and the offset renders back as Spark wrote it.
func TestSparkWrittenOffsets(t *testing.T) {
	const table = "1c9786cc-db95-41c7-ae30-d21edea02c5c"
	for _, c := range []struct {
		file    string
		version int64
		index   int64
		start   bool
	}{
		{"snapshot-0", 5, 1, true},
		{"snapshot-1", 5, 3, true},
		{"snapshot-2", 6, BaseIndex, false},
		{"from-version-0-4", 3, 0, false},
		{"from-version-0-5", 5, BaseIndex, false},
	} {
		t.Run(c.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "spark-4.2-delta-4.4-offsets", c.file))
			if err != nil {
				t.Fatal(err)
			}
			seq, line, err := checkpoint.ParseOffsetSeq(b)
			if err != nil {
				t.Fatalf("line %d: %v", line, err)
			}
			if seq.Metadata == nil || seq.Metadata.BatchTimestampMs == 0 || len(seq.Metadata.Conf) == 0 || len(seq.Offsets) != 1 {
				t.Fatalf("offsets file: %+v", seq)
			}
			o, err := ParseOffset(seq.Offsets[0])
			if err != nil {
				t.Fatal(err)
			}
			want := Offset{SourceVersion: SourceVersion, ReservoirID: table, ReservoirVersion: c.version, Index: c.index, IsStartingVersion: c.start}
			if o != want {
				t.Errorf("parsed %+v, want %+v", o, want)
			}
			if got := o.String(); got != seq.Offsets[0] {
				t.Errorf("rendered %s, Spark wrote %s", got, seq.Offsets[0])
			}
		})
	}
}

// TestParseOffsetAsDeltaDeserializes: the offsets Delta's
// DeltaSourceOffset.Deserializer refuses are refused (sourceVersion 2 is
// reserved; index -1 under sourceVersion 3 fails Delta's assertion), the
// version-3 indexes it reads are read (-100, its base; -20 and -19, the
// metadata-change indexes), and a parsed offset renders as Delta's
// serializer writes that position (sourceVersion 1, index -1).
func TestParseOffsetAsDeltaDeserializes(t *testing.T) {
	for _, bad := range []string{
		`{"sourceVersion":2,"reservoirId":"x","reservoirVersion":2,"index":0,"isStartingVersion":false}`,
		`{"sourceVersion":3,"reservoirId":"x","reservoirVersion":2,"index":-1,"isStartingVersion":false}`,
	} {
		if o, err := ParseOffset(bad); !errors.Is(err, ErrBadOffset) {
			t.Errorf("ParseOffset(%s) = %+v, %v; want ErrBadOffset", bad, o, err)
		}
	}
	for _, idx := range []string{"-100", "-20", "-19"} {
		s := `{"sourceVersion":3,"reservoirId":"x","reservoirVersion":2,"index":` + idx + `,"isStartingVersion":false}`
		o, err := ParseOffset(s)
		if err != nil {
			t.Fatalf("ParseOffset(%s): %v", s, err)
		}
		if want := `{"sourceVersion":1,"reservoirId":"x","reservoirVersion":2,"index":-1,"isStartingVersion":false}`; o.String() != want {
			t.Errorf("ParseOffset(%s) renders %s, want %s", s, o.String(), want)
		}
	}
}
