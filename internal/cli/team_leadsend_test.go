package cli

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestLeadSendOnceAcrossKill: the lead posts a message to teammate ann
// and, in the same answer, runs a long Bash command; kill -9 while it
// runs, so the message is in the mailbox journal but the lead's tool
// results are not in its transcript. On --resume the lead's SendMessage
// reads as sent (the journal says so), not interrupted — as a rejoining
// teammate's does (TestTeamSendOnceAcrossKill) — so it does not send it
// again (its script would, as a model might); ann reads it exactly once.
func TestLeadSendOnceAcrossKill(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	resend := llmtest.Call{Name: "SendMessage", Input: map[string]any{"to": "ann", "message": "LEAD-TO-ANN: task", "summary": "task"}}
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "ann", "prompt": "MATE-ann wait", "subagent_type": "general-purpose", "name": "ann"})
		case len(r.Messages) == 3:
			return llmtest.ToolUses(resend, llmtest.Call{Name: "Bash", Input: map[string]any{"command": `touch "$CRASH_MARKER" && sleep 600`}})
		}
		if res := leadSendResult(r); res != nil && res.IsError {
			// Its send looks lost: a model would send it again.
			return llmtest.ToolUse(resend.Name, resend.Input)
		}
		return llmtest.Text("lead done")
	})
	s.ScriptFunc("MATE-ann", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("ann ok") })
	session := uuid.NewString()
	cmd, _, errb, home := cadreCmd(t, env, "", "--session-id", session, "--permission-mode", "bypassPermissions", "-p", "LEAD start")
	marker := filepath.Join(t.TempDir(), "started")
	cmd.Args = append(cmd.Args, "--add-dir", filepath.Dir(marker))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(cmd.Env, "CRASH_MARKER="+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	state := filepath.Join(home, "state", "cadre")
	// The lead's answer is in its transcript and its message in the
	// mailbox journal; its results are not written while Bash runs.
	for !exists(marker) || !journalHas(state, "LEAD-TO-ANN") || !leadTranscriptHas(state, session, "LEAD-TO-ANN") {
		select {
		case err := <-exited:
			t.Fatalf("cadre ended before the crash: %v\n%s", err, errb)
		default:
		}
		syscall.Nanosleep(&syscall.Timespec{Nsec: 5e6}, nil)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	<-exited
	before := len(s.RequestsFor("LEAD"))
	p := rerun(t, cmd, "", "-p", "--resume", session, "LEAD continue", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	if p.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	leads := s.RequestsFor("LEAD")
	if len(leads) <= before {
		t.Fatal("the lead made no request after the resume")
	}
	res := leadSendResult(leads[before])
	if res == nil || res.IsError || !strings.Contains(res.ResultText(), "Message sent") {
		t.Errorf("the lead's SendMessage after the resume reads %+v, want sent", res)
	}
	// The Bash call that was running stays interrupted.
	for _, m := range leads[before].Messages {
		if res == nil {
			break
		}
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult && b.ToolUseID != res.ToolUseID && strings.Contains(b.ResultText(), "Message sent") {
				t.Errorf("another call reads as sent: %+v", b)
			}
		}
	}
	// Ann's whole conversation holds the lead's message once.
	anns := s.RequestsFor("MATE-ann")
	at := ""
	for _, m := range anns[len(anns)-1].Messages {
		at += m.Text() + "\n"
	}
	if n := strings.Count(at, "LEAD-TO-ANN"); n != 1 {
		t.Errorf("ann read the lead's message %d times, want 1:\n%s", n, at)
	}
}

// leadSendResult is the result, in r, of the last SendMessage call of r's
// conversation; nil when it has none.
func leadSendResult(r *llmtest.Request) *llm.Block {
	id := ""
	for _, m := range r.Messages {
		for _, u := range m.ToolUses() {
			if u.Name == "SendMessage" {
				id = u.ID
			}
		}
	}
	var res *llm.Block
	for _, m := range r.Messages {
		for _, b := range m.Content {
			if b.Type == llm.BlockToolResult && b.ToolUseID == id && id != "" {
				res = &b
			}
		}
	}
	return res
}

// leadTranscriptHas reports whether the main transcript of session holds
// every one of subs.
func leadTranscriptHas(state, session string, subs ...string) bool {
	files, _ := filepath.Glob(filepath.Join(state, "projects", "*", session+".jsonl"))
	for _, f := range files {
		b, _ := os.ReadFile(f)
		ok := true
		for _, s := range subs {
			ok = ok && strings.Contains(string(b), s)
		}
		if ok {
			return true
		}
	}
	return false
}
