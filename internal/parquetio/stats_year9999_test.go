package parquetio

import (
	"context"
	"github.com/lakesink/lakesink/schema"
	"strings"
	"testing"
	"time"
)

// A timestamp max with sub-millisecond digits is rounded up to the next
// millisecond, except at the end of year 9999, where rounding up would leave
// Spark's timestamp range ("10000-01-01..." cannot be parsed): there it stays
// truncated, as Delta writes every max. Regression test for the interop
// finding in interop/TestDeltaStatsTimestampMaxAtYear9999.
func TestStatsTimestampMaxClampedAtYear9999(t *testing.T) {
	sch := &schema.StructType{Fields: []schema.StructField{
		{Name: "ts", Type: schema.TypeTimestamp, Nullable: true},
		{Name: "ntz", Type: schema.TypeTimestampNTZ, Nullable: true},
	}}
	cases := []struct {
		v       time.Time
		wantTS  string
		wantNTZ string
	}{
		{time.Date(9999, 12, 31, 23, 59, 59, 999999000, time.UTC), `"ts":"9999-12-31T23:59:59.999Z"`, `"ntz":"9999-12-31T23:59:59.999"`},
		{time.Date(2001, 1, 1, 0, 47, 0, 1000, time.UTC), `"ts":"2001-01-01T00:47:00.001Z"`, `"ntz":"2001-01-01T00:47:00.001"`},
	}
	for _, c := range cases {
		files, err := WriteFiles(context.Background(), newMemStore(), &schema.Batch{Schema: sch, Rows: [][]any{{c.v, c.v}}}, WriteOptions{})
		if err != nil {
			t.Fatal(err)
		}
		maxPart := files[0].Stats[strings.Index(files[0].Stats, `"maxValues"`):]
		if !strings.Contains(maxPart, c.wantTS) || !strings.Contains(maxPart, c.wantNTZ) {
			t.Errorf("value %s: stats %s, want max %s and %s", c.v, files[0].Stats, c.wantTS, c.wantNTZ)
		}
	}
}
