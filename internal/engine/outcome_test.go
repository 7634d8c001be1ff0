package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// A run that ends in a model API error still yields its result, with
// every number counted so far, before the error; the transcript's last
// entry says how it ended.
func TestFailedRunYieldsResultThenError(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	if err := os.WriteFile(filepath.Join(h.dir, "a.txt"), []byte("alpha\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	h.srv.Script("MAIN",
		llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD: look around")),
		llmtest.ToolUse("Write", map[string]string{"file_path": filepath.Join(h.dir, "b.txt"), "content": "no"}),
		llmtest.HTTPError(400, "the request is bad"))
	h.srv.Script("CHILD", llmtest.Text("looked"))
	cfg := h.config()
	// Nobody can be asked, so the Write is denied.
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []run.EventType
	var res *run.Result
	var runErr error
	for ev, err := range rt.Run(context.Background(), "MAIN: go") {
		if err != nil {
			runErr = err
			break
		}
		kinds = append(kinds, ev.Type)
		if ev.Type == run.EventResult {
			res = ev.Result
		}
	}
	if runErr == nil || !strings.Contains(runErr.Error(), "the request is bad") {
		t.Fatalf("error %v", runErr)
	}
	if res == nil || kinds[len(kinds)-1] != run.EventResult {
		t.Fatalf("no result before the error: %v", kinds)
	}
	if !res.IsError || res.Subtype != "error_during_execution" || !strings.Contains(res.Error, "the request is bad") {
		t.Fatalf("result %+v", res)
	}
	// Two answers came before the failed request; the Write was denied.
	if res.NumTurns != 2 || res.ToolUses != 2 || res.Usage.OutputTokens == 0 || res.TranscriptPath == "" {
		t.Fatalf("numbers lost: %+v", res)
	}
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Write" {
		t.Fatalf("denials %+v", res.PermissionDenials)
	}
	if s := res.Subagents; s.Spawned != 1 || s.Completed != 1 {
		t.Fatalf("sub-agents %+v", s)
	}
	entries, err := transcript.ReadFile(res.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	end := transcript.LastRunEnd(entries)
	if end == nil || !end.IsError || end.Cancelled || end.Subtype != "error_during_execution" || !strings.Contains(end.Error, "the request is bad") ||
		end.NumTurns != 2 || end.Subagents.Completed != 1 || end.Usage.OutputTokens != res.Usage.OutputTokens {
		t.Fatalf("run_end %+v", end)
	}
	if last := entries[len(entries)-1]; last.Type != transcript.EntryRunEnd {
		t.Fatalf("last entry %+v", last)
	}
	// The conversation a resume reads is untouched by the record.
	for _, m := range transcript.Messages(entries) {
		if m.Role != llm.RoleUser && m.Role != llm.RoleAssistant {
			t.Fatalf("message %+v", m)
		}
	}
}

// A run cancelled in the middle of a fan-out reports every killed
// sub-agent, yields its result with the counts, and records the
// cancellation in the transcript.
func TestCancelledFanOutKeepsItsRecord(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "SLOW-1: wait")},
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "SLOW-2: wait")},
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "FAST: answer")}),
		llmtest.Text("never"))
	h.srv.Script("FAST", llmtest.Text("fast answer"))
	started := make(chan struct{}, 2)
	for _, key := range []string{"SLOW-1", "SLOW-2"} {
		h.srv.ScriptFunc(key, func(*llmtest.Request) llmtest.Turn {
			started <- struct{}{}
			return llmtest.Text("too late").WithDelay(10 * 60e9)
		})
	}
	rt, err := New(h.config())
	if err != nil {
		t.Fatal(err)
	}
	ended := map[string]task.Status{}
	var res *run.Result
	var runErr error
	for ev, err := range rt.Run(ctx, "MAIN: fan out") {
		if err != nil {
			runErr = err
			break
		}
		switch ev.Type {
		case run.EventTaskCompleted:
			ended[ev.Subagent.AgentID] = ev.Subagent.Status
			if ev.Subagent.Status == task.Completed {
				// The fast child is done: cancel once both slow ones
				// have their request in flight.
				<-started
				<-started
				cancel()
			}
		case run.EventResult:
			res = ev.Result
		}
	}
	if !errors.Is(runErr, context.Canceled) {
		t.Fatalf("error %v", runErr)
	}
	killed := 0
	for _, st := range ended {
		if st == task.Killed {
			killed++
		}
	}
	if res == nil || killed != 2 || res.Subagents.Killed != 2 || res.Subagents.Completed != 1 || res.Subagents.Spawned != 3 || res.NumTurns != 1 || res.Usage.OutputTokens == 0 {
		t.Fatalf("ended %v, result %+v", ended, res)
	}
	entries, err := transcript.ReadFile(res.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	if end := transcript.LastRunEnd(entries); end == nil || !end.Cancelled || end.Subagents.Killed != 2 {
		t.Fatalf("run_end %+v", end)
	}
}

func TestSetModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.Text("one"), llmtest.Text("two"), llmtest.Text("three"))
	cfg := h.config()
	cfg.ResolveModel = func(alias string) (string, bool) {
		if alias == "haiku" {
			return "claude-haiku-4-5", true
		}
		return "", false
	}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, bad := range []string{"two words", "x\x00y"} {
		if err := rt.SetModel(bad); err == nil {
			t.Fatalf("SetModel(%q) accepted", bad)
		}
	}
	for i, step := range []struct{ set, want string }{{"", "claude-sonnet-4-5"}, {"haiku", "claude-haiku-4-5"}, {"default", "claude-sonnet-4-5"}} {
		if err := rt.SetModel(step.set); err != nil {
			t.Fatal(err)
		}
		if rt.Model() != step.want || !strings.Contains(rt.SystemPrompt(), step.want) {
			t.Fatalf("step %d: model %s, system prompt names it: %v", i, rt.Model(), strings.Contains(rt.SystemPrompt(), step.want))
		}
		evs, res, err := runAll(t, context.Background(), rt, "MAIN: hi")
		if err != nil || res == nil {
			t.Fatal(err)
		}
		if evs[0].Init.Model != step.want {
			t.Fatalf("init model %s", evs[0].Init.Model)
		}
		reqs := h.srv.RequestsFor("MAIN")
		if got := reqs[len(reqs)-1].Model; got != step.want {
			t.Fatalf("step %d: request for %s, want %s", i, got, step.want)
		}
	}
}

// Result.CostUSD is figured per model from Config.Prices; a model the
// table lacks is named in UnpricedModels.
func TestResultCostFromThePriceTable(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "d", "prompt": "CHILD: hi", "subagent_type": "general-purpose", "model": "house-model"}),
		llmtest.Text("done").WithUsage(llm.Usage{InputTokens: 1_000_000, OutputTokens: 1_000_000}))
	h.srv.Script("CHILD", llmtest.Text("hi"))
	cfg := h.config()
	cfg.Prices = pricing.Default().With(pricing.Table{"claude-sonnet-4-5": {Input: 1, Output: 2}})
	_, res, _ := mustRun(t, cfg, "MAIN: go")
	main := res.ModelUsage["claude-sonnet-4-5"]
	want := (float64(main.InputTokens)*1 + float64(main.OutputTokens)*2) / 1e6
	if res.CostUSD != want || want < 3 {
		t.Fatalf("cost %v, want %v (usage %+v)", res.CostUSD, want, main)
	}
	if _, ok := res.ModelUsage["house-model"]; !ok || len(res.UnpricedModels) != 1 || res.UnpricedModels[0] != "house-model" {
		t.Fatalf("model usage %+v, unpriced %v", res.ModelUsage, res.UnpricedModels)
	}
}
