package sandbox

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
)

// Bash confines the commands of the Bash tool (it implements
// builtin.Sandbox): each command may write the agent's working
// directories, and gets the masks Masks returns as it starts.
type Bash struct {
	Sandbox *Sandbox
	// Masks returns the paths to hide and to make read-only for an agent
	// whose working directories are cwd and dirs: the agent's
	// permission.Checker.SandboxMasks. Nil masks nothing.
	Masks func(cwd string, dirs []string) (hidden, readOnly []string, err error)
}

// Command returns the sandboxed `bash -c command` and the function that
// explains the sandbox's refusals in its output, called once the command
// has ended: it also moves aside what the command created where git and
// cadre would trust it (MoveAsideCreated).
func (b *Bash) Command(cwd string, dirs []string, command string) (*exec.Cmd, func(string) string, error) {
	if cwd == "" {
		wd, err := os.Getwd()
		if err != nil {
			return nil, nil, fmt.Errorf("working directory: %w", err)
		}
		cwd = wd
	}
	p := Policy{Cwd: cwd, Dirs: dirs}
	if b.Masks != nil {
		var err error
		if p.Hidden, p.ReadOnly, err = b.Masks(cwd, dirs); err != nil {
			// Running without a mask would show what a rule protects.
			return nil, nil, fmt.Errorf("cannot work out what to mask, so the command was not run: %w", err)
		}
	}
	// What the read-only mounts cannot cover (it does not exist yet) is
	// checked once the command has ended.
	absent := b.Sandbox.Absent(p)
	cmd, err := b.Sandbox.Command(p, []string{"bash", "-c", command})
	if err != nil {
		return nil, nil, err
	}
	return cmd, func(out string) string {
		notes := MoveAsideCreated(absent)
		if n := b.Sandbox.Explain(p, out); n != "" {
			notes = append(notes, n)
		}
		return strings.Join(notes, "\n")
	}, nil
}
