package workspace

import (
	"fmt"
	"path/filepath"
	"strings"
)

// CheckedMemoryDir is MemoryDir for a name that must make exactly one path
// component inside its scope's root: a name such as ".." (which would make
// ~/.config/cadre an agent's working directory) is an error naming the
// problem (issue 9). "" and no error means no memory directory (no scope,
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
	return dir, nil
}

// memoryComponent is the path component MemoryDir makes of an agent name.
func memoryComponent(name string) string {
	return strings.NewReplacer(":", "-", "/", "-", string(filepath.Separator), "-").Replace(name)
}
