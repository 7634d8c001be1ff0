package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Issue 9: an agent named ".." with memory: user made ~/.config/cadre a
// working directory of the agent.
func TestCheckedMemoryDir(t *testing.T) {
	t.Parallel()
	home, proj := "/home/u", "/work/p"
	cases := []struct {
		scope, name, want string
		bad               bool
	}{
		{scope: MemoryUser, name: "reviewer", want: filepath.Join(home, ".config", "cadre", "agent-memory", "reviewer")},
		{scope: MemoryProject, name: "plugin:rev", want: filepath.Join(proj, ".cadre", "agent-memory", "plugin-rev")},
		{scope: MemoryLocal, name: "a/b", want: filepath.Join(proj, ".cadre", "agent-memory-local", "a-b")},
		{scope: MemoryUser, name: "..", bad: true},
		{scope: MemoryProject, name: ".", bad: true},
		{scope: MemoryUser, name: "", bad: true},
		{scope: MemoryUser, name: " ", bad: true},
		{scope: MemoryUser, name: "x\x00", bad: true},
		{scope: "", name: "..", want: ""},
	}
	for _, c := range cases {
		got, err := CheckedMemoryDir(c.scope, c.name, home, proj)
		if (err != nil) != c.bad || got != c.want {
			t.Errorf("%s %q: %q %v, want %q bad=%v", c.scope, c.name, got, err, c.want, c.bad)
		}
	}
}

// Issue 23: a checked-in .cadre/agent-memory that links elsewhere (the
// user's agents directory) is refused, naming the link.
func TestMemoryDirThroughLinkRefused(t *testing.T) {
	t.Parallel()
	proj, target := t.TempDir(), t.TempDir()
	if err := os.MkdirAll(filepath.Join(proj, ".cadre"), 0o755); err != nil {
		t.Fatal(err)
	}
	link := filepath.Join(proj, ".cadre", "agent-memory")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	_, err := CheckedMemoryDir(MemoryProject, "rev", "", proj)
	if err == nil || !strings.Contains(err.Error(), link) {
		t.Errorf("memory through a link: %v", err)
	}
	if dir, err := CheckedMemoryDir(MemoryLocal, "rev", "", proj); err != nil || dir == "" {
		t.Errorf("a memory directory with no link: %q %v", dir, err)
	}
}
