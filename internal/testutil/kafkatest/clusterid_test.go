package kafkatest

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// TestClusterIDNeverStartsWithDash: a first draw whose base64 starts with
// '-' (byte 0xf8: the top six bits are 62, '-' in the URL-safe alphabet)
// is drawn again, as Kafka's Uuid.randomUuid does; kafka-storage took such
// an id for a flag and the broker did not start (CI, "argument
// --cluster-id/-t: expected one argument").
func TestClusterIDNeverStartsWithDash(t *testing.T) {
	dash := bytes.Repeat([]byte{0xf8}, 16)
	if s := base64.RawURLEncoding.EncodeToString(dash); s[0] != '-' {
		t.Fatalf("test input encodes to %q, not a leading '-'", s)
	}
	good := bytes.Repeat([]byte{0x01}, 16)
	id, err := clusterID(bytes.NewReader(append(append(dash, dash...), good...)))
	if err != nil {
		t.Fatal(err)
	}
	if want := base64.RawURLEncoding.EncodeToString(good); id != want {
		t.Fatalf("cluster id %q, want the third draw %q", id, want)
	}
	if _, err := clusterID(bytes.NewReader(dash)); err == nil {
		t.Fatal("a reader that runs out gave no error")
	}
}
