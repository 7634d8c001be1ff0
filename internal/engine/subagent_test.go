package engine

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/spawn"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

func agentCall(typ, prompt string) map[string]any {
	in := map[string]any{"description": "a task", "prompt": prompt}
	if typ != "" {
		in["subagent_type"] = typ
	}
	return in
}

func TestNamedAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("Explore", "CHILD-1: where is x defined?")), llmtest.Text("x is in a.go"))
	h.srv.Script("CHILD-1", llmtest.Text("x is defined in /p/a.go:3"))
	evs, res, rt := mustRun(t, h.config(), "MAIN: find x")

	if res.Text != "x is in a.go" || res.Subagents.Spawned != 1 || res.Subagents.Completed != 1 {
		t.Fatalf("result %+v", res)
	}
	report := h.toolResults("MAIN")[0]
	contains(t, report, "<agent-report>\n  x is defined in /p/a.go:3\n</agent-report>")
	if strings.Contains(report, "agent_id:") {
		t.Fatalf("Explore is one-shot; the report must be the frame alone:\n%s", report)
	}

	child := h.srv.RequestsFor("CHILD-1")[0]
	explore := rt.defs["Explore"]
	contains(t, child.System, strings.TrimSpace(explore.Body))
	contains(t, child.System, prompts.Subagent())
	if strings.Contains(child.System, "<git-status") {
		t.Fatal("Explore omits git status")
	}
	want := spawn.ComputeCeiling(spawn.CeilingInput{ParentTools: rt.mainPool.Names(), ParentPerms: glueOf(rt).rootPerms(), Def: explore, Depth: 1, MaxDepth: 3}).Tools
	if diff := cmp.Diff(ceilingOnWire(want), wireTools(child)); diff != "" {
		t.Fatalf("child tools (-computed +sent or deferred):\n%s", diff)
	}
	for _, banned := range []string{"Agent", "Edit", "Write"} {
		if slices.Contains(child.ToolNames(), banned) {
			t.Fatalf("Explore got %s", banned)
		}
	}

	var started *run.TaskInfo
	var done *run.SubagentResult
	for _, ev := range evs {
		switch ev.Type {
		case run.EventTaskStarted:
			started = ev.Task
		case run.EventTaskCompleted:
			done = ev.Subagent
		}
	}
	if started == nil || done == nil {
		t.Fatal("missing task events")
	}
	if !strings.HasPrefix(started.AgentID, "a") || len(started.AgentID) != 17 || started.Depth != 1 || started.AgentType != "Explore" {
		t.Fatalf("task started %+v", started)
	}
	if started.ToolUseID != llmtest.ToolUseID("MAIN", 1) || started.Receipt.ModelRule != run.ModelRuleParent {
		t.Fatalf("task started %+v", started)
	}
	if done.Status != "completed" || done.Model != "claude-sonnet-4-5" || done.Turns != 1 || done.Usage.OutputTokens == 0 {
		t.Fatalf("completed %+v", done)
	}
	// Usage rolls up: the run's total includes the child's.
	if res.Usage.OutputTokens <= done.Usage.OutputTokens {
		t.Fatalf("run usage %+v does not include the child's %+v", res.Usage, done.Usage)
	}
	// Transcript and meta beside the session's.
	b, err := os.ReadFile(strings.TrimSuffix(done.TranscriptPath, ".jsonl") + ".meta.json")
	if err != nil {
		t.Fatal(err)
	}
	var meta agentMeta
	if err := json.Unmarshal(b, &meta); err != nil {
		t.Fatal(err)
	}
	if !meta.Finished || meta.Status != "completed" || meta.Parent != "main" || meta.ToolUseID != started.ToolUseID || len(meta.Receipt.Tools) == 0 {
		t.Fatalf("meta %+v", meta)
	}
	if filepath.Dir(filepath.Dir(done.TranscriptPath)) != filepath.Dir(rt.TranscriptPath()) {
		t.Fatalf("child transcript %s not beside %s", done.TranscriptPath, rt.TranscriptPath())
	}
}

func TestGeneralPurposeReportAndDefault(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	// No subagent_type and forking off: general-purpose (S-3.3).
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("", "CHILD-1: do it")), llmtest.Text("ok"))
	h.srv.Script("CHILD-1", llmtest.Text("did it"))
	_, res, _ := mustRun(t, h.config(), "MAIN")
	report := h.toolResults("MAIN")[0]
	contains(t, report, "(general-purpose)")
	contains(t, report, "agent_id: a")
	contains(t, report, "usage: ")
	if res.Subagents.Completed != 1 {
		t.Fatalf("stats %+v", res.Subagents)
	}
}

func TestRefusals(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, typ, want string
		reason          run.RefusalReason
		perms           *Permissions
	}{
		{"unknown type", "Nope", `Unknown agent type "Nope". Available agent types: general-purpose, Explore, Plan, verification.`, run.RefusedUnknownType, nil},
		{"fork off", "fork", "Forking is not enabled", run.RefusedFork, nil},
		{"denied type", "Explore", "Agent(Explore) from settings.json", "", &Permissions{Mode: permission.ModeBypassPermissions,
			Rules: []permission.Rule{{Behavior: permission.Deny, Tool: "Agent", Content: "Explore", Source: "settings.json"}}}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall(c.typ, "CHILD-x")), llmtest.Text("ok"))
			cfg := h.config()
			cfg.Permissions = c.perms
			_, res, _ := mustRun(t, cfg, "MAIN")
			got := h.toolResults("MAIN")[0]
			contains(t, got, c.want)
			if c.reason == "" {
				// The permission check refuses the call before it reaches
				// the tool; it is a recorded denial.
				if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Agent" {
					t.Fatalf("denials %+v", res.PermissionDenials)
				}
			} else if res.Subagents.Refused[c.reason] != 1 || res.Subagents.Spawned != 0 {
				t.Fatalf("stats %+v", res.Subagents)
			}
			if len(h.srv.RequestsFor("CHILD-x")) != 0 {
				t.Fatal("a refused child sent a request")
			}
			if c.perms != nil {
				// A denied type is never listed (S-3.4).
				desc := toolSpec(t, h.srv.RequestsFor("MAIN")[0].Tools, "Agent").Description
				if strings.Contains(desc, "- Explore:") {
					t.Fatalf("denied type listed:\n%s", desc)
				}
				contains(t, desc, "- Plan:")
			}
		})
	}
}

func toolSpec(t *testing.T, specs []llm.ToolSpec, name string) llm.ToolSpec {
	t.Helper()
	for _, s := range specs {
		if s.Name == name {
			return s
		}
	}
	t.Fatalf("no tool %s", name)
	return llm.ToolSpec{}
}

func TestParallelChildrenResultsInCallOrder(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	const n = 16
	calls := make([]llmtest.Call, n)
	for i := range n {
		calls[i] = llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", fmt.Sprintf("CHILD-%02d: read", i))}
		// Later children answer sooner, so finishing order is the reverse
		// of call order.
		h.srv.Script(fmt.Sprintf("CHILD-%02d", i), llmtest.Text(fmt.Sprintf("done %d", i)).WithDelay(time.Duration(n-i)*15*time.Millisecond))
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("all done"))
	_, res, _ := mustRun(t, h.config(), "MAIN")
	results := h.toolResults("MAIN")
	if len(results) != n {
		t.Fatalf("%d results", len(results))
	}
	for i, r := range results {
		contains(t, r, fmt.Sprintf("  done %d\n", i))
	}
	if res.Subagents.Completed != n {
		t.Fatalf("stats %+v", res.Subagents)
	}
	// They ran at the same time: some child request arrived before another
	// one had been answered.
	var children []*llmtest.Request
	for _, r := range h.srv.Requests() {
		if strings.HasPrefix(r.Key, "CHILD-") {
			children = append(children, r)
		}
	}
	overlap := 0
	for _, a := range children {
		for _, b := range children {
			if a != b && a.Arrived.Before(b.Finished) && b.Arrived.Before(a.Finished) {
				overlap++
			}
		}
	}
	if overlap == 0 {
		t.Fatal("children did not run concurrently")
	}
}

func TestNestingLimit(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-D1")), llmtest.Text("top done"))
	h.srv.Script("CHILD-D1", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-D2")), llmtest.Text("d1 done"))
	h.srv.Script("CHILD-D2", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-D3")), llmtest.Text("d2 done"))
	h.srv.Script("CHILD-D3", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-D4")), llmtest.Text("d3 done"))
	_, res, _ := mustRun(t, h.config(), "MAIN")
	if res.Subagents.Completed != 3 || res.Subagents.Spawned != 3 {
		t.Fatalf("stats %+v", res.Subagents)
	}
	if len(h.srv.RequestsFor("CHILD-D4")) != 0 {
		t.Fatal("depth 4 started")
	}
	d3 := h.srv.RequestsFor("CHILD-D3")
	if slices.Contains(d3[0].ToolNames(), "Agent") {
		t.Fatal("an agent at the depth cap was offered Agent")
	}
	if !slices.Contains(h.srv.RequestsFor("CHILD-D2")[0].ToolNames(), "Agent") {
		t.Fatal("depth 2 lost Agent")
	}
	contains(t, h.toolResults("CHILD-D3")[0], "nesting limit reached (depth 3 of 3)")
	contains(t, h.toolResults("MAIN")[0], "d1 done")
}

func TestParentDenyBindsGrandchild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-G1")), llmtest.Text("ok"))
	h.srv.Script("CHILD-G1", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-G2")), llmtest.Text("ok"))
	h.srv.Script("CHILD-G2", llmtest.ToolUse("Bash", map[string]any{"command": "rm -rf build"}), llmtest.Text("could not"))
	cfg := h.config()
	cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions,
		Rules: []permission.Rule{{Behavior: permission.Deny, Tool: "Bash", Content: "rm:*", Source: "/etc/cadre/managed-settings.json"}}}
	_, res, _ := mustRun(t, cfg, "MAIN")
	got := h.toolResults("CHILD-G2")[0]
	contains(t, got, "rm:*")
	if len(res.PermissionDenials) != 1 || res.PermissionDenials[0].ToolName != "Bash" || res.PermissionDenials[0].AgentID == "" {
		t.Fatalf("denials %+v", res.PermissionDenials)
	}
}

func TestChildMaxTurnsAndModel(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/looper.md", []byte("---\nname: looper\ndescription: loops\nmodel: haiku\nmaxTurns: 1\ntools: Read, Grep\n---\nYou loop.\n"), agentdef.SourceProject)
	if def == nil {
		t.Fatal(diags)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("looper", "CHILD-L")), llmtest.Text("ok"))
	h.srv.Script("CHILD-L", llmtest.ToolUse("Read", map[string]any{"file_path": "/etc/hostname"}).WithText("I found something so far"))
	cfg := h.config()
	cfg.Agents = append(agentdef.Builtins(), def)
	cfg.ResolveModel = func(alias string) (string, bool) {
		m := map[string]string{"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5"}
		id, ok := m[alias]
		return id, ok
	}
	evs, _, _ := mustRun(t, cfg, "MAIN")
	child := h.srv.RequestsFor("CHILD-L")
	if len(child) != 1 || child[0].Model != "claude-haiku-4-5" {
		t.Fatalf("child requests %d model %q", len(child), child[0].Model)
	}
	if diff := cmp.Diff([]string{"Grep", "Read"}, child[0].ToolNames()); diff != "" {
		t.Fatalf("tools:\n%s", diff)
	}
	report := h.toolResults("MAIN")[0]
	contains(t, report, "I found something so far")
	contains(t, report, "stopped at its limit of 1 turns")
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted && (ev.Subagent.Receipt.ModelRule != run.ModelRuleDefinition || !ev.Subagent.MaxTurnsHit) {
			t.Fatalf("completed %+v", ev.Subagent)
		}
	}
}

// TestSubagentModelConfig checks the session's sub-agent model settings
// end to end: the model the child's requests name and the rule its
// receipt gives (the precedence itself is table-tested in internal/spawn).
func TestSubagentModelConfig(t *testing.T) {
	t.Parallel()
	aliases := map[string]string{"haiku": "claude-haiku-4-5", "sonnet": "claude-sonnet-4-5", "opus": "claude-opus-4-1"}
	cases := []struct {
		name, forced, sessionDefault, call string
		wantModel                          string
		wantRule                           run.ModelRule
	}{
		{"forced beats the call", "opus", "haiku", "haiku", "claude-opus-4-1", run.ModelRuleForced},
		{"the call beats the session default", "", "haiku", "opus", "claude-opus-4-1", run.ModelRuleCall},
		{"session default", "", "haiku", "", "claude-haiku-4-5", run.ModelRuleSubagentModel},
		{"parent", "", "", "", "claude-sonnet-4-5", run.ModelRuleParent},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			call := agentCall("general-purpose", "CHILD-M: go")
			if c.call != "" && c.forced == "" {
				call["model"] = c.call
			}
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("ok"))
			h.srv.Script("CHILD-M", llmtest.Text("done"))
			cfg := h.config()
			cfg.ForceSubagentModel, cfg.SubagentModel = c.forced, c.sessionDefault
			cfg.ResolveModel = func(a string) (string, bool) { id, ok := aliases[a]; return id, ok }
			evs, _, _ := mustRun(t, cfg, "MAIN")
			if got := h.srv.RequestsFor("CHILD-M")[0].Model; got != c.wantModel {
				t.Fatalf("child model %s, want %s", got, c.wantModel)
			}
			for _, ev := range evs {
				if ev.Type == run.EventTaskCompleted && (ev.Subagent.ModelRule != c.wantRule || ev.Subagent.Receipt.ModelRule != c.wantRule) {
					t.Fatalf("rule %s, want %s", ev.Subagent.ModelRule, c.wantRule)
				}
			}
		})
	}
}

// TestModelRulesMatchSpawn keeps the public model rules equal to the ones
// internal/spawn returns (the runtime converts one to the other).
func TestModelRulesMatchSpawn(t *testing.T) {
	t.Parallel()
	pairs := map[run.ModelRule]spawn.ModelRule{
		run.ModelRuleForced: spawn.ModelForced, run.ModelRuleCall: spawn.ModelCall, run.ModelRuleDefinition: spawn.ModelDefinition,
		run.ModelRuleSubagentModel: spawn.ModelSessionDefault, run.ModelRuleParent: spawn.ModelParent,
	}
	for pub, internal := range pairs {
		if string(pub) != string(internal) {
			t.Errorf("%s != %s", pub, internal)
		}
	}
}

func TestForcedModelHidesModelField(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.Text("ok"))
	cfg := h.config()
	cfg.ForceSubagentModel = "haiku"
	mustRun(t, cfg, "MAIN")
	schema := string(toolSpec(t, h.srv.RequestsFor("MAIN")[0].Tools, "Agent").InputSchema)
	if strings.Contains(schema, `"model"`) || !strings.Contains(schema, "run_in_background") {
		t.Fatalf("schema shows model or hides run_in_background: %s", schema)
	}
}

// boomIn is the input of the panicking test tool.
type boomIn struct{}

func TestPanickingToolInChild(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	boom := tool.Func(tool.FuncConfig{Name: "Boom", Description: "explodes"}, func(context.Context, *tool.Env, boomIn) (tool.Output, error) {
		panic("kaboom")
	})
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-P")), llmtest.Text("parent went on"))
	h.srv.Script("CHILD-P", llmtest.ToolUse("Boom", map[string]any{}), llmtest.Text("boom failed"))
	cfg := h.config()
	cfg.Tools = []tool.Tool{boom}
	_, res, _ := mustRun(t, cfg, "MAIN")
	contains(t, h.toolResults("CHILD-P")[0], "crashed: kaboom")
	if res.Text != "parent went on" || res.Subagents.Completed != 1 {
		t.Fatalf("result %+v", res)
	}
}

func TestChildFailureIsAResult(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("general-purpose", "CHILD-F")), llmtest.Text("handled"))
	h.srv.Script("CHILD-F", llmtest.HTTPError(401, "invalid x-api-key"))
	_, res, _ := mustRun(t, h.config(), "MAIN")
	got := h.toolResults("MAIN")[0]
	contains(t, got, "failed")
	contains(t, got, "invalid x-api-key")
	if res.Subagents.Failed != 1 || res.Text != "handled" {
		t.Fatalf("result %+v", res)
	}
}

func TestParentCancelEndsChildren(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	calls := make([]llmtest.Call, 4)
	for i := range calls {
		calls[i] = llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", fmt.Sprintf("CHILD-C%d", i))}
		h.srv.Script(fmt.Sprintf("CHILD-C%d", i), llmtest.Text("never").WithDelay(time.Minute))
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...))
	rt, err := New(h.config())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	started := 0
	var runErr error
	var metas []string
	for ev, err := range rt.Run(ctx, "MAIN") {
		if err != nil {
			runErr = err
			break
		}
		if ev.Type == run.EventTaskStarted {
			started++
			metas = append(metas, ev.Task.AgentID)
			if started == len(calls) {
				cancel()
			}
		}
	}
	if runErr == nil || ctx.Err() == nil {
		t.Fatalf("run error %v", runErr)
	}
	// Every child's meta says it was killed (cleanup ran on that path).
	dir := filepath.Dir(rt.TranscriptPath())
	for _, id := range metas {
		b, err := os.ReadFile(filepath.Join(dir, rt.SessionID(), "agent-"+id+".meta.json"))
		if err != nil {
			t.Fatal(err)
		}
		var m agentMeta
		if err := json.Unmarshal(b, &m); err != nil || !m.Finished || m.Status != "killed" {
			t.Fatalf("meta %s: %+v %v", id, m, err)
		}
	}
	if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 {
		t.Fatalf("gate %+v after the run was cancelled", c)
	}
}

// TestRunningCapQueues: with two running slots, the third of three Agent
// calls waits (shown as pending, in its event and receipt) and starts when
// a slot frees; all three report (S-5.7). The first two children answer
// only once the third is pending, so the test does not depend on timing.
func TestRunningCapQueues(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	pending := make(chan struct{})
	calls := make([]llmtest.Call, 3)
	for i := range calls {
		calls[i] = llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", fmt.Sprintf("CHILD-K%d", i))}
		h.srv.ScriptFunc(fmt.Sprintf("CHILD-K%d", i), func(*llmtest.Request) llmtest.Turn {
			select {
			case <-pending:
			case <-time.After(time.Minute): // a safety net only; the test fails below
			}
			return llmtest.Text(fmt.Sprintf("done %d", i))
		})
	}
	h.srv.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("fine"))
	cfg := h.config()
	cfg.Limits = Limits{MaxRunning: 2}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var queued *run.TaskInfo
	var started []*run.TaskInfo
	var res *run.Result
	for ev, err := range rt.Run(context.Background(), "MAIN") {
		if err != nil {
			t.Fatal(err)
		}
		switch ev.Type {
		case run.EventTaskPending:
			if queued != nil {
				t.Fatal("two calls queued with one over the cap")
			}
			queued = ev.Task
			close(pending)
		case run.EventTaskStarted:
			started = append(started, ev.Task)
		case run.EventResult:
			res = ev.Result
		}
	}
	if queued == nil || queued.Status != task.Pending || !queued.Receipt.Queued || queued.Receipt.QueuePosition != 1 {
		t.Fatalf("pending task %+v", queued)
	}
	if len(started) != 3 || started[2].AgentID != queued.AgentID || started[2].Status != task.Running || !started[2].Receipt.Queued {
		t.Fatalf("started %+v", started)
	}
	if s := res.Subagents; s.Spawned != 3 || s.Completed != 3 || s.Queued != 1 || len(s.Refused) != 0 {
		t.Fatalf("stats %+v", s)
	}
	for i, r := range h.toolResults("MAIN") {
		contains(t, r, fmt.Sprintf("done %d", i))
	}
	if c := rt.gate.Counts(); c.Running != 0 || c.Queued != 0 {
		t.Fatalf("gate %+v", c)
	}
}

// TestNestedSpawnsUnderOneSlot: with a single running slot, a child that
// starts its own child gives its slot to it while it waits, so nesting
// never deadlocks the queue.
func TestNestedSpawnsUnderOneSlot(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "CHILD-A: delegate")},
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "CHILD-B: delegate")},
	), llmtest.Text("all done"))
	for _, k := range []string{"A", "B"} {
		h.srv.Script("CHILD-"+k, llmtest.ToolUse("Agent", agentCall("general-purpose", "GRAND-"+k+": work")), llmtest.Text(k+" done"))
		h.srv.Script("GRAND-"+k, llmtest.Text("grandchild "+k+" done"))
	}
	cfg := h.config()
	cfg.Limits = Limits{MaxRunning: 1}
	_, res, rt := mustRun(t, cfg, "MAIN")
	if s := res.Subagents; s.Spawned != 4 || s.Completed != 4 {
		t.Fatalf("stats %+v", s)
	}
	if c := rt.gate.Counts(); c != (spawn.Counts{Total: 4}) {
		t.Fatalf("gate %+v", c)
	}
}

func TestReceiptNamesDroppedTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("Explore", "CHILD-R")), llmtest.Text("ok"))
	h.srv.Script("CHILD-R", llmtest.Text("found"))
	evs, _, _ := mustRun(t, h.config(), "MAIN")
	for _, ev := range evs {
		if ev.Type != run.EventTaskStarted {
			continue
		}
		r := ev.Task.Receipt
		var dropped []string
		for _, d := range r.Dropped {
			dropped = append(dropped, d.Name+": "+d.Reason)
		}
		got := strings.Join(dropped, "\n")
		contains(t, got, "Write: in the definition's disallowedTools")
		contains(t, got, "Agent: in the definition's disallowedTools")
		if r.Model != "claude-sonnet-4-5" || r.PermissionMode == "" || len(r.Tools) == 0 {
			t.Fatalf("receipt %+v", r)
		}
		return
	}
	t.Fatal("no task_started event")
}

func TestBackgroundShellsBelongToTheirAgent(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch len(r.Messages) {
		case 1:
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo started; sleep 30", "run_in_background": true})
		case 3:
			return llmtest.ToolUse("BashOutput", map[string]any{"bash_id": "bash_1"})
		}
		return llmtest.Text("done")
	})
	_, res, _ := mustRun(t, h.config(), "MAIN")
	if res.Text != "done" {
		t.Fatalf("result %+v", res)
	}
	reqs := h.srv.RequestsFor("MAIN")
	contains(t, reqs[1].LastToolResults()[0].ResultText(), "bash_1")
	got := reqs[2].LastToolResults()[0]
	if got.IsError {
		t.Fatalf("BashOutput failed: %s", got.ResultText())
	}
}

func TestGeneralPurposeSeesGitStatus(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, args := range [][]string{{"init", "-q", "-b", "trunk"}, {"-c", "user.email=t@t", "-c", "user.name=t", "commit", "-q", "--allow-empty", "-m", "first commit"}} {
		cmd := exec.Command("git", args...)
		cmd.Dir = h.dir
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	if err := os.WriteFile(filepath.Join(h.dir, "new.txt"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.srv.Script("MAIN", llmtest.ToolUses(
		llmtest.Call{Name: "Agent", Input: agentCall("general-purpose", "CHILD-GP")},
		llmtest.Call{Name: "Agent", Input: agentCall("Plan", "CHILD-PLAN")},
	), llmtest.Text("ok"))
	h.srv.Script("CHILD-GP", llmtest.Text("ok"))
	h.srv.Script("CHILD-PLAN", llmtest.Text("ok"))
	rt, err := New(h.config())
	if err != nil {
		t.Fatal(err)
	}
	// A real model's first answer takes far longer than git; take the
	// snapshot first so the test does not depend on the machine's speed.
	rt.git.Take(context.Background())
	if _, res, err := runAll(t, context.Background(), rt, "MAIN"); err != nil || res == nil {
		t.Fatalf("run: %v", err)
	}
	gp := h.srv.RequestsFor("CHILD-GP")[0].System
	contains(t, gp, "<git-status")
	contains(t, gp, "?? new.txt")
	contains(t, gp, "first commit")
	contains(t, gp, "Current branch: trunk")
	if strings.Contains(h.srv.RequestsFor("CHILD-PLAN")[0].System, "<git-status") {
		t.Fatal("Plan omits git status")
	}
}

// TestToolsEntryWithRuleNarrows: `tools: Bash(echo hi:*), Read` gives the
// child Bash for `echo hi …` only, and Read whole.
func TestToolsEntryWithRuleNarrows(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/echoer.md", []byte("---\nname: echoer\ndescription: echoes\ntools: Bash(echo hi:*), Read\n---\nYou echo.\n"), agentdef.SourceProject)
	if def == nil {
		t.Fatal(diags)
	}
	if err := os.WriteFile(filepath.Join(h.dir, "f.txt"), []byte("content\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("echoer", "CHILD-E")), llmtest.Text("ok"))
	h.srv.Script("CHILD-E", llmtest.ToolUses(
		llmtest.Call{Name: "Bash", Input: map[string]any{"command": "echo hi there"}},
		llmtest.Call{Name: "Bash", Input: map[string]any{"command": "touch " + filepath.Join(h.dir, "made")}},
		llmtest.Call{Name: "Read", Input: map[string]any{"file_path": filepath.Join(h.dir, "f.txt")}},
	), llmtest.Text("done"))
	cfg := h.config()
	cfg.Agents = append(agentdef.Builtins(), def)
	evs, _, _ := mustRun(t, cfg, "MAIN")
	res := h.toolResults("CHILD-E")
	if !strings.Contains(res[0], "hi there") {
		t.Fatalf("echo: %q", res[0])
	}
	contains(t, res[1], "only as its definition allows: Bash(echo hi:*)")
	if _, err := os.Stat(filepath.Join(h.dir, "made")); err == nil {
		t.Fatal("a command outside the entry ran")
	}
	contains(t, res[2], "content")
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			contains(t, strings.Join(ev.Task.Receipt.Warnings, "\n"), `"Bash(echo hi:*)" limits Bash`)
		}
	}
}

func TestAgentMemory(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/rememberer.md", []byte("---\nname: rememberer\ndescription: remembers\nmemory: project\ntools: Grep\n---\nYou remember.\n"), agentdef.SourceProject)
	if def == nil {
		t.Fatal(diags)
	}
	memDir := filepath.Join(h.dir, ".cadre", "agent-memory", "rememberer")
	if err := os.MkdirAll(memDir, 0o755); err != nil {
		t.Fatal(err)
	}
	var lines []string
	for i := range 250 {
		lines = append(lines, fmt.Sprintf("note %d", i))
	}
	if err := os.WriteFile(filepath.Join(memDir, "MEMORY.md"), []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("rememberer", "CHILD-M")), llmtest.Text("ok"))
	h.srv.Script("CHILD-M", llmtest.ToolUse("Edit", map[string]any{
		"file_path": filepath.Join(memDir, "MEMORY.md"), "old_string": "note 0\n", "new_string": "note zero\n"}), llmtest.Text("noted"))
	cfg := h.config()
	cfg.Agents = append(agentdef.Builtins(), def)
	cfg.Home = t.TempDir()
	cfg.Permissions = &Permissions{Mode: permission.ModeAcceptEdits}
	mustRun(t, cfg, "MAIN")
	req := h.srv.RequestsFor("CHILD-M")[0]
	contains(t, req.System, "note 199\n(cut after 200 lines")
	if strings.Contains(req.System, "note 200") {
		t.Fatal("more than 200 lines of memory in the prompt")
	}
	// Memory adds Read, Write and Edit to an explicit tools list (S-4.7).
	if diff := cmp.Diff([]string{"Edit", "Grep", "Read", "Write"}, req.ToolNames()); diff != "" {
		t.Fatalf("tools:\n%s", diff)
	}
	// Edit without a Read first is refused by the tool, not by permissions:
	// the memory directory is a working directory of the agent.
	got := h.toolResults("CHILD-M")[0]
	if strings.Contains(got, "Permission denied") {
		t.Fatalf("memory edit was denied: %s", got)
	}
}

// TestUserMemoryNeedsHome: `memory: user` without Config.Home runs the
// agent without memory and says so in its receipt, rather than guessing a
// home from the process environment.
func TestUserMemoryNeedsHome(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/u.md", []byte("---\nname: u\ndescription: user memory\nmemory: user\n---\nbody\n"), agentdef.SourceProject)
	if def == nil {
		t.Fatal(diags)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("u", "CHILD-U")), llmtest.Text("ok"))
	h.srv.Script("CHILD-U", llmtest.Text("done"))
	cfg := h.config()
	cfg.Agents = []*agentdef.Definition{def}
	evs, _, _ := mustRun(t, cfg, "MAIN")
	for _, ev := range evs {
		if ev.Type == run.EventTaskStarted {
			contains(t, strings.Join(ev.Task.Receipt.Warnings, "\n"), "memory: user needs the user's home directory (Config.Home)")
		}
	}
	if strings.Contains(h.srv.RequestsFor("CHILD-U")[0].System, "<agent-memory") {
		t.Fatal("a memory block without a memory directory")
	}
}

// TestNewChecksConfig: what New refuses, each with a message naming the
// field.
func TestNewChecksConfig(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	base := h.config()
	cases := []struct {
		name string
		edit func(*Config)
		want string
	}{
		{"no model", func(c *Config) { c.Model = nil }, "Config.Model is required"},
		{"no model id", func(c *Config) { c.ModelID = "" }, "Config.ModelID is required"},
		{"transcripts without a state dir", func(c *Config) { c.StateDir = "" }, "Config.StateDir is required"},
		{"rule with ~ and no home", func(c *Config) {
			c.Permissions = &Permissions{Rules: []permission.Rule{{Behavior: permission.Deny, Tool: "Read", Content: "~/.ssh/**", Source: "s.json"}}}
		}, "uses ~ but Config.Home is empty"},
		{"bad mode", func(c *Config) { c.Permissions = &Permissions{Mode: "yolo"} }, "yolo"},
		{"missing add-dir", func(c *Config) { c.AddDirs = []string{"/nonexistent/dir"} }, "/nonexistent/dir"},
	}
	for _, c := range cases {
		cfg := base
		c.edit(&cfg)
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: err = %v, want %q", c.name, err, c.want)
		}
	}
	cfg := base
	cfg.StateDir, cfg.NoTranscript = "", true
	if _, err := New(cfg); err != nil {
		t.Fatalf("no transcripts, no state dir: %v", err)
	}
}
