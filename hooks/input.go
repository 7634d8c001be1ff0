package hooks

import (
	"bytes"
	"encoding/json"
	"fmt"

	"github.com/cadre-dev/cadre/permission"
)

// Input is what a hook gets on stdin, as JSON with Claude Code's field
// names and order. Which fields appear depends on HookEventName: the
// common ones first, agent_id and agent_type inside a sub-agent, then the
// event's own fields (see MarshalJSON).
type Input struct {
	// SessionID and TranscriptPath name the session and its main
	// transcript file.
	SessionID      string
	TranscriptPath string
	// Cwd is the working directory of the agent the event belongs to.
	Cwd string
	// PermissionMode is the agent's mode; left out of the events Claude
	// Code leaves it out of (session, worktree and SubagentStart events).
	PermissionMode permission.Mode
	// AgentID and AgentType name the sub-agent the event belongs to; both
	// are empty for the main agent. For SubagentStart and SubagentStop
	// they name the child.
	AgentID   string
	AgentType string
	// HookEventName is the event.
	HookEventName Event

	// ToolName, ToolInput and ToolUseID describe the call (tool events).
	ToolName  string
	ToolInput json.RawMessage
	ToolUseID string
	// ToolResponse is what the tool returned (PostToolUse). Claude Code
	// sends each tool's own structured result; cadre's tools return text,
	// so the loop sends the result text as a JSON string.
	ToolResponse json.RawMessage
	// Error is the failure's text and IsInterrupt whether the call was
	// cut short (PostToolUseFailure).
	Error       string
	IsInterrupt bool
	// DurationMS is how long the call ran (PostToolUse, PostToolUseFailure).
	DurationMS int64
	// PermissionSuggestions are the rules "always allow" would add
	// (PermissionRequest), in Claude Code's shape.
	PermissionSuggestions json.RawMessage

	// Prompt is the text of the submitted prompt (UserPromptSubmit).
	Prompt string

	// StopHookActive is true when the agent is already continuing because
	// a stop hook blocked it (Stop, SubagentStop).
	StopHookActive bool
	// AgentTranscriptPath is the sub-agent's own transcript (SubagentStop).
	AgentTranscriptPath string
	// LastAssistantMessage is the text of the agent's final answer (Stop,
	// SubagentStop).
	LastAssistantMessage string
	// BackgroundTasks are the tasks still running (Stop, SubagentStop).
	BackgroundTasks []BackgroundTask

	// Source is why the session started: startup, resume, clear or
	// compact (SessionStart).
	Source string
	// Reason is why the session ended (SessionEnd).
	Reason string
	// Message and NotificationType describe a notification.
	Message          string
	NotificationType string
	// Trigger is manual or auto and CustomInstructions the user's
	// instructions for the summary (PreCompact).
	Trigger            string
	CustomInstructions string
	// CompactSummary is the summary the compaction wrote (PostCompact).
	CompactSummary string
	// Name is the worktree's name, such as "agent-<id>" (WorktreeCreate).
	Name string
	// WorktreePath is the worktree being removed (WorktreeRemove).
	WorktreePath string

	// TeammateName is the teammate going idle (TeammateIdle), or the one
	// creating or completing a task, "" for the lead (TaskCreated,
	// TaskCompleted); TeamName is its team.
	TeammateName string
	TeamName     string
	// TaskID, TaskSubject and TaskDescription describe the task
	// (TaskCreated, TaskCompleted).
	TaskID          string
	TaskSubject     string
	TaskDescription string
}

// BackgroundTask is a task still running when an agent stops.
type BackgroundTask struct {
	ID          string `json:"id"`
	Type        string `json:"type"`
	Status      string `json:"status"`
	Description string `json:"description"`
	AgentType   string `json:"agent_type,omitempty"`
}

// MarshalJSON renders the input in Claude Code's shape for its event.
func (in *Input) MarshalJSON() ([]byte, error) {
	var w objWriter
	w.str("session_id", in.SessionID)
	w.str("transcript_path", in.TranscriptPath)
	w.str("cwd", in.Cwd)
	if in.HookEventName.carriesPermissionMode() && in.PermissionMode != "" {
		w.str("permission_mode", string(in.PermissionMode))
	}
	if in.AgentID != "" {
		w.str("agent_id", in.AgentID)
	}
	if in.AgentType != "" {
		w.str("agent_type", in.AgentType)
	}
	w.str("hook_event_name", string(in.HookEventName))
	switch in.HookEventName {
	case PreToolUse:
		w.str("tool_name", in.ToolName)
		w.raw("tool_input", in.ToolInput)
		w.str("tool_use_id", in.ToolUseID)
	case PostToolUse:
		w.str("tool_name", in.ToolName)
		w.raw("tool_input", in.ToolInput)
		w.raw("tool_response", in.ToolResponse)
		w.str("tool_use_id", in.ToolUseID)
		w.value("duration_ms", in.DurationMS)
	case PostToolUseFailure:
		w.str("tool_name", in.ToolName)
		w.raw("tool_input", in.ToolInput)
		w.str("tool_use_id", in.ToolUseID)
		w.str("error", in.Error)
		w.value("is_interrupt", in.IsInterrupt)
		w.value("duration_ms", in.DurationMS)
	case PermissionRequest:
		w.str("tool_name", in.ToolName)
		w.raw("tool_input", in.ToolInput)
		if len(in.PermissionSuggestions) > 0 {
			w.raw("permission_suggestions", in.PermissionSuggestions)
		}
	case UserPromptSubmit:
		w.str("prompt", in.Prompt)
	case Stop, SubagentStop:
		w.value("stop_hook_active", in.StopHookActive)
		if in.HookEventName == SubagentStop {
			w.str("agent_transcript_path", in.AgentTranscriptPath)
		}
		w.str("last_assistant_message", in.LastAssistantMessage)
		tasks := in.BackgroundTasks
		if tasks == nil {
			tasks = []BackgroundTask{}
		}
		w.value("background_tasks", tasks)
	case SessionStart:
		w.str("source", in.Source)
	case SessionEnd:
		w.str("reason", in.Reason)
	case Notification:
		w.str("message", in.Message)
		w.str("notification_type", in.NotificationType)
	case PreCompact:
		w.str("trigger", in.Trigger)
		w.str("custom_instructions", in.CustomInstructions)
	case PostCompact:
		w.str("trigger", in.Trigger)
		w.str("compact_summary", in.CompactSummary)
	case WorktreeCreate:
		w.str("name", in.Name)
	case WorktreeRemove:
		w.str("worktree_path", in.WorktreePath)
	case TeammateIdle:
		w.str("teammate_name", in.TeammateName)
		if in.TeamName != "" {
			w.str("team_name", in.TeamName)
		}
	case TaskCreated, TaskCompleted:
		w.str("task_id", in.TaskID)
		w.str("task_subject", in.TaskSubject)
		if in.TaskDescription != "" {
			w.str("task_description", in.TaskDescription)
		}
		if in.TeammateName != "" {
			w.str("teammate_name", in.TeammateName)
		}
		if in.TeamName != "" {
			w.str("team_name", in.TeamName)
		}
	}
	return w.close()
}

// objWriter writes one JSON object, keys in the order given.
type objWriter struct {
	b   bytes.Buffer
	err error
}

func (w *objWriter) key(k string) {
	if w.b.Len() == 0 {
		w.b.WriteByte('{')
	} else {
		w.b.WriteByte(',')
	}
	w.b.WriteByte('"')
	w.b.WriteString(k)
	w.b.WriteString(`":`)
}

func (w *objWriter) str(k, v string) { w.value(k, v) }

func (w *objWriter) value(k string, v any) {
	if w.err != nil {
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		w.err = fmt.Errorf("hook input field %s: %w", k, err)
		return
	}
	w.key(k)
	w.b.Write(b)
}

// raw writes v as it is, or {} when it is empty (tool input and response
// are always objects or values, never absent).
func (w *objWriter) raw(k string, v json.RawMessage) {
	if w.err != nil {
		return
	}
	if len(bytes.TrimSpace(v)) == 0 {
		v = json.RawMessage("{}")
	}
	var c bytes.Buffer
	if err := json.Compact(&c, v); err != nil {
		w.err = fmt.Errorf("hook input field %s: %w", k, err)
		return
	}
	w.key(k)
	w.b.Write(c.Bytes())
}

func (w *objWriter) close() ([]byte, error) {
	if w.err != nil {
		return nil, w.err
	}
	if w.b.Len() == 0 {
		w.b.WriteByte('{')
	}
	w.b.WriteByte('}')
	return w.b.Bytes(), nil
}
