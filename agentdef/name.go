package agentdef

import (
	"strings"
	"unicode"
)

// pathUnsafe returns why a name cannot serve as one path component — an
// agent's memory directory, transcript and worktree names derive from it
// (S-10.4) — or "" when it can. `..` and `.` would leave or stay in the
// parent directory, a separator would add components, and control
// characters have no place in a file name.
func pathUnsafe(name string) string {
	switch {
	case name == "." || name == "..":
		return "it names a directory (\".\" or \"..\"), and agent names become directory names"
	case strings.ContainsAny(name, `/\`):
		return "it contains a path separator (\"/\" or \"\\\"), and agent names become directory names"
	case strings.IndexFunc(name, unicode.IsControl) >= 0:
		return "it contains a control character"
	}
	return ""
}
