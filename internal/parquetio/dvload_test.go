package parquetio

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/google/uuid"
)

// TestLoadDV: one loader for the reader, the merge and OPTIMIZE/VACUUM.
// A vector in a 'u' file (with a prefix), at offset 1 and at a later
// offset, and an inline one load with their rows; a wrong cardinality, a
// flipped CRC byte, a wrong format version and a short file are
// ErrCorruptDV; a 'p' path goes through resolve.
func TestLoadDV(t *testing.T) {
	ctx := context.Background()
	st := newMemStore()
	dv := NewDeletionVector()
	for _, r := range []int64{0, 7, 1 << 33} {
		dv.Add(r)
	}
	data, err := dv.MarshalBinary()
	if err != nil {
		t.Fatal(err)
	}
	id := uuid.New()
	enc, _ := Z85Encode(id[:])
	file := EncodeDVFile(data)
	if err := st.Put(ctx, "ab/"+DVFileName(id), file); err != nil {
		t.Fatal(err)
	}
	// Two vectors in one file: the second at offset 1+len(first frame).
	second := append(append([]byte(nil), file...), file[1:]...)
	id2 := uuid.New()
	enc2, _ := Z85Encode(id2[:])
	if err := st.Put(ctx, DVFileName(id2), second); err != nil {
		t.Fatal(err)
	}
	inline, _ := Z85Encode(append(data, make([]byte, (4-len(data)%4)%4)...))
	off2 := int32(len(file))
	noResolve := func(p string) (string, error) { return "", fmt.Errorf("resolve %q", p) }
	n := int32(len(data))
	for _, c := range []struct {
		name string
		d    DVDescriptor
	}{
		{"u with prefix", DVDescriptor{StorageType: "u", PathOrInlineDV: "ab" + enc, SizeInBytes: n, Cardinality: 3}},
		{"u at a later offset", DVDescriptor{StorageType: "u", PathOrInlineDV: enc2, Offset: &off2, SizeInBytes: n, Cardinality: 3}},
		{"inline", DVDescriptor{StorageType: "i", PathOrInlineDV: inline, SizeInBytes: n, Cardinality: 3}},
	} {
		got, err := LoadDV(ctx, st, c.d, noResolve)
		if err != nil || got.Cardinality() != 3 || !got.Contains(1<<33) || got.Contains(1) {
			t.Fatalf("%s: %v, %v", c.name, got, err)
		}
	}
	if _, err := LoadDV(ctx, st, DVDescriptor{StorageType: "p", PathOrInlineDV: "/elsewhere", SizeInBytes: n}, noResolve); err == nil {
		t.Fatal("p: resolve's error was not returned")
	}
	corrupt := func(name string, mutate func([]byte), d DVDescriptor) {
		t.Helper()
		b := append([]byte(nil), file...)
		if mutate != nil {
			mutate(b)
		}
		if err := st.Put(ctx, "ab/"+DVFileName(id), b); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadDV(ctx, st, d, noResolve); !errors.Is(err, ErrCorruptDV) {
			t.Errorf("%s: %v, want ErrCorruptDV", name, err)
		}
	}
	good := DVDescriptor{StorageType: "u", PathOrInlineDV: "ab" + enc, SizeInBytes: n, Cardinality: 3}
	wrongCard := good
	wrongCard.Cardinality = 2
	corrupt("cardinality", nil, wrongCard)
	corrupt("crc", func(b []byte) { b[len(b)-1] ^= 1 }, good)
	corrupt("version", func(b []byte) { b[0] = 2 }, good)
	long := good
	long.SizeInBytes = n + 100
	corrupt("short file", nil, long)
}
