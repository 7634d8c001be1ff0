package engine

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestMixedTypeSiblingsShareTheirPrefix (issue 12, point 6): sibling
// sub-agents of four different types with one tool list, started in one
// turn, share the tools and the part of the system prompt that is not
// their type's (llm.Request.SystemPrefix) as one cached prefix, on both
// providers: by llmtest's cache accounting every child after the first
// reads all of its first request from the cache but its type's part and
// its prompt. With the type's body first, only the tools were shared.
func TestMixedTypeSiblingsShareTheirPrefix(t *testing.T) {
	t.Parallel()
	types := []string{"alpha", "beta", "gamma", "delta"}
	for _, p := range forkProviders() {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			srv := llmtest.NewServer()
			t.Cleanup(srv.Close)
			t.Cleanup(func() { srv.Check(t) })
			cfg := forkConfig(t, p, srv)
			cfg.ForkSubagent = false
			bodies := map[string]string{}
			var calls []llmtest.Call
			for i, typ := range types {
				// Bodies of different lengths and words: nothing of a
				// type's own part is shared.
				bodies[typ] = fmt.Sprintf("You are the %s agent. %s", typ, strings.Repeat("Check "+typ+" things carefully. ", 3+i))
				cfg.Agents = append(cfg.Agents, &agentdef.Definition{Name: typ, Description: "the " + typ + " agent", Body: bodies[typ], Source: agentdef.SourceProject})
				calls = append(calls, llmtest.Call{Name: "Agent", Input: agentCall(typ, strings.ToUpper(typ)+"-TASK: do the "+typ+" part")})
			}
			cfg.Agents = append(agentdef.Builtins(), cfg.Agents...)
			srv.Script("MAIN", llmtest.ToolUses(calls...), llmtest.Text("all done"))
			for _, typ := range types {
				srv.Script(strings.ToUpper(typ)+"-TASK", llmtest.Text(typ+" done"))
			}
			_, res, _ := mustRun(t, cfg, "MAIN: four kinds of work")
			if res.Text != "all done" || res.Subagents.Completed != len(types) {
				t.Fatalf("result %q, subagents %+v", res.Text, res.Subagents)
			}
			var firsts []*llmtest.Request
			for _, typ := range types {
				rs := srv.RequestsFor(strings.ToUpper(typ) + "-TASK")
				if len(rs) != 1 {
					t.Fatalf("%s: %d requests", typ, len(rs))
				}
				firsts = append(firsts, rs[0])
			}
			// One tool list; the prompts differ in the type's part.
			for _, r := range firsts[1:] {
				if !slices.Equal(r.ToolNames(), firsts[0].ToolNames()) {
					t.Fatalf("tool lists differ: %v / %v", r.ToolNames(), firsts[0].ToolNames())
				}
			}
			// The child the server accounted first (not necessarily the
			// first to arrive: children run concurrently) wrote the shared
			// prefix and read the least; the others read it.
			slices.SortFunc(firsts, func(a, b *llmtest.Request) int { return int(a.Usage.CacheReadTokens - b.Usage.CacheReadTokens) })
			for _, r := range firsts[1:] {
				u := r.Usage
				total := u.InputTokens + u.CacheReadTokens + u.CacheWriteTokens
				var typ string
				for _, ty := range types {
					if strings.Contains(r.FirstUserText(), strings.ToUpper(ty)+"-TASK") {
						typ = ty
					}
				}
				// What is not read: the type's body (JSON-escaped, in its
				// system block) and the prompt, with their envelopes.
				own := int64(len(jsonString(bodies[typ]))+len(jsonString(r.FirstUserText()))+256) / 4
				if unread := total - u.CacheReadTokens; unread > own {
					t.Errorf("%s: %d of %d tokens not read from the cache, want at most %d (its own part and prompt); usage %+v", typ, unread, total, own, u)
				}
				if frac := float64(u.CacheReadTokens) / float64(total); frac < 0.95 {
					t.Errorf("%s read %.3f of its first request from the cache, want >= 0.95", typ, frac)
				}
				t.Logf("%s: cached fraction %.4f (%d of %d tokens)", typ, float64(u.CacheReadTokens)/float64(total), u.CacheReadTokens, total)
			}
		})
	}
}
