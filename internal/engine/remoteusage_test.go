package engine

import (
	"context"
	"maps"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/engine/executor"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/transcript"
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

// A re-attached remote agent's events are replayed from its first: the
// resumed run counts all of them, in its usage as in its cost, the answer
// the dead launcher had already seen included (docs/remote.md says why:
// the replay does not mark what it saw, and it reported none of it).
func TestReattachedRemoteAgentUsageCountsItsWholeRun(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newAttachExecutor(t)
	before := llm.Usage{InputTokens: 11_000, OutputTokens: 1_100}
	after := llm.Usage{InputTokens: 22_000, OutputTokens: 2_200}
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	x.w.Model.ScriptFunc("FAR-U", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 { // an answer the launcher sees before it dies
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo u"}).WithUsage(before)
		}
		<-release
		return llmtest.Text("U-DONE").WithUsage(after)
	})
	var rt atomic.Pointer[Runtime] // the launcher running now
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-U work"})
		case len(r.LastToolResults()) > 0:
			return llmtest.Text("main ok")
		}
		// The resumed run waits for the re-attached agent.
		return llmtest.ToolUse("TaskOutput", map[string]any{"task_id": taskByDescription(t, rt.Load(), "far"), "block": true, "timeout": 600000})
	})
	cfg := h.config()
	cfg.Background = BackgroundDefault // the task tools are offered
	cfg.Remote = Remote{Executor: x, All: true, PickupWait: time.Hour}
	rt1 := newRuntime(t, cfg)
	rt.Store(rt1)
	if _, _, err := runAll(t, context.Background(), rt1, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	id := taskByDescription(t, rt1, "far")
	for { // the dead launcher saw the first answer and its tool call
		ch := rt1.bg.reg.Changed()
		if info, _ := rt1.Task(id); info.Progress.ToolUses == 1 {
			break
		}
		<-ch
	}
	x.crash(t, rt1)
	once.Do(func() { close(release) })

	entries, err := transcript.ReadFile(rt1.TranscriptPath())
	if err != nil {
		t.Fatal(err)
	}
	next := cfg
	next.SessionID, next.History = rt1.SessionID(), transcript.Messages(entries)
	rt2 := newRuntime(t, next)
	rt.Store(rt2)
	evs, res, err := runAll(t, context.Background(), rt2, "MAIN again")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	if got := x.attachedIDs(); len(got) != 1 || got[0] != id {
		t.Fatalf("attached %v, want %s", got, id)
	}
	contains(t, h.toolResults("MAIN")[0], `"status":"completed"`)
	var streamed, remote llm.Usage
	for _, ev := range evs {
		if ev.Type != run.EventAssistant {
			continue
		}
		streamed = streamed.Add(ev.Usage)
		if ev.AgentID == id {
			remote = remote.Add(ev.Usage)
		}
	}
	if want := before.Add(after); remote != want {
		t.Fatalf("the resumed run streamed the agent's usage %+v, want its whole run's %+v", remote, want)
	}
	var byModel llm.Usage
	for _, u := range res.ModelUsage {
		byModel = byModel.Add(u)
	}
	if res.Usage != streamed || res.Usage != byModel {
		t.Fatalf("resumed run usage %+v, want every streamed answer's %+v; by model it is %+v", res.Usage, streamed, byModel)
	}
}

// A remote agent's spawn request carries the budgets of the types it may
// start, from the launcher's definitions, for its worker to reserve them
// (agentwf); types without a budget are left out.
func TestRemoteRequestCarriesTheTypeBudgets(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	x := newWorkerExecutor(t)
	x.w.Model.Script("FAR-TB", llmtest.Text("done"))
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "far", "prompt": "FAR-TB work", "subagent_type": "far"}),
		llmtest.Text("launched"), llmtest.Text("heard back"))
	cfg := h.config()
	cfg.Agents = []*agentdef.Definition{remoteAgentDef(),
		{Name: "reviewer", Description: "reviews", Body: "Review.", Path: "test:reviewer", Budget: agentdef.Budget{Turns: 2, Tokens: 9_000}},
		{Name: "plain", Description: "no budget", Body: "Plain.", Path: "test:plain"}}
	cfg.Remote = Remote{Executor: x}
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	reqs := x.requests()
	if len(reqs) != 1 || !slices.Contains(reqs[0].Ceiling.Tools, AgentToolName) {
		t.Fatalf("requests %+v", reqs)
	}
	want := map[string]executor.Budget{"reviewer": {Turns: 2, Tokens: 9_000}}
	if got := reqs[0].TypeBudgets; !maps.Equal(got, want) {
		t.Fatalf("type budgets %+v, want %+v", got, want)
	}
}
