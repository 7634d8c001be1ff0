package cadre

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/llm/openai"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
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
func forkConfig(t *testing.T, p forkProvider, srv *llmtest.Server) Config {
	return Config{Model: p.model(t, srv), ModelID: p.modelID, Cwd: t.TempDir(), StateDir: t.TempDir(), ForkSubagent: true}
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
			// parent cached; the others read at least 99% of their input.
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
				total := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
				if frac := float64(u.CacheReadTokens) / float64(total); frac < 0.99 {
					t.Errorf("fork #%d read %.4f of its input from the cache, want >= 0.99 (%+v)", f.Seq, frac, u)
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
				if ev.Type == EventTaskStarted {
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
