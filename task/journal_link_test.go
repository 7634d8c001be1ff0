package task

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestJournalLinkRefused: a link planted where the task journal goes is
// not written through; the error names it and the target is untouched.
func TestJournalLinkRefused(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(dir, "tasks.jsonl")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	j, _, err := OpenJournal(link)
	if err == nil {
		j.Close()
		t.Fatal("the journal opened through a link")
	}
	if !strings.Contains(err.Error(), "tasks.jsonl is a symbolic link") {
		t.Fatalf("error %v does not name the link", err)
	}
	if b, _ := os.ReadFile(target); len(b) != 0 {
		t.Fatalf("the link's target was written: %q", b)
	}
}
