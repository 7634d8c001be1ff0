package hooks

import "slices"

// Event names a point in a run where hooks fire. The names are Claude
// Code's, so settings files carry over unchanged.
type Event string

// The hook events (S-14.1).
const (
	// PreToolUse fires before a tool call is authorized and run; its hooks
	// can block the call, decide its permission or rewrite its input.
	PreToolUse Event = "PreToolUse"
	// PostToolUse fires after a tool call succeeded.
	PostToolUse Event = "PostToolUse"
	// PostToolUseFailure fires after a tool call failed.
	PostToolUseFailure Event = "PostToolUseFailure"
	// PermissionRequest fires when the rules say ask, before anyone is
	// prompted; its hooks can answer in the person's place. It fires for
	// a background agent too, which can show no prompt: its hooks decide
	// before the call is denied (Prompter.Answer).
	PermissionRequest Event = "PermissionRequest"
	// UserPromptSubmit fires when a prompt reaches the main agent.
	UserPromptSubmit Event = "UserPromptSubmit"
	// Stop fires when the main agent is about to end its turn.
	Stop Event = "Stop"
	// SubagentStart fires when a sub-agent starts.
	SubagentStart Event = "SubagentStart"
	// SubagentStop fires when a sub-agent is about to end.
	SubagentStop Event = "SubagentStop"
	// SessionStart fires when a session starts or resumes.
	SessionStart Event = "SessionStart"
	// SessionEnd fires when a session ends.
	SessionEnd Event = "SessionEnd"
	// Notification fires when a person is asked for something.
	Notification Event = "Notification"
	// PreCompact fires before the conversation is compacted.
	PreCompact Event = "PreCompact"
	// PostCompact fires after the conversation was compacted, with the
	// summary.
	PostCompact Event = "PostCompact"
	// WorktreeCreate fires instead of git when an isolated worktree is
	// created; the hook prints the path it created.
	WorktreeCreate Event = "WorktreeCreate"
	// WorktreeRemove fires when such a worktree is removed.
	WorktreeRemove Event = "WorktreeRemove"
	// TeammateIdle fires when a teammate is about to go idle after a
	// turn; blocking it (exit 2) keeps the teammate working, with the
	// hook's reason as its next instruction.
	TeammateIdle Event = "TeammateIdle"
	// TaskCreated fires after a task was added to the team's task list;
	// blocking it undoes the create and gives the model the reason.
	TaskCreated Event = "TaskCreated"
	// TaskCompleted fires before a task of the team's task list is
	// marked completed; blocking it refuses the completion with the
	// reason.
	TaskCompleted Event = "TaskCompleted"
)

// events lists every event cadre fires, in documentation order.
var events = []Event{
	PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest,
	UserPromptSubmit, Stop, SubagentStart, SubagentStop, SessionStart,
	SessionEnd, Notification, PreCompact, PostCompact, WorktreeCreate, WorktreeRemove,
	TeammateIdle, TaskCreated, TaskCompleted,
}

// Events returns every event cadre fires.
func Events() []Event { return slices.Clone(events) }

// Valid reports whether e is an event cadre fires.
func (e Event) Valid() bool { return slices.Contains(events, e) }

// claudeOnly are events Claude Code knows that cadre does not fire; a
// settings file naming them gets a warning that says so rather than a
// did-you-mean.
var claudeOnly = []string{
	"PostToolBatch", "UserPromptExpansion", "StopFailure",
	"PreModelSwitch", "PostModelSwitch", "PermissionDenied", "Setup",
	"Elicitation",
	"ElicitationResult", "ConfigChange", "InstructionsLoaded", "CwdChanged",
	"FileChanged", "DirectoryAdded", "MessageDisplay",
}

// matchField says which input field an event's matchers test, as in
// Claude Code; "" means the event has no matcher (every hook of it runs).
func (e Event) matchField() string {
	switch e {
	case PreToolUse, PostToolUse, PostToolUseFailure, PermissionRequest:
		return "tool_name"
	case SubagentStart, SubagentStop:
		return "agent_type"
	case SessionStart:
		return "source"
	case SessionEnd:
		return "reason"
	case Notification:
		return "notification_type"
	case PreCompact, PostCompact:
		return "trigger"
	}
	return ""
}

// matchValue returns the value of in that e's matchers test.
func (e Event) matchValue(in *Input) string {
	switch e.matchField() {
	case "tool_name":
		return in.ToolName
	case "agent_type":
		return in.AgentType
	case "source":
		return in.Source
	case "reason":
		return in.Reason
	case "notification_type":
		return in.NotificationType
	case "trigger":
		return in.Trigger
	}
	return ""
}

// carriesPermissionMode reports whether e's input has permission_mode
// (Claude Code leaves it out of the session and worktree events and of
// SubagentStart).
func (e Event) carriesPermissionMode() bool {
	switch e {
	case SessionStart, SessionEnd, SubagentStart, WorktreeCreate, WorktreeRemove:
		return false
	}
	return true
}
