package engine

import (
	"bytes"
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/tool"
)

// TestDeferredToolsLoad (issue 24, point 3): a deferred tool is named in
// the system prompt, not offered; ToolSearch loads tools by name or by
// keywords and the next request offers them after the others, in pool
// order, with the cache marker still closing the tools children share; a
// deferred tool called by name before it was loaded runs and is offered
// from then on; a query that matches nothing is an error naming the
// deferred tools.
func TestDeferredToolsLoad(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.dir = gitRepo(t)
	h.srv.Script("MAIN",
		llmtest.ToolUse(tool.ToolSearch, map[string]any{"query": "select:TaskOutput,WebFetch,Nope"}),
		llmtest.ToolUse(tool.ToolSearch, map[string]any{"query": "search the web"}),
		llmtest.ToolUse(tool.ToolSearch, map[string]any{"query": "zzzz"}),
		llmtest.ToolUse(tool.TodoWrite, map[string]any{"todos": []map[string]any{{"content": "x", "status": "pending", "activeForm": "Doing x"}}}),
		llmtest.Text("done"))
	_, res, _ := mustRun(t, h.config(), "MAIN: go")
	if res.Text != "done" {
		t.Fatalf("result %q", res.Text)
	}
	reqs := h.srv.RequestsFor("MAIN")
	if len(reqs) != 5 {
		t.Fatalf("%d requests", len(reqs))
	}
	first := reqs[0].ToolNames()
	for _, name := range []string{tool.TaskOutput, tool.WebFetch, tool.WebSearch, tool.TodoWrite} {
		if slices.Contains(first, name) || !slices.Contains(listedDeferred(reqs[0].System), name) {
			t.Fatalf("first request: %s should be deferred; offered %v", name, first)
		}
	}
	// select: loads the named tools; an unknown name is left out.
	contains(t, reqs[1].LastToolResults()[0].ResultText(), "Loaded TaskOutput, WebFetch")
	want := append(slices.Clone(first), tool.WebFetch, tool.TaskOutput) // pool order
	if got := reqs[1].ToolNames(); !slices.Equal(got, want) {
		t.Fatalf("after select: tools %v, want %v", got, want)
	}
	// The marker closes the tools a child shares (the offered ones).
	raw := requestTools(t, reqs[1].Body)
	if !bytes.Contains(raw[len(first)-1], []byte(`"cache_control"`)) {
		t.Errorf("the last shared tool carries no cache marker: %s", raw[len(first)-1])
	}
	// Keywords.
	contains(t, reqs[2].LastToolResults()[0].ResultText(), "WebSearch")
	if got := reqs[2].ToolNames(); !slices.Contains(got, tool.WebSearch) {
		t.Fatalf("after the keyword search: tools %v", got)
	}
	// Nothing matches.
	r3 := reqs[3].LastToolResults()[0]
	if !r3.IsError || !strings.Contains(r3.ResultText(), "No deferred tool matches") || !strings.Contains(r3.ResultText(), "NotebookEdit") {
		t.Fatalf("no match: %+v", r3)
	}
	// Called by name without loading: it runs, and is offered next.
	if r4 := reqs[4].LastToolResults()[0]; r4.IsError {
		t.Fatalf("TodoWrite called by name: %s", r4.ResultText())
	}
	if got := reqs[4].ToolNames(); !slices.Contains(got, tool.TodoWrite) {
		t.Fatalf("after TodoWrite: tools %v", got)
	}
}

// FuzzToolSearchQuery: whatever the model sends as ToolSearch's query,
// parsing it never panics and loads only deferred tools, each once, at
// most max of them for keywords.
func FuzzToolSearchQuery(f *testing.F) {
	for _, q := range []string{"select:WebFetch,TodoWrite", "select:", "select:,,webfetch, NOPE", "search the web", "", "  select:LS  ", "\x00,select:"} {
		f.Add(q, 3)
	}
	var tools []tool.Tool
	for _, n := range deferredTools {
		tools = append(tools, tool.Func(tool.FuncConfig{Name: n, Description: "does " + strings.ToLower(n) + " for the web and files"},
			func(context.Context, *tool.Env, struct{}) (tool.Output, error) { return tool.Output{}, nil }))
	}
	pool := tool.NewPool(tools...)
	f.Fuzz(func(t *testing.T, q string, max int) {
		max = max%8 + 1
		if max < 1 {
			max = 1
		}
		hit, ok := selectTools(deferredTools, q)
		if !ok {
			hit = matchTools(pool, deferredTools, q, max)
			if len(hit) > max {
				t.Fatalf("%q: %d matches, max %d", q, len(hit), max)
			}
		}
		seen := map[string]bool{}
		for _, n := range hit {
			if !isDeferred(n) || seen[n] {
				t.Fatalf("%q: loaded %v", q, hit)
			}
			seen[n] = true
		}
	})
}
