package tui

import (
	"path/filepath"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	tasks "github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// scenarios build the states the golden views show.
var scenarios = []struct {
	name  string
	build func(t *testing.T, m *Model)
}{
	{"streaming", buildStreaming},
	{"toolcall", buildToolCall},
	{"prompt", buildPrompt},
	{"tree", buildTree},
	{"notification", buildNotification},
	{"todos", buildTodos},
	{"teamtasks", buildTeamTasks},
}

func TestGoldenViews(t *testing.T) {
	t.Parallel()
	for _, sc := range scenarios {
		for _, sz := range sizes {
			t.Run(sc.name+"/"+sizeName(sz.w, sz.h), func(t *testing.T) {
				t.Parallel()
				m := testModel(t, sz.w, sz.h, nil)
				sc.build(t, m)
				golden(t, sc.name+"_"+sizeName(sz.w, sz.h), m)
			})
		}
	}
}

func initEvent() run.Event {
	return run.Event{Type: run.EventInit, Init: &run.Init{SessionID: "5f0c2a51-0d6e-4a57-9d59-2f1d8e3b7c10", Model: "claude-sonnet-4-5", Cwd: cwd}}
}

// buildStreaming: the answer is half streamed.
func buildStreaming(t *testing.T, m *Model) {
	typeText(m, "where are settings loaded, and in what order?")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	f.ev(initEvent())
	for _, d := range []string{"Settings are merged from ", "four files, lowest first:\n\n", "1. `~/.config/cadre/settings.json`\n", "2. `.cadre/settings.json`\n", "3. `.cadre/settings.local.json`\n", "4. the file given with **--settings**"} {
		f.ev(run.Event{Type: run.EventText, Text: d})
	}
	f.tick(300 * time.Millisecond)
}

// buildToolCall: one call finished with a long result, one running.
func buildToolCall(t *testing.T, m *Model) {
	typeText(m, "run the tests and fix what fails")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	test := call("toolu_1", "Bash", map[string]any{"command": "go test ./...", "description": "Run every test"})
	read := call("toolu_2", "Read", map[string]any{"file_path": filepath.Join(cwd, "cart/total.go")})
	f.ev(initEvent(),
		run.Event{Type: run.EventText, Text: "I'll run the test suite first."},
		run.Event{Type: run.EventAssistant, Message: assistant("I'll run the test suite first.", test), Usage: usage(2100, 40)},
		run.Event{Type: run.EventToolStart, Call: test},
		run.Event{Type: run.EventToolEnd, Call: test, ToolResult: &run.ToolResult{Text: "--- FAIL: TestTotal (0.00s)\n    total_test.go:14: got 90, want 100\nFAIL\nFAIL\tshop/cart\t0.012s\nok  \tshop/api\t0.031s", IsError: true, Duration: 2 * time.Second}},
		run.Event{Type: run.EventAssistant, Message: assistant("", read), Usage: usage(2400, 30)},
		run.Event{Type: run.EventToolStart, Call: read},
	)
	f.tick(500 * time.Millisecond)
}

// buildPrompt: a Bash prompt of the main agent on screen, an Edit prompt
// of a sub-agent queued behind it.
func buildPrompt(t *testing.T, m *Model) {
	typeText(m, "clean the build and run the tests")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	bash := call("toolu_1", "Bash", map[string]any{"command": "rm -rf build && go test ./... 2>&1 | tee test.log"})
	f.ev(initEvent(),
		run.Event{Type: run.EventAssistant, Message: assistant("", bash), Usage: usage(2100, 40)},
		run.Event{Type: run.EventToolStart, Call: bash})
	m.Update(promptMsg{id: 1, reply: make(chan permission.Reply, 1), prompt: permission.Prompt{
		Request:   permission.Request{Tool: "Bash", Input: bash.Input, ToolUseID: "toolu_1", AgentType: "main", Cwd: cwd},
		Decision:  permission.Decision{Behavior: permission.Ask, Reason: "rm can delete files; commands that write need approval in default mode"},
		Suggested: permission.Rule{Behavior: permission.Allow, Tool: "Bash", Content: "rm:*"}, HasSuggestion: true,
	}})
	edit := call("toolu_9", "Edit", map[string]any{"file_path": filepath.Join(cwd, "cart/total.go"), "old_string": "\treturn sum\n", "new_string": "\treturn sum + shipping\n"})
	m.Update(promptMsg{id: 2, reply: make(chan permission.Reply, 1), prompt: permission.Prompt{
		Request:  permission.Request{Tool: "Edit", Input: edit.Input, ToolUseID: "toolu_9", AgentID: "a5c1e2f3a4b5c6d7e", AgentType: "general-purpose", Cwd: cwd},
		Decision: permission.Decision{Behavior: permission.Ask, Reason: "file edits need approval in default mode"},
	}})
	f.tick(200 * time.Millisecond)
}

// task is a sub-agent's start event.
func task(id, typ, desc, parent, callID string, depth int, model string) run.Event {
	return run.Event{Type: run.EventTaskStarted, AgentID: id, ParentToolUseID: callID, Task: &run.TaskInfo{
		AgentID: id, ToolUseID: callID, AgentType: typ, Description: desc, Depth: depth, Parent: parent,
		Receipt: run.Receipt{Model: model}}}
}

func agentCall(id, typ, desc, prompt string) *run.Event {
	c := call(id, "Agent", map[string]any{"subagent_type": typ, "description": desc, "prompt": prompt})
	return &run.Event{Type: run.EventToolStart, Call: c}
}

// buildTree: main and three children, one with a child of its own, in
// mixed states; the tree has the focus.
func buildTree(t *testing.T, m *Model) {
	typeText(m, "audit the checkout flow")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	c1, c2, c3 := agentCall("toolu_a1", "Explore", "map the checkout code", "Find every file of the checkout flow."),
		agentCall("toolu_a2", "general-purpose", "fix rounding in totals", "Fix the rounding bug in cart totals."),
		agentCall("toolu_a3", "Plan", "plan the refund API", "Plan a refund endpoint.")
	f.ev(initEvent(),
		run.Event{Type: run.EventText, Text: "I'll split this across three agents."},
		run.Event{Type: run.EventAssistant, Message: assistant("I'll split this across three agents.", c1.Call, c2.Call, c3.Call), Usage: usage(3000, 120)},
		*c1, *c2, *c3,
		task("a1f0000000000001", "Explore", "map the checkout code", "main", "toolu_a1", 1, "claude-haiku-4-5"),
		task("a2f0000000000002", "general-purpose", "fix rounding in totals", "main", "toolu_a2", 1, "claude-sonnet-4-5"),
		task("a3f0000000000003", "Plan", "plan the refund API", "main", "toolu_a3", 1, "claude-sonnet-4-5"),
	)
	grep := call("toolu_g", "Grep", map[string]any{"pattern": "func Checkout"})
	f.ev(
		run.Event{Type: run.EventToolStart, AgentID: "a1f0000000000001", Call: grep},
		run.Event{Type: run.EventAssistant, AgentID: "a1f0000000000001", Message: assistant("", grep), Usage: usage(4100, 60)},
		run.Event{Type: run.EventToolEnd, AgentID: "a1f0000000000001", Call: grep, ToolResult: &run.ToolResult{Text: "checkout/flow.go:12"}},
		run.Event{Type: run.EventTaskCompleted, AgentID: "a1f0000000000001", Subagent: &run.SubagentResult{AgentID: "a1f0000000000001", AgentType: "Explore", ToolUseID: "toolu_a1", Status: "completed", ToolUses: 1, Usage: usage(4100, 60), Duration: 3 * time.Second}},
	)
	v := agentCall("toolu_v", "verification", "check the rounding fix", "Verify the fix.")
	v.AgentID = "a2f0000000000002"
	edit := call("toolu_e", "Edit", map[string]any{"file_path": filepath.Join(cwd, "cart/total.go"), "old_string": "a", "new_string": "b"})
	f.ev(
		run.Event{Type: run.EventToolStart, AgentID: "a2f0000000000002", Call: edit},
		run.Event{Type: run.EventToolEnd, AgentID: "a2f0000000000002", Call: edit, ToolResult: &run.ToolResult{Text: "ok"}},
		run.Event{Type: run.EventAssistant, AgentID: "a2f0000000000002", Message: assistant("", v.Call), Usage: usage(5200, 310)},
		*v,
		run.Event{Type: run.EventTaskPending, AgentID: "a4f0000000000004", ParentToolUseID: "toolu_v", Task: &run.TaskInfo{
			AgentID: "a4f0000000000004", ToolUseID: "toolu_v", AgentType: "verification", Description: "check the rounding fix", Depth: 2, Parent: "a2f0000000000002"}},
		run.Event{Type: run.EventTaskCompleted, AgentID: "a3f0000000000003", Subagent: &run.SubagentResult{AgentID: "a3f0000000000003", AgentType: "Plan", ToolUseID: "toolu_a3", Status: "failed", Error: "model request failed: 529 overloaded", Usage: usage(900, 0), Duration: 2 * time.Second}},
	)
	f.tick(4 * time.Second)
	press(m, "tab", "down", "down")
}

// buildNotification: a background child ended while the main agent was
// idle; the watcher ran the main agent on the notification, which the UI
// showed as it was delivered.
func buildNotification(t *testing.T, m *Model) {
	typeText(m, "benchmark the cart in the background, then tell me")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	c := agentCall("toolu_b1", "general-purpose", "benchmark the cart", "Run the cart benchmarks.")
	bg := task("abf0000000000001", "general-purpose", "benchmark the cart", "main", "toolu_b1", 1, "claude-sonnet-4-5")
	bg.Task.Background = true
	f.ev(initEvent(),
		run.Event{Type: run.EventAssistant, Message: assistant("", c.Call), Usage: usage(2000, 80)}, *c, bg,
		run.Event{Type: run.EventToolEnd, Call: c.Call, ToolResult: &run.ToolResult{Text: "Async agent launched: abf0000000000001"}},
		run.Event{Type: run.EventText, Text: "The benchmark runs in the background; I'll report when it ends."},
		run.Event{Type: run.EventAssistant, Message: assistant("The benchmark runs in the background; I'll report when it ends."), Usage: usage(2100, 20)},
		run.Event{Type: run.EventResult, Result: &run.Result{Text: "ok", Subtype: "success", Usage: usage(4100, 100)}},
	)
	f.end()
	// The watcher's stream: the child's last events, then the main
	// agent's turn on its notification.
	bench := call("toolu_x", "Bash", map[string]any{"command": "go test -bench . ./cart"})
	f.watch(1,
		run.Event{Type: run.EventToolStart, AgentID: "abf0000000000001", Call: bench},
		run.Event{Type: run.EventAssistant, AgentID: "abf0000000000001", Message: assistant("", bench), Usage: usage(8000, 600)},
		run.Event{Type: run.EventTaskCompleted, AgentID: "abf0000000000001", Subagent: &run.SubagentResult{AgentID: "abf0000000000001", AgentType: "general-purpose",
			ToolUseID: "toolu_b1", Status: "completed", Text: "BenchmarkTotal-2  2900000  412 ns/op  3 allocs/op", ToolUses: 4, Usage: usage(9000, 700), Duration: 38 * time.Second}},
	)
	f.at = f.at.Add(30 * time.Second)
	f.watch(1, initEvent(),
		run.Event{Type: run.EventNotification, Notification: &tasks.Notification{Seq: 1, To: "main", TaskID: "abf0000000000001", ToolUseID: "toolu_b1",
			AgentType: "general-purpose", Description: "benchmark the cart", Status: tasks.Completed, OutputFile: "/state/agent-abf0000000000001.jsonl",
			Summary: `Agent "benchmark the cart" completed`}},
		run.Event{Type: run.EventText, Text: "The cart benchmark finished: **412 ns/op**, 3 allocations."},
		run.Event{Type: run.EventAssistant, Message: assistant("The cart benchmark finished: **412 ns/op**, 3 allocations."), Usage: usage(2300, 30)},
		run.Event{Type: run.EventResult, Result: &run.Result{Text: "ok", Subtype: "success", Usage: usage(2300, 30)}},
	)
	f.watchTurnEnd(1)
}

// buildTodos: the main agent wrote its todo list and works on its second
// item.
func buildTodos(t *testing.T, m *Model) {
	typeText(m, "fix the rounding in cart totals")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	list := []tool.Todo{
		{Content: "Read the cart code", Status: tool.TodoCompleted, ActiveForm: "Reading the cart code"},
		{Content: "Run the tests", Status: tool.TodoInProgress, ActiveForm: "Running the tests"},
		{Content: "Fix the rounding", Status: tool.TodoPending, ActiveForm: "Fixing the rounding"},
	}
	write := call("toolu_t", "TodoWrite", map[string]any{"todos": list})
	test := call("toolu_b", "Bash", map[string]any{"command": "go test ./cart"})
	f.ev(initEvent(),
		run.Event{Type: run.EventAssistant, Message: assistant("", write), Usage: usage(2000, 90)},
		run.Event{Type: run.EventToolStart, Call: write},
		run.Event{Type: run.EventToolEnd, Call: write, ToolResult: &run.ToolResult{Text: "Todos have been modified successfully."}},
		run.Event{Type: run.EventTodos, Todos: &run.TodoUpdate{ToolUseID: "toolu_t", Old: []tool.Todo{}, New: list, Current: list}},
		run.Event{Type: run.EventAssistant, Message: assistant("", test), Usage: usage(2200, 30)},
		run.Event{Type: run.EventToolStart, Call: test},
	)
	f.tick(700 * time.Millisecond)
}

// buildTeamTasks: the lead and two teammates work the team's task list;
// the agents panel shows it below the agents: one done, one in progress,
// one blocked, one free.
func buildTeamTasks(t *testing.T, m *Model) {
	typeText(m, "ship the refund API with the team")
	press(m, "enter")
	f := &feeder{m: m, at: t0}
	c1, c2 := agentCall("toolu_a1", "general-purpose", "backend", "Build the refund endpoint."),
		agentCall("toolu_a2", "general-purpose", "tests", "Test the refund endpoint.")
	create := call("toolu_c", "TaskCreate", map[string]any{"subject": "Write the refund handler", "description": "POST /refunds"})
	f.ev(initEvent(),
		run.Event{Type: run.EventAssistant, Message: assistant("", create), Usage: usage(2000, 60)},
		run.Event{Type: run.EventToolStart, Call: create},
		run.Event{Type: run.EventToolEnd, Call: create, ToolResult: &run.ToolResult{Text: `{"task":{"id":"4","subject":"Write the refund handler"}}`}},
		run.Event{Type: run.EventAssistant, Message: assistant("", c1.Call, c2.Call), Usage: usage(2400, 80)},
		*c1, *c2,
		task("a1f0000000000001", "general-purpose", "backend", "main", "toolu_a1", 1, "claude-sonnet-4-5"),
		task("a2f0000000000002", "general-purpose", "tests", "main", "toolu_a2", 1, "claude-sonnet-4-5"),
		run.Event{Type: run.EventTeamTasks, AgentID: "a1f0000000000001", TeamTasks: []run.TeamTask{
			{ID: "1", Subject: "Design the refund schema", Status: "completed", Owner: "team-lead"},
			{ID: "2", Subject: "Implement the refund endpoint", Status: "in_progress", Owner: "backend"},
			{ID: "3", Subject: "Write integration tests for refunds", Status: "pending", BlockedBy: []string{"2"}},
			{ID: "4", Subject: "Write the refund handler", Status: "pending"},
		}},
	)
	f.tick(2 * time.Second)
}
