package engine

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/task"
)

// teamCall is an Agent call that starts teammate name.
func teamCall(name, prompt string) llmtest.Call {
	return llmtest.Call{Name: "Agent", Input: map[string]any{"description": "mate " + name, "prompt": prompt, "subagent_type": "general-purpose", "name": name}}
}

// teamSend is a team SendMessage call; message is text or a structured
// message.
func teamSend(to string, message any) llmtest.Call {
	return llmtest.Call{Name: "SendMessage", Input: map[string]any{"to": to, "message": message, "summary": "s"}}
}

var requestIDRe = regexp.MustCompile(`"request_id":"([^"]+)"`)

// lastRequestID is the last request id in the request's last user turn.
func lastRequestID(r *llmtest.Request) string {
	all := requestIDRe.FindAllStringSubmatch(r.LastUserText(), -1)
	if len(all) == 0 {
		return ""
	}
	return all[len(all)-1][1]
}

// teamConfig is a harness config with teams on.
func teamConfig(h *harness) Config {
	cfg := h.config()
	cfg.Teams = true
	return cfg
}

// TestTeamsOffHidesTeamFields: without teams the Agent schema has no
// name, team_name or mode and a call that sends one is refused naming it;
// with teams on they are offered, with TeamCreate and TeamDelete.
func TestTeamsOffHidesTeamFields(t *testing.T) {
	t.Parallel()
	for _, on := range []bool{false, true} {
		h := newHarness(t)
		h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Agent", map[string]any{"description": "d", "prompt": "MATE x", "name": "x", "subagent_type": "general-purpose"})
			}
			return llmtest.Text("ok")
		})
		h.srv.ScriptFunc("MATE", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("done") })
		cfg := h.config()
		cfg.Teams = on
		rt := newRuntime(t, cfg)
		if _, _, err := runAll(t, context.Background(), rt, "MAIN go"); err != nil {
			t.Fatal(err)
		}
		req := h.srv.RequestsFor("MAIN")[0]
		var schema string
		for _, tl := range req.Tools {
			if tl.Name == "Agent" {
				schema = string(tl.InputSchema)
			}
		}
		names := strings.Join(req.ToolNames(), ",")
		if on != strings.Contains(schema, `"team_name"`) || on != strings.Contains(schema, `"mode"`) {
			t.Errorf("teams %v: Agent schema %s", on, schema)
		}
		if on != strings.Contains(names, "TeamCreate") {
			t.Errorf("teams %v: tools %s", on, names)
		}
		res := h.toolResults("MAIN")[0]
		if !on {
			contains(t, res, `no field "name"`)
		} else {
			contains(t, res, `"status":"teammate_spawned"`)
			contains(t, res, `"name":"x"`)
		}
		drainTeam(t, rt)
	}
}

// drainTeam runs the lead on notifications until nothing runs, then
// closes the runtime (stopping idle teammates).
func drainTeam(t *testing.T, rt *Runtime) {
	t.Helper()
	drainNotifications(t, rt)
	if err := rt.Close(); err != nil {
		t.Error(err)
	}
}

// TestTeamNamesAndRules: bad and reserved names are refused, a taken name
// is refused with the roster, a teammate cannot start a teammate, a
// foreign team_name is refused.
func TestTeamNamesAndRules(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUses(teamCall("alice", "MATE-A work"), teamCall("team-lead", "MATE-B x"), teamCall("bad name", "MATE-B y"))
		case 3:
			return llmtest.ToolUses(teamCall("alice", "MATE-B again"),
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "d", "prompt": "MATE-B t", "name": "bob", "team_name": "other"}})
		}
		return llmtest.Text("lead done")
	})
	var nested atomic.Value
	h.srv.ScriptFunc("MATE-A", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", teamCall("sub", "MATE-B nested").Input)
		}
		if res := r.LastToolResults(); len(res) > 0 {
			nested.Store(res[0].ResultText())
		}
		return llmtest.Text("alice idle")
	})
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	first := h.srv.RequestsFor("LEAD")[1].LastToolResults()
	contains(t, first[0].ResultText(), "teammate_spawned")
	contains(t, first[1].ResultText(), "reserved")
	contains(t, first[2].ResultText(), "not a valid name")
	second := h.srv.RequestsFor("LEAD")[2].LastToolResults()
	contains(t, second[0].ResultText(), `the name "alice" is taken. The team now: alice`)
	contains(t, second[1].ResultText(), `there is no team "other"`)
	drainTeam(t, rt)
	v, _ := nested.Load().(string)
	contains(t, v, "a teammate cannot start teammates")
	if len(h.srv.RequestsFor("MATE-B")) != 0 {
		t.Error("a refused teammate ran")
	}
}

// TestTeamScenario: a lead and three teammates. They work and go idle;
// the lead is woken once for the three idle notices (counted from the
// request log); it writes to alice, alice writes to bob and bob back to
// alice (both directions), alice reports to the lead; the lead sends each
// a shutdown_request, each approves and ends. Every message arrives once,
// framed as a teammate message.
func TestTeamScenario(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	leadTurnEnded := make(chan struct{})
	var leadN atomic.Int32
	var asked atomic.Bool
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		n := leadN.Add(1)
		last := r.LastUserText()
		switch {
		case n == 1:
			return llmtest.ToolUses(teamCall("alice", "MATE-alice start"), teamCall("bob", "MATE-bob start"), teamCall("carol", "MATE-carol start"))
		case n == 2:
			close(leadTurnEnded)
			return llmtest.Text("team started")
		case strings.Contains(last, "RESULT-FROM-ALICE"):
			return llmtest.ToolUses(teamSend("alice", map[string]any{"type": "shutdown_request", "reason": "done"}),
				teamSend("bob", map[string]any{"type": "shutdown_request"}), teamSend("carol", map[string]any{"type": "shutdown_request"}))
		case strings.Count(last, "idle_notification") == 3 && asked.CompareAndSwap(false, true):
			return llmtest.ToolUse("SendMessage", teamSend("alice", "LEAD-TO-ALICE: ask bob").Input)
		}
		return llmtest.Text("lead waits")
	})
	mate := func(name string, step func(n int, r *llmtest.Request) llmtest.Turn) {
		var k atomic.Int32
		h.srv.ScriptFunc("MATE-"+name, func(r *llmtest.Request) llmtest.Turn {
			n := int(k.Add(1))
			if n == 1 {
				<-leadTurnEnded
				return llmtest.Text(name + " ready")
			}
			if res := r.LastToolResults(); len(res) > 0 && strings.Contains(res[0].ResultText(), "Shutdown approved") {
				return llmtest.Text("bye")
			}
			if id := lastRequestID(r); strings.Contains(r.LastUserText(), "shutdown_request") && id != "" {
				return llmtest.ToolUse("SendMessage", teamSend("team-lead", map[string]any{"type": "shutdown_response", "request_id": id, "approve": true}).Input)
			}
			return step(n, r)
		})
	}
	mate("alice", func(n int, r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case strings.Contains(last, "LEAD-TO-ALICE"):
			return llmtest.ToolUse("SendMessage", teamSend("bob", "ALICE-TO-BOB: need x").Input)
		case strings.Contains(last, "BOB-TO-ALICE"):
			return llmtest.ToolUse("SendMessage", teamSend("team-lead", "RESULT-FROM-ALICE: x=1").Input)
		}
		return llmtest.Text("alice idle")
	})
	mate("bob", func(n int, r *llmtest.Request) llmtest.Turn {
		if strings.Contains(r.LastUserText(), "ALICE-TO-BOB") {
			return llmtest.ToolUse("SendMessage", teamSend("alice", "BOB-TO-ALICE: x is 1").Input)
		}
		return llmtest.Text("bob idle")
	})
	mate("carol", func(int, *llmtest.Request) llmtest.Turn { return llmtest.Text("carol idle") })
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)

	leads := h.srv.RequestsFor("LEAD")
	// The three first idle notices came in one lead request.
	third := leads[2]
	if got := strings.Count(third.LastUserText(), "idle_notification"); got != 3 {
		t.Fatalf("the lead's first request after its turn holds %d idle notices, want 3: %s", got, third.LastUserText())
	}
	contains(t, third.LastUserText(), `<teammate-message teammate_id="alice"`)
	// Messages arrived, framed, once each, in both directions.
	checkOnce := func(key, text string) {
		t.Helper()
		reqs := h.srv.RequestsFor(key)
		last := reqs[len(reqs)-1]
		if got := countIn(last, text); got != 1 {
			t.Errorf("%s's last request holds %q %d times, want 1", key, text, got)
		}
	}
	checkOnce("MATE-alice", "LEAD-TO-ALICE")
	checkOnce("MATE-bob", "ALICE-TO-BOB")
	checkOnce("MATE-alice", "BOB-TO-ALICE")
	checkOnce("LEAD", "RESULT-FROM-ALICE")
	contains(t, leads[len(leads)-1].Messages[0].Text(), "LEAD go")
	// Every teammate approved its shutdown and ended completed.
	for _, info := range rt.Tasks() {
		if info.Status != task.Completed {
			t.Errorf("teammate %s ended %s, want completed", info.Description, info.Status)
		}
	}
	if n := len(rt.Tasks()); n != 3 {
		t.Errorf("%d tasks, want 3", n)
	}
	// No message is left undelivered in the journal.
	if p := mailPending(t, rt); len(p) != 0 {
		t.Errorf("undelivered: %+v", p)
	}
}

// TestTeamShutdownGrace: a teammate that ignores its shutdown_request is
// stopped once the grace period passes and the lead is told; a stale
// request id never matches a later teammate of the same name.
func TestTeamShutdownGrace(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	var sent atomic.Bool
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", teamCall("dan", "MATE-dan start").Input)
		case strings.Contains(last, "teammate_terminated"):
			// dan was stopped: a new dan starts.
			return llmtest.ToolUse("Agent", teamCall("dan", "MATE-dan2 start").Input)
		case strings.Contains(last, `teammate_id="dan"`) && strings.Contains(last, "idle_notification") && sent.CompareAndSwap(false, true):
			return llmtest.ToolUse("SendMessage", teamSend("dan", map[string]any{"type": "shutdown_request"}).Input)
		}
		return llmtest.Text("lead waits")
	})
	h.srv.ScriptFunc("MATE-dan2", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.Text("dan2 idle")
		}
		return llmtest.Text("dan2 more")
	})
	h.srv.ScriptFunc("MATE-dan", func(r *llmtest.Request) llmtest.Turn {
		return llmtest.Text("dan ignores everything")
	})
	cfg := teamConfig(h)
	cfg.TeamShutdownGrace = 20 * time.Millisecond
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainNotifications(t, rt)
	// The first dan was stopped (killed), told to the lead.
	var killed, live int
	for _, info := range rt.Tasks() {
		switch {
		case info.Status == task.Killed:
			killed++
		case !info.Status.Terminal():
			live++
		}
	}
	if killed != 1 || live != 1 {
		t.Errorf("tasks %+v: want one killed dan and one live dan", rt.Tasks())
	}
	leads := h.srv.RequestsFor("LEAD")
	var told bool
	for _, r := range leads {
		told = told || strings.Contains(r.LastUserText(), "did not answer shutdown_request")
	}
	if !told {
		t.Error("the lead was not told dan was stopped")
	}
	// The stale request id does not match the new dan.
	old := ""
	for _, r := range leads {
		for _, b := range r.LastToolResults() {
			if m := requestIDRe.FindStringSubmatch(b.ResultText()); m != nil && strings.HasPrefix(m[1], "shutdown-") {
				old = m[1]
			}
		}
	}
	if old == "" {
		t.Fatal("no shutdown request id seen")
	}
	rt.bg.team.mu.Lock()
	dan := rt.bg.team.members["dan"]
	rt.bg.team.mu.Unlock()
	if dan == nil {
		t.Fatal("the new dan is not in the team")
	}
	out, err := teamMail{rt.bg}.send(context.Background(), dan.a, "x", parseTeam(t, `{"to":"team-lead","message":{"type":"shutdown_response","request_id":"`+old+`","approve":true}}`))
	if err != nil || !out.IsError {
		t.Errorf("a stale shutdown_response was accepted: %+v %v", out, err)
	}
	if err := rt.Close(); err != nil {
		t.Error(err)
	}
}

func parseTeam(t *testing.T, s string) tasktools.TeamMessage {
	t.Helper()
	m, err := tasktools.ParseTeamMessage(json.RawMessage(s))
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// agentPrompter allows every prompt and records the agent ids asked for.
type agentPrompter struct {
	mu  sync.Mutex
	ids []string
}

func (p *agentPrompter) Prompt(_ context.Context, pr permission.Prompt) (permission.Reply, error) {
	p.mu.Lock()
	p.ids = append(p.ids, pr.Request.AgentID)
	p.mu.Unlock()
	return permission.Reply{Choice: permission.ChoiceAllowOnce}, nil
}

// TestTeammatePermissionPrompt: a teammate's call that asks reaches the
// session's prompter (the UI, the SDK's can_use_tool) with the
// teammate's agent id, and runs when allowed; with no prompter
// (headless) it is denied and reported, and nothing hangs.
func TestTeammatePermissionPrompt(t *testing.T) {
	t.Parallel()
	for _, headless := range []bool{false, true} {
		h := newHarness(t)
		target := filepath.Join(h.dir, "out.txt")
		h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Agent", teamCall("wes", "MATE-wes write").Input)
			}
			return llmtest.Text("lead ok")
		})
		var result atomic.Value
		h.srv.ScriptFunc("MATE-wes", func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "x"})
			}
			if res := r.LastToolResults(); len(res) > 0 {
				result.Store(res[0].ResultText())
			}
			return llmtest.Text("wes idle")
		})
		cfg := teamConfig(h)
		p := &agentPrompter{}
		cfg.Permissions = &Permissions{Mode: permission.ModeDefault}
		if !headless {
			cfg.Permissions.Prompter = p
		}
		rt := newRuntime(t, cfg)
		if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
			t.Fatal(err)
		}
		drainNotifications(t, rt)
		var id string
		for _, info := range rt.Tasks() {
			id = info.ID
		}
		_, err := os.Stat(target)
		res, _ := result.Load().(string)
		if headless {
			if err == nil {
				t.Error("headless: the teammate wrote without anyone to ask")
			}
			if !strings.Contains(strings.ToLower(res), "denied") && !strings.Contains(strings.ToLower(res), "permission") {
				t.Errorf("headless: the teammate read %q, want a denial", res)
			}
		} else {
			if err != nil {
				t.Errorf("allowed write did not run: %v (teammate read %q)", err, res)
			}
			p.mu.Lock()
			if len(p.ids) != 1 || p.ids[0] != id {
				t.Errorf("prompts for agents %v, want [%s]", p.ids, id)
			}
			p.mu.Unlock()
		}
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	}
}

// TestTeamPlanApproval: a teammate started with mode plan cannot write;
// its plan reaches the lead as a plan_approval_request; one rejection
// with feedback reaches it, and after the approval its write runs.
func TestTeamPlanApproval(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	target := filepath.Join(h.dir, "plan.txt")
	var plans atomic.Int32
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "planner", "prompt": "MATE-pat plan", "subagent_type": "general-purpose", "name": "pat", "mode": "plan"})
		case strings.Contains(last, "plan_approval_request"):
			id := lastRequestID(r)
			if plans.Add(1) == 1 {
				return llmtest.ToolUse("SendMessage", teamSend("pat", map[string]any{"type": "plan_approval_response", "request_id": id, "approve": false, "feedback": "FEEDBACK-add-tests"}).Input)
			}
			return llmtest.ToolUse("SendMessage", teamSend("pat", map[string]any{"type": "plan_approval_response", "request_id": id, "approve": true}).Input)
		}
		return llmtest.Text("lead ok")
	})
	var deniedFirst atomic.Value
	h.srv.ScriptFunc("MATE-pat", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "early"})
		case len(r.Messages) == 3:
			deniedFirst.Store(r.LastToolResults()[0].ResultText())
			return llmtest.ToolUse("SendMessage", teamSend("team-lead", map[string]any{"type": "plan_approval_request", "plan": "PLAN-1"}).Input)
		case strings.Contains(last, "FEEDBACK-add-tests"):
			return llmtest.ToolUse("SendMessage", teamSend("team-lead", map[string]any{"type": "plan_approval_request", "plan": "PLAN-2 with tests"}).Input)
		case strings.Contains(last, `"approved":true`):
			return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "approved"})
		}
		return llmtest.Text("pat idle")
	})
	rt := newRuntime(t, teamConfig(h))
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	if v, _ := deniedFirst.Load().(string); !strings.Contains(strings.ToLower(v), "read-only") && !strings.Contains(strings.ToLower(v), "plan") {
		t.Errorf("the plan-mode teammate's early write got %q, want a read-only denial", v)
	}
	b, err := os.ReadFile(target)
	if err != nil || string(b) != "approved" {
		t.Errorf("after approval: %q, %v", b, err)
	}
	if plans.Load() != 2 {
		t.Errorf("%d plan requests reached the lead, want 2", plans.Load())
	}
}

// TestTeammateCompacts (issue 27): a teammate whose conversation
// outgrows a small window compacts, keeps its team, role and task, and
// finishes its work; then it idles like any teammate.
func TestTeammateCompacts(t *testing.T) {
	t.Parallel()
	h, cfg, file := compactHarness(t)
	cfg.Teams = true
	h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", teamCall("cleo", "TM-JOB: a long job").Input).WithUsage(usage(1000))
		}
		return llmtest.Text("lead ok").WithUsage(usage(1100))
	})
	h.srv.ScriptFunc("TM-JOB", job("TM-JOB", file, fromStart))
	rt := newRuntime(t, cfg)
	if _, _, err := runAll(t, context.Background(), rt, "LEAD go"); err != nil {
		t.Fatal(err)
	}
	drainTeam(t, rt)
	checkCompacted(t, h, "TM-JOB", file, 5)
	var post *llmtest.Request
	for _, r := range h.srv.RequestsFor("TM-JOB") {
		if isCompacted(r) && post == nil {
			post = r
		}
	}
	text := post.Messages[0].Text()
	for _, want := range []string{"You are cleo, a teammate in team session-", "TM-JOB: a long job"} {
		contains(t, text, want)
	}
	var idle bool
	for _, r := range h.srv.RequestsFor("LEAD") {
		idle = idle || strings.Contains(r.LastUserText(), "TM-JOB finished")
	}
	if !idle {
		t.Error("the lead never heard the teammate finished (its idle notice)")
	}
}
