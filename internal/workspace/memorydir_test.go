package workspace

import (
	"path/filepath"
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
