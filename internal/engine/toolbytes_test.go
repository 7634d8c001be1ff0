package engine

import (
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// maxToolBytes bounds the tools array of the main agent's request with
// the default tool set in a git repository, background agents on (20
// tools, 13 of them deferred: named in the system prompt, not sent):
// 29,644 bytes before issue 24, 18,445 after its descriptions were cut to
// what a model needs, 9,787 with the rarely used tools deferred, 6,572
// with the offered ones' descriptions cut again; the bound is that plus
// ~3.5 %.
const maxToolBytes = 6_800

// TestToolArrayBytesBounded (issue 24, point 3): every request carries the
// definitions of the tools it offers; their bytes are bounded so that a
// longer description is a deliberate choice, and the tools it defers are
// still reachable (named in its system prompt).
func TestToolArrayBytesBounded(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.dir = gitRepo(t)
	h.srv.Script("MAIN", llmtest.Text("done"))
	mustRun(t, h.config(), "MAIN: go")
	req := h.srv.RequestsFor("MAIN")[0]
	total := 0
	for _, raw := range requestTools(t, req.Body) {
		total += len(raw)
	}
	t.Logf("%d tools, %d bytes: %v; deferred %v", len(req.Tools), total, req.ToolNames(), listedDeferred(req.System))
	if n := len(wireTools(req)); n < 21 {
		t.Fatalf("want the whole default tool set (20 tools and ToolSearch) offered or deferred, got %v", wireTools(req))
	}
	if total > maxToolBytes {
		t.Errorf("the tools array is %d bytes, bound %d", total, maxToolBytes)
	}
}
