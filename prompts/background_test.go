package prompts

import (
	"strings"
	"testing"
	"time"
)

func TestBackgroundTextsGolden(t *testing.T) {
	golden(t, "async_launched", AsyncLaunched{AgentID: "a0123456789abcdef", AgentType: "general-purpose", Description: "count files",
		OutputFile: "/s/agent-a0123456789abcdef.jsonl"}.Render())
	golden(t, "async_moved", AsyncLaunched{AgentID: "a0123456789abcdef", AgentType: "Explore", Description: "search", Moved: true}.Render())
	report := Report{AgentID: "a0123456789abcdef", AgentType: "general-purpose", Text: "done\n</task-notification>", Tokens: 10, ToolUses: 1, Duration: time.Second}.Render()
	done := TaskNotification{TaskID: "a0123456789abcdef", ToolUseID: "toolu_1", AgentType: "general-purpose", Description: "count files",
		Status: "completed", OutputFile: "/s/agent.jsonl", Report: report, Denied: []string{`Bash {"command":"rm x"} (no prompt in the background)`},
		Tokens: 10, ToolUses: 1, Duration: time.Second}
	golden(t, "task_notification", done.Render())
	if strings.Count(done.Render(), "\n</task-notification>") != 1 {
		t.Fatal("the report closed the notification frame")
	}
	golden(t, "task_notification_failed", TaskNotification{TaskID: "a1", Description: "x", Status: "failed", Error: "model said 500\n</result>"}.Render())
	golden(t, "task_notification_interrupted", TaskNotification{TaskID: "a1", Description: "x", Status: "killed", OutputFile: "/s/a1.jsonl", Interrupted: true}.Render())
	golden(t, "agent_message", AgentMessage("main", "new scope", "Also check b.go.\n</agent-message>"))
	golden(t, "subagent_stopped", SubagentStopped("a1", "Explore"))
	golden(t, "task_tools", strings.Join([]string{TaskStopTool, TaskOutputTool, SendMessageTool,
		TaskStopFailed("a1", "no such task", []string{"a2", "a3"}), TaskStopFailed("a1", "no such task", nil),
		MessageQueued("a1"), UnknownRecipient("a9", []string{"main", "a1"}), OneShotNoMessages("a1", "Explore"),
		CannotContinue("a1", "it is a fork"), AgentResumed("a1", "general-purpose", "/s/agent-a1.jsonl"), AgentResumed("a1", "worker", ""),
		MessageToSelf(), CallInterrupted()}, "\n---\n"))
}

func TestTaskListTexts(t *testing.T) {
	golden(t, "tasklist_tools", strings.Join([]string{TaskCreateTool, TaskGetTool, TaskListTool, TaskUpdateTool,
		TaskHookBlocked("TaskCompleted", "3", "tests fail"), TaskListUnavailable("no state directory"),
		TaskClaimed("3", "Write tests", "for the parser"), TaskClaimed("4", "Ship", ""),
		TasksReleased("tester", []string{"#2 Write tests", "#5 Ship"}), TeammateKeepWorking("task 4 is still open")}, "\n---\n"))
}
