package parquetio

import "testing"

// A partition value ending in ".." must not produce a "../" in a key: the
// table would be written but unreadable through object-store layers.
// Regression test for a value ".." found by an adversarial review.
func TestPartitionPathEscapesTrailingDots(t *testing.T) {
	for _, c := range []struct{ v, want string }{
		{"..", "p=%2E%2E"},
		{"a..", "a=x/p=a%2E%2E"},
		{"a.", "p=a."},
		{".", "p=."},
		{"a.b", "p=a.b"},
	} {
		v := c.v
		vals := map[string]*string{"p": &v}
		cols := []string{"p"}
		if c.v == "a.." {
			x := "x"
			vals["a"], cols = &x, []string{"a", "p"}
		}
		got := PartitionPath(cols, vals)
		if got != c.want {
			t.Errorf("value %q: path %q, want %q", c.v, got, c.want)
		}
		kvs, err := ParsePartitionPath(got)
		if err != nil || *kvs[len(kvs)-1].Value != c.v {
			t.Errorf("value %q: parsed back %v, %v", c.v, kvs, err)
		}
	}
}
