package storage_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/lakesink/lakesink/storage"
)

// TestMarkCorrupt: a marked sentinel keeps its identity and message, and
// errors.Is finds ErrCorrupt through any wrapping.
func TestMarkCorrupt(t *testing.T) {
	base := errors.New("corrupt log")
	sentinel := storage.MarkCorrupt(base)
	err := fmt.Errorf("read commit 00000000000000000003.json: %w", sentinel)
	if !errors.Is(err, sentinel) || !errors.Is(err, base) || !errors.Is(err, storage.ErrCorrupt) {
		t.Fatalf("errors.Is lost a class: %v", err)
	}
	if sentinel.Error() != "corrupt log" {
		t.Fatalf("message = %q, want the marked error's", sentinel.Error())
	}
	if errors.Is(fmt.Errorf("x: %w", base), storage.ErrCorrupt) {
		t.Fatal("an unmarked error matches ErrCorrupt")
	}
	if storage.MarkCorrupt(nil) != nil {
		t.Fatal("MarkCorrupt(nil) != nil")
	}
}
