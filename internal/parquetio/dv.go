package parquetio

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"
	"slices"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/google/uuid"
)

// Deletion vectors (PROTOCOL.md, "Deletion Vectors", "Deletion Vector
// Format", "Deletion Vector File Storage Format"): the codec that the reader
// and the merge writer share.

// DVMagic starts every serialized deletion vector (little endian).
const DVMagic = 1681511377

// DeletionVector is a set of row indexes (0-based positions of rows in a
// data file) that are deleted: Delta's RoaringBitmapArray, one 32-bit
// RoaringBitmap per high 32-bit key. The zero value is not usable; use
// NewDeletionVector or ParseDeletionVector. Not safe for concurrent writes.
type DeletionVector struct {
	buckets map[uint32]*roaring.Bitmap
}

// NewDeletionVector is an empty deletion vector.
func NewDeletionVector() *DeletionVector {
	return &DeletionVector{buckets: map[uint32]*roaring.Bitmap{}}
}

// Contains reports whether row index i is deleted (false on a nil vector).
func (dv *DeletionVector) Contains(i int64) bool {
	if dv == nil || i < 0 {
		return false
	}
	b := dv.buckets[uint32(uint64(i)>>32)]
	return b != nil && b.Contains(uint32(i))
}

// Add marks row index i (>= 0) deleted.
func (dv *DeletionVector) Add(i int64) {
	k := uint32(uint64(i) >> 32)
	b := dv.buckets[k]
	if b == nil {
		b = roaring.New()
		dv.buckets[k] = b
	}
	b.Add(uint32(i))
}

// Cardinality is the number of deleted rows (0 on a nil vector).
func (dv *DeletionVector) Cardinality() int64 {
	if dv == nil {
		return 0
	}
	var n uint64
	for _, b := range dv.buckets {
		n += b.GetCardinality()
	}
	return int64(n)
}

// MarshalBinary serializes the vector as <magic: 4 bytes LE> <64-bit
// portable RoaringBitmap: numBuckets (8 bytes LE), then per bucket, keys
// ascending, its key (4 bytes LE) and the portable serialization of its
// 32-bit RoaringBitmap>.
func (dv *DeletionVector) MarshalBinary() ([]byte, error) {
	var buf bytes.Buffer
	var keys []uint32
	for k, b := range dv.buckets {
		if !b.IsEmpty() {
			keys = append(keys, k)
		}
	}
	slices.Sort(keys)
	_ = binary.Write(&buf, binary.LittleEndian, uint32(DVMagic))
	_ = binary.Write(&buf, binary.LittleEndian, uint64(len(keys)))
	for _, k := range keys {
		_ = binary.Write(&buf, binary.LittleEndian, k)
		b := dv.buckets[k]
		b.RunOptimize()
		if _, err := b.WriteTo(&buf); err != nil {
			return nil, err
		}
	}
	return buf.Bytes(), nil
}

// ParseDeletionVector parses MarshalBinary's format.
func ParseDeletionVector(data []byte) (*DeletionVector, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("%d bytes is too short", len(data))
	}
	if m := binary.LittleEndian.Uint32(data); m != DVMagic {
		return nil, fmt.Errorf("magic number %d, want %d", m, DVMagic)
	}
	nb := binary.LittleEndian.Uint64(data[4:])
	if nb > uint64(len(data)) {
		return nil, fmt.Errorf("%d buckets in %d bytes", nb, len(data))
	}
	r := bytes.NewReader(data[12:])
	dv := &DeletionVector{buckets: make(map[uint32]*roaring.Bitmap, nb)}
	prev := int64(-1)
	for i := uint64(0); i < nb; i++ {
		var kb [4]byte
		if _, err := io.ReadFull(r, kb[:]); err != nil {
			return nil, fmt.Errorf("bucket %d key: %v", i, err)
		}
		key := binary.LittleEndian.Uint32(kb[:])
		if key&0x80000000 != 0 {
			return nil, fmt.Errorf("bucket %d key %#x has its most significant bit set", i, key)
		}
		if int64(key) <= prev {
			return nil, fmt.Errorf("bucket keys not ascending (%d after %d)", key, prev)
		}
		prev = int64(key)
		b := roaring.New()
		if _, err := b.ReadFrom(r); err != nil {
			return nil, fmt.Errorf("bucket %d bitmap: %v", i, err)
		}
		dv.buckets[key] = b
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes", r.Len())
	}
	return dv, nil
}

// DVFileName is the name of an on-disk deletion vector file with this id
// under the table root (storageType 'u' without a prefix).
func DVFileName(id uuid.UUID) string { return "deletion_vector_" + id.String() + ".bin" }

// EncodeDVFile is a deletion vector file holding one serialized vector:
// <format version 1: 1 byte> <dataSize: 4 bytes BE> <data> <CRC-32 of data:
// 4 bytes BE>. The vector's descriptor offset is 1 (its dataSize field).
func EncodeDVFile(data []byte) []byte {
	out := make([]byte, 0, 9+len(data))
	out = append(out, 1)
	out = binary.BigEndian.AppendUint32(out, uint32(len(data)))
	out = append(out, data...)
	return binary.BigEndian.AppendUint32(out, crc32.ChecksumIEEE(data))
}

// z85Alphabet is the Z85 alphabet (ZeroMQ RFC 32), Delta's Base85 variant.
const z85Alphabet = "0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ.-:+=^!/*?&<>()[]{}@%$#"

var z85Index = func() (t [256]int8) {
	for i := range t {
		t[i] = -1
	}
	for i := 0; i < len(z85Alphabet); i++ {
		t[z85Alphabet[i]] = int8(i)
	}
	return t
}()

// Z85Decode decodes Z85 text (length a multiple of 5) into 4 bytes per 5
// characters.
func Z85Decode(s string) ([]byte, error) {
	if len(s)%5 != 0 {
		return nil, fmt.Errorf("z85 text length %d is not a multiple of 5", len(s))
	}
	out := make([]byte, 0, len(s)/5*4)
	for i := 0; i < len(s); i += 5 {
		var v uint64
		for j := range 5 {
			d := z85Index[s[i+j]]
			if d < 0 {
				return nil, fmt.Errorf("invalid z85 character %q at %d", s[i+j], i+j)
			}
			v = v*85 + uint64(d)
		}
		if v > 0xFFFFFFFF {
			return nil, fmt.Errorf("z85 group at %d overflows", i)
		}
		out = binary.BigEndian.AppendUint32(out, uint32(v))
	}
	return out, nil
}

// Z85Encode encodes b (length a multiple of 4) as Z85 text, 5 characters
// per 4 bytes (a UUID's 16 bytes: 20 characters).
func Z85Encode(b []byte) (string, error) {
	if len(b)%4 != 0 {
		return "", fmt.Errorf("z85 input length %d is not a multiple of 4", len(b))
	}
	out := make([]byte, 0, len(b)/4*5)
	for i := 0; i < len(b); i += 4 {
		v := binary.BigEndian.Uint32(b[i:])
		var chunk [5]byte
		for j := 4; j >= 0; j-- {
			chunk[j] = z85Alphabet[v%85]
			v /= 85
		}
		out = append(out, chunk[:]...)
	}
	return string(out), nil
}
