package text

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTruncate(t *testing.T) {
	t.Parallel()
	cases := []struct {
		s    string
		n    int
		want string
		cut  bool
	}{
		{"hello", 10, "hello", false},
		{"hello", 5, "hello", false},
		{"hello", 3, "hel", true},
		{"hello", 0, "", true},
		{"hello", -1, "", true},
		{"", 0, "", false},
		{"héllo", 2, "h", true},  // é is two bytes: never half of it
		{"héllo", 3, "hé", true}, // exactly after é
		{"日本語", 4, "日", true},    // three-byte characters
		{"日本語", 6, "日本", true},
		{"a😀b", 4, "a", true}, // four-byte character
	}
	for _, c := range cases {
		got, cut := Truncate(c.s, c.n)
		if got != c.want || cut != c.cut {
			t.Errorf("Truncate(%q, %d) = %q, %v; want %q, %v", c.s, c.n, got, cut, c.want, c.cut)
		}
	}
	if got := Ellipsis("日本語", 2); got != "日本…" {
		t.Errorf("Ellipsis = %q", got)
	}
	if got := Ellipsis("abc", 3); got != "abc" {
		t.Errorf("Ellipsis of a short string = %q", got)
	}
}

func FuzzTruncate(f *testing.F) {
	f.Add("héllo wörld", 3)
	f.Add(strings.Repeat("日", 10), 7)
	f.Fuzz(func(t *testing.T, s string, n int) {
		got, cut := Truncate(s, n)
		if len(got) > max(n, 0) && cut {
			t.Fatalf("%d bytes kept of at most %d", len(got), n)
		}
		if !strings.HasPrefix(s, got) {
			t.Fatal("not a prefix")
		}
		if cut == (got == s) {
			t.Fatalf("cut %v but got == s is %v", cut, got == s)
		}
		if utf8.ValidString(s) && !utf8.ValidString(got) {
			t.Fatalf("split a character: %q", got)
		}
		// In valid text, never more than three bytes short of n: only a
		// split character is dropped.
		if utf8.ValidString(s) && cut && max(n, 0)-len(got) > 3 {
			t.Fatalf("dropped %d bytes", max(n, 0)-len(got))
		}
	})
}
