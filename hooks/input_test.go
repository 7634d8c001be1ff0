package hooks

import (
	"encoding/json"
	"testing"
)

// TestInputShape pins each event's stdin JSON to the field names and order
// Claude Code 2.1.328 sends (observed with hook scripts that dumped their
// stdin; prompt_id and session_crons, which only Claude Code has, are left
// out).
func TestInputShape(t *testing.T) {
	t.Parallel()
	common := Input{SessionID: "s1", TranscriptPath: "/t/s1.jsonl", Cwd: "/p", PermissionMode: "default"}
	sub := common
	sub.AgentID, sub.AgentType = "a1", "general-purpose"
	with := func(base Input, f func(*Input)) *Input { f(&base); return &base }
	tests := []struct {
		name string
		in   *Input
		want string
	}{
		{"PreToolUse main", with(common, func(in *Input) {
			in.HookEventName, in.ToolName, in.ToolInput, in.ToolUseID = PreToolUse, "Bash", json.RawMessage(`{"command": "echo hi"}`), "toolu_1"
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PreToolUse","tool_name":"Bash","tool_input":{"command":"echo hi"},"tool_use_id":"toolu_1"}`},
		{"PreToolUse in a sub-agent", with(sub, func(in *Input) {
			in.HookEventName, in.ToolName, in.ToolInput, in.ToolUseID = PreToolUse, "Read", json.RawMessage(`{"file_path":"/p/x"}`), "toolu_2"
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","agent_id":"a1","agent_type":"general-purpose","hook_event_name":"PreToolUse","tool_name":"Read","tool_input":{"file_path":"/p/x"},"tool_use_id":"toolu_2"}`},
		{"PostToolUse", with(common, func(in *Input) {
			in.HookEventName, in.ToolName, in.ToolInput, in.ToolResponse, in.ToolUseID, in.DurationMS = PostToolUse, "Bash", json.RawMessage(`{}`), json.RawMessage(`"hi"`), "toolu_1", 231
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PostToolUse","tool_name":"Bash","tool_input":{},"tool_response":"hi","tool_use_id":"toolu_1","duration_ms":231}`},
		{"PostToolUseFailure", with(common, func(in *Input) {
			in.HookEventName, in.ToolName, in.ToolUseID, in.Error, in.DurationMS = PostToolUseFailure, "Read", "toolu_2", "File does not exist.", 54
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PostToolUseFailure","tool_name":"Read","tool_input":{},"tool_use_id":"toolu_2","error":"File does not exist.","is_interrupt":false,"duration_ms":54}`},
		{"PermissionRequest", with(common, func(in *Input) {
			in.HookEventName, in.ToolName, in.ToolInput = PermissionRequest, "Bash", json.RawMessage(`{"command":"touch x"}`)
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PermissionRequest","tool_name":"Bash","tool_input":{"command":"touch x"}}`},
		{"UserPromptSubmit", with(common, func(in *Input) { in.HookEventName, in.Prompt = UserPromptSubmit, "MAIN go" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"UserPromptSubmit","prompt":"MAIN go"}`},
		{"Stop", with(common, func(in *Input) { in.HookEventName, in.LastAssistantMessage = Stop, "main done" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"main done","background_tasks":[]}`},
		{"SubagentStart leaves out the mode", with(sub, func(in *Input) { in.HookEventName = SubagentStart }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","agent_id":"a1","agent_type":"general-purpose","hook_event_name":"SubagentStart"}`},
		{"SubagentStop", with(sub, func(in *Input) {
			in.HookEventName, in.StopHookActive, in.AgentTranscriptPath, in.LastAssistantMessage = SubagentStop, true, "/t/s1/subagents/agent-a1.jsonl", "child done"
			in.BackgroundTasks = []BackgroundTask{{ID: "a2", Type: "subagent", Status: "running", Description: "child", AgentType: "Explore"}}
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","agent_id":"a1","agent_type":"general-purpose","hook_event_name":"SubagentStop","stop_hook_active":true,"agent_transcript_path":"/t/s1/subagents/agent-a1.jsonl","last_assistant_message":"child done","background_tasks":[{"id":"a2","type":"subagent","status":"running","description":"child","agent_type":"Explore"}]}`},
		{"SessionStart", with(common, func(in *Input) { in.HookEventName, in.Source = SessionStart, "startup" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","hook_event_name":"SessionStart","source":"startup"}`},
		{"SessionEnd", with(common, func(in *Input) { in.HookEventName, in.Reason = SessionEnd, "other" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","hook_event_name":"SessionEnd","reason":"other"}`},
		{"Notification", with(common, func(in *Input) {
			in.HookEventName, in.Message, in.NotificationType = Notification, "cadre needs your permission to use Bash", "permission_prompt"
		}), `{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"Notification","message":"cadre needs your permission to use Bash","notification_type":"permission_prompt"}`},
		{"PreCompact", with(common, func(in *Input) { in.HookEventName, in.Trigger = PreCompact, "auto" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PreCompact","trigger":"auto","custom_instructions":""}`},
		{"PostCompact", with(common, func(in *Input) {
			in.HookEventName, in.Trigger, in.CompactSummary = PostCompact, "manual", "the summary"
		}),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"PostCompact","trigger":"manual","compact_summary":"the summary"}`},
		{"WorktreeCreate", with(common, func(in *Input) { in.HookEventName, in.Name = WorktreeCreate, "agent-a1" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","hook_event_name":"WorktreeCreate","name":"agent-a1"}`},
		{"WorktreeRemove", with(common, func(in *Input) { in.HookEventName, in.WorktreePath = WorktreeRemove, "/p/.cadre/worktrees/agent-a1" }),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","hook_event_name":"WorktreeRemove","worktree_path":"/p/.cadre/worktrees/agent-a1"}`},
		{"TeammateIdle", with(common, func(in *Input) {
			in.HookEventName, in.TeammateName, in.TeamName = TeammateIdle, "tester", "session-1234abcd"
		}),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"TeammateIdle","teammate_name":"tester","team_name":"session-1234abcd"}`},
		{"TaskCreated", with(common, func(in *Input) {
			in.HookEventName, in.TaskID, in.TaskSubject, in.TaskDescription = TaskCreated, "3", "Write tests", "for the parser"
		}),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"TaskCreated","task_id":"3","task_subject":"Write tests","task_description":"for the parser"}`},
		{"TaskCompleted", with(common, func(in *Input) {
			in.HookEventName, in.TaskID, in.TaskSubject, in.TeammateName = TaskCompleted, "3", "Write tests", "tester"
		}),
			`{"session_id":"s1","transcript_path":"/t/s1.jsonl","cwd":"/p","permission_mode":"default","hook_event_name":"TaskCompleted","task_id":"3","task_subject":"Write tests","teammate_name":"tester"}`},
	}
	for _, tt := range tests {
		got, err := json.Marshal(tt.in)
		if err != nil {
			t.Fatalf("%s: %v", tt.name, err)
		}
		if string(got) != tt.want {
			t.Errorf("%s:\n got %s\nwant %s", tt.name, got, tt.want)
		}
	}
	// Bad tool input is an error, never a panic or invalid JSON.
	if _, err := json.Marshal(&Input{HookEventName: PreToolUse, ToolInput: json.RawMessage(`{"a":`)}); err == nil {
		t.Error("malformed tool input marshalled")
	}
}
