package engine

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/llm/openai"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/transcript"
)

// forkProvider is one provider the fork scenarios run against.
type forkProvider struct {
	name    string
	modelID string
	callID  func(key string, n int) string
	model   func(t *testing.T, srv *llmtest.Server) llm.Model
}

func forkProviders() []forkProvider {
	client := func(t *testing.T) *http.Client {
		tr := &http.Transport{}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	return []forkProvider{
		{name: "anthropic", modelID: "claude-sonnet-4-5", callID: llmtest.ToolUseID, model: func(t *testing.T, srv *llmtest.Server) llm.Model {
			m, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: client(t), RetryBase: 1, RetryMax: 2})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
		{name: "openai", modelID: "gpt-5", callID: llmtest.CallID, model: func(t *testing.T, srv *llmtest.Server) llm.Model {
			m, err := openai.New(openai.Config{APIKey: "test", BaseURL: srv.URL() + "/v1", HTTPClient: client(t), RetryBase: 1, RetryMax: 2})
			if err != nil {
				t.Fatal(err)
			}
			return m
		}},
	}
}

// forkConfig is a runtime config against srv with the fork path on.
// forkConfig runs forks in the foreground (BackgroundOff) so that the
// tests read each fork's report in the parent's next request;
// TestForksRunInTheBackground covers the default.
func forkConfig(t *testing.T, p forkProvider, srv *llmtest.Server) Config {
	return Config{Model: p.model(t, srv), ModelID: p.modelID, Cwd: t.TempDir(), StateDir: t.TempDir(), ForkSubagent: true,
		Permissions: AllowAll(), Background: BackgroundOff}
}

// forkReplies answers the requests of key after its fixed turns: a fork
// (its last user text holds a directive naming one of tags) reports on
// its tag; the parent's last request gets "all done".
func forkReplies(tags ...string) func(r *llmtest.Request) llmtest.Turn {
	return func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		for _, tag := range tags {
			if strings.Contains(last, "from Agent call") && strings.Contains(last, tag) {
				return llmtest.Text("report on " + tag)
			}
		}
		return llmtest.Text("all done")
	}
}

// isForkRequest reports whether a captured request is a fork's first.
func isForkRequest(r *llmtest.Request) bool {
	return strings.Contains(r.LastUserText(), "from Agent call")
}

// TestForkSiblingsShareTheirPrefix is the fork path's golden scenario on
// both providers: one parent turn with three Agent calls without
// subagent_type starts three forks whose raw request bodies are identical
// except inside the directive, which send the parent's system prompt,
// tools and model, and whose prompt cache reads cover the parent's cached
// prefix (the first fork) and at least 99% of their input (the others).
func TestForkSiblingsShareTheirPrefix(t *testing.T) {
	t.Parallel()
	for _, p := range forkProviders() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer()
			t.Cleanup(srv.Close)
			t.Cleanup(func() { srv.Check(t) })
			tags := []string{"FORK-A", "FORK-B", "FORK-C"}
			var calls []llmtest.Call
			for _, tag := range tags {
				calls = append(calls, llmtest.Call{Name: "Agent", Input: agentCall("", tag+": look at part "+tag)})
			}
			srv.Script("MAIN", llmtest.Text("Splitting the work.").WithToolUse("Agent", calls[0].Input).WithToolUse("Agent", calls[1].Input).WithToolUse("Agent", calls[2].Input))
			srv.ScriptFunc("MAIN", forkReplies(tags...))
			evs, res, rt := mustRun(t, forkConfig(t, p, srv), "MAIN: split the work three ways")
			if res.Text != "all done" || res.Subagents.Spawned != 3 || res.Subagents.Completed != 3 {
				t.Fatalf("result %q, subagents %+v", res.Text, res.Subagents)
			}

			all := srv.RequestsFor("MAIN")
			parent := all[0]
			var forks []*llmtest.Request
			for _, r := range all {
				if isForkRequest(r) {
					forks = append(forks, r)
				}
			}
			if len(forks) != 3 {
				t.Fatalf("%d fork requests, want 3", len(forks))
			}
			slices.SortFunc(forks, func(a, b *llmtest.Request) int { return a.Seq - b.Seq })

			// Same system prompt bytes, tools, model as the parent.
			for _, f := range forks {
				if f.System != parent.System || f.Model != parent.Model || !slices.Equal(f.ToolNames(), parent.ToolNames()) {
					t.Fatalf("fork request differs from the parent's in system, model or tools")
				}
				for i := range f.Tools {
					if f.Tools[i].Description != parent.Tools[i].Description || !bytes.Equal(f.Tools[i].InputSchema, parent.Tools[i].InputSchema) {
						t.Fatalf("tool %s differs", f.Tools[i].Name)
					}
				}
			}
			// The raw bodies differ only inside the directive, and each
			// directive names the fork's own call, and only it.
			pre, suf := commonPrefix(forks), commonSuffix(forks)
			for _, f := range forks {
				var directive string
				found := 0
				for n, tag := range tags {
					if id := p.callID("MAIN", n+1); strings.Contains(f.LastUserText(), id) {
						found++
						directive = prompts.ForkDirective(id, tag+": look at part "+tag)
					}
				}
				if found != 1 {
					t.Fatalf("directive names %d calls:\n%s", found, f.LastUserText())
				}
				if !strings.Contains(f.LastUserText(), directive) {
					t.Fatalf("directive %q not in the fork's last message:\n%s", directive, f.LastUserText())
				}
				mid := string(f.Body[pre : len(f.Body)-suf])
				if mid == "" || !strings.Contains(jsonString(directive), mid) {
					t.Fatalf("fork bodies differ outside the directive: %q", mid)
				}
			}

			// Cache: the first fork the server accounted (not necessarily
			// the first to arrive: forks run concurrently) reads what the
			// parent cached; the others read all of their input from the
			// cache but their own directive (~30 tokens; a ratio would
			// move with the length of the shared prompt).
			slices.SortFunc(forks, func(a, b *llmtest.Request) int { return int(a.Usage.CacheReadTokens - b.Usage.CacheReadTokens) })
			parentCached := parent.Usage.CacheReadTokens + parent.Usage.CacheWriteTokens
			if p.name == "openai" {
				parentCached = parent.Usage.InputTokens + parent.Usage.CacheReadTokens
			}
			if forks[0].Usage.CacheReadTokens != parentCached {
				t.Errorf("first fork read %d cached tokens, want the parent's %d (%+v)", forks[0].Usage.CacheReadTokens, parentCached, forks[0].Usage)
			}
			for _, f := range forks[1:] {
				u := f.Usage
				if own := u.InputTokens + u.CacheWriteTokens; own > 40 || u.CacheReadTokens < parentCached {
					t.Errorf("fork #%d read %d tokens from the cache and %d not, want the parent's %d read and at most its directive (40) not (%+v)", f.Seq, u.CacheReadTokens, own, parentCached, u)
				}
			}

			// Each fork's report comes back framed, typed fork.
			reports := srv.RequestsFor("MAIN")[len(all)-1].LastToolResults()
			if len(reports) != 3 {
				t.Fatalf("%d tool results in the parent's last request", len(reports))
			}
			for i, r := range reports {
				contains(t, r.ResultText(), "report on "+tags[i])
				contains(t, r.ResultText(), "(fork)")
			}
			// Task events say fork, with the receipt of a fork.
			n := 0
			for _, ev := range evs {
				if ev.Type == run.EventTaskStarted {
					n++
					if ev.Task.AgentType != agentdef.ForkName || ev.Task.Receipt.PermissionMode != permission.ModeBypassPermissions || !slices.Equal(ev.Task.Receipt.Tools, rt.ToolNames()) {
						t.Fatalf("task %+v receipt %+v", ev.Task, ev.Task.Receipt)
					}
				}
			}
			if n != 3 {
				t.Fatalf("%d tasks started", n)
			}
		})
	}
}

func commonPrefix(rs []*llmtest.Request) int {
	n := len(rs[0].Body)
	for _, r := range rs[1:] {
		i := 0
		for i < n && i < len(r.Body) && r.Body[i] == rs[0].Body[i] {
			i++
		}
		n = i
	}
	return n
}

func commonSuffix(rs []*llmtest.Request) int {
	a := rs[0].Body
	n := len(a)
	for _, r := range rs[1:] {
		b := r.Body
		i := 0
		for i < n && i < len(b) && a[len(a)-1-i] == b[len(b)-1-i] {
			i++
		}
		n = i
	}
	return n
}

func jsonString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

// forkScript makes MAIN call Agent once with input, then answer a fork
// with "forked report" and its own last request with "done"; a fresh
// child (its prompt starts with CHILD) answers "fresh report".
func forkScript(srv *llmtest.Server, input map[string]any) {
	srv.Script("MAIN", llmtest.ToolUse("Agent", input))
	srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if isForkRequest(r) {
			return llmtest.Text("forked report")
		}
		return llmtest.Text("done")
	})
	srv.Script("CHILD", llmtest.Text("fresh report"))
}

// TestForkRouting: which Agent calls fork (S-3.3, S-6.1), and what the
// Agent tool's description says about it.
func TestForkRouting(t *testing.T) {
	t.Parallel()
	userFork := &agentdef.Definition{Name: "fork", Description: "a user agent that happens to be named fork", Body: "USER FORK AGENT",
		Source: agentdef.SourceProject, Path: "/p/.cadre/agents/fork.md"}
	denyFork := &Permissions{Mode: permission.ModeBypassPermissions,
		Rules: []permission.Rule{{Behavior: permission.Deny, Tool: "Agent", Content: "fork", Source: "/p/.cadre/settings.json"}}}
	cases := []struct {
		name    string
		fork    bool
		agents  []*agentdef.Definition
		perms   *Permissions
		typ     string
		want    string // in the Agent call's result
		refused run.RefusalReason
		denied  bool     // by the permission checker, before the tool runs
		desc    []string // in the Agent tool's description
	}{
		{name: "off, no type: general-purpose", typ: "", want: "fresh report", desc: []string{"Without it, general-purpose is used."}},
		{name: "off, fork: refused", typ: "fork", want: "Forking is not enabled", refused: run.RefusedFork},
		{name: "on, no type: fork", fork: true, typ: "", want: "forked report", desc: []string{"Without it, you fork", "Forking: omit subagent_type"}},
		{name: "on, fork named: fork", fork: true, typ: "fork", want: "forked report"},
		{name: "on, a named type: that type", fork: true, typ: "general-purpose", want: "fresh report"},
		{name: "user agent named fork: no type is general-purpose", fork: true, agents: []*agentdef.Definition{userFork}, typ: "",
			want: "fresh report", desc: []string{"- fork: unavailable (an agent definition named fork exists (/p/.cadre/agents/fork.md)", "Without it, general-purpose is used."}},
		{name: "user agent named fork: fork is that agent", fork: true, agents: []*agentdef.Definition{userFork}, typ: "fork", want: "fresh report"},
		{name: "Agent(fork) denied: no type is general-purpose", fork: true, perms: denyFork, typ: "",
			want: "fresh report", desc: []string{"- fork: unavailable (rule Agent(fork) from /p/.cadre/settings.json denies it)"}},
		{name: "Agent(fork) denied: fork is refused naming the rule", fork: true, perms: denyFork, typ: "fork",
			want: "Rule Agent(fork) from /p/.cadre/settings.json forbids it", denied: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			cfg := h.config()
			cfg.Background = BackgroundOff // reports come back in the call (forkConfig)
			cfg.ForkSubagent, cfg.Permissions = c.fork, c.perms
			if c.agents != nil {
				cfg.Agents = append(agentdef.Builtins(), c.agents...)
			}
			forkScript(h.srv, agentCall(c.typ, "CHILD: do the thing"))
			_, res, _ := mustRun(t, cfg, "MAIN: go")
			got := h.toolResults("MAIN")[0]
			contains(t, got, c.want)
			if c.refused != "" && res.Subagents.Refused[c.refused] != 1 {
				t.Fatalf("refusals %v, want one %s", res.Subagents.Refused, c.refused)
			}
			if c.denied && len(res.PermissionDenials) != 1 {
				t.Fatalf("denials %+v", res.PermissionDenials)
			}
			if c.refused == "" && !c.denied && res.Subagents.Completed != 1 {
				t.Fatalf("subagents %+v", res.Subagents)
			}
			first := h.srv.RequestsFor("MAIN")[0]
			i := slices.Index(first.ToolNames(), "Agent")
			for _, d := range c.desc {
				contains(t, first.Tools[i].Description, d)
			}
			if !c.fork && strings.Contains(first.Tools[i].Description, "fork") {
				t.Fatalf("fork off, yet the description mentions forks:\n%s", first.Tools[i].Description)
			}
		})
	}
}

// hasForkRules reports whether a captured request is a fork's: a user
// message of its history holds the fork rules.
func hasForkRules(r *llmtest.Request) bool {
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if m.Role == llm.RoleUser && b.Type == llm.BlockText && prompts.IsForkRules(b.Text) {
				return true
			}
		}
	}
	return false
}

// TestForkCannotFork: a fork's Agent call is refused and counted (S-6.3),
// its transcript holds the whole inherited conversation, and a session
// restored from that transcript is still recognised as a fork.
func TestForkCannotFork(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("", "FORK-X: try to fork")))
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case strings.Contains(last, "from Agent call"), strings.Contains(last, "RESUMED"):
			return llmtest.ToolUse("Agent", agentCall("", "nested fork"))
		case hasForkRules(r):
			return llmtest.Text("could not fork")
		}
		return llmtest.Text("done")
	})
	cfg := h.config()
	cfg.Background = BackgroundOff // reports come back in the call (forkConfig)
	cfg.ForkSubagent = true
	evs, res, _ := mustRun(t, cfg, "MAIN: fork once")
	if res.Subagents.Spawned != 1 || res.Subagents.Refused[run.RefusedForkNested] != 1 {
		t.Fatalf("subagents %+v", res.Subagents)
	}
	var forkResult *run.SubagentResult
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			forkResult = ev.Subagent
		}
	}
	if forkResult == nil || forkResult.AgentType != agentdef.ForkName || !strings.Contains(forkResult.Text, "could not fork") {
		t.Fatalf("fork result %+v", forkResult)
	}
	var refusal string
	for _, r := range h.srv.RequestsFor("MAIN") {
		if hasForkRules(r) && len(r.LastToolResults()) == 1 {
			refusal = r.LastToolResults()[0].ResultText()
		}
	}
	if refusal != prompts.ForkNested() {
		t.Fatalf("the fork's Agent call got %q", refusal)
	}

	// The fork's transcript starts with the parent's first message and
	// holds the fork rules: restored, it is still a fork.
	entries, err := transcript.ReadFile(forkResult.TranscriptPath)
	if err != nil {
		t.Fatal(err)
	}
	history := transcript.Messages(entries)
	if len(history) < 4 || history[0].Text() != "MAIN: fork once" {
		t.Fatalf("fork transcript holds %d messages, starting %+v", len(history), history[0])
	}
	cfg2 := h.config()
	cfg2.ForkSubagent, cfg2.History = true, history
	_, res2, _ := mustRun(t, cfg2, "RESUMED: fork again")
	if res2.Subagents.Spawned != 0 || res2.Subagents.Refused[run.RefusedForkNested] != 1 {
		t.Fatalf("restored fork: subagents %+v", res2.Subagents)
	}
	all := h.srv.RequestsFor("MAIN")
	if got := all[len(all)-1].LastToolResults()[0].ResultText(); got != prompts.ForkNested() {
		t.Fatalf("restored fork's Agent call got %q", got)
	}
}

// TestForkIgnoresModelAndEffort: a fork keeps its parent's model and
// effort whatever the call says; the receipt warns (S-6.1).
func TestForkIgnoresModelAndEffort(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	in := agentCall("", "do it")
	in["model"], in["effort"] = "opus", "high"
	forkScript(h.srv, in)
	cfg := h.config()
	cfg.Background = BackgroundOff // reports come back in the call (forkConfig)
	cfg.ForkSubagent = true
	evs, _, _ := mustRun(t, cfg, "MAIN: go")
	var fork *llmtest.Request
	for _, r := range h.srv.RequestsFor("MAIN") {
		if isForkRequest(r) {
			fork = r
		}
	}
	if fork == nil || fork.Model != cfg.ModelID || bytes.Contains(fork.Body, []byte(`"output_config"`)) {
		t.Fatalf("fork request model %v, body effort present %v", fork.Model, bytes.Contains(fork.Body, []byte(`"output_config"`)))
	}
	var warnings []string
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			warnings = ev.Subagent.Receipt.Warnings
			if ev.Subagent.Model != cfg.ModelID || ev.Subagent.ModelRule != run.ModelRuleParent {
				t.Fatalf("result model %s rule %s", ev.Subagent.Model, ev.Subagent.ModelRule)
			}
		}
	}
	want := []string{prompts.ForkIgnoredArgument("model", "opus", cfg.ModelID), prompts.ForkIgnoredArgument("effort", "high", "default")}
	if !slices.Equal(warnings, want) {
		t.Fatalf("warnings %q, want %q", warnings, want)
	}
}

// TestForkBubblesPrompts: a fork runs in bubble mode; its permission
// prompts reach the session's prompter labelled with the fork (S-6.4).
// Headless, the same call is denied and reported.
func TestForkBubblesPrompts(t *testing.T) {
	t.Parallel()
	for _, headless := range []bool{false, true} {
		t.Run(fmt.Sprintf("headless=%v", headless), func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			target := filepath.Join(h.dir, "out.txt")
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("", "write the file")))
			h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
				switch {
				case isForkRequest(r):
					return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "from the fork"})
				case hasForkRules(r):
					return llmtest.Text("wrote it")
				}
				return llmtest.Text("done")
			})
			rec := &allowAll{}
			cfg := h.config()
			cfg.Background = BackgroundOff // reports come back in the call (forkConfig)
			cfg.ForkSubagent = true
			cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Rules: []permission.Rule{{Behavior: permission.Allow, Tool: "Agent"}}}
			if !headless {
				cfg.Permissions.Prompter = rec
			}
			evs, res, _ := mustRun(t, cfg, "MAIN: go")
			var forkID string
			for _, ev := range evs {
				if ev.Type == run.EventTaskStarted {
					forkID = ev.Task.AgentID
					if ev.Task.Receipt.PermissionMode != permission.ModeBubble {
						t.Fatalf("fork mode %s", ev.Task.Receipt.PermissionMode)
					}
				}
			}
			_, statErr := os.Stat(target)
			if headless {
				if statErr == nil || len(res.PermissionDenials) != 1 || res.PermissionDenials[0].AgentID != forkID {
					t.Fatalf("headless fork: file written %v, denials %+v", statErr == nil, res.PermissionDenials)
				}
				return
			}
			if statErr != nil {
				t.Fatal(statErr)
			}
			rec.mu.Lock()
			defer rec.mu.Unlock()
			if len(rec.prompts) != 1 || rec.prompts[0].Label != permission.AgentLabel(agentdef.ForkName, forkID) || rec.prompts[0].Request.Tool != "Write" {
				t.Fatalf("prompts %+v, want one labelled %q", rec.prompts, permission.AgentLabel(agentdef.ForkName, forkID))
			}
		})
	}
}

// TestForkMaxTurns: a fork stops at 200 turns (S-6.4).
func TestForkMaxTurns(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("", "loop forever")))
	h.srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		if hasForkRules(r) {
			return llmtest.ToolUse("NoSuchTool", map[string]any{})
		}
		return llmtest.Text("done")
	})
	cfg := h.config()
	cfg.Background = BackgroundOff // reports come back in the call (forkConfig)
	cfg.ForkSubagent = true
	evs, _, _ := mustRun(t, cfg, "MAIN: go")
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted {
			if !ev.Subagent.MaxTurnsHit || ev.Subagent.Turns != 200 {
				t.Fatalf("fork turns %d, max turns hit %v", ev.Subagent.Turns, ev.Subagent.MaxTurnsHit)
			}
			contains(t, h.toolResults("MAIN")[0], "limit of 200 turns")
			return
		}
	}
	t.Fatal("no fork completed")
}

// TestForkSubagentStartContextAfterDirective: what a SubagentStart hook
// adds reaches a fork after its directive, so the parent's first message
// and the bytes sibling forks share stay as they were.
func TestForkSubagentStartContextAfterDirective(t *testing.T) {
	t.Parallel()
	w := newHookWorld(t)
	ctxScript := w.script("ctx.sh", startContextScript)
	cfg := w.config(`{"SubagentStart": [{"matcher": "fork", "hooks": [{"type": "command", "command": "` + ctxScript + `"}]}]}`)
	cfg.Background = BackgroundOff // reports come back in the call (forkConfig)
	cfg.ForkSubagent = true
	w.srv.Script("MAIN", llmtest.ToolUses(llmtest.Call{Name: "Agent", Input: agentCall("", "FORK-A: a")}, llmtest.Call{Name: "Agent", Input: agentCall("", "FORK-B: b")}))
	w.srv.ScriptFunc("MAIN", forkReplies("FORK-A", "FORK-B"))
	_, res, _ := mustRun(t, cfg, "MAIN: go")
	if res.Subagents.Completed != 2 {
		t.Fatalf("subagents %+v", res.Subagents)
	}
	parentFirst := w.srv.RequestsFor("MAIN")[0].Messages[0].Text()
	var forks []*llmtest.Request
	for _, r := range w.srv.RequestsFor("MAIN") {
		if isForkRequest(r) {
			forks = append(forks, r)
		}
	}
	if len(forks) != 2 {
		t.Fatalf("%d fork requests", len(forks))
	}
	for _, f := range forks {
		if f.Messages[0].Text() != parentFirst {
			t.Fatalf("the fork's first message changed: %q", f.Messages[0].Text())
		}
		last := f.Messages[len(f.Messages)-1].Content
		if n := len(last); n < 2 || !strings.Contains(last[n-1].Text, "You are fork a") || !strings.Contains(last[n-2].Text, "from Agent call") {
			t.Fatalf("hook context not right after the directive: %+v", last)
		}
	}
	// Up to the rules block the two forks are the same.
	a, b := forks[0].Messages, forks[1].Messages
	if diff := cmp.Diff(a[:len(a)-1], b[:len(b)-1]); diff != "" {
		t.Fatalf("forks differ before their last message:\n%s", diff)
	}
	la, lb := a[len(a)-1].Content, b[len(b)-1].Content
	if diff := cmp.Diff(la[:len(la)-2], lb[:len(lb)-2]); diff != "" {
		t.Fatalf("forks differ before their directive:\n%s", diff)
	}
}

// Forks run in the background by default (S-6, S-7.1): the Agent call
// returns async_launched at once, and the fork's report reaches the parent
// as a notification.
func TestForksRunInTheBackground(t *testing.T) {
	t.Parallel()
	p := forkProviders()[0]
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("", "FORK-A: look at part FORK-A")))
	srv.ScriptFunc("MAIN", forkReplies("FORK-A"))
	cfg := forkConfig(t, p, srv)
	cfg.Background = BackgroundOn
	_, _, rt := mustRun(t, cfg, "MAIN: fork once")
	drainNotifications(t, rt)
	var launched, notified bool
	for _, r := range srv.RequestsFor("MAIN") {
		if isForkRequest(r) {
			continue
		}
		for _, tr := range r.LastToolResults() {
			launched = launched || strings.Contains(tr.ResultText(), "async_launched")
		}
		for _, m := range r.Messages {
			for _, b := range m.Content {
				notified = notified || (b.Type == llm.BlockText && strings.Contains(b.Text, "<task-notification>") && strings.Contains(b.Text, "report on FORK-A"))
			}
		}
	}
	if !launched || !notified {
		t.Fatalf("launched %v, notified %v: the fork did not run in the background", launched, notified)
	}
}
