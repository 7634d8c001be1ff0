// Package agentdef reads agent definitions: Markdown files with YAML
// frontmatter (S-4.3), JSON objects given with --agents, and the built-in
// agents. It applies source precedence and records shadowing (S-4.2),
// namespaces plugin agents (S-4.4), and renders the agent listing the model
// sees (S-3.5).
//
// The parser follows what Claude Code does with the same files (as
// recorded in the agent corpus's oracle, which the corpus tests check) so
// that existing .claude/agents folders load
// as their authors meant, and it departs from it where Claude Code silently
// loses work: a file with frontmatter but no name loads under its file
// name, a misspelled tools key narrows instead of widening, and lines that
// belong to a description never become keys. Every such decision is a
// Diagnostic naming the file and line.
package agentdef

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// Source says where a definition came from. Later sources win on a name
// clash: builtin < plugin < user < project < flag < managed.
type Source string

// The definition sources, in precedence order (lowest first).
const (
	SourceBuiltin Source = "builtin"
	SourcePlugin  Source = "plugin"
	SourceUser    Source = "user"
	SourceProject Source = "project"
	SourceFlag    Source = "flag"
	SourceManaged Source = "managed"
)

// rank orders sources by precedence; higher wins.
func (s Source) rank() int {
	switch s {
	case SourceBuiltin:
		return 0
	case SourcePlugin:
		return 1
	case SourceUser:
		return 2
	case SourceProject:
		return 3
	case SourceFlag:
		return 4
	case SourceManaged:
		return 5
	}
	return -1
}

// Severity grades a Diagnostic.
type Severity string

// Diagnostic severities. An error means the definition (or the field named)
// was not loaded; a warning means it loaded, perhaps without some value.
const (
	SeverityError   Severity = "error"
	SeverityWarning Severity = "warning"
)

// Diagnostic is one problem found in a definition file, placed like a
// compiler message.
type Diagnostic struct {
	// File is the path of the file (or "--agents" for inline JSON).
	File string `json:"file"`
	// Line is 1-based; 0 when the problem concerns the whole file.
	Line int `json:"line"`
	// Severity is error or warning.
	Severity Severity `json:"severity"`
	// Message says what is wrong and what to do about it.
	Message string `json:"message"`
}

// String formats the diagnostic as "file:line: severity: message" (the line
// is left out when it is 0).
func (d Diagnostic) String() string {
	if d.Line > 0 {
		return fmt.Sprintf("%s:%d: %s: %s", d.File, d.Line, d.Severity, d.Message)
	}
	return fmt.Sprintf("%s: %s: %s", d.File, d.Severity, d.Message)
}

// ToolEntry is one entry of a tools or disallowedTools list, kept as the
// author wrote it ("Bash(git diff:*)", "mcp__github", "*") together with
// its parsed parts.
type ToolEntry struct {
	// Raw is the entry as written, after trimming.
	Raw string
	// Name is the tool name: the text before "(" ("Bash"), or Raw.
	Name string
	// Content is the rule content between the parentheses ("git diff:*"),
	// empty when there are none.
	Content string
	// HasContent reports whether the entry had parentheses at all, so that
	// "Bash()" and "Bash" differ.
	HasContent bool
}

// ParseToolEntry splits one entry into tool name and rule content.
func ParseToolEntry(raw string) ToolEntry {
	raw = strings.TrimSpace(raw)
	e := ToolEntry{Raw: raw, Name: raw}
	if i := strings.IndexByte(raw, '('); i > 0 && strings.HasSuffix(raw, ")") {
		e.Name = strings.TrimSpace(raw[:i])
		e.Content = raw[i+1 : len(raw)-1]
		e.HasContent = true
	}
	return e
}

// String returns the entry as written.
func (e ToolEntry) String() string { return e.Raw }

// MarshalJSON encodes the entry as the string the author wrote.
func (e ToolEntry) MarshalJSON() ([]byte, error) { return json.Marshal(e.Raw) }

// UnmarshalJSON decodes an entry from its written form.
func (e *ToolEntry) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("tool entry: %w", err)
	}
	*e = ParseToolEntry(s)
	return nil
}

// IsWildcard reports whether the entry is "*" (every tool).
func (e ToolEntry) IsWildcard() bool { return e.Raw == "*" }

// IsMCP reports whether the entry selects MCP tools (mcp__server,
// mcp__server__tool, mcp__server__*, mcp__*).
func (e ToolEntry) IsMCP() bool { return strings.HasPrefix(e.Name, tool.MCPPrefix) }

// MCP splits an MCP entry into server and tool: "mcp__github" gives
// ("github", ""), "mcp__github__create_issue" gives ("github",
// "create_issue"), "mcp__*" gives ("*", ""). ok is false for other entries.
func (e ToolEntry) MCP() (server, toolName string, ok bool) {
	if !e.IsMCP() {
		return "", "", false
	}
	rest := strings.TrimPrefix(e.Name, tool.MCPPrefix)
	server, toolName, _ = strings.Cut(rest, "__")
	return server, toolName, true
}

// AgentTypes returns the agent types an "Agent(a, b)" (or "Task(a, b)")
// entry allows spawning. ok is false for any other entry and for a bare
// "Agent", which allows every type.
func (e ToolEntry) AgentTypes() (types []string, ok bool) {
	if tool.Canonical(e.Name) != tool.Agent || !e.HasContent {
		return nil, false
	}
	return splitOutsideParens(e.Content), true
}

// Effort is a reasoning-effort level (S-4.1's effort key, the Agent
// call's effort field): the model request's llm.Effort.
type Effort = llm.Effort

// Effort levels.
const (
	EffortLow    = llm.EffortLow
	EffortMedium = llm.EffortMedium
	EffortHigh   = llm.EffortHigh
	EffortXHigh  = llm.EffortXHigh
	EffortMax    = llm.EffortMax
)

// MemoryScope is where an agent's memory directory lives (S-4.7).
type MemoryScope string

// Memory scopes.
const (
	// MemoryUser: in the user's home, shared by every project.
	MemoryUser MemoryScope = "user"
	// MemoryProject: in the project, meant to be committed.
	MemoryProject MemoryScope = "project"
	// MemoryLocal: in the project, kept out of version control.
	MemoryLocal MemoryScope = "local"
)

// Isolation is how a sub-agent is kept apart from its parent's working
// tree (S-9).
type Isolation string

// Isolation kinds.
const (
	// IsolationWorktree: the agent works in its own git worktree.
	IsolationWorktree Isolation = "worktree"
	// IsolationRemote: the agent runs on another machine, through the
	// session's remote executor (issue 26; refused without one).
	IsolationRemote Isolation = "remote"
)

// MinCompactWindow is the smallest autoCompactWindow accepted: below it
// no conversation fits a summary and its next step.
const MinCompactWindow = 1000

// Definition is one agent definition (S-4.1) with where it came from.
// Optional fields hold their zero value when the key is absent or its
// value was invalid (a Diagnostic then says so).
type Definition struct {
	// Name is the agent type ("code-reviewer", "plugin:reviewer").
	Name string `json:"name"`
	// Description says when to use the agent; the listing shows it.
	Description string `json:"description"`
	// Tools is the allow-list as written. nil means the key was absent
	// (inherit every tool); an empty non-nil slice means no tools; an entry
	// "*" means every tool.
	Tools []ToolEntry `json:"tools"`
	// DisallowedTools is the deny-list as written; nil when absent.
	DisallowedTools []ToolEntry `json:"disallowedTools"`
	// Model is an alias (sonnet, opus, haiku), a model id or "inherit";
	// empty means the default.
	Model string `json:"model"`
	// Effort is low, medium, high, xhigh or max; empty means the default.
	Effort Effort `json:"effort,omitempty"`
	// PermissionMode is one of the permission modes of S-10.1 (never
	// bubble, which is internal); empty means the default.
	PermissionMode permission.Mode `json:"permissionMode"`
	// MCPServers lists servers by name (a JSON string) or inline configs
	// (a JSON object {"name": config}), kept raw for the MCP layer.
	MCPServers []json.RawMessage `json:"mcpServers,omitempty"`
	// RequiredMCPServers names servers that must be up before a spawn.
	RequiredMCPServers []string `json:"requiredMcpServers,omitempty"`
	// Hooks is the frontmatter hooks object, kept raw for the hooks layer.
	Hooks json.RawMessage `json:"hooks,omitempty"`
	// MaxTurns caps the agent's turns; 0 means no cap of its own.
	MaxTurns int `json:"maxTurns,omitempty"`
	// Budget is what the agent may spend (S-15.2); zero fields set no
	// limit of its own.
	Budget Budget `json:"budget,omitzero"`
	// AutoCompactWindow is the context window, in tokens, the agent
	// compacts against (S-1.5); 0 means the session's.
	AutoCompactWindow int64 `json:"autoCompactWindow,omitempty"`
	// OutputSchema is a JSON Schema (root "type": "object") the agent's
	// result must match (S-15.6): it answers with the StructuredOutput
	// tool, and its parent gets the validated JSON. Kept as written here;
	// it is compiled and checked when the agent is started.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// Skills lists skill names the agent preloads.
	Skills []string `json:"skills,omitempty"`
	// Memory is the memory scope: user, project or local; empty for none.
	Memory MemoryScope `json:"memory,omitempty"`
	// Background makes the agent run in the background by default.
	Background bool `json:"background,omitempty"`
	// Isolation is worktree or remote; empty for none.
	Isolation Isolation `json:"isolation,omitempty"`
	// Color is the display colour.
	Color string `json:"color,omitempty"`
	// InitialPrompt is prepended to the first user turn.
	InitialPrompt string `json:"initialPrompt,omitempty"`
	// OmitInstructions leaves the project instructions file out of the
	// agent's context (omitClaudeMd in Claude Code files).
	OmitInstructions bool `json:"omitInstructions,omitempty"`
	// OmitGitStatus leaves git status out of the environment block
	// (built-in Explore).
	OmitGitStatus bool `json:"omitGitStatus,omitempty"`
	// OneShot marks types whose result is only the report and which cannot
	// be continued (built-in Explore and Plan).
	OneShot bool `json:"oneShot,omitempty"`
	// Body is the system prompt: the Markdown after the frontmatter, or
	// "prompt" in JSON.
	Body string `json:"body"`

	// Source is where the definition came from.
	Source Source `json:"source"`
	// Path is the file it was read from, "--agents" for inline JSON, or
	// "builtin:<name>".
	Path string `json:"path"`
	// Plugin names the plugin for plugin agents.
	Plugin string `json:"plugin,omitempty"`
	// ShadowedBy is the Path of the definition that replaced this one;
	// empty for an active definition.
	ShadowedBy string `json:"shadowedBy"`
	// Shadows lists the Paths of the definitions this one replaced.
	Shadows []string `json:"shadows,omitempty"`
	// Diagnostics are the problems found while reading it.
	Diagnostics []Diagnostic `json:"diagnostics,omitempty"`
}

// AllTools reports whether the definition allows every tool: no tools key,
// or a "*" entry.
func (d *Definition) AllTools() bool {
	if d.Tools == nil {
		return true
	}
	for _, t := range d.Tools {
		if t.IsWildcard() {
			return true
		}
	}
	return false
}

// EffectiveTools is the allow-list the runtime applies: Tools plus, for an
// agent with memory and an explicit list, Write, Edit and Read (S-4.7), in
// that order, each only when missing. It returns nil when AllTools is true.
func (d *Definition) EffectiveTools() []ToolEntry {
	if d.AllTools() {
		return nil
	}
	out := append([]ToolEntry{}, d.Tools...)
	if d.Memory != "" && len(d.Tools) > 0 {
		for _, name := range []string{tool.Write, tool.Edit, tool.Read} {
			if !hasRaw(out, name) {
				out = append(out, ParseToolEntry(name))
			}
		}
	}
	return out
}

func hasRaw(es []ToolEntry, raw string) bool {
	for _, e := range es {
		if e.Raw == raw {
			return true
		}
	}
	return false
}
