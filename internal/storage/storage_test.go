package storage_test

import (
	"testing"

	"github.com/lakesink/lakesink/internal/storage"
	"github.com/lakesink/lakesink/internal/storage/storagetest"
)

func TestLocalConformance(t *testing.T) {
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := storage.Open(t.Context(), t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}

func TestMemConformance(t *testing.T) {
	o, err := storage.NewOpener(storage.DefaultOptions())
	if err != nil {
		t.Fatal(err)
	}
	storagetest.Run(t, func(t *testing.T) storage.Store {
		s, err := o.Open(t.Context(), "mem://"+t.Name())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	})
}
