// Package tool defines what a tool is to an agent: a model-facing spec with
// a JSON schema, whether it only reads, and how it runs. Tools take typed
// input structs (see Func); the loop hands them raw JSON from the model.
package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"os/exec"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/llm"
)

// Output is what a tool returns to the model. IsError marks a result the
// model should read as a failure it can recover from; a Go error from Run
// instead ends the agent's turn.
type Output struct {
	Text    string
	IsError bool
	// Blocks are further content of the result after Text: images
	// (llm.BlockImage), which both providers carry to the model.
	Blocks []llm.Block
	// Result is the call's structured result as JSON, for programs that
	// read the run (stream-json's tool_use_result); the model never sees
	// it. Empty when the tool gives none. JSON rather than a Go value so
	// it survives the Executor seam unchanged.
	Result json.RawMessage
}

// Errorf returns an error Output with a formatted message.
func Errorf(format string, args ...any) Output {
	return Output{Text: fmt.Sprintf(format, args...), IsError: true}
}

// Tool is one capability offered to the model.
type Tool interface {
	// Spec is the name, description and input schema shown to the model.
	// It must return the same bytes every call.
	Spec() llm.ToolSpec
	// ReadOnly reports whether the tool never changes anything, so calls
	// may run concurrently with other read-only calls.
	ReadOnly() bool
	// Run executes one call.
	Run(ctx context.Context, env *Env, input json.RawMessage) (Output, error)
}

// Env is the agent-scoped state a tool runs against. Each agent has its own
// Env; a sub-agent gets a clone (see Clone) so it shares nothing mutable
// with its parent. The loop hands each call a shallow copy carrying the call
// (ForCall): what it points to (files, shells, todos) is the agent's, the
// copy itself is the call's, so a tool should not keep it past its Run.
type Env struct {
	// Cwd is the agent's working directory (absolute).
	Cwd string
	// Dirs are additional working directories (absolute).
	Dirs []string
	// AgentID names the agent ("" for the main agent).
	AgentID string
	// Files tracks what the agent has read, for Edit's read-before-write
	// guard.
	Files *FileState
	// Shells holds the agent's background shells; nil means background
	// shells are not available.
	Shells ShellHost
	// Hidden, when set, reports files the agent may not read (a deny rule
	// covers them). Search tools leave such files out of their results, so
	// a search cannot reveal what Read would refuse.
	Hidden func(path string) bool
	// AllowPrivateHost, when set, reports whether a permission rule lets
	// WebFetch reach host although it resolves to a private, loopback or
	// link-local address (a `WebFetch(domain:host)` allow rule). Unset,
	// such addresses are refused.
	AllowPrivateHost func(host string) bool
	// Todos is the agent's own todo list (TodoWrite); a clone starts with
	// an empty one. Nil: the agent keeps none, and TodoWrite says so.
	Todos *TodoList
	// Sandbox, when set, confines the agent's Bash commands in place of
	// the Bash tool's own configured sandbox (issue 9: the runtime gives
	// each agent one with its own masks). A clone does not inherit it.
	Sandbox Sandbox
	// Spawner, when set, starts sub-agents for the agent (the Agent tool)
	// and lets the runtime's task tools reach the agent tree; the runtime
	// sets it on each agent's Env. A clone does not inherit it.
	Spawner Spawner
	// Answer, when set, is the slot the agent's structured answer goes to
	// (StructuredOutput, --json-schema): the main agent's alone, so a
	// clone does not inherit it.
	Answer AnswerSlot
	// Call is the tool call being run. The loop sets it on a shallow copy
	// of the agent's Env made for each call (see ForCall); it is zero in
	// the agent's own Env.
	Call Call
}

// Call is what a tool knows about the one call it runs for.
type Call struct {
	// ID is the model's id for the call (tool_use id); the Agent tool
	// links a child to the call that started it.
	ID string
	// Conversation is the calling agent's conversation as it stands while
	// its tools run: every message up to and including the assistant
	// message that asked for them. The Agent tool starts a fork from it
	// (S-6). It is shared: copy it before changing or appending to it.
	Conversation []llm.Message
	// Turn is the call's place among the calls of its batch (Sequence).
	Turn Turn
}

// ForCall returns a shallow copy of e for one call: the same agent state
// (the pointers are shared) with Call set.
func (e *Env) ForCall(c Call) *Env {
	cp := *e
	cp.Call = c
	return &cp
}

// Spawner is the agent tree as an agent's tools reach it. The runtime
// implements it; its Agent tool starts a sub-agent through Spawn.
type Spawner interface {
	// Spawn starts a sub-agent for call from the Agent tool's raw input
	// and returns the tool's result: the child's report, or a receipt for
	// a child in the background.
	Spawn(ctx context.Context, call Call, input json.RawMessage) (Output, error)
}

// AnswerSlot receives an agent's structured answer (builtin.OutputSlot
// implements it).
type AnswerSlot interface {
	// Done reports whether an answer was accepted.
	Done() bool
	// Accept keeps v as the answer.
	Accept(v json.RawMessage)
	// Reject counts a failed attempt and returns how many are left.
	Reject() int
}

// Sandbox confines shell commands (internal/sandbox implements it with
// bubblewrap).
type Sandbox interface {
	// Command returns the process that runs `bash -c command` confined,
	// for an agent whose working directories are cwd and dirs, and a
	// function that reads the command's output for refusals of the
	// sandbox and returns notes for the model ("" for none). The caller
	// closes the process's ExtraFiles once it has started.
	Command(cwd string, dirs []string, command string) (cmd *exec.Cmd, explain func(output string) string, err error)
}

// IsHidden reports whether path is hidden from the agent.
func (e *Env) IsHidden(path string) bool { return e != nil && e.Hidden != nil && e.Hidden(path) }

// ShellHost owns an agent's background shells. It is implemented by
// tool/builtin and closed when the agent ends, killing what still runs.
type ShellHost interface {
	Close() error
}

// Clone returns a copy of the Env for a child agent: same directories, a
// copy of the file state, no shells (the child gets its own).
func (e *Env) Clone(agentID string) *Env {
	c := &Env{Cwd: e.Cwd, Dirs: append([]string(nil), e.Dirs...), AgentID: agentID, Todos: &TodoList{}}
	if e.Files != nil {
		c.Files = e.Files.Clone()
	} else {
		c.Files = NewFileState()
	}
	return c
}

// FileState records, per absolute path, the modification time and size of
// the file when the agent last read or wrote it. Safe for concurrent use.
type FileState struct {
	mu    sync.Mutex
	files map[string]FileStamp
}

// FileStamp is what the agent knew about a file.
type FileStamp struct {
	ModTime time.Time
	Size    int64
	// Partial is true when only part of the file was read.
	Partial bool
}

// NewFileState returns an empty FileState.
func NewFileState() *FileState { return &FileState{files: map[string]FileStamp{}} }

// Record notes the stamp for path.
func (f *FileState) Record(path string, s FileStamp) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.files[path] = s
}

// Lookup returns the stamp recorded for path.
func (f *FileState) Lookup(path string) (FileStamp, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	s, ok := f.files[path]
	return s, ok
}

// Clone returns an independent copy.
func (f *FileState) Clone() *FileState {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := &FileState{files: make(map[string]FileStamp, len(f.files))}
	for k, v := range f.files {
		c.files[k] = v
	}
	return c
}

// ConcurrencySafe is implemented by tools that change state yet may run at
// the same time as other calls of one message (the Agent tool: each child
// works in its own context). The loop batches them with read-only calls.
type ConcurrencySafe interface {
	ConcurrencySafe() bool
}

// RunsConcurrently reports whether calls of t may run alongside other such
// calls: read-only tools and tools that declare themselves concurrency-safe.
func RunsConcurrently(t Tool) bool {
	if t.ReadOnly() {
		return true
	}
	c, ok := t.(ConcurrencySafe)
	return ok && c.ConcurrencySafe()
}
