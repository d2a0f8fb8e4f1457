package compaction_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lakesink/lakesink/compaction"
	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/table"
)

type event struct {
	ID int64 `parquet:"id"`
}

// OPTIMIZE rewrites small files into one commit that changes no data
// (dataChange=false); VACUUM later deletes the files it replaced once they
// are past the retention.
func ExampleOptimize() {
	ctx := context.Background()
	b, _ := schema.FromStructs([]event{{0}})
	t, err := table.Create(ctx, "mem://example-optimize/events", table.CreateOptions{Schema: b.Schema})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer t.Close()
	for i := range 4 {
		b, _ := schema.FromStructs([]event{{int64(i)}})
		if _, err := t.Write(ctx, b, table.WriteOptions{}); err != nil {
			fmt.Println(err)
			return
		}
	}
	_, res, err := compaction.Optimize(ctx, t, compaction.PlanOptions{}, compaction.DefaultExecOptions())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("optimize: version %d, %d files removed, %d added\n", res.Version, res.NumRemovedFiles, res.NumAddedFiles)

	// A zero retention needs Force; the clock is moved past the
	// untracked-file floor (1 h) instead of waiting.
	later := time.Now().Add(2 * time.Hour)
	vres, err := compaction.Vacuum(ctx, t, compaction.VacuumOptions{RetainZero: true, Force: true, Now: func() time.Time { return later }})
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("vacuum: %d files deleted\n", vres.FilesDeleted)
	// Output:
	// optimize: version 5, 4 files removed, 1 added
	// vacuum: 4 files deleted
}
