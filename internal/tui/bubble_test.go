package tui

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "charm.land/bubbletea/v2"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
)

// TestForkPromptsBubbleToTheUI: a fork runs in the background in bubble
// mode (S-7.5), so its permission prompts come to the terminal like the
// main agent's, labelled with the fork; the answer lets its call run, and
// its end reaches the idle UI as a notification.
func TestForkPromptsBubbleToTheUI(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	dir := t.TempDir()
	made := filepath.Join(dir, "forked")
	// The fork's requests carry the main conversation, so they come to
	// MAIN's key too; its directive tells them apart.
	srv.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn {
		directive, turns := -1, 0
		for i, msg := range r.Messages {
			if msg.Role == llm.RoleUser && strings.Contains(msg.Text(), "from Agent call") {
				directive, turns = i, 0
			}
			if msg.Role == llm.RoleAssistant && directive >= 0 && i > directive {
				turns++
			}
		}
		switch {
		case directive >= 0 && turns == 0:
			return llmtest.ToolUse("Bash", map[string]any{"command": "touch " + made})
		case directive >= 0:
			return llmtest.Text("FORK done")
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "make the file", "prompt": "FORK: make the file"})
		case strings.Contains(r.Messages[len(r.Messages)-1].Text(), "<task-notification>"):
			return llmtest.Text("MAIN done")
		}
		return llmtest.Text("MAIN waits")
	})
	prompts := make(chan tea.Msg, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	closed := make(chan struct{})
	defer close(closed)
	pr := &prompter{send: func(m tea.Msg) { prompts <- m }, done: closed}
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	model, err := anthropic.New(anthropic.Config{APIKey: "k", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := cadre.New(cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: dir, NoTranscript: true, ForkSubagent: true,
		Permissions: &cadre.Permissions{Mode: permission.ModeDefault, Prompter: pr}})
	if err != nil {
		t.Fatal(err)
	}
	a := &app{ctx: ctx, queue: newEventQueue(), prompter: pr, rt: rt}
	defer func() {
		if err := a.shutdown(); err != nil {
			t.Error(err)
		}
	}()
	act := a.actions()
	act.nextEvents = nil // until takes the queue
	m := newModel(config{cwd: dir, model: "claude-sonnet-4-5", mode: permission.ModeDefault, dark: true, altScreen: true}, act)
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 40})
	m.Update(tickMsg{at: time.Now()})
	typeText(m, "MAIN split the work")
	_, cmd := m.Update(keyMsg("enter"))
	runCmds(t, m, cmd)
	var msg tea.Msg
	select {
	case msg = <-prompts:
	case <-time.After(time.Minute): // bounds a failing test only
		t.Fatal("the fork's prompt never came")
	}
	pm, ok := msg.(promptMsg)
	if !ok {
		t.Fatalf("the UI got %T", msg)
	}
	m.Update(pm)
	forkID := pm.prompt.Request.AgentID
	if pm.prompt.Request.AgentType != "fork" || forkID == "" {
		t.Fatalf("the prompt came from %q %q", pm.prompt.Request.AgentType, forkID)
	}
	has(t, view(t, m), "Permission needed · fork "+forkID, "touch "+made)
	typeText(m, "1") // allow once
	until(t, m, a, func(it runItem) bool { return it.end && !it.notify })
	until(t, m, a, func(it runItem) bool { return it.watchEnd })
	if _, err := os.Stat(made); err != nil {
		t.Fatalf("the call the user allowed did not run: %v", err)
	}
	has(t, view(t, m), `notification: fork`, `"make the file" completed`, "MAIN done")
	if len(m.perm.prompts) != 0 {
		t.Fatalf("%d prompts left", len(m.perm.prompts))
	}
}
