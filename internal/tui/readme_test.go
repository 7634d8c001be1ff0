package tui

import (
	"os"
	"strings"
	"testing"
)

// TestReadmeMatchesTheUI keeps the docs honest: the terminal UI's page
// (docs/tui.md, where the README's reference moved) has the key bindings
// table /help shows, and its capture of a background notification is the
// golden view's.
func TestReadmeMatchesTheUI(t *testing.T) {
	t.Parallel()
	b, err := os.ReadFile("../../docs/tui.md")
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	for _, k := range keyHelp() {
		row := "| `" + k[0] + "` | " + k[1] + " |"
		if !strings.Contains(readme, row) {
			t.Errorf("the README's key table lacks %s", row)
		}
	}
	g, err := os.ReadFile("testdata/notification_80x24.golden")
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(g), "\n") {
		lines = append(lines, strings.TrimRight(l, " "))
	}
	capture := strings.Trim(strings.Join(lines, "\n"), "\n")
	if !strings.Contains(readme, capture) {
		t.Errorf("the README's notification capture is not the golden view:\n%s", capture)
	}
}
