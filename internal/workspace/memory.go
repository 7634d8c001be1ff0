package workspace

import (
	"bufio"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
)

// Memory scopes of an agent definition (S-4.7).
const (
	MemoryUser    = "user"
	MemoryProject = "project"
	MemoryLocal   = "local"
)

// MemoryFile is the notes file in a memory directory.
const MemoryFile = "MEMORY.md"

// MemoryDir is where an agent named name with memory scope keeps its
// notes: <home>/.config/cadre/agent-memory/<name> (user),
// <project>/.cadre/agent-memory/<name> (project), or
// <project>/.cadre/agent-memory-local/<name> (local, meant to stay out of
// version control). It returns "" when scope is empty or unknown, or when
// the user scope is asked for without a home directory.
func MemoryDir(scope, name, home, project string) string {
	name = memoryComponent(name)
	switch scope {
	case MemoryUser:
		if home == "" {
			return ""
		}
		return filepath.Join(home, ".config", "cadre", "agent-memory", name)
	case MemoryProject:
		return filepath.Join(project, ".cadre", "agent-memory", name)
	case MemoryLocal:
		return filepath.Join(project, ".cadre", "agent-memory-local", name)
	}
	return ""
}

// Memory is the start of an agent's MEMORY.md.
type Memory struct {
	// Exists is false when the file does not exist yet.
	Exists bool
	// Lines are its first lines, without line ends.
	Lines []string
	// Cut is true when the file has more lines than were read.
	Cut bool
}

// ReadMemory reads the first maxLines lines of dir's MEMORY.md. A missing
// file is not an error.
func ReadMemory(dir string, maxLines int) (Memory, error) {
	f, err := os.Open(filepath.Join(dir, MemoryFile))
	if errors.Is(err, fs.ErrNotExist) {
		return Memory{}, nil
	}
	if err != nil {
		return Memory{}, fmt.Errorf("read agent memory: %w", err)
	}
	defer f.Close()
	m := Memory{Exists: true}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		if len(m.Lines) == maxLines {
			m.Cut = true
			break
		}
		m.Lines = append(m.Lines, sc.Text())
	}
	if err := sc.Err(); err != nil {
		return m, fmt.Errorf("read agent memory %s: %w", filepath.Join(dir, MemoryFile), err)
	}
	return m, nil
}
