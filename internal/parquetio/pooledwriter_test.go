package parquetio

import (
	"bytes"
	"testing"
)

// TestPooledWriter: writes of every size (under, at and over the buffer's)
// come out in order and whole once released, a write of a full buffer's
// size or more with nothing buffered goes straight out without taking a
// buffer, and release gives the buffer back (drop: its bytes unwritten).
func TestPooledWriter(t *testing.T) {
	var out bytes.Buffer
	p := &pooledWriter{w: &out}
	var want []byte
	for i, n := range []int{4, 100, writeBufferBytes - 50, 200, writeBufferBytes, 7, 3 * writeBufferBytes, 1} {
		b := bytes.Repeat([]byte{byte('a' + i)}, n)
		if k, err := p.Write(b); k != n || err != nil {
			t.Fatalf("Write of %d bytes = %d, %v", n, k, err)
		}
		want = append(want, b...)
	}
	if p.buf == nil || out.Len()+len(*p.buf) != len(want) {
		t.Fatalf("%d bytes out and %v buffered, want %d in all", out.Len(), p.buf != nil, len(want))
	}
	if err := p.release(); err != nil {
		t.Fatal(err)
	}
	if p.buf != nil || !bytes.Equal(out.Bytes(), want) {
		t.Fatalf("after release: buffer held %v, %d bytes out equal %v; want none held and the %d bytes",
			p.buf != nil, out.Len(), bytes.Equal(out.Bytes(), want), len(want))
	}
	out.Reset()
	if _, err := p.Write(make([]byte, writeBufferBytes)); err != nil || p.buf != nil || out.Len() != writeBufferBytes {
		t.Fatalf("a full buffer's write with nothing buffered: err %v, buffer taken %v, %d bytes out", err, p.buf != nil, out.Len())
	}
	out.Reset()
	if _, err := p.Write([]byte("x")); err != nil {
		t.Fatal(err)
	}
	p.drop()
	if p.buf != nil || out.Len() != 0 {
		t.Fatalf("drop: buffer held %v, %d bytes out; want none", p.buf != nil, out.Len())
	}
}
