package sink_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/lakesink/lakesink/schema"
	"github.com/lakesink/lakesink/sink"
)

type event struct {
	ID     int64     `parquet:"id"`
	Origin string    `parquet:"origin"`
	At     time.Time `parquet:"at"`
}

// Typed Go structs enter through FromStructs and land like any batch.
func TestFromStructsThroughTheSink(t *testing.T) {
	ctx := context.Background()
	b, err := schema.FromStructs([]event{{1, "SFO", time.Unix(10, 0).UTC()}, {2, "JFK", time.Unix(20, 0).UTC()}})
	if err != nil {
		t.Fatal(err)
	}
	if f, ok := b.Schema.Field("at"); !ok || f.Type != schema.TypeTimestamp {
		t.Fatalf("schema %v: want at as timestamp", b.Schema)
	}
	s := newSink(t, "mem://"+t.Name(), sink.Options{QueryID: "typed"})
	if _, err := s.AddBatch(ctx, 0, b); err != nil {
		t.Fatal(err)
	}
	if got := readIDs(t, s.Table()); !slices.Equal(got, []int64{1, 2}) {
		t.Fatalf("ids %v", got)
	}
}
