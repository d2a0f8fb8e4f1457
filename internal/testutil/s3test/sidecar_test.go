package s3test

import (
	"os"
	"testing"
)

// The sidecar fallback (for filesystems without user xattrs) serves a
// bucket and honours conditional writes too; start checks the latter
// before returning.
func TestSidecarMetadata(t *testing.T) {
	srv := start(t, true)
	if srv.Sidecar == "" {
		t.Fatal("Sidecar is empty")
	}
	if err := CheckConditionalWrites(t.Context(), srv.Client(), srv.Bucket); err != nil {
		t.Fatal(err)
	}
	entries, err := os.ReadDir(srv.Sidecar)
	if err != nil || len(entries) == 0 {
		t.Fatalf("sidecar folder %s holds nothing (%v): metadata went elsewhere", srv.Sidecar, err)
	}
}
