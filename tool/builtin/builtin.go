// Package builtin holds the tools every agent starts with: Read, Write,
// Edit, MultiEdit, Glob, Grep, LS, NotebookEdit, TodoWrite, WebFetch,
// WebSearch, Bash and the background-shell companions BashOutput and
// KillShell. Names, input fields and behaviour follow the built-in tools of
// Claude Code, so users and models trained on them feel at home; the
// model-facing descriptions are our own, one embedded .md file per tool.
//
// Every bad input becomes an error result the model can read
// (tool.Output{IsError: true}); a tool never panics on its input.
package builtin

import (
	"os/exec"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

// Tool names. Other packages (permission rules, sub-agent tool pools) refer
// to the built-ins by these constants.
const (
	NameBash       = "Bash"
	NameBashOutput = "BashOutput"
	NameEdit       = "Edit"
	NameGlob       = "Glob"
	NameGrep       = "Grep"
	NameKillShell  = "KillShell"
	NameRead       = "Read"
	NameWrite      = "Write"
)

// Config holds what is tunable in the built-in tools. The zero value is
// ready to use: every zero field takes the default named in its comment.
type Config struct {
	// BashDefaultTimeout applies when a Bash call names none (2 minutes).
	BashDefaultTimeout time.Duration
	// BashMaxTimeout is the largest timeout a Bash call may ask for
	// (10 minutes).
	BashMaxTimeout time.Duration
	// BashOutputLimit caps the characters of command output returned to
	// the model; the middle is cut, keeping head and tail (30,000).
	BashOutputLimit int
	// BackgroundBufferLimit caps the unread output kept per background
	// shell; older unread output is dropped and the drop reported (4 MiB).
	BackgroundBufferLimit int
	// KillGrace is how long a process group gets between SIGTERM and
	// SIGKILL, and how long the leftovers of a finished command may keep
	// its output open before they are killed (2 seconds).
	KillGrace time.Duration
	// ReadMaxBytes is the largest file Read returns whole; bigger files
	// need offset/limit (256 KiB).
	ReadMaxBytes int64
	// ReadDefaultLimit is the number of lines Read returns when no limit
	// is given (2,000).
	ReadDefaultLimit int
	// MaxLineChars truncates longer lines in Read and Grep output (2,000).
	MaxLineChars int
	// GlobLimit caps the number of paths Glob returns (100).
	GlobLimit int
	// GrepOutputLimit caps the characters of a Grep answer (30,000).
	GrepOutputLimit int
	// RipgrepPath is the rg binary to use; empty looks "rg" up on PATH.
	RipgrepPath string
	// NoRipgrep forces the built-in Go search even when rg is available.
	NoRipgrep bool
	// GrepWorkers bounds the Go search's concurrent file readers (8).
	GrepWorkers int

	// LSLimit caps the entries LS lists (1,000).
	LSLimit int
	// Web configures WebFetch and WebSearch: the small model, the search
	// backend, limits (see WebConfig).
	Web WebConfig
	// Sandbox, when set, runs every Bash command, foreground and
	// background, confined by it (internal/sandbox implements it with
	// bubblewrap). Nil runs commands unconfined; they still lead their own
	// process group and are killed when cadre dies. An agent's own
	// sandbox (tool.Env.Sandbox) takes its place.
	Sandbox Sandbox
}

// Sandbox confines Bash commands (see tool.Sandbox).
type Sandbox = tool.Sandbox

func (c Config) withDefaults() Config {
	if c.BashDefaultTimeout <= 0 {
		c.BashDefaultTimeout = 2 * time.Minute
	}
	if c.BashMaxTimeout <= 0 {
		c.BashMaxTimeout = 10 * time.Minute
	}
	if c.BashDefaultTimeout > c.BashMaxTimeout {
		c.BashDefaultTimeout = c.BashMaxTimeout
	}
	if c.BashOutputLimit <= 0 {
		c.BashOutputLimit = 30000
	}
	if c.BackgroundBufferLimit <= 0 {
		c.BackgroundBufferLimit = 4 << 20
	}
	if c.KillGrace <= 0 {
		c.KillGrace = 2 * time.Second
	}
	if c.ReadMaxBytes <= 0 {
		c.ReadMaxBytes = 256 << 10
	}
	if c.ReadDefaultLimit <= 0 {
		c.ReadDefaultLimit = 2000
	}
	if c.MaxLineChars <= 0 {
		c.MaxLineChars = 2000
	}
	if c.GlobLimit <= 0 {
		c.GlobLimit = 100
	}
	if c.GrepOutputLimit <= 0 {
		c.GrepOutputLimit = 30000
	}
	if c.GrepWorkers <= 0 {
		c.GrepWorkers = 8
	}
	if c.LSLimit <= 0 {
		c.LSLimit = 1000
	}
	c.Web = c.Web.withDefaults()
	return c
}

// ripgrep returns the rg binary to use, or "" for the Go search.
func (c Config) ripgrep() string {
	if c.NoRipgrep {
		return ""
	}
	if c.RipgrepPath != "" {
		return c.RipgrepPath
	}
	p, err := exec.LookPath("rg")
	if err != nil {
		return ""
	}
	return p
}

// Tools returns every built-in tool in a fixed, alphabetical order: Bash,
// BashOutput, Edit, Glob, Grep, KillShell, LS, MultiEdit, NotebookEdit,
// Read, TodoWrite, WebFetch, WebSearch, Write. (Skill comes from package
// skills, Agent and the task tools from the runtime.)
func Tools(cfg Config) []tool.Tool {
	return []tool.Tool{
		NewBash(cfg),
		NewBashOutput(cfg),
		NewEdit(cfg),
		NewGlob(cfg),
		NewGrep(cfg),
		NewKillShell(cfg),
		NewLS(cfg),
		NewMultiEdit(cfg),
		NewNotebookEdit(cfg),
		NewRead(cfg),
		NewTodoWrite(cfg),
		NewWebFetch(cfg),
		NewWebSearch(cfg),
		NewWrite(cfg),
	}
}
