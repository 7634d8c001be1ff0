package permission

import (
	"regexp"
	"testing"
)

// TestWordChecksMatchTheirPatterns: isNumber, isFD and isAssign are the
// patterns they replaced, written as code; every case agrees with the
// regexp.
func TestWordChecksMatchTheirPatterns(t *testing.T) {
	t.Parallel()
	checks := []struct {
		name string
		fn   func(string) bool
		re   *regexp.Regexp
	}{
		{"isNumber", isNumber, regexp.MustCompile(`^-?[0-9]+$`)},
		{"isFD", isFD, regexp.MustCompile(`^([0-9]+-?|-)$`)},
		{"isAssign", isAssign, regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*=`)},
	}
	words := []string{"", "-", "--", "0", "12", "-12", "--1", "1-", "12-", "1--", "-1-", "+1", "a", "1a", "a1",
		"=", "a=", "a=b", "_=", "_a1=x", "1a=", "a-b=", "A_B=c=d", "ab", "a b=", "é=", " 1", "1 ", "0x1", "１"}
	for _, c := range checks {
		for _, w := range words {
			if got, want := c.fn(w), c.re.MatchString(w); got != want {
				t.Errorf("%s(%q) = %v, the pattern says %v", c.name, w, got, want)
			}
		}
	}
}
