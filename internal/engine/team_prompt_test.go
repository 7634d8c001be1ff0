package engine

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// teammateStates is the states the teammate id shows in evs' task
// progress, in order, with the teammate's tool ends marked "tool_end".
func teammateStates(evs []run.Event, id string) []string {
	var out []string
	for _, ev := range evs {
		switch {
		case ev.Type == run.EventTaskProgress && ev.Task != nil && ev.Task.AgentID == id && ev.Task.Teammate != nil:
			out = append(out, ev.Task.Teammate.State)
		case ev.Type == run.EventToolEnd && ev.AgentID == id:
			out = append(out, "tool_end")
		}
	}
	return out
}

// TestTeammatePromptShowsWaiting: while a teammate's permission prompt
// waits for a person its state is "waiting for approval" (task progress:
// stream-json and the TUI tree read it), and working again once it is
// answered, before its tool ends; headless, where nobody is asked, it
// never shows waiting. The roster kept for --resume says working.
func TestTeammatePromptShowsWaiting(t *testing.T) {
	t.Parallel()
	for _, headless := range []bool{false, true} {
		h := newHarness(t)
		target := filepath.Join(h.dir, "out.txt")
		h.srv.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Agent", teamCall("wes", "MATE-wes write").Input)
			}
			return llmtest.Text("lead ok")
		})
		h.srv.ScriptFunc("MATE-wes", func(r *llmtest.Request) llmtest.Turn {
			if len(r.Messages) == 1 {
				return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "x"})
			}
			return llmtest.Text("wes idle")
		})
		cfg := teamConfig(h)
		cfg.Permissions = &Permissions{Mode: permission.ModeDefault}
		var roster []string
		p := &statePrompter{}
		if !headless {
			p.roster = func() string { return readRoster(t, cfg.StateDir) }
			cfg.Permissions.Prompter = p
		}
		rt := newRuntime(t, cfg)
		evs, _, err := runAll(t, context.Background(), rt, "LEAD go")
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, drainNotifications(t, rt)...)
		var id string
		for _, info := range rt.Tasks() {
			id = info.ID
		}
		states := strings.Join(teammateStates(evs, id), " > ")
		if headless {
			if strings.Contains(states, "waiting") {
				t.Errorf("headless: states %s", states)
			}
		} else {
			want := "waiting for approval > working > tool_end"
			if !strings.Contains(states, want) {
				t.Errorf("states %s, want %s in them", states, want)
			}
			p.mu.Lock()
			roster = p.rosters
			p.mu.Unlock()
			if len(roster) != 1 || !strings.Contains(roster[0], `"state": "working"`) {
				t.Errorf("team.json while asking: %q", roster)
			}
		}
		if err := rt.Close(); err != nil {
			t.Error(err)
		}
	}
}

// statePrompter allows every prompt, keeping team.json as it was while
// the prompt waited.
type statePrompter struct {
	roster  func() string
	mu      sync.Mutex
	rosters []string
}

func (p *statePrompter) Prompt(_ context.Context, pr permission.Prompt) (permission.Reply, error) {
	r := p.roster()
	p.mu.Lock()
	p.rosters = append(p.rosters, r)
	p.mu.Unlock()
	return permission.Reply{Choice: permission.ChoiceAllowOnce}, nil
}

// readRoster is the text of the team.json under dir ("" when none).
func readRoster(t *testing.T, dir string) string {
	var text string
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err == nil && d.Name() == "team.json" {
			b, rerr := os.ReadFile(path)
			text = string(b)
			return rerr
		}
		return err
	})
	if err != nil {
		t.Error(err)
	}
	return text
}
