package workspace

import (
	"fmt"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/internal/safefs"
)

// CheckedMemoryDir is MemoryDir for a name that must make exactly one path
// component inside its scope's root: a name such as ".." (which would make
// ~/.config/cadre an agent's working directory) is an error naming the
// problem (issue 9), and so is a symbolic link in any component below the
// project (or home) directory (issue 23). "" and no error means no memory directory (no scope,
// or the user scope without a home).
func CheckedMemoryDir(scope, name, home, project string) (string, error) {
	dir := MemoryDir(scope, name, home, project)
	if dir == "" {
		return "", nil
	}
	comp := memoryComponent(name)
	if comp == "." || comp == ".." || strings.TrimSpace(comp) == "" || strings.ContainsRune(comp, 0) || filepath.Base(dir) != comp {
		return "", fmt.Errorf("agent name %q cannot name a memory directory: it must make one path component inside %s", name, filepath.Dir(MemoryDir(scope, "x", home, project)))
	}
	// The agent writes its notes there: no component below the project
	// (or the home directory) may be a link that sends them elsewhere, a
	// checked-in .cadre/agent-memory -> ~/.claude/agents for one (issue 23).
	root := project
	if scope == MemoryUser {
		root = home
	}
	if err := safefs.Check(root, dir); err != nil {
		return "", fmt.Errorf("memory directory of agent %s: %w", name, err)
	}
	return dir, nil
}

// memoryComponent is the path component MemoryDir makes of an agent name.
func memoryComponent(name string) string {
	return strings.NewReplacer(":", "-", "/", "-", string(filepath.Separator), "-").Replace(name)
}
