package parquetio

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/google/uuid"

	"github.com/lakesink/lakesink/storage"
)

// DVDescriptor holds the fields of a deletion vector descriptor
// (PROTOCOL.md, "Deletion Vector Descriptor Schema"), those of
// txlog.DeletionVector, which this package cannot name.
type DVDescriptor struct {
	StorageType    string // 'u' (a UUID-named file), 'p' (a path) or 'i' (inline)
	PathOrInlineDV string
	Offset         *int32 // byte offset in the file; nil means 1
	SizeInBytes    int32  // of the serialized bitmap
	Cardinality    int64  // rows it deletes; < 0: not checked
}

// ErrCorruptDV: a deletion vector (inline or in its file) does not match
// its descriptor, or cannot be parsed. Marked corrupt (storage.ErrCorrupt).
var ErrCorruptDV = storage.MarkCorrupt(errors.New("corrupt deletion vector"))

// DVFileKey is the storage key, relative to the table root, of the file
// holding d, and false for an inline one (storageType 'i'). For 'u',
// pathOrInlineDv is a random prefix and a 20-character Z85 UUID, the file
// <prefix>/deletion_vector_<uuid>.bin; for 'p' it is a path, turned into a
// key by resolve (which must refuse a path outside the table root).
// Errors wrap ErrCorruptDV.
func DVFileKey(d DVDescriptor, resolve func(path string) (string, error)) (string, bool, error) {
	switch d.StorageType {
	case "i":
		return "", false, nil
	case "u":
		s := d.PathOrInlineDV
		if len(s) < 20 {
			return "", false, fmt.Errorf("%w: storageType u: %q is shorter than a Z85 UUID", ErrCorruptDV, s)
		}
		raw, err := Z85Decode(s[len(s)-20:])
		if err != nil {
			return "", false, fmt.Errorf("%w: storageType u: %w", ErrCorruptDV, err)
		}
		id, err := uuid.FromBytes(raw)
		if err != nil {
			return "", false, fmt.Errorf("%w: storageType u: %w", ErrCorruptDV, err)
		}
		key := DVFileName(id)
		if prefix := s[:len(s)-20]; prefix != "" {
			key = prefix + "/" + key
		}
		return key, true, nil
	case "p":
		k, err := resolve(d.PathOrInlineDV)
		if err != nil {
			return "", false, err
		}
		return k, true, nil
	}
	return "", false, fmt.Errorf("%w: unknown storageType %q", ErrCorruptDV, d.StorageType)
}

// LoadDV reads and checks the deletion vector d from store (the table's
// root): inline (Z85) or in its file, whose format version byte (1) and
// the framing at the descriptor's offset (big-endian dataSize, the
// bitmap, its CRC-32) must match (PROTOCOL.md, "Deletion Vector Format",
// "Deletion Vector File Storage Format"), as must the cardinality. resolve
// turns a 'p' path into a key (see DVFileKey). Content that does not match
// wraps ErrCorruptDV; a failed read is returned as the store gives it,
// wrapped with the key.
func LoadDV(ctx context.Context, store storage.Store, d DVDescriptor, resolve func(path string) (string, error)) (*DeletionVector, error) {
	var data []byte
	if d.SizeInBytes < 0 {
		return nil, fmt.Errorf("%w: sizeInBytes %d", ErrCorruptDV, d.SizeInBytes)
	}
	key, inFile, err := DVFileKey(d, resolve)
	if err != nil {
		return nil, err
	}
	if !inFile {
		raw, err := Z85Decode(d.PathOrInlineDV)
		if err != nil {
			return nil, fmt.Errorf("%w: inline: %w", ErrCorruptDV, err)
		}
		if int(d.SizeInBytes) > len(raw) {
			return nil, fmt.Errorf("%w: inline: sizeInBytes %d exceeds the %d decoded bytes", ErrCorruptDV, d.SizeInBytes, len(raw))
		}
		data = raw[:d.SizeInBytes]
	} else {
		off := int64(1) // after the format version byte
		if d.Offset != nil {
			off = int64(*d.Offset)
		}
		if off < 1 {
			return nil, fmt.Errorf("%w: %s: offset %d", ErrCorruptDV, key, off)
		}
		// <version: 1 byte> ... at off: <dataSize: 4 bytes BE> <bitmap> <CRC-32: 4 bytes BE>.
		// One read from byte 0 when the vector is the file's first.
		n := int64(d.SizeInBytes) + 8
		start := off
		if off == 1 {
			start, n = 0, n+1
		}
		buf, err := readDVRange(ctx, store, key, start, n)
		if err != nil {
			return nil, err
		}
		version := buf
		if off != 1 {
			if version, err = readDVRange(ctx, store, key, 0, 1); err != nil {
				return nil, err
			}
		} else {
			buf = buf[1:]
		}
		if version[0] != 1 {
			return nil, fmt.Errorf("%w: %s: format version %d, want 1", ErrCorruptDV, key, version[0])
		}
		if size := binary.BigEndian.Uint32(buf); int64(size) != int64(d.SizeInBytes) {
			return nil, fmt.Errorf("%w: %s: dataSize %d at offset %d, descriptor says %d", ErrCorruptDV, key, size, off, d.SizeInBytes)
		}
		data = buf[4 : 4+d.SizeInBytes]
		if sum, want := crc32.ChecksumIEEE(data), binary.BigEndian.Uint32(buf[4+d.SizeInBytes:]); sum != want {
			return nil, fmt.Errorf("%w: %s: checksum %08x, stored %08x", ErrCorruptDV, key, sum, want)
		}
	}
	dv, err := ParseDeletionVector(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrCorruptDV, err)
	}
	if d.Cardinality >= 0 && dv.Cardinality() != d.Cardinality {
		return nil, fmt.Errorf("%w: holds %d rows, descriptor cardinality %d", ErrCorruptDV, dv.Cardinality(), d.Cardinality)
	}
	return dv, nil
}

// readDVRange reads exactly n bytes of key from off; fewer is ErrCorruptDV.
func readDVRange(ctx context.Context, store storage.Store, key string, off, n int64) ([]byte, error) {
	rc, err := store.NewRangeReader(ctx, key, off, n)
	if err != nil {
		return nil, fmt.Errorf("read deletion vector file %s: %w", key, err)
	}
	buf, err := io.ReadAll(rc)
	rc.Close()
	if err != nil {
		return nil, fmt.Errorf("read deletion vector file %s: %w", key, err)
	}
	if int64(len(buf)) != n {
		return nil, fmt.Errorf("%w: %s: %d bytes at offset %d, want %d", ErrCorruptDV, key, len(buf), off, n)
	}
	return buf, nil
}
