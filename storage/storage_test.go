package storage_test

import (
	"testing"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/storagetest"
)

// suiteConfig keeps -short runs quick: fewer race rounds.
func suiteConfig() storagetest.Config {
	if testing.Short() {
		return storagetest.Config{ConcurrentRounds: 30}
	}
	return storagetest.Config{}
}

func TestLocalConformance(t *testing.T) {
	storagetest.RunConfig(t, suiteConfig(), func(t *testing.T) storage.Store {
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

// The helpers other packages use pass the suite too (fsync off changes
// durability only, not semantics).
func TestHelperStoresConformance(t *testing.T) {
	if testing.Short() {
		t.Skip("same backends as TestLocalConformance/TestMemConformance")
	}
	cfg := storagetest.Config{ConcurrentRounds: 50}
	t.Run("NewLocal", func(t *testing.T) {
		storagetest.RunConfig(t, cfg, func(t *testing.T) storage.Store { return storagetest.NewLocal(t) })
	})
	t.Run("NewMem", func(t *testing.T) {
		storagetest.RunConfig(t, cfg, func(t *testing.T) storage.Store { return storagetest.NewMem(t) })
	})
}
