package reader

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/RoaringBitmap/roaring/v2"
	"github.com/google/uuid"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/txlog"
)

// Deletion vectors (PROTOCOL.md, "Deletion Vectors", "Deletion Vector
// Format", "Deletion Vector File Storage Format").

// dvMagic starts every serialized deletion vector (little endian).
const dvMagic = 1681511377

// deletionVector is a set of row indexes (0-based positions of rows in the
// data file) that are deleted: the 64-bit "portable" RoaringBitmap, one
// 32-bit bitmap per high 32-bit key.
type deletionVector struct {
	buckets map[uint32]*roaring.Bitmap
	card    uint64
}

// contains reports whether row index i is deleted.
func (dv *deletionVector) contains(i int64) bool {
	if dv == nil || i < 0 {
		return false
	}
	b := dv.buckets[uint32(uint64(i)>>32)]
	return b != nil && b.Contains(uint32(i))
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

// z85Decode decodes Z85 text (length a multiple of 5) into 4 bytes per 5
// characters.
func z85Decode(s string) ([]byte, error) {
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

// dvFileKey is the storage key of an on-disk DV: for storageType 'u' the
// pathOrInlineDv is a random prefix followed by a 20-character Z85 UUID, and
// the file is <prefix>/deletion_vector_<uuid>.bin under the table root; for
// 'p' it is an absolute path (resolved inside the table root).
func dvFileKey(tableURL string, d *txlog.DeletionVector) (string, error) {
	switch d.StorageType {
	case "u":
		s := d.PathOrInlineDV
		if len(s) < 20 {
			return "", fmt.Errorf("storageType u: %q is shorter than a Z85 UUID", s)
		}
		prefix, enc := s[:len(s)-20], s[len(s)-20:]
		raw, err := z85Decode(enc)
		if err != nil {
			return "", fmt.Errorf("storageType u: %w", err)
		}
		id, err := uuid.FromBytes(raw)
		if err != nil {
			return "", fmt.Errorf("storageType u: %w", err)
		}
		name := "deletion_vector_" + id.String() + ".bin"
		if prefix != "" {
			name = prefix + "/" + name
		}
		return name, nil
	case "p":
		return txlog.ResolvePath(tableURL, d.PathOrInlineDV)
	}
	return "", fmt.Errorf("unknown storageType %q", d.StorageType)
}

// loadDeletionVector reads and checks the DV of a data file. Errors wrap
// ErrCorruptDeletionVector and name the data file.
func loadDeletionVector(ctx context.Context, store storage.Store, dataPath string, d *txlog.DeletionVector) (*deletionVector, error) {
	if d == nil {
		return nil, nil
	}
	fail := func(format string, args ...any) error {
		return fmt.Errorf("%w: data file %s (%s): %s", ErrCorruptDeletionVector, dataPath, d.UniqueID(), fmt.Sprintf(format, args...))
	}
	var data []byte
	switch d.StorageType {
	case "i":
		raw, err := z85Decode(d.PathOrInlineDV)
		if err != nil {
			return nil, fail("inline: %v", err)
		}
		if int(d.SizeInBytes) > len(raw) || d.SizeInBytes < 0 {
			return nil, fail("inline: sizeInBytes %d exceeds the %d decoded bytes", d.SizeInBytes, len(raw))
		}
		data = raw[:d.SizeInBytes]
	case "u", "p":
		key, err := dvFileKey(store.URL(), d)
		if err != nil {
			return nil, fail("%v", err)
		}
		off := int64(1) // after the format version byte
		if d.Offset != nil {
			off = int64(*d.Offset)
		}
		// Check the file's format version (byte 0).
		if err := checkDVFileVersion(ctx, store, key); err != nil {
			return nil, fail("%s: %v", key, err)
		}
		// <dataSize: 4 bytes BE> <bitmapData> <CRC-32 of bitmapData: 4 bytes BE>
		n := int64(d.SizeInBytes) + 8
		rc, err := store.NewRangeReader(ctx, key, off, n)
		if err != nil {
			return nil, fmt.Errorf("%w: data file %s: read %s: %w", ErrCorruptDeletionVector, dataPath, key, err)
		}
		buf, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: data file %s: read %s: %w", ErrCorruptDeletionVector, dataPath, key, err)
		}
		if int64(len(buf)) != n {
			return nil, fail("%s: %d bytes at offset %d, want %d", key, len(buf), off, n)
		}
		if size := binary.BigEndian.Uint32(buf); int64(size) != int64(d.SizeInBytes) {
			return nil, fail("%s: dataSize %d at offset %d, descriptor says %d", key, size, off, d.SizeInBytes)
		}
		data = buf[4 : 4+d.SizeInBytes]
		if sum, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(buf[4+d.SizeInBytes:]); sum != want {
			return nil, fail("%s: checksum %08x, stored %08x", key, sum, want)
		}
	default:
		return nil, fail("unknown storageType %q", d.StorageType)
	}
	dv, err := parseDeletionVector(data)
	if err != nil {
		return nil, fail("%v", err)
	}
	if d.Cardinality >= 0 && dv.card != uint64(d.Cardinality) {
		return nil, fail("holds %d rows, descriptor cardinality %d", dv.card, d.Cardinality)
	}
	return dv, nil
}

func checkDVFileVersion(ctx context.Context, store storage.Store, key string) error {
	rc, err := store.NewRangeReader(ctx, key, 0, 1)
	if err != nil {
		return err
	}
	defer rc.Close()
	var b [1]byte
	if _, err := io.ReadFull(rc, b[:]); err != nil {
		return err
	}
	if b[0] != 1 {
		return fmt.Errorf("format version %d, want 1", b[0])
	}
	return nil
}

// parseDeletionVector parses <magic: 4 bytes LE> <64-bit portable roaring
// bitmap>: numBuckets (8 bytes LE), then per bucket its key (4 bytes LE,
// most significant bit 0, ascending) and a serialized 32-bit RoaringBitmap.
func parseDeletionVector(data []byte) (*deletionVector, error) {
	if len(data) < 12 {
		return nil, fmt.Errorf("%d bytes is too short", len(data))
	}
	if m := binary.LittleEndian.Uint32(data); m != dvMagic {
		return nil, fmt.Errorf("magic number %d, want %d", m, dvMagic)
	}
	nb := binary.LittleEndian.Uint64(data[4:])
	if nb > uint64(len(data)) {
		return nil, fmt.Errorf("%d buckets in %d bytes", nb, len(data))
	}
	r := bytes.NewReader(data[12:])
	dv := &deletionVector{buckets: make(map[uint32]*roaring.Bitmap, nb)}
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
		dv.card += b.GetCardinality()
	}
	if r.Len() != 0 {
		return nil, fmt.Errorf("%d trailing bytes", r.Len())
	}
	return dv, nil
}
