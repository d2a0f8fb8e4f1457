package faultstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/lakesink/lakesink/storage"
	"github.com/lakesink/lakesink/storage/faultstore"
)

// commitOne writes a data file, then commits it.
func commitOne(ctx context.Context, s storage.Store) error {
	if err := s.Put(ctx, "part-0.parquet", []byte("data")); err != nil {
		return err
	}
	return s.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("commit"))
}

// A crash test records an operation's durable steps, checks their names,
// then crashes at each one, before and after it.
func ExampleStore_CrashAt() {
	ctx := context.Background()
	newBase := func(name string) storage.Store {
		// '#' would start a URL fragment, which storage.Open refuses.
		st, err := storage.Open(ctx, "mem://example-crash-at-"+strings.NewReplacer("#", "-", "/", "-").Replace(name))
		if err != nil {
			panic(err) // an example has no *testing.T
		}
		return st
	}
	rec, _ := faultstore.New(newBase("rec"), faultstore.DefaultOptions())
	_ = commitOne(ctx, rec)
	points := rec.Points()
	fmt.Println("points:", points, faultstore.CheckPoints(points, faultstore.PointDataFile, faultstore.PointCommit))
	for _, c := range faultstore.Crashes(points) {
		base := newBase(c.String())
		fs, _ := faultstore.New(base, faultstore.DefaultOptions())
		_ = c.Arm(fs)
		err := commitOne(ctx, fs)
		_, statErr := base.Stat(ctx, "_delta_log/00000000000000000000.json")
		fmt.Printf("%-20s injected=%v committed=%v\n", c, errors.Is(err, faultstore.ErrInjected), statErr == nil)
	}
	// Output:
	// points: [data-file#0 commit#0] <nil>
	// data-file#0/before   injected=true committed=false
	// data-file#0/after    injected=true committed=false
	// commit#0/before      injected=true committed=false
	// commit#0/after       injected=true committed=true
}
