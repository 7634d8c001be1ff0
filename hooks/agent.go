package hooks

import (
	"context"

	"github.com/cadre-dev/cadre/permission"
)

// Scope is what every input of one agent carries.
type Scope struct {
	// SessionID and TranscriptPath name the session and its main
	// transcript.
	SessionID      string
	TranscriptPath string
	// Cwd is the agent's working directory.
	Cwd string
	// AgentID and AgentType name a sub-agent; both empty for the main
	// agent.
	AgentID   string
	AgentType string
	// AgentTranscriptPath is a sub-agent's own transcript (SubagentStop).
	AgentTranscriptPath string
	// PermissionMode returns the agent's current mode; nil leaves
	// permission_mode out.
	PermissionMode func() permission.Mode
	// BackgroundTasks returns the tasks still running when the agent
	// stops; nil means none.
	BackgroundTasks func() []BackgroundTask
}

// Agent is the dispatcher as one agent sees it: Fire fills in the fields
// every input carries, so the loop only sets the event's own. It is what
// loop.Config.Hooks holds.
type Agent struct {
	d     *Dispatcher
	scope Scope
}

// ForAgent binds the dispatcher to one agent.
func (d *Dispatcher) ForAgent(s Scope) *Agent { return &Agent{d: d, scope: s} }

// Dispatcher returns the dispatcher the agent fires through.
func (a *Agent) Dispatcher() *Dispatcher { return a.d }

// Scope returns the agent's scope.
func (a *Agent) Scope() Scope { return a.scope }

// Quiet reports whether no hook is registered now, so Fire would return
// the zero Outcome whatever the input: a caller may skip building it.
func (a *Agent) Quiet() bool { return a == nil || a.d == nil || a.d.count.Load() == 0 }

// Fire fires in for this agent, filling in its common fields in place.
// Fields of in that are already set are kept (SubagentStart names the
// child, not the agent firing it). In a
// sub-agent, Stop becomes SubagentStop with the agent's transcript path
// (the loop does not know what kind of agent it runs), and
// UserPromptSubmit fires nothing: a sub-agent's prompt comes from its
// parent, not from a user.
func (a *Agent) Fire(ctx context.Context, in *Input) Outcome {
	if a.Quiet() {
		return Outcome{}
	}
	s := &a.scope
	if s.AgentID != "" {
		switch in.HookEventName {
		case UserPromptSubmit:
			return Outcome{}
		case Stop:
			in.HookEventName = SubagentStop
		}
	}
	if in.SessionID == "" {
		in.SessionID = s.SessionID
	}
	if in.TranscriptPath == "" {
		in.TranscriptPath = s.TranscriptPath
	}
	if in.Cwd == "" {
		in.Cwd = s.Cwd
	}
	if in.PermissionMode == "" && s.PermissionMode != nil && in.HookEventName.carriesPermissionMode() {
		in.PermissionMode = s.PermissionMode()
	}
	if in.AgentID == "" && in.AgentType == "" {
		in.AgentID, in.AgentType = s.AgentID, s.AgentType
	}
	switch in.HookEventName {
	case Stop, SubagentStop:
		if in.HookEventName == SubagentStop && in.AgentTranscriptPath == "" && in.AgentID == s.AgentID {
			in.AgentTranscriptPath = s.AgentTranscriptPath
		}
		if in.BackgroundTasks == nil && s.BackgroundTasks != nil {
			in.BackgroundTasks = s.BackgroundTasks()
		}
	}
	return a.d.Fire(ctx, in)
}
