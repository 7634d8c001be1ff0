package tui_test

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestTerminalUITeammatePermission (issue 25): with agent teams on, the
// lead starts teammate wes; wes's Bash call needs permission, the dialog
// in the terminal names wes, the agents tree shows wes waiting for
// approval meanwhile, the user allows it with a key, the command runs and
// its result reaches wes's next request.
func TestTerminalUITeammatePermission(t *testing.T) {
	bin, srv, p := setup(t)
	p.env = append(p.env, "CADRE_AGENT_TEAMS=1")
	srv.ScriptFunc("tui-team-lead", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", map[string]any{"description": "mate wes", "subagent_type": "general-purpose",
				"name": "wes", "prompt": "tui-mate-wes: create mate.txt"})
		}
		return llmtest.Text("The lead waits for wes.")
	})
	second := make(chan struct{})
	var once sync.Once
	srv.ScriptFunc("tui-mate-wes", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Bash", map[string]any{"command": "touch mate.txt && echo wes-touched", "description": "Create the mate file"})
		}
		once.Do(func() { close(second) })
		return llmtest.Text("wes is done.")
	})

	tm := p.launch(t, bin)
	tm.waitFor("Ask anything", "default mode")
	tm.typeText("tui-team-lead: start wes")
	tm.keys("Enter")
	screen := tm.waitFor("Permission needed", "touch mate.txt", "1. Yes, allow once")
	head := ""
	for _, l := range strings.Split(screen, "\n") {
		if strings.Contains(l, "Permission needed") {
			head = l
		}
	}
	if !strings.Contains(head, "wes") {
		t.Errorf("the permission dialog does not name the teammate wes: %q", head)
	}
	// The tree's row for wes says it waits for approval (a wide window:
	// the row's label is at its end; the tree may cut it).
	tm.tmux("resize-window", "-t", "e2e", "-x", "220")
	tm.waitFor("@wes (session-", ") waiting for app") // "approval" may be cut
	if _, err := os.Stat(filepath.Join(p.dir, "mate.txt")); err == nil {
		t.Fatal("the teammate's command ran before it was allowed")
	}
	tm.keys("1")
	tm.waitGone("Permission needed")

	// The teammate's next request carries the command's result (the
	// limit only bounds a failing test).
	select {
	case <-second:
	case <-time.After(waitLimit):
		t.Fatal("the teammate never made its next request after the allowed call")
	}
	reqs := srv.RequestsFor("tui-mate-wes")
	if len(reqs) < 2 {
		t.Fatalf("%d teammate requests, want 2", len(reqs))
	}
	res := reqs[1].LastToolResults()
	if len(res) != 1 || res[0].IsError || !strings.Contains(res[0].ResultText(), "wes-touched") {
		t.Errorf("the teammate's second request lacks the allowed command's output: %+v", res)
	}
	if _, err := os.Stat(filepath.Join(p.dir, "mate.txt")); err != nil {
		t.Errorf("the allowed command did not run: %v", err)
	}
	tm.keys("C-c")
	tm.waitFor("Press Ctrl+C again to exit")
	tm.keys("C-c")
	tm.waitFor("cadre exited 0")
}
