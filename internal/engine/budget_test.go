package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// budgetCall is an Agent call asking for a token budget.
func budgetCall(prompt string, tokens int) map[string]any {
	in := agentCall("general-purpose", prompt)
	in["budget"] = map[string]any{"tokens": tokens}
	return in
}

// used is a response's usage of n input tokens.
func used(n int64) llm.Usage { return llm.Usage{InputTokens: n - 10, OutputTokens: 10} }

// finished returns the results of the ended sub-agents, by type and
// prompt key (the first word of the description is not unique).
func finished(evs []run.Event) map[string]*run.SubagentResult {
	out := map[string]*run.SubagentResult{}
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			out[ev.Subagent.ToolUseID] = ev.Subagent
		}
	}
	return out
}

// TestBudgetTreeDepth3 runs a tree of depth 3 under a session budget of
// 1000 tokens: main reserves 600 for C1 (asked); C1 reserves 500 for G1
// (asked), which spends 200 and returns 300; C1 then starts G2 and G3 in
// one message: G2 gets what C1 has left (300, the parent's remainder),
// G3 is refused with reason budget. G2 is told to wrap up at 85 % and is
// stopped at 100 % with a partial report; C1, whose subtree then spent
// its whole reservation, stops before its next request. Every sum is
// asserted: no subtree spends more than its reservation, and every
// reservation is back with the session when the run ends.
func TestBudgetTreeDepth3(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", budgetCall("C1: lead the work", 600)).WithUsage(used(100)),
		llmtest.Text("main is done").WithUsage(used(100)))
	h.srv.Script("C1: lead", llmtest.ToolUse("Agent", budgetCall("G1: first part", 500)).WithUsage(used(50)),
		llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: budgetCall("G2: second part", 500)},
			llmtest.Call{Name: "Agent", Input: budgetCall("G3: third part", 100)}).WithText("starting two more").WithUsage(used(50)))
	h.srv.Script("G1: first", llmtest.Text("g1 done").WithUsage(used(200)))
	h.srv.Script("G2: second", llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}).WithUsage(used(260)),
		llmtest.Text("half way through the files").WithToolUse("Glob", map[string]any{"pattern": "*.go"}).WithUsage(used(40)))
	cfg := h.config()
	cfg.Budget = agentdef.Budget{Tokens: 1000}
	evs, res, rt := mustRun(t, cfg, "MAIN: do it")

	if res.Text != "main is done" || res.Subagents.Refused[run.RefusedBudget] != 1 {
		t.Fatalf("result %q refused %v", res.Text, res.Subagents.Refused)
	}
	byID := finished(evs)
	c1 := byID[llmtest.ToolUseID("MAIN", 1)]
	g1 := byID[llmtest.ToolUseID("C1: lead", 1)]
	g2 := byID[llmtest.ToolUseID("C1: lead", 2)]
	if c1 == nil || g1 == nil || g2 == nil || len(byID) != 3 {
		t.Fatalf("ended agents %v", byID)
	}
	for name, r := range map[string]*run.SubagentResult{"C1": c1, "G1": g1, "G2": g2} {
		if r.Budget == nil || r.Receipt.Budget == nil {
			t.Fatalf("%s has no budget: %+v", name, r)
		}
		if r.Budget.Spent.Tokens > r.Receipt.Budget.Tokens {
			t.Errorf("%s spent %d over its reservation %d", name, r.Budget.Spent.Tokens, r.Receipt.Budget.Tokens)
		}
	}
	// Reservations and why.
	if g := c1.Receipt.Budget; g.Tokens != 600 || !strings.Contains(g.Why, "tokens 600 (asked)") {
		t.Errorf("C1 receipt %+v", g)
	}
	if g := g1.Receipt.Budget; g.Tokens != 500 || !strings.Contains(g.Why, "(asked)") {
		t.Errorf("G1 receipt %+v", g)
	}
	if g := g2.Receipt.Budget; g.Tokens != 300 || !strings.Contains(g.Why, "tokens 300 (parent's remainder)") {
		t.Errorf("G2 receipt %+v", g)
	}
	// Spend and what returned.
	if g1.Status != task.Completed || g1.Budget.Spent.Tokens != 200 || g1.Budget.Returned.Tokens != 300 {
		t.Errorf("G1 %s spent %+v", g1.Status, g1.Budget)
	}
	if g2.Status != task.BudgetExhausted || g2.Budget.Spent.Tokens != 300 || g2.Budget.Returned.Tokens != 0 || g2.Budget.Spent.Turns != 2 {
		t.Errorf("G2 %s spent %+v", g2.Status, g2.Budget)
	}
	if !strings.Contains(g2.Text, "budget_exhausted") || !strings.Contains(g2.Text, "half way through the files") || !strings.Contains(g2.Text, "It was doing: Glob") {
		t.Errorf("G2's partial report %q", g2.Text)
	}
	// C1's subtree: its own 100 + G1's 200 + G2's 300.
	if c1.Status != task.BudgetExhausted || c1.Budget.Spent.Tokens != 600 || c1.Budget.Returned.Tokens != 0 || c1.Turns != 2 {
		t.Errorf("C1 %s turns %d spent %+v", c1.Status, c1.Turns, c1.Budget)
	}
	if !strings.Contains(c1.Text, "starting two more") {
		t.Errorf("C1's partial report %q", c1.Text)
	}
	// The session: main's 200 and C1's 600; nothing still held.
	if s, held := rt.budgets.session.Spent(), rt.budgets.session.Held(); s.Tokens != 800 || s.Turns != 2+2+1+2 || held != (spawn.Spend{}) {
		t.Errorf("session spent %+v held %+v", s, held)
	}
	// G2 was told to wrap up once, at 85 %, with its first tool results.
	g2reqs := h.srv.RequestsFor("G2: second")
	if len(g2reqs) != 2 {
		t.Fatalf("G2 made %d requests", len(g2reqs))
	}
	if n := strings.Count(lastUserText(g2reqs[1]), "Wrap up now"); n != 1 {
		t.Errorf("wrap-up reminders %d in %q", n, lastUserText(g2reqs[1]))
	}
	// G3's refusal says budget and not to retry; the report and the
	// notification say what was spent.
	var refusal, g2report string
	for _, ev := range evs {
		if ev.Type == run.EventToolEnd && ev.Call.ID == llmtest.ToolUseID("C1: lead", 3) {
			refusal = ev.ToolResult.Text
		}
		if ev.Type == run.EventToolEnd && ev.Call.ID == llmtest.ToolUseID("C1: lead", 2) {
			g2report = ev.ToolResult.Text
		}
	}
	if !strings.Contains(refusal, "reason: budget") || !strings.Contains(refusal, "Do not retry") {
		t.Errorf("G3's refusal %q", refusal)
	}
	if !strings.Contains(g2report, "budget: spent usd") || !strings.Contains(g2report, "300 tokens of 300") {
		t.Errorf("G2's report %q", g2report)
	}
	if h.srv.Remaining("C1: lead") != 0 || len(h.srv.RequestsFor("G3: third")) != 0 {
		t.Error("a refused or stopped agent made a request")
	}
}

// lastUserText is every text block of a request's last user message.
func lastUserText(r *llmtest.Request) string {
	return r.LastUserText()
}

// TestBudgetBackgroundChild: a definition's budget (2 turns) turns
// budgets on (the Agent tool offers budget) and binds a background child:
// it stops at its second answer with status budget_exhausted, the call
// that answer asked for is not made, and the notification carries the
// status, the partial report and the spend.
func TestBudgetBackgroundChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	call := bgCall("BGW-1: scan the tree")
	call["subagent_type"] = "worker"
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("started"), llmtest.Text("heard"))
	h.srv.Script("BGW-1", llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}),
		llmtest.Text("found the first files").WithToolUse("Glob", map[string]any{"pattern": "*.go"}))
	cfg := h.config()
	cfg.Agents = append(agentdef.Builtins(), &agentdef.Definition{Name: "worker", Description: "Works.", Body: "You work.",
		Source: agentdef.SourceProject, Budget: agentdef.Budget{Turns: 2}})
	rt := newRuntime(t, cfg)
	if !strings.Contains(string(rt.mainSpec.spec.InputSchema), `"budget"`) {
		t.Fatal("a definition's budget turns budgets on: the Agent tool must offer budget")
	}
	evs, _, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	var res *run.SubagentResult
	var note *task.Notification
	for _, ev := range evs {
		switch ev.Type {
		case run.EventTaskCompleted:
			res = ev.Subagent
		case run.EventNotification:
			note = ev.Notification
		}
	}
	if res == nil || note == nil {
		t.Fatal("no result or notification")
	}
	if res.Status != task.BudgetExhausted || res.Receipt.Budget == nil || res.Receipt.Budget.Turns != 2 ||
		!strings.Contains(res.Receipt.Budget.Why, "turns 2 (definition)") || res.Budget.Spent.Turns != 2 {
		t.Fatalf("result %s receipt %+v spent %+v", res.Status, res.Receipt.Budget, res.Budget)
	}
	if res.ToolStats["Glob"] != 1 {
		t.Errorf("the call of the last answer was made: %v", res.ToolStats)
	}
	for _, want := range []string{"<status>budget_exhausted</status>", "stopped at its budget", "found the first files", "<budget>spent", "2 turns of 2"} {
		if !strings.Contains(note.Text, want) {
			t.Errorf("notification lacks %q:\n%s", want, note.Text)
		}
	}
}

// TestBudgetFork: a fork asks for 200 tokens of the session's 1000; it is
// told to wrap up at 90 %, ends under its reservation, and the 5 tokens
// it did not spend return to the main agent.
func TestBudgetFork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var forkTurns int
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case hasForkRules(r):
			forkTurns++
			if forkTurns == 1 {
				return llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}).WithUsage(used(180))
			}
			return llmtest.Text("fork done").WithUsage(used(15))
		case strings.Contains(r.LastUserText(), "MAIN: fork"):
			in := agentCall("", "FORK-B: look around")
			in["budget"] = map[string]any{"tokens": 200}
			return llmtest.ToolUse("Agent", in).WithUsage(used(100))
		}
		return llmtest.Text("main done").WithUsage(used(100))
	})
	cfg := h.config()
	cfg.Background = BackgroundOff
	cfg.ForkSubagent = true
	cfg.Budget = agentdef.Budget{Tokens: 1000}
	evs, res, rt := mustRun(t, cfg, "MAIN: fork once")
	if res.Text != "main done" {
		t.Fatalf("result %q", res.Text)
	}
	var fork *run.SubagentResult
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			fork = ev.Subagent
		}
	}
	if fork == nil || fork.Status != task.Completed || fork.Receipt.Budget == nil || fork.Receipt.Budget.Tokens != 200 {
		t.Fatalf("fork %+v", fork)
	}
	if fork.Budget.Spent.Tokens != 195 || fork.Budget.Returned.Tokens != 5 {
		t.Errorf("fork spent %+v", fork.Budget)
	}
	var wrapUps int
	for _, r := range h.srv.RequestsFor("MAIN") {
		if hasForkRules(r) {
			wrapUps += strings.Count(r.LastUserText(), "Wrap up now")
		}
	}
	if wrapUps != 1 {
		t.Errorf("the fork was told to wrap up %d times", wrapUps)
	}
	if s, held := rt.budgets.session.Spent(), rt.budgets.session.Held(); s.Tokens != 395 || held != (spawn.Spend{}) {
		t.Errorf("session spent %+v held %+v", s, held)
	}
}

// TestBudgetWallTime: a child's wall time is a deadline on its context:
// a model request still running at it ends, and the child stops with
// status budget_exhausted and a partial report.
func TestBudgetWallTime(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in := agentCall("general-purpose", "SLOW-1: think long")
	// Long enough for the first answer to arrive on a loaded machine (the
	// partial report must carry it); the second never comes in time.
	in["budget"] = map[string]any{"wallTime": "2s"}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", in), llmtest.Text("main done"))
	h.srv.Script("SLOW-1", llmtest.Text("first look").WithToolUse("Glob", map[string]any{"pattern": "*"}),
		llmtest.Text("never arrives").WithDelay(time.Minute))
	cfg := h.config()
	cfg.Budget = agentdef.Budget{USD: 10}
	evs, res, _ := mustRun(t, cfg, "MAIN: go")
	var child *run.SubagentResult
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			child = ev.Subagent
		}
	}
	if res.Text != "main done" || child == nil || child.Status != task.BudgetExhausted {
		t.Fatalf("result %q child %+v", res.Text, child)
	}
	if child.Receipt.Budget.WallTime != 2*time.Second || !strings.Contains(child.Text, "first look") || !strings.Contains(child.Text, "budget_exhausted") {
		t.Errorf("receipt %+v text %q", child.Receipt.Budget, child.Text)
	}
}

// TestBudgetAcrossResume: a resumed session's budget keeps what the
// session spent before (read back from its transcripts), so the next
// child's reservation is what is left.
func TestBudgetAcrossResume(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", budgetCall("KID-1: part one", 500)).WithUsage(used(100)),
		llmtest.Text("first run done").WithUsage(used(100)),
		llmtest.ToolUse("Agent", budgetCall("KID-2: part two", 900)).WithUsage(used(100)),
		llmtest.Text("second run done").WithUsage(used(50)))
	h.srv.Script("KID-1", llmtest.Text("one done").WithUsage(used(300)))
	h.srv.Script("KID-2", llmtest.Text("two done").WithUsage(used(100)))
	cfg := h.config()
	cfg.Budget = agentdef.Budget{Tokens: 1000}
	_, res, rt := mustRun(t, cfg, "MAIN: two runs")
	if res.Text != "first run done" {
		t.Fatalf("first run %q", res.Text)
	}
	if err := rt.Close(); err != nil {
		t.Fatal(err)
	}
	entries, err := transcript.ReadFile(rt.tpath)
	if err != nil {
		t.Fatal(err)
	}
	cfg.SessionID, cfg.History = rt.session, transcript.Messages(entries)
	rt2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = rt2.Close() })
	if s := rt2.budgets.session.Spent(); s.Tokens != 500 || s.Turns != 3 {
		t.Fatalf("resumed session spent %+v, want 500 tokens in 3 turns", s)
	}
	evs, res2, err := runAll(t, context.Background(), rt2, "and now part two")
	if err != nil || res2 == nil || res2.Text != "second run done" {
		t.Fatalf("second run %v %+v", err, res2)
	}
	var kid *run.SubagentResult
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			kid = ev.Subagent
		}
	}
	// 1000 - 500 before - 100 of this turn: 400 left, less than asked.
	if kid == nil || kid.Receipt.Budget.Tokens != 400 || !strings.Contains(kid.Receipt.Budget.Why, "(parent's remainder)") {
		t.Fatalf("second child %+v", kid)
	}
	if s := rt2.budgets.session.Spent(); s.Tokens != 750 {
		t.Errorf("session spent %+v, want 750", s)
	}
}

// TestBudgetMainAgent: the session's budget binds the main agent too: it
// is told to wrap up once past 85 %, and the run ends with
// error_max_budget_usd (Claude Code's subtype for any budget) and a
// partial report when it is spent.
func TestBudgetMainAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}).WithUsage(used(500)),
		llmtest.ToolUse("Glob", map[string]any{"pattern": "*.md"}).WithUsage(used(400)),
		llmtest.Text("almost there").WithToolUse("Glob", map[string]any{"pattern": "*.go"}).WithUsage(used(200)))
	cfg := h.config()
	cfg.Budget = agentdef.Budget{Tokens: 1000}
	_, res, _ := mustRun(t, cfg, "MAIN: look")
	if res.Subtype != run.ErrorMaxBudget || !res.IsError || !strings.Contains(res.Text, "almost there") || res.NumTurns != 3 {
		t.Fatalf("result %s %q turns %d", res.Subtype, res.Text, res.NumTurns)
	}
	reqs := h.srv.RequestsFor("MAIN")
	if len(reqs) != 3 || strings.Contains(reqs[1].LastUserText(), "Wrap up now") || !strings.Contains(reqs[2].LastUserText(), "Wrap up now") {
		t.Fatalf("%d requests; the wrap-up must come once, after 90 %%", len(reqs))
	}
}

// TestBudgetSharedFanOut: children that ask for no budget share their
// parent's (nothing is held for them), so a parallel fan-out under a
// session budget starts every child; a child that asks takes at most what
// is free, and a call after it that finds nothing free is refused.
func TestBudgetSharedFanOut(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "FAN-1: part")},
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "FAN-2: part")},
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "FAN-3: part")}).WithUsage(used(100)),
		llmtest.ToolUses(
			llmtest.Call{Name: "Agent", Input: budgetCall("BIG-1: all of it", 100000)},
			llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "LATE-1: anything")}).WithUsage(used(100)),
		llmtest.Text("fan done").WithUsage(used(50)))
	for _, k := range []string{"FAN-1", "FAN-2", "FAN-3"} {
		h.srv.Script(k, llmtest.ToolUse("Glob", map[string]any{"pattern": "*"}).WithUsage(used(100)), llmtest.Text(k+" done").WithUsage(used(50)))
	}
	h.srv.Script("BIG-1", llmtest.Text("big done").WithUsage(used(100)))
	cfg := h.config()
	cfg.Budget = agentdef.Budget{Tokens: 1000}
	evs, res, rt := mustRun(t, cfg, "MAIN: fan out")
	if res.Text != "fan done" || res.Subagents.Refused[run.RefusedBudget] != 1 {
		t.Fatalf("result %q refused %v", res.Text, res.Subagents.Refused)
	}
	byID := finished(evs)
	for i := 1; i <= 3; i++ {
		r := byID[llmtest.ToolUseID("MAIN", i)]
		if r == nil || r.Status != task.Completed || r.Receipt.Budget == nil || !strings.Contains(r.Receipt.Budget.Why, "tokens shared with the parent's") ||
			r.Receipt.Budget.Tokens != 0 || r.Budget.Spent.Tokens != 150 {
			t.Fatalf("shared child %d: %+v", i, r)
		}
	}
	// 1000 - main's 200 - the fan-out's 450 = 350 free for BIG-1.
	big := byID[llmtest.ToolUseID("MAIN", 4)]
	if big == nil || big.Receipt.Budget.Tokens != 350 || !strings.Contains(big.Receipt.Budget.Why, "(parent's remainder)") ||
		big.Budget.Spent.Tokens != 100 || big.Budget.Returned.Tokens != 250 {
		t.Fatalf("BIG-1 %+v", big)
	}
	if len(h.srv.RequestsFor("LATE-1")) != 0 {
		t.Fatal("the refused call ran")
	}
	if s, held := rt.budgets.session.Spent(), rt.budgets.session.Held(); s.Tokens != 800 || held != (spawn.Spend{}) {
		t.Errorf("session spent %+v held %+v", s, held)
	}
}
