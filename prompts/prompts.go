// Package prompts holds every text of cadre's own that a model reads: the
// main agent's system prompt, the sub-agent block, the Agent tool's
// description and field docs, the environment, git status, instructions
// and memory blocks, the frame around a sub-agent's report, and the
// messages that refuse a spawn. A reviewer reads every word the model sees
// here; long texts are embedded .md files, and testdata/*.golden pins each
// rendering (go test ./prompts -update rewrites them).
//
// Texts are rendered from plain values (the package depends on nothing
// else in cadre but a string helper); the runtime gathers the values and
// picks the text.
package prompts

import (
	_ "embed"
	"fmt"
	"runtime"
	"strings"
	"time"
)

//go:embed main.md
var mainPrompt string

//go:embed subagent.md
var subagent string

//go:embed common.md
var common string

//go:embed agenttool.md
var agentTool string

//go:embed memory.md
var memory string

// Main is the main agent's own part of its default system prompt: it
// follows Common and the blocks every agent shares (issue 24).
func Main() string { return strings.TrimSpace(mainPrompt) }

// Common opens the default system prompt of every agent, the main agent
// and its sub-agents alike, so that a child's request starts with the
// bytes its parent's wrote to the prompt cache (issue 24): what the work
// is, how to work, and the fixed sub-agent block (Subagent, S-5.2), which
// the main agent reads as what its sub-agents are told.
func Common() string { return strings.TrimSpace(common) + "\n\n" + Subagent() }

// Subagent is the fixed block of S-5.2: the launching agent's messages
// direct the work but are not user consent, absolute paths, the report.
// Every agent's prompt carries it inside Common.
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

// NoAgentTypes stands in for the agent listing when no type is available.
const NoAgentTypes = "(none: no agent type is available to you)"

// AgentInputField is the schema description of one field of the Agent
// tool's input (S-3.1), by its JSON name; "" for an unknown name.
func AgentInputField(name string) string {
	switch name {
	case "description":
		return "3-5 word label shown to the user."
	case "prompt":
		return "The whole task."
	case "subagent_type":
		return "An agent type from the list."
	case "model":
		return "sonnet, opus, haiku or another alias."
	case "effort":
		return "Reasoning effort."
	case "cwd":
		return "Absolute directory to work in."
	case "isolation":
		return "worktree: its own git worktree and branch (kept to merge if changed). Excludes cwd."
	case "run_in_background":
		return RunInBackgroundField
	case "output_schema":
		return "JSON Schema (type object) its result must match."
	case "budget":
		return "Limits for the sub-agent and everything it starts: usd, tokens, turns, wallTime (\"10m\"). Capped by its type's budget and what remains of yours."
	case "name":
		return "Starts a teammate with this name (letters, digits, _ or -): it lives on after its turn, idle until a message wakes it."
	case "team_name":
		return "The team to join; omit for this session's team."
	case "mode":
		return "plan: the teammate works read-only until you approve its plan."
	}
	return ""
}

// Environment describes where an agent runs. Its rendering only changes when
// the facts do, so it can sit in the cached prefix.
type Environment struct {
	Cwd     string
	Dirs    []string
	ModelID string
	Date    time.Time
	// GitRepo is true inside a git repository; GitBranch is the
	// checked-out branch, "" when detached.
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

// GitStatus frames a snapshot of git status for a sub-agent's prompt:
// status is `git status --short --branch` (moreLines counts lines left
// out), log the recent commits. It returns "" when status is empty.
func GitStatus(status string, moreLines int, log string) string {
	if status == "" {
		return ""
	}
	if moreLines > 0 {
		status += fmt.Sprintf("\n… (%d more lines; run git status for all)", moreLines)
	}
	return "<git-status note=\"as of the session start\">\n" + status + "\n\nRecent commits:\n" + log + "\n</git-status>"
}

// Instructions frames the project instructions file name; cut says the
// file was longer than what text holds. It returns "" when text is empty.
func Instructions(name, text string, cut bool) string {
	if text == "" {
		return ""
	}
	if cut {
		text += "\n(cut: the file is longer than 64 KiB)"
	}
	return fmt.Sprintf("<project-instructions file=%q>\n%s\n</project-instructions>", name, text)
}

// Memory is an agent's memory directory as its prompt shows it (S-4.7).
type Memory struct {
	// Dir is the memory directory; File its MEMORY.md.
	Dir, File string
	// MaxLines is how much of the file the prompt holds.
	MaxLines int
	// Exists is false before the agent has written the file.
	Exists bool
	// Lines are the file's first lines; Cut says there are more.
	Lines []string
	Cut   bool
}

// Render returns the memory block: where the directory is, how to use it,
// and the start of its MEMORY.md.
func (m Memory) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "<agent-memory dir=%q>\n", m.Dir)
	b.WriteString(strings.NewReplacer("{{DIR}}", m.Dir, "{{FILE}}", m.File, "{{MAX_LINES}}", fmt.Sprint(m.MaxLines)).
		Replace(strings.TrimSpace(memory)))
	b.WriteByte('\n')
	if !m.Exists {
		b.WriteString("MEMORY.md does not exist yet.\n")
	} else {
		b.WriteString("Current MEMORY.md:\n")
		for _, l := range m.Lines {
			b.WriteString(l)
			b.WriteByte('\n')
		}
		if m.Cut {
			fmt.Fprintf(&b, "(cut after %d lines; read the file for the rest)\n", m.MaxLines)
		}
	}
	b.WriteString("</agent-memory>")
	return b.String()
}
