package temporalexec

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/internal/engine/executor/executortest"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// bgParent scripts a remote agent (key parent) that starts a background
// sub-agent (key kid) which waits for the file gate, and ends its own turn
// once its call returned; the gate is made while the parent's model
// answers that turn, so the sub-agent ends after it. The parent answers
// done once it reads a notification.
func bgParent(srv *llmtest.Server, parent, kid, gate string, open bool) {
	srv.Script(parent, llmtest.ToolUse("Agent", map[string]any{"description": "kid", "prompt": kid + " wait for the gate", "run_in_background": true}))
	srv.ScriptFunc(parent, func(r *llmtest.Request) llmtest.Turn {
		if strings.Contains(r.LastUserText(), "<task-notification>") {
			return llmtest.Text("PARENT-DONE")
		}
		for _, b := range r.LastToolResults() {
			if strings.Contains(b.ResultText(), "async_launched") {
				if open {
					_ = os.WriteFile(gate, nil, 0o644)
				}
				return llmtest.Text("waiting for the kid")
			}
		}
		return llmtest.Turn{}
	})
	srv.Script(kid, llmtest.ToolUse("Bash", map[string]any{"command": fmt.Sprintf("while [ ! -f %q ]; do sleep 0.05; done; echo KID-SAW-GATE", gate)}),
		llmtest.Text("KID-REPORT"))
}

// A background Agent call inside a remote agent returns at once
// (async_launched) and runs as a child workflow; its end reaches the
// parent as one task notification at its next round — here after the
// parent's model had ended its turn, which waits for it instead of
// ending the parent without it.
func TestRemoteBackgroundSubagentNotifiesItsParent(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	bgParent(srv, "BGPARENT", "BGKID", filepath.Join(dir, "gate"), true)
	x := startHuge(t, srv)
	req := request(dir, executortest.Child{Prompt: "BGPARENT start a kid", Description: "parent", ToolUseID: "toolu_bgp", Background: true},
		fmt.Sprintf("bgp%d-%d", os.Getpid(), agents.Add(1)))
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	res, err := h.Wait(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if res.Status != task.Completed || res.Text != "PARENT-DONE" {
		t.Fatalf("parent result %s %q %s", res.Status, res.Text, res.Error)
	}
	reqs := srv.RequestsFor("BGPARENT")
	if len(reqs) != 3 {
		t.Fatalf("the parent made %d model requests, want 3 (call, end of turn, the notification)", len(reqs))
	}
	if got := reqs[1].LastToolResults(); len(got) != 1 || !strings.Contains(got[0].ResultText(), "async_launched") {
		t.Fatalf("the background Agent call returned %v", got)
	}
	kidID := req.AgentID + ".toolu_"
	last := reqs[2].LastUserText()
	if strings.Count(last, "<task-notification>") != 1 || !strings.Contains(last, "KID-REPORT") || !strings.Contains(last, "<task-id>"+kidID) {
		t.Fatalf("the parent's third request reads %q", last)
	}
	var started, completed int
	for ev, err := range h.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(ev.AgentID, kidID) {
			continue
		}
		switch ev.Type {
		case run.EventTaskStarted:
			started++
		case run.EventTaskCompleted:
			completed++
			if ev.Subagent.Status != task.Completed || ev.Subagent.Text != "KID-REPORT" {
				t.Fatalf("kid's completion %+v", ev.Subagent)
			}
		}
	}
	if started != 1 || completed != 1 {
		t.Fatalf("kid started %d times, completed %d times", started, completed)
	}
	if n, err := x.Live(context.Background()); err != nil || n != 0 {
		t.Fatalf("live %d, %v", n, err)
	}
}

// Stopping a remote agent that waits for its background sub-agent stops
// the sub-agent too: once Stop returns nothing of the tree runs, and the
// sub-agent's end (killed) is among the parent's events.
func TestStoppingARemoteAgentStopsItsBackgroundSubagent(t *testing.T) {
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	dir := t.TempDir()
	bgParent(srv, "BGSTOP", "BGSTOPKID", filepath.Join(dir, "never"), false)
	x := startHuge(t, srv)
	req := request(dir, executortest.Child{Prompt: "BGSTOP start a kid", Description: "parent", ToolUseID: "toolu_bgs", Background: true},
		fmt.Sprintf("bgs%d-%d", os.Getpid(), agents.Add(1)))
	h, err := x.Start(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	// Wait until the parent's model ended its turn with the kid running
	// (its second answer; the kid's own events join the parent's at its
	// end).
	answers := 0
	for ev, err := range h.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == run.EventAssistant && ev.AgentID == req.AgentID {
			if answers++; answers == 2 {
				break
			}
		}
	}
	if err := h.Stop(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n, err := x.Live(context.Background()); err != nil || n != 0 {
		t.Fatalf("live after stop %d, %v", n, err)
	}
	res, err := h.Wait(context.Background())
	if err != nil || res.Status != task.Killed {
		t.Fatalf("parent %+v, %v", res, err)
	}
	var killed int
	for ev, err := range h.Events() {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == run.EventTaskCompleted && strings.HasPrefix(ev.AgentID, req.AgentID+".") && ev.Subagent.Status == task.Killed {
			killed++
		}
	}
	if killed != 1 {
		t.Fatalf("%d killed ends of the kid among the parent's events", killed)
	}
}
