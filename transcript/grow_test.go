package transcript

import (
	"os"
	"path/filepath"
	"testing"
)

// TestGrowOwnedRewritesInPlace: an agent's metadata rewritten at its end
// keeps its file (the same inode: no temp file created, none renamed
// over it, nothing freed), and holds exactly the new record; a shorter
// record is still written exactly (through the atomic replace), and a
// missing file is created.
func TestGrowOwnedRewritesInPlace(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "agent-a1.meta.json")
	j := NewJournal()
	defer j.Close()
	sync := func() {
		t.Helper()
		if err := j.Sync(); err != nil {
			t.Fatal(err)
		}
	}
	read := func() (string, os.FileInfo) {
		t.Helper()
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		st, err := os.Stat(path)
		if err != nil {
			t.Fatal(err)
		}
		return string(b), st
	}
	if err := j.CreateOwned(path, []byte("{\"finished\":false}\n")); err != nil {
		t.Fatal(err)
	}
	sync()
	_, before := read()
	final := "{\"finished\":true,\"status\":\"completed\"}\n"
	if err := j.GrowOwned(path, []byte(final)); err != nil {
		t.Fatal(err)
	}
	sync()
	got, after := read()
	if got != final {
		t.Fatalf("after GrowOwned: %q, want %q", got, final)
	}
	if !os.SameFile(before, after) {
		t.Fatal("GrowOwned made a new file for a longer record; want the same inode rewritten in place")
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("files left in the directory: %v, want only the meta", entries)
	}

	short := "{}\n"
	if err := j.GrowOwned(path, []byte(short)); err != nil {
		t.Fatal(err)
	}
	sync()
	if got, _ := read(); got != short {
		t.Fatalf("after a shorter GrowOwned: %q, want %q", got, short)
	}

	missing := filepath.Join(dir, "sub", "agent-a2.meta.json")
	if err := j.GrowOwned(missing, []byte(final)); err != nil {
		t.Fatal(err)
	}
	sync()
	if b, err := os.ReadFile(missing); err != nil || string(b) != final {
		t.Fatalf("GrowOwned of a missing file: %q, %v", b, err)
	}
}

// TestGrowOwnedRefusesALink: the in-place rewrite does not write through
// a symbolic link at the path (it would redirect cadre's write).
func TestGrowOwnedRefusesALink(t *testing.T) {
	dir := t.TempDir()
	target := filepath.Join(dir, "elsewhere")
	if err := os.WriteFile(target, []byte("keep"), 0o600); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "agent-a1.meta.json")
	if err := os.Symlink(target, path); err != nil {
		t.Fatal(err)
	}
	if err := rewriteFile(path, []byte("{\"finished\":true}\n")); err == nil {
		t.Fatal("rewrite through a link succeeded")
	}
	if b, _ := os.ReadFile(target); string(b) != "keep" {
		t.Fatalf("the link's target was written: %q", b)
	}
}
