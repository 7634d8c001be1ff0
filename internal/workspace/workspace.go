// Package workspace reads the facts the prompts state about a working
// directory: the git repository and branch, the project instructions file,
// a snapshot of git status taken once per session, and where an agent
// with memory keeps its notes. It reads; package prompts frames what it
// read for the model.
package workspace

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/text"
)

// MaxInstructionsBytes is how much of a project instructions file is read;
// the rest is cut (Instructions.Cut says so).
const MaxInstructionsBytes = 64 << 10

// Repo is the git repository a directory belongs to.
type Repo struct {
	// Root is the directory holding .git.
	Root string
	// Branch is the checked-out branch; "" for a detached HEAD.
	Branch string
}

// FindRepo finds the git repository containing dir by walking up to a .git
// entry, and reads the branch from HEAD without running git (start-up must
// stay fast). ok is false outside a repository.
func FindRepo(dir string) (repo Repo, ok bool) {
	for d := dir; ; d = filepath.Dir(d) {
		st, err := os.Stat(filepath.Join(d, ".git"))
		if err == nil {
			gitDir := filepath.Join(d, ".git")
			if !st.IsDir() {
				// A worktree or submodule: ".git" is a file "gitdir: PATH".
				if b, err := os.ReadFile(gitDir); err == nil {
					if p, found := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: "); found {
						if !filepath.IsAbs(p) {
							p = filepath.Join(d, p)
						}
						gitDir = p
					}
				}
			}
			head, _ := os.ReadFile(filepath.Join(gitDir, "HEAD"))
			repo = Repo{Root: d}
			// A detached HEAD names a commit, not a branch.
			if b, isRef := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/"); isRef {
				repo.Branch = b
			}
			return repo, true
		}
		if parent := filepath.Dir(d); parent == d {
			return Repo{}, false
		}
	}
}

// InstructionFiles are the names of the project instruction files, in the
// order they are looked for; the first found is used.
func InstructionFiles() []string { return []string{"CADRE.md", "CLAUDE.md", "AGENTS.md"} }

// Instructions is a project instructions file as read.
type Instructions struct {
	// Name is the file's base name; "" when there is none.
	Name string
	// Text is its content, trimmed, at most MaxInstructionsBytes.
	Text string
	// Cut is true when the file was longer than that.
	Cut bool
}

// ReadInstructions returns the first instruction file found in dir.
func ReadInstructions(dir string) Instructions {
	for _, n := range InstructionFiles() {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		s, cut := text.Truncate(string(b), MaxInstructionsBytes)
		return Instructions{Name: n, Text: strings.TrimSpace(s), Cut: cut}
	}
	return Instructions{}
}

// Facts are what the prompts say about one working directory.
type Facts struct {
	// Repo is the repository; InRepo is false outside one.
	Repo   Repo
	InRepo bool
	// Instructions is the project instructions file of the directory.
	Instructions Instructions
}

// FactCache reads the facts of each directory once and keeps them for the
// session: like git status, they are the session's view, so starting a
// sub-agent costs no file system calls for them. Safe for concurrent use.
type FactCache struct {
	mu    sync.Mutex
	facts map[string]Facts
}

// Get returns the facts of dir, reading them on first use.
func (c *FactCache) Get(dir string) Facts {
	c.mu.Lock()
	defer c.mu.Unlock()
	if f, ok := c.facts[dir]; ok {
		return f
	}
	var f Facts
	f.Repo, f.InRepo = FindRepo(dir)
	f.Instructions = ReadInstructions(dir)
	if c.facts == nil {
		c.facts = map[string]Facts{}
	}
	c.facts[dir] = f
	return f
}
