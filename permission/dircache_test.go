package permission

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"
)

func TestDirCacheResolvesAsResolvePath(t *testing.T) {
	root := t.TempDir()
	real := filepath.Join(root, "real")
	if err := os.Mkdir(real, 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(root, "link")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	var c DirCache
	for _, d := range []string{link, "sub/../x", "~", "~+/y", real} {
		wl, wr := resolvePath(d, link, root)
		for range 2 { // first resolved, then remembered
			if l, r := c.resolve(d, link, root); l != wl || r != wr {
				t.Fatalf("%s: (%s, %s), want (%s, %s)", d, l, r, wl, wr)
			}
		}
	}
	var none *DirCache
	if l, r := none.resolve(link, root, root); l != link || r != evalExisting(link) {
		t.Fatalf("nil cache: (%s, %s)", l, r)
	}
}

// A working directory keeps the identity it first resolved to: when it is
// replaced by a symlink to somewhere else, paths there are not inside it.
func TestDirCachePinsTheWorkingDirectory(t *testing.T) {
	root := t.TempDir()
	work := filepath.Join(root, "work")
	elsewhere := filepath.Join(root, "elsewhere")
	for _, d := range []string{work, elsewhere} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	secret := filepath.Join(elsewhere, "secret.txt")
	if err := os.WriteFile(secret, []byte("s"), 0o644); err != nil {
		t.Fatal(err)
	}
	cache := &DirCache{}
	c, err := NewChecker(Config{Cwd: work, Home: root, DirCache: cache})
	if err != nil {
		t.Fatal(err)
	}
	if e := c.env(Request{}); !e.insideReal(filepath.Join(work, "a.txt")) {
		t.Fatal("a file of the working directory is not inside it")
	}
	// The working directory becomes a link to elsewhere.
	if err := os.Remove(work); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, work); err != nil {
		t.Fatal(err)
	}
	if e := c.env(Request{}); e.insideReal(evalExisting(filepath.Join(work, "secret.txt"))) {
		t.Fatal("with the cache, the re-pointed working directory reaches elsewhere")
	}
	// Without the cache the link is followed (what every check did before).
	plain, err := NewChecker(Config{Cwd: work, Home: root})
	if err != nil {
		t.Fatal(err)
	}
	if e := plain.env(Request{}); !e.insideReal(evalExisting(filepath.Join(work, "secret.txt"))) {
		t.Fatal("without the cache the link should be followed")
	}
}

func TestDirCacheBounded(t *testing.T) {
	var c DirCache
	for i := range maxDirCache + 10 {
		c.resolve(fmt.Sprintf("/nowhere/d%d", i), "/", "/")
	}
	if n := len(c.m); n > maxDirCache || n == 0 {
		t.Fatalf("%d entries", n)
	}
}
