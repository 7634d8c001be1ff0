package tool

import (
	"slices"
	"strings"
)

// The names of every tool cadre knows, built in or coming from the runtime
// (Agent, TaskStop, SendMessage…). Permission rules, the capability
// ceiling, agent-definition diagnostics and the tools themselves all refer
// to tools by these constants, so a name is spelled in one place.
const (
	Read         = "Read"
	Write        = "Write"
	Edit         = "Edit"
	MultiEdit    = "MultiEdit"
	NotebookEdit = "NotebookEdit"
	NotebookRead = "NotebookRead"
	Glob         = "Glob"
	Grep         = "Grep"
	LS           = "LS"
	Bash         = "Bash"
	BashOutput   = "BashOutput"
	KillShell    = "KillShell"
	WebFetch     = "WebFetch"
	WebSearch    = "WebSearch"
	TodoWrite    = "TodoWrite"
	Skill        = "Skill"
	// ToolSearch loads deferred tools: tools an agent is told of by name,
	// whose definitions its requests carry only once loaded (issue 24).
	ToolSearch = "ToolSearch"

	// Agent starts sub-agents; Task is its old name, accepted in rules,
	// definitions and old transcripts.
	Agent = "Agent"
	Task  = "Task"

	TaskStop    = "TaskStop"
	TaskOutput  = "TaskOutput"
	SendMessage = "SendMessage"
	ListAgents  = "ListAgents"

	// MergeWorktree brings a kept worktree of an isolated agent into the
	// caller's tree (S-15.5).
	MergeWorktree = "MergeWorktree"

	// Team tools (S-11).
	TeamCreate = "TeamCreate"
	TeamDelete = "TeamDelete"
	TaskCreate = "TaskCreate"
	TaskUpdate = "TaskUpdate"
	TaskList   = "TaskList"
	TaskGet    = "TaskGet"

	ListMcpResources = "ListMcpResources"
	ReadMcpResource  = "ReadMcpResource"

	// StructuredOutput gives the main agent's final answer as JSON that
	// matches the caller's schema (--json-schema, S-15.6).
	StructuredOutput = "StructuredOutput"

	// Interactive-only tools: they need the user at the terminal or switch
	// the session's own mode, so no sub-agent gets them.
	AskUserQuestion = "AskUserQuestion"
	EnterPlanMode   = "EnterPlanMode"
	ExitPlanMode    = "ExitPlanMode"
)

// MCPPrefix starts the name of every tool that comes from an MCP server:
// mcp__<server>__<tool>.
const MCPPrefix = "mcp__"

// Category groups tools by what permission path rules cover.
type Category int

// Tool categories.
const (
	// CategoryOther: no path rules apply.
	CategoryOther Category = iota
	// CategoryRead: tools that read files; Read(...) rules cover them.
	CategoryRead
	// CategoryEdit: tools that write files; Edit(...) rules cover them.
	CategoryEdit
)

// Info is what the runtime knows about a tool name without the tool
// itself.
type Info struct {
	Name     string
	Category Category
	// NoPermission tools act only on the agent's own state and need no
	// approval in any mode (rules can still deny them).
	NoPermission bool
	// InteractiveOnly tools are never given to sub-agents.
	InteractiveOnly bool
	// Background tools may be given to agents running in the background
	// (S-5.1 step 2).
	Background bool
}

var registry = []Info{
	{Name: Read, Category: CategoryRead, Background: true},
	{Name: Write, Category: CategoryEdit, Background: true},
	{Name: Edit, Category: CategoryEdit, Background: true},
	{Name: MultiEdit, Category: CategoryEdit, Background: true},
	{Name: NotebookEdit, Category: CategoryEdit, Background: true},
	{Name: NotebookRead, Category: CategoryRead, Background: true},
	{Name: Glob, Category: CategoryRead, Background: true},
	{Name: Grep, Category: CategoryRead, Background: true},
	{Name: LS, Category: CategoryRead, Background: true},
	{Name: Bash, Background: true},
	{Name: BashOutput, NoPermission: true, Background: true},
	{Name: KillShell, NoPermission: true, Background: true},
	{Name: WebFetch, Background: true},
	{Name: WebSearch, Background: true},
	{Name: TodoWrite, NoPermission: true, Background: true},
	{Name: Skill, Background: true},
	{Name: ToolSearch, NoPermission: true, Background: true},
	{Name: Agent, NoPermission: true},
	{Name: Task, NoPermission: true},
	{Name: TaskStop, NoPermission: true},
	{Name: TaskOutput, NoPermission: true},
	{Name: SendMessage, NoPermission: true},
	{Name: ListAgents, NoPermission: true},
	{Name: MergeWorktree},
	{Name: TeamCreate, NoPermission: true},
	{Name: TeamDelete, NoPermission: true},
	{Name: TaskCreate, NoPermission: true, Background: true},
	{Name: TaskUpdate, NoPermission: true, Background: true},
	{Name: TaskList, NoPermission: true, Background: true},
	{Name: TaskGet, NoPermission: true, Background: true},
	{Name: ListMcpResources, Background: true},
	{Name: ReadMcpResource, Background: true},
	{Name: StructuredOutput, NoPermission: true},
	{Name: AskUserQuestion, InteractiveOnly: true, NoPermission: true},
	{Name: EnterPlanMode, InteractiveOnly: true, NoPermission: true},
	{Name: ExitPlanMode, InteractiveOnly: true},
}

// Canonical maps an alias onto the tool it names (Task → Agent).
func Canonical(name string) string {
	if name == Task {
		return Agent
	}
	return name
}

// Lookup returns what is known about a tool name. MCP tool names are known
// as a group (Background, no category); any other unknown name is not.
func Lookup(name string) (Info, bool) {
	if i := slices.IndexFunc(registry, func(in Info) bool { return in.Name == name }); i >= 0 {
		return registry[i], true
	}
	if IsMCP(name) {
		return Info{Name: name, Background: true}, true
	}
	return Info{}, false
}

// Known lists every registered tool name, in registry order.
func Known() []string {
	out := make([]string, len(registry))
	for i, in := range registry {
		out[i] = in.Name
	}
	return out
}

// FoldVariant returns the registered tool name that name differs from only
// by case, or "" when there is none. Unlike a loop over
// Known, it allocates nothing.
func FoldVariant(name string) string {
	for _, in := range registry {
		if in.Name != name && strings.EqualFold(in.Name, name) {
			return in.Name
		}
	}
	return ""
}

// IsMCP reports whether name is an MCP tool name or pattern (mcp__…).
func IsMCP(name string) bool { return len(name) > len(MCPPrefix) && name[:len(MCPPrefix)] == MCPPrefix }

// InCategory reports whether name is a tool of category c.
func InCategory(name string, c Category) bool {
	in, ok := Lookup(name)
	return ok && in.Category == c
}
