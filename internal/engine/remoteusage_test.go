package engine

import (
	"context"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// A remote agent's tokens, and those of the agent it starts on the
// worker, are in the run's Result.Usage as they are in its ModelUsage
// (the cost's base): usage and cost agree.
func TestRemoteAgentUsageIsTheRunsUsage(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newWorkerExecutor(t)
	far := llm.Usage{InputTokens: 70_000, OutputTokens: 7_000}
	sub := llm.Usage{InputTokens: 30_000, OutputTokens: 3_000, CacheReadTokens: 300}
	x.w.Model.Script("FARU", llmtest.ToolUse("Agent", map[string]any{"description": "sub", "prompt": "SUBU look", "subagent_type": "general-purpose"}).WithUsage(far),
		llmtest.Text("REMOTE-DONE").WithUsage(far))
	x.w.Model.Script("SUBU", llmtest.Text("sub done").WithUsage(sub))
	var rt *Runtime
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FARU work", "subagent_type": "far"})
		case 3:
			// Wait for the remote agent: its events are all forwarded
			// before its task ends (remote.go drainEvents).
			return llmtest.ToolUse("TaskOutput", map[string]any{"task_id": taskByDescription(t, rt, "far"), "block": true, "timeout": 600000})
		}
		return llmtest.Text("heard back")
	})
	cfg := h.config()
	cfg.Background = BackgroundDefault // the task tools are offered
	cfg.Agents = []*agentdef.Definition{remoteAgentDef()}
	cfg.Remote = Remote{Executor: x}
	rt = newRuntime(t, cfg)
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	contains(t, h.toolResults("MAIN")[0], `"status":"completed"`)
	var streamed, remote llm.Usage
	for _, ev := range evs {
		if ev.Type != run.EventAssistant && ev.Type != run.EventCompactBoundary {
			continue
		}
		streamed = streamed.Add(ev.Usage)
		if ev.AgentID != "" {
			remote = remote.Add(ev.Usage)
		}
	}
	if want := far.Add(far).Add(sub); remote != want {
		t.Fatalf("the remote subtree streamed usage %+v, want %+v", remote, want)
	}
	var byModel llm.Usage
	for _, u := range res.ModelUsage {
		byModel = byModel.Add(u)
	}
	if res.Usage != streamed || res.Usage != byModel {
		t.Fatalf("run usage %+v, want every streamed answer's %+v; by model it is %+v", res.Usage, streamed, byModel)
	}
}
