package textdist

import "testing"

func TestDistance(t *testing.T) {
	cases := []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"tools", "tools", 0}, {"", "abc", 3}, {"abc", "", 3},
		{"allowedTools", "tools", 8}, {"tool", "tools", 1}, {"kitten", "sitting", 3},
		{"modle", "model", 2}, {"é", "e", 1}, {"日本", "日本語", 1},
	}
	for _, c := range cases {
		if got := Distance(c.a, c.b); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
		if got := Distance(c.b, c.a); got != c.want {
			t.Errorf("Distance(%q, %q) = %d, want %d (symmetry)", c.b, c.a, got, c.want)
		}
	}
}
