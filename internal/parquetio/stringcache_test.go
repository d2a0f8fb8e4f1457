package parquetio

import (
	"fmt"
	"testing"
)

// TestStringCache: every string comes back equal to its bytes whatever
// collides in the table, and a column of a few hundred distinct short
// values costs no allocation per value once they are met.
func TestStringCache(t *testing.T) {
	c := new(stringCache)
	long := string(make([]byte, stringCacheMaxLen+1))
	for round := range 3 {
		for i := range 5000 {
			s := fmt.Sprint("v", i%(700+round))
			if got := c.get([]byte(s)); got != s {
				t.Fatalf("get(%q) = %q", s, got)
			}
		}
		if got := c.get([]byte(long)); got != long {
			t.Fatal("long string changed")
		}
	}
	codes := make([][]byte, 300)
	for i := range codes {
		codes[i] = fmt.Appendf(nil, "%03d", i)
	}
	for _, b := range codes {
		c.get(b)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, b := range codes[:100] {
			c.get(b)
		}
	})
	if allocs > 10 {
		t.Fatalf("%.0f allocations per 100 known strings, want few (collisions only)", allocs)
	}
	t.Logf("%.0f allocations per 100 known strings", allocs)
}

// TestIntCache: every integer comes back as itself, of its own type, and
// integers in the cached range cost no allocation once met.
func TestIntCache(t *testing.T) {
	var c64 intCache[int64]
	var c32 intCache[int32]
	for _, x := range []int64{intCacheMin - 1, intCacheMin, -1, 0, 255, 256, 1000, intCacheMin + intCacheLen - 1, intCacheMin + intCacheLen, 1 << 40, -1 << 40} {
		for range 2 {
			if got := c64.box(x); got != any(x) {
				t.Fatalf("box(%d) = %v (%T)", x, got, got)
			}
			if got := c32.box(int32(x)); got != any(int32(x)) {
				t.Fatalf("box(int32 %d) = %v (%T)", int32(x), got, got)
			}
		}
	}
	for x := int64(intCacheMin); x < intCacheMin+intCacheLen; x++ {
		c64.box(x)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for x := int64(0); x < 3000; x++ {
			c64.box(x)
		}
	})
	if allocs != 0 {
		t.Fatalf("%.0f allocations for 3000 cached integers", allocs)
	}
}
