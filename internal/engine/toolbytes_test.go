package engine

import (
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// maxToolBytes bounds the tools array of the main agent's request with
// the default tool set in a git repository, background agents on (20
// tools): 29,644 bytes before issue 24, 18,445 after its descriptions were
// cut to what a model needs, plus ~5 %.
const maxToolBytes = 19_400

// TestToolArrayBytesBounded (issue 24, point 3): every request carries the
// tool definitions; their bytes are bounded so that a longer description
// is a deliberate choice.
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
	t.Logf("%d tools, %d bytes: %v", len(req.Tools), total, req.ToolNames())
	if len(req.Tools) < 20 {
		t.Fatalf("want the whole default tool set (20 tools), got %v", req.ToolNames())
	}
	if total > maxToolBytes {
		t.Errorf("the tools array is %d bytes, bound %d", total, maxToolBytes)
	}
}
