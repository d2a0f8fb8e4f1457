package storage_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/lakesink/lakesink/storage"
)

// Open a store from a URL (a local path, file://, mem:// or s3://) and use
// its put-if-absent primitive, on which every commit rests: of two puts of
// one path exactly one wins.
func ExampleOpen() {
	ctx := context.Background()
	st, err := storage.Open(ctx, "mem://example-open/tables")
	if err != nil {
		fmt.Println(err)
		return
	}
	defer st.Close()
	fmt.Println(st.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("{}")))
	err = st.PutIfAbsent(ctx, "_delta_log/00000000000000000000.json", []byte("{}"))
	fmt.Println(errors.Is(err, storage.ErrAlreadyExists))
	data, _ := st.Read(ctx, "_delta_log/00000000000000000000.json")
	fmt.Println(string(data))
	// Output:
	// <nil>
	// true
	// {}
}
