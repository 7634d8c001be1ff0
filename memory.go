package cadre

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
)

// memoryLines is how much of MEMORY.md goes into the prompt (S-4.7).
const memoryLines = 200

// memoryDir is where an agent with `memory: user|project|local` keeps its
// notes: ~/.config/cadre/agent-memory/<name>, <project>/.cadre/agent-memory/
// <name>, or <project>/.cadre/agent-memory-local/<name> (meant to stay out
// of version control). "" when the definition has no memory.
func (r *Runtime) memoryDir(def *agentdef.Definition) string {
	name := strings.NewReplacer(":", "-", "/", "-", string(filepath.Separator), "-").Replace(def.Name)
	switch def.Memory {
	case "user":
		home := r.cfg.Getenv("HOME")
		if home == "" {
			return ""
		}
		return filepath.Join(home, ".config", "cadre", "agent-memory", name)
	case "project":
		return filepath.Join(r.cfg.Cwd, ".cadre", "agent-memory", name)
	case "local":
		return filepath.Join(r.cfg.Cwd, ".cadre", "agent-memory-local", name)
	}
	return ""
}

// memoryBlock is the system prompt block of an agent's memory: where it is,
// how to use it, and the first lines of its MEMORY.md.
func memoryBlock(dir string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "<agent-memory dir=%q>\n", dir)
	fmt.Fprintf(&b, "You have a persistent memory directory, %s, that outlives this run. "+
		"Keep what is worth knowing next time (conventions, decisions, pitfalls, where things are) in %s, "+
		"concise and under %d lines; other files there are yours too. Update it before you finish when you learned something new.\n",
		dir, filepath.Join(dir, "MEMORY.md"), memoryLines)
	f, err := os.Open(filepath.Join(dir, "MEMORY.md"))
	if err != nil {
		b.WriteString("MEMORY.md does not exist yet.\n")
	} else {
		defer f.Close()
		b.WriteString("Current MEMORY.md:\n")
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		n := 0
		for sc.Scan() {
			if n == memoryLines {
				fmt.Fprintf(&b, "(cut after %d lines; read the file for the rest)\n", memoryLines)
				break
			}
			b.WriteString(sc.Text())
			b.WriteByte('\n')
			n++
		}
	}
	b.WriteString("</agent-memory>")
	return b.String()
}
