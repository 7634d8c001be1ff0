//go:build linux

package permission

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRealPathIsEvalSymlinks builds a tree of files, directories, relative
// and absolute links, chains, links through "..", a FIFO and a long path,
// and checks that realPath answers exactly what filepath.EvalSymlinks does
// for every existing path, and declines (ok false) for a missing path, a
// dangling link and a loop — which evalExisting's walk then decides as
// before.
func TestRealPathIsEvalSymlinks(t *testing.T) {
	root := t.TempDir()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	j := func(p ...string) string { return filepath.Join(append([]string{root}, p...)...) }
	must(os.MkdirAll(j("a", "b", "c"), 0o755))
	must(os.WriteFile(j("a", "b", "c", "f.txt"), []byte("x"), 0o600))
	must(os.WriteFile(j("a", "noread"), []byte("x"), 0o000))
	must(os.Symlink("b/c", j("a", "rel")))
	must(os.Symlink(j("a", "b"), j("abs")))
	must(os.Symlink("../abs", j("a", "up")))
	must(os.Symlink("up", j("a", "chain")))
	must(os.Symlink("c/f.txt", j("a", "b", "tofile")))
	must(os.Symlink("nowhere", j("dangling")))
	must(os.Symlink("loop2", j("loop1")))
	must(os.Symlink("loop1", j("loop2")))
	must(os.Symlink(".", j("a", "self")))
	must(syscall.Mkfifo(j("a", "fifo"), 0o600))
	long := j("a", strings.Repeat("d", 200), strings.Repeat("e", 200))
	must(os.MkdirAll(long, 0o755))
	must(os.WriteFile(filepath.Join(long, "g"), nil, 0o600))

	for _, p := range []string{
		root, j("a"), j("a", "b", "c", "f.txt"), j("a", "noread"), j("a", "rel"), j("a", "rel", "f.txt"),
		j("abs"), j("abs", "c"), j("a", "up", "c", "f.txt"), j("a", "chain"), j("a", "chain", "tofile"),
		j("a", "b", "tofile"), j("a", "self", "self", "rel"), j("a", "fifo"), filepath.Join(long, "g"), "/",
	} {
		want, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatalf("EvalSymlinks(%s): %v", p, err)
		}
		got, ok := realPath(p)
		if !ok || got != want {
			t.Errorf("realPath(%s) = %q, %v; EvalSymlinks %q", p, got, ok, want)
		}
		if e := evalExisting(p); e != want {
			t.Errorf("evalExisting(%s) = %q, want %q", p, e, want)
		}
	}
	for _, p := range []string{j("missing"), j("a", "missing", "x"), j("dangling"), j("loop1"), j("a", "b", "c", "f.txt", "under")} {
		if got, ok := realPath(p); ok {
			t.Errorf("realPath(%s) = %q, want no answer", p, got)
		}
	}
	// The walk still decides what realPath declines, as before.
	if got, want := evalExisting(j("abs", "c", "new.txt")), filepath.Join(root, "a", "b", "c", "new.txt"); got != want {
		t.Errorf("evalExisting of a new file = %q, want %q", got, want)
	}
	if got := evalExisting(j("loop1")); got != j("loop1") {
		t.Errorf("evalExisting of a loop = %q, want it unchanged", got)
	}
}
