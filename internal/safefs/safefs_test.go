package safefs

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

func TestMkdirAllRefusesLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	if err := MkdirAll(root, filepath.Join(root, "a", "b", "c"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(outside, filepath.Join(root, "a", "link")); err != nil {
		t.Fatal(err)
	}
	var se *SymlinkError
	err := MkdirAll(root, filepath.Join(root, "a", "link", "x", "y"), 0o755)
	if !errors.As(err, &se) || se.Path != filepath.Join(root, "a", "link") || se.Target != outside {
		t.Errorf("through a link: %v", err)
	}
	if err := Check(root, filepath.Join(root, "a", "link", "x")); !errors.As(err, &se) {
		t.Errorf("Check through a link: %v", err)
	}
	if err := Check(root, filepath.Join(root, "a", "new", "x")); err != nil {
		t.Errorf("Check of a path not made yet: %v", err)
	}
	if _, err := OpenFile(root, filepath.Join(root, "a", "link", "f"), os.O_CREATE|os.O_WRONLY, 0o644); !errors.As(err, &se) {
		t.Errorf("OpenFile through a link: %v", err)
	}
	if err := os.Symlink(filepath.Join(outside, "f"), filepath.Join(root, "a", "flink")); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(root, filepath.Join(root, "a", "flink"), os.O_CREATE|os.O_WRONLY, 0o644); !errors.As(err, &se) {
		t.Errorf("OpenFile of a link: %v", err)
	}
	if err := WriteFileAtomic(root, filepath.Join(root, "a", "link", "g"), []byte("x"), 0o644); !errors.As(err, &se) {
		t.Errorf("WriteFileAtomic through a link: %v", err)
	}
	if entries, _ := os.ReadDir(outside); len(entries) != 0 {
		t.Errorf("written through a link: %v", entries)
	}
	if err := MkdirAll(root, filepath.Join(root, "..", "escape"), 0o755); err == nil {
		t.Error("a path outside the root was created")
	}
	if err := WriteFileAtomic(root, filepath.Join(root, "a", "b", "ok.json"), []byte("ok"), 0o600); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(root, "a", "b", "ok.json")); string(b) != "ok" {
		t.Errorf("content %q", b)
	}
}
