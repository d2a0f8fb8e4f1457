package schema

import (
	"errors"
	"testing"
	"time"
)

// TestVectorMicros: a VecMicros vector stores a time.Time's microseconds
// (Set), gives back the UTC time.Time (Value), keeps its values through
// Take, and refuses a value that is not a time.Time.
func TestVectorMicros(t *testing.T) {
	v := NewVector(VecMicros, 3)
	t0 := time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.FixedZone("+01:00", 3600))
	t1 := time.Date(2001, 1, 1, 0, 1, 0, 0, time.UTC)
	for i, x := range []any{t0, nil, t1} {
		if err := v.Set(i, x); err != nil {
			t.Fatal(err)
		}
	}
	if v.Int64[0] != t0.UnixMicro() || v.Int64[2] != 978307260_000_000 {
		t.Fatalf("stored %v", v.Int64)
	}
	if got := v.Value(0, TypeTimestamp); got != t0.UTC() {
		t.Fatalf("Value(0) = %v, want %v", got, t0.UTC())
	}
	if got := v.Value(1, TypeTimestamp); got != nil {
		t.Fatalf("Value(1) = %v, want nil", got)
	}
	v.Take([]int32{2})
	if v.Len != 1 || v.Null != nil || v.Value(0, TypeTimestampNTZ) != t1 {
		t.Fatalf("after Take: %+v", v)
	}
	if err := v.Set(0, int64(5)); !errors.Is(err, ErrRowMismatch) {
		t.Fatalf("Set(int64) = %v, want ErrRowMismatch", err)
	}
}
