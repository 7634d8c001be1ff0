package transcript

import (
	"os"
	"path/filepath"
	"testing"
)

// TestCreateReplaceOwned: the variants that keep the caller's bytes write
// what Create and Replace write.
func TestCreateReplaceOwned(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "a.meta.json")
	j := NewJournal()
	defer j.Close()
	if err := j.CreateOwned(path, []byte("{\"v\":1}\n")); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{\"v\":1}\n" {
		t.Fatalf("after CreateOwned: %q, %v", b, err)
	}
	if err := j.ReplaceOwned(path, []byte("{\"v\":2}\n")); err != nil {
		t.Fatal(err)
	}
	if err := j.Sync(); err != nil {
		t.Fatal(err)
	}
	if b, err := os.ReadFile(path); err != nil || string(b) != "{\"v\":2}\n" {
		t.Fatalf("after ReplaceOwned: %q, %v", b, err)
	}
}
