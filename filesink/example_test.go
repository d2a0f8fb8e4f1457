package filesink_test

import (
	"context"
	"fmt"
	"time"

	"github.com/lakesink/lakesink/filesink"
	"github.com/lakesink/lakesink/schema"

	"github.com/lakesink/lakesink/storage"
)

func Example() {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://example-filesink/out")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()

	opts := filesink.DefaultOptions()
	opts.PartitionColumns = []string{"country"}
	s, err := filesink.New(ctx, st, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "id", Type: schema.TypeLong},
		{Name: "country", Type: schema.TypeString, Nullable: true},
	}}
	batch := &schema.Batch{Schema: sch, Rows: [][]any{{int64(1), "FR"}, {int64(2), "DE"}, {int64(3), "FR"}}}
	res, err := s.AddBatch(ctx, 0, batch)
	fmt.Println(res.NumFiles, res.NumRows, res.Skipped, err)
	res, err = s.AddBatch(ctx, 0, batch) // a replay after a restart
	fmt.Println(res.Skipped, err)

	ls, err := filesink.ListFiles(ctx, st, opts)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range ls.Files {
		fmt.Println(f.Partition[0].Column, *f.Partition[0].Value)
	}
	orphans, err := filesink.Orphans(ctx, st, time.Hour, opts)
	fmt.Println(len(orphans), err)
	// Output:
	// 2 3 false <nil>
	// true <nil>
	// country FR
	// country DE
	// 0 <nil>
}
