package cli

import (
	"encoding/json"
	"fmt"
	"io"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
)

// BenchmarkStreamJSONFanout16 measures writing one fan-out-16 run as
// stream-json: per run, init, the main agent's two answers and tool
// results, and for each child its task events, prompt, two answers and a
// Read result — the printing a headless run pays on top of the agents.
func BenchmarkStreamJSONFanout16(b *testing.B) {
	const n = 16
	events := fanoutEvents(n)
	b.ReportAllocs()
	for b.Loop() {
		p := newStreamPrinter(writerLines{io.Discard}, newTally(nil, nil), runInfo{PermissionMode: "default"}, false)
		for _, ev := range events {
			if err := p.event(ev); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(len(events)), "events/op")
}

func fanoutEvents(n int) []run.Event {
	u := llm.Usage{InputTokens: 10, OutputTokens: 20, CacheReadTokens: 5000, CacheWriteTokens: 800}
	evs := []run.Event{{Type: run.EventInit, Init: &run.Init{SessionID: "s", Model: "claude-sonnet-4-5", Cwd: "/w", Tools: []string{"Agent", "Read", "Bash"}}}}
	var calls, results []llm.Block
	for i := range n {
		in, _ := json.Marshal(map[string]string{"description": fmt.Sprintf("child %d", i), "prompt": "read the file", "subagent_type": "general-purpose"})
		calls = append(calls, llm.Block{Type: llm.BlockToolUse, ID: fmt.Sprintf("t%d", i), Name: "Agent", Input: in})
	}
	evs = append(evs, run.Event{Type: run.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: calls}, Usage: u,
		MessageID: "m0", Model: "claude-sonnet-4-5", StopReason: llm.StopToolUse, APIDuration: time.Second})
	for i := range n {
		id, tu := fmt.Sprintf("a%d", i), fmt.Sprintf("t%d", i)
		read := llm.Block{Type: llm.BlockToolUse, ID: "r" + id, Name: "Read", Input: json.RawMessage(`{"file_path":"/w/f.txt"}`)}
		evs = append(evs,
			run.Event{Type: run.EventTaskStarted, AgentID: id, ParentToolUseID: tu, Task: &run.TaskInfo{AgentID: id, ToolUseID: tu, AgentType: "general-purpose", Description: "child", Depth: 1}},
			run.Event{Type: run.EventAssistant, AgentID: id, ParentToolUseID: tu, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{read}}, Usage: u, Model: "claude-sonnet-4-5", StopReason: llm.StopToolUse},
			run.Event{Type: run.EventUser, AgentID: id, ParentToolUseID: tu, Message: &llm.Message{Role: llm.RoleUser, Content: []llm.Block{llm.ToolResultBlock("r"+id, "1\tline one\n2\tline two\n", false)}}},
			run.Event{Type: run.EventAssistant, AgentID: id, ParentToolUseID: tu, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("done")}}, Usage: u, Model: "claude-sonnet-4-5", StopReason: llm.StopEndTurn},
			run.Event{Type: run.EventTaskCompleted, AgentID: id, ParentToolUseID: tu, Subagent: &run.SubagentResult{AgentID: id, ToolUseID: tu, AgentType: "general-purpose", Status: "completed", Text: "done", Turns: 2, ToolUses: 1, Usage: u}},
		)
		results = append(results, llm.ToolResultBlock(tu, "Report from sub-agent: done", false))
	}
	evs = append(evs,
		run.Event{Type: run.EventUser, Message: &llm.Message{Role: llm.RoleUser, Content: results}},
		run.Event{Type: run.EventAssistant, Message: &llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("all done")}}, Usage: u, Model: "claude-sonnet-4-5", StopReason: llm.StopEndTurn},
		run.Event{Type: run.EventResult, Result: &run.Result{Text: "all done", Subtype: "success", NumTurns: 2, SessionID: "s"}},
	)
	return evs
}
