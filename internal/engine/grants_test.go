package engine

import (
	"context"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// sessionGranter grants "always for this session" and counts prompts.
type sessionGranter struct {
	mu sync.Mutex
	n  int
}

func (p *sessionGranter) Prompt(context.Context, permission.Prompt) (permission.Reply, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	return permission.Reply{Choice: permission.ChoiceAllowSession,
		Rules: []permission.Rule{{Behavior: permission.Allow, Tool: "Bash", Content: "touch:*"}}}, nil
}

// Issue 9: an "allow always" answer held for the one agent that asked.
// Grants now live on the Runtime: a sub-agent and the next run use them
// without asking again; a read-only agent still may not write.
func TestAllowAlwaysHoldsForTheSession(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	h.srv.Script("MAIN", llmtest.ToolUse("Bash", map[string]string{"command": "touch one"}),
		llmtest.ToolUse("Agent", map[string]any{"description": "d", "prompt": "CHILD: go", "subagent_type": "general-purpose"}),
		llmtest.ToolUse("Agent", map[string]any{"description": "d", "prompt": "EXPLORE: go", "subagent_type": "Explore"}),
		llmtest.Text("done"),
		// The next run of the session (its history starts with MAIN).
		llmtest.ToolUse("Bash", map[string]string{"command": "touch three"}), llmtest.Text("done again"))
	h.srv.Script("CHILD", llmtest.ToolUse("Bash", map[string]string{"command": "touch two"}), llmtest.Text("child done"))
	h.srv.Script("EXPLORE", llmtest.ToolUse("Bash", map[string]string{"command": "touch four"}), llmtest.Text("looked"))
	p := &sessionGranter{}
	cfg := h.config()
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Prompter: p}
	_, _, rt := mustRun(t, cfg, "MAIN: go")
	if _, res, err := runAll(t, context.Background(), rt, "and again"); err != nil || res == nil {
		t.Fatalf("second run: %v", err)
	}
	for _, f := range []string{"one", "two", "three"} {
		if _, err := os.Stat(filepath.Join(h.dir, f)); err != nil {
			t.Errorf("%s was not made: %v", f, err)
		}
	}
	if _, err := os.Stat(filepath.Join(h.dir, "four")); err == nil {
		t.Error("a grant let a read-only agent write")
	}
	if p.n != 1 {
		t.Errorf("%d prompts, want 1: the grant did not hold for the session", p.n)
	}
	if g := rt.Grants(); len(g) != 1 || g[0].String() != "Bash(touch:*)" {
		t.Errorf("grants %v", g)
	}
}
