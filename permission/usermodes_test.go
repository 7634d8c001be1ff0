package permission

import (
	"strings"
	"testing"
)

// The modes a bad value's error offers are the ones cadre runs: auto is
// parsed (it gets its own refusal) but never listed as valid.
func TestUnknownModeListsOnlyRunnableModes(t *testing.T) {
	_, err := ParseMode("bogus")
	if err == nil || strings.Contains(err.Error(), "auto") || !strings.Contains(err.Error(), "bypassPermissions") {
		t.Fatalf("error %v", err)
	}
	if m, err := ParseMode("auto"); err != nil || m != ModeAuto {
		t.Fatalf("auto parsed as %q, %v", m, err)
	}
	for _, m := range UserModes() {
		if _, err := NewChecker(Config{Mode: m, Cwd: "/"}); err != nil {
			t.Errorf("listed mode %s is refused: %v", m, err)
		}
	}
}
