// Package prompts holds the model-facing texts of the runtime itself (the
// main agent's system prompt and the environment block), embedded so the
// binary needs no files beside it.
package prompts

import (
	_ "embed"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"
)

//go:embed main.md
var main string

//go:embed subagent.md
var subagent string

//go:embed agenttool.md
var agentTool string

// Main is the main agent's default system prompt.
func Main() string { return strings.TrimSpace(main) }

// Subagent is the fixed block every sub-agent's system prompt carries after
// its definition's body (S-5.2).
func Subagent() string { return strings.TrimSpace(subagent) }

// AgentTool is the Agent tool's description around the agent listing.
// defaultType names the type used when subagent_type is omitted ("" when
// it is required).
func AgentTool(listing, defaultType string) string {
	def := ""
	if defaultType != "" {
		def = fmt.Sprintf(" Without it, %s is used.", defaultType)
	}
	return strings.NewReplacer("{{LISTING}}", strings.TrimRight(listing, "\n"), "{{DEFAULT_TYPE}}", def).Replace(strings.TrimSpace(agentTool))
}

// Environment describes where an agent runs. Its rendering only changes when
// the facts do, so it can sit in the cached prefix.
type Environment struct {
	Cwd     string
	Dirs    []string
	ModelID string
	Date    time.Time
	// GitBranch is the checked-out branch, "" outside a repository.
	GitRepo   bool
	GitBranch string
}

// Render returns the environment block.
func (e Environment) Render() string {
	var b strings.Builder
	b.WriteString("<env>\n")
	fmt.Fprintf(&b, "Working directory: %s\n", e.Cwd)
	for _, d := range e.Dirs {
		fmt.Fprintf(&b, "Additional working directory: %s\n", d)
	}
	if e.GitRepo {
		b.WriteString("Is a git repository: yes\n")
		if e.GitBranch != "" {
			fmt.Fprintf(&b, "Current branch: %s\n", e.GitBranch)
		}
	} else {
		b.WriteString("Is a git repository: no\n")
	}
	fmt.Fprintf(&b, "Platform: %s/%s\n", runtime.GOOS, runtime.GOARCH)
	fmt.Fprintf(&b, "Today's date: %s\n", e.Date.Format("2006-01-02"))
	if e.ModelID != "" {
		fmt.Fprintf(&b, "Model: %s\n", e.ModelID)
	}
	b.WriteString("</env>")
	return b.String()
}

// GitInfo finds the git repository containing dir by walking up to a .git
// entry, and reads the branch from HEAD without running git (start-up
// must stay fast).
func GitInfo(dir string) (root string, branch string, ok bool) {
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
			ref, isRef := strings.CutPrefix(strings.TrimSpace(string(head)), "ref: refs/heads/")
			if isRef {
				branch = ref
			}
			return d, branch, true
		}
		if parent := filepath.Dir(d); parent == d {
			return "", "", false
		}
	}
}

// InstructionFiles returns the names of the project instruction files read
// into the main agent's context, in the order they are looked for.
func InstructionFiles() []string { return []string{"CADRE.md", "CLAUDE.md", "AGENTS.md"} }

// ProjectInstructions returns the first instruction file found in dir, and
// its name. Files over 64 KiB are cut with a note.
func ProjectInstructions(dir string) (name, text string) {
	for _, n := range InstructionFiles() {
		b, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue
		}
		const max = 64 << 10
		s := string(b)
		if len(s) > max {
			s = s[:max] + "\n(cut: the file is longer than 64 KiB)"
		}
		return n, strings.TrimSpace(s)
	}
	return "", ""
}
