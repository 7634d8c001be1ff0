package engine

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// countingPrompter denies every prompt and counts them.
type countingPrompter struct {
	mu sync.Mutex
	n  int
}

func (p *countingPrompter) Prompt(context.Context, permission.Prompt) (permission.Reply, error) {
	p.mu.Lock()
	p.n++
	p.mu.Unlock()
	return permission.Reply{Choice: permission.ChoiceDeny, Message: "no"}, nil
}

func (p *countingPrompter) count() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n
}

// TestSetPermissionModeBetweenRuns: the same write asks in default mode,
// runs after switching to acceptEdits, and is refused after switching to
// plan, without a prompt.
func TestSetPermissionModeBetweenRuns(t *testing.T) {
	h := newHarness(t)
	write := func(name string) llmtest.Turn {
		return llmtest.ToolUse("Write", map[string]any{"file_path": filepath.Join(h.dir, name), "content": "x"})
	}
	h.srv.Script("", write("a.txt"), llmtest.Text("asked"), write("b.txt"), llmtest.Text("wrote"), write("c.txt"), llmtest.Text("planned"))
	p := &countingPrompter{}
	cfg := h.config()
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Prompter: p}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if got := rt.PermissionMode(); got != permission.ModeDefault {
		t.Fatalf("PermissionMode = %s", got)
	}
	run := func(prompt string) {
		t.Helper()
		if _, res, err := runAll(t, context.Background(), rt, prompt); err != nil || res == nil {
			t.Fatalf("run %q: %v", prompt, err)
		}
	}
	run("one")
	if p.count() != 1 {
		t.Fatalf("default mode: %d prompts, want 1", p.count())
	}
	if err := rt.SetPermissionMode(permission.ModeAcceptEdits); err != nil {
		t.Fatal(err)
	}
	run("two")
	if _, err := os.Stat(filepath.Join(h.dir, "b.txt")); err != nil || p.count() != 1 {
		t.Fatalf("acceptEdits: file %v, prompts %d", err, p.count())
	}
	if err := rt.SetPermissionMode(permission.ModePlan); err != nil {
		t.Fatal(err)
	}
	run("three")
	if _, err := os.Stat(filepath.Join(h.dir, "c.txt")); !errors.Is(err, os.ErrNotExist) || p.count() != 1 {
		t.Fatalf("plan: file %v, prompts %d", err, p.count())
	}
	contains(t, h.toolResults("")[0], "Plan mode is read-only")
	if rt.PermissionMode() != permission.ModePlan {
		t.Fatalf("PermissionMode = %s", rt.PermissionMode())
	}
}

func TestSetPermissionModeRefuses(t *testing.T) {
	h := newHarness(t)
	cfg := h.config()
	cfg.Permissions = &Permissions{Limits: permission.SessionLimits{DisableBypass: true}}
	rt, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []permission.Mode{"sideways", permission.ModeBubble, permission.ModeAuto, permission.ModeBypassPermissions} {
		if err := rt.SetPermissionMode(m); err == nil {
			t.Errorf("SetPermissionMode(%s): no error", m)
		}
	}
	if rt.PermissionMode() != permission.ModeDefault {
		t.Fatalf("a refused mode changed the mode to %s", rt.PermissionMode())
	}
	// Issue 9: nil Permissions is the default mode, which may change.
	cfg.Permissions = nil
	safe, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if m := safe.PermissionMode(); m != permission.ModeDefault {
		t.Fatalf("nil Permissions: mode %s, want default", m)
	}
	if err := safe.SetPermissionMode(permission.ModePlan); err != nil || safe.PermissionMode() != permission.ModePlan {
		t.Fatalf("nil Permissions: SetPermissionMode(plan): %v, mode %s", err, safe.PermissionMode())
	}
}
