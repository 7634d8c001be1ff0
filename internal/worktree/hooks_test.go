package worktree

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"sync"
	"testing"
)

// dirHooks stands in for the WorktreeCreate/WorktreeRemove hooks: it makes
// and removes plain directories, as a hook for another version control
// system would.
type dirHooks struct {
	root    string
	mu      sync.Mutex
	removed []HookRequest
	fail    error
}

func (h *dirHooks) CreateWorktree(_ context.Context, req HookRequest) (string, error) {
	if h.fail != nil {
		return "", h.fail
	}
	p := filepath.Join(h.root, req.Name)
	return p, os.Mkdir(p, 0o755)
}

func (h *dirHooks) RemoveWorktree(_ context.Context, req HookRequest) error {
	h.mu.Lock()
	h.removed = append(h.removed, req)
	h.mu.Unlock()
	return os.RemoveAll(req.Path)
}

func TestHookSeam(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	parent := t.TempDir() // not a git repository: the hooks do not need one
	h := &dirHooks{root: t.TempDir()}
	m, err := New(Config{Creator: h, Remover: h})
	if err != nil {
		t.Fatal(err)
	}
	l, err := m.Create(ctx, Request{Dir: parent, AgentID: "h1", SessionID: "s"})
	if err != nil {
		t.Fatal(err)
	}
	info := l.Info()
	if !info.Hooked || info.Path != filepath.Join(h.root, "agent-h1") || info.Branch != "" {
		t.Errorf("info = %+v", info)
	}
	child, _ := l.Acquire()
	if o, _ := l.Release(ctx); o.State != Held {
		t.Errorf("first release = %+v, want held", o)
	}
	o, err := child.Release(ctx)
	if err != nil || o.State != Removed {
		t.Errorf("last release = %+v, %v", o, err)
	}
	if len(h.removed) != 1 || h.removed[0].Path != info.Path || h.removed[0].AgentID != "h1" || h.removed[0].Dir != parent {
		t.Errorf("remove hook got %+v", h.removed)
	}

	// Without a remove hook, cadre cannot judge the directory: kept.
	keepOnly, _ := New(Config{Creator: h})
	l, err = keepOnly.Create(ctx, Request{Dir: parent, AgentID: "h2"})
	if err != nil {
		t.Fatal(err)
	}
	if o, err := l.Release(ctx); err != nil || o.State != Kept || o.Reason == "" || !exists(o.Path) {
		t.Errorf("release without a remove hook = %+v, %v", o, err)
	}

	h.fail = errors.New("the hook exited 1")
	if _, err := m.Create(ctx, Request{Dir: parent, AgentID: "h3"}); err == nil {
		t.Error("a failing create hook did not fail Create")
	}
}
