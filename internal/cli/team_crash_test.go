package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestTeamResumeAfterKill: kill -9 of a headless run mid-team — ann runs
// a long Bash command, ben went idle after writing to her, so ann has
// unread mail — then `cadre -p --resume ID`: both rejoin with their
// names (in_process_teammate tasks), ann is told the session was
// interrupted and reads ben's message exactly once, ben, idle with no
// mail, rests without a request (until something wakes it:
// TestTeamIdleRejoinWakesOnMail), and the run ends once the lead is done
// and both are idle.
func TestTeamResumeAfterKill(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "ann", "prompt": "MATE-ann build", "subagent_type": "general-purpose", "name": "ann"}},
				llmtest.Call{Name: "Agent", Input: map[string]any{"description": "ben", "prompt": "MATE-ben help", "subagent_type": "general-purpose", "name": "ben"}})
		}
		return llmtest.Text("lead waits")
	})
	s.ScriptFunc("MATE-ann", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Bash", map[string]any{"command": `touch "$CRASH_MARKER" && sleep 600`})
		}
		return llmtest.Text("ann carries on")
	})
	s.ScriptFunc("MATE-ben", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "ann", "message": "BEN-TO-ANN: use make", "summary": "hint"})
		}
		return llmtest.Text("ben idle")
	})
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
	// Until ann's command runs and ben's message and idle notice are
	// journaled (the mailbox journal is synced before SendMessage
	// returns).
	for !exists(marker) || !journalHas(state, "BEN-TO-ANN", "idle_notification") {
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
	bensBefore := len(s.RequestsFor("MATE-ben"))
	p := rerun(t, cmd, "", "-p", "--resume", session, "LEAD continue", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	if p.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	for _, name := range []string{`"name":"ann"`, `"name":"ben"`} {
		if !strings.Contains(p.stdout, name) || !strings.Contains(p.stdout, "in_process_teammate") {
			t.Errorf("resumed stream lacks teammate %s:\n%s", name, p.stdout)
		}
	}
	anns := s.RequestsFor("MATE-ann")
	last := anns[len(anns)-1]
	text := ""
	for _, m := range last.Messages {
		text += m.Text() + "\n"
	}
	if n := strings.Count(text, "BEN-TO-ANN"); n != 1 {
		t.Errorf("ann's last request holds ben's message %d times, want 1:\n%s", n, text)
	}
	if !strings.Contains(text, "The session was interrupted") {
		t.Errorf("ann was not told the session was interrupted:\n%s", text)
	}
	// Issue 25's cost: an idle teammate with no mail rejoins at rest.
	if bens := s.RequestsFor("MATE-ben"); len(bens) != bensBefore {
		t.Errorf("ben made %d requests after the resume, want none: %s", len(bens)-bensBefore, bens[len(bens)-1].LastUserText())
	}
	// The lead's conversation holds no message of the team twice.
	leads := s.RequestsFor("LEAD")
	lt := ""
	for _, m := range leads[len(leads)-1].Messages {
		lt += m.Text()
	}
	if strings.Count(lt, "BEN-TO-ANN") != 0 {
		t.Errorf("ben's message to ann reached the lead")
	}
}

// journalHas reports whether some mailbox journal below state holds
// every one of subs.
func journalHas(state string, subs ...string) bool {
	files, _ := filepath.Glob(filepath.Join(state, "projects", "*", "*", "mailbox.jsonl"))
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

// TestTeamIdleRejoinWakesOnMail: kill -9 once teammate ben went idle,
// then --resume with a lead that writes to ben: ben rejoins at rest and
// makes exactly one request, woken by the lead's message, which holds the
// note that the session was resumed and the message once.
func TestTeamIdleRejoinWakesOnMail(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	s.ScriptFunc("MATE-ben", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("ben idle") })
	session := uuid.NewString()
	cmd, _, errb, home := cadreCmd(t, env, "", "--session-id", session, "-p", "LEAD start")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	// The run would end once ben is idle: the lead's answer to ben's
	// idle notice is held until the kill.
	hold := make(chan struct{})
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "ben", "prompt": "MATE-ben help", "subagent_type": "general-purpose", "name": "ben"})
		case strings.Contains(r.LastUserText(), "LEAD continue"):
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "ben", "message": "LEAD-TO-BEN: one more thing", "summary": "more"})
		case strings.Contains(r.LastUserText(), "idle_notification"):
			<-hold // killed meanwhile
		}
		return llmtest.Text("lead waits")
	})
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	state := filepath.Join(home, "state", "cadre")
	for !journalHas(state, "idle_notification") || len(s.RequestsFor("MATE-ben")) == 0 {
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
	close(hold)
	before := len(s.RequestsFor("MATE-ben"))
	p := rerun(t, cmd, "", "-p", "--resume", session, "LEAD continue", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	bens := s.RequestsFor("MATE-ben")
	if len(bens) != before+1 {
		t.Fatalf("ben made %d requests after the resume, want 1", len(bens)-before)
	}
	woke := bens[len(bens)-1].LastUserText()
	if !strings.Contains(woke, "The session was resumed") || strings.Count(woke, "LEAD-TO-BEN") != 1 {
		t.Errorf("ben's request after the resume: %s", woke)
	}
}

// TestTeamSendOnceAcrossKill: teammate ann posts a message to the lead
// and, in the same answer, runs a long Bash command; kill -9 while it
// runs, so the message is in the mailbox journal but ann's tool results
// are not in her transcript. On --resume ann's SendMessage reads as sent
// (the journal says so), not interrupted, so she does not send it again
// (her script would, as a model might); the lead reads it exactly once.
func TestTeamSendOnceAcrossKill(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUse("Agent", map[string]any{"description": "ann", "prompt": "MATE-ann report", "subagent_type": "general-purpose", "name": "ann"})
		}
		return llmtest.Text("lead waits")
	})
	s.ScriptFunc("MATE-ann", func(r *llmtest.Request) llmtest.Turn {
		if len(r.Messages) == 1 {
			return llmtest.ToolUses(
				llmtest.Call{Name: "SendMessage", Input: map[string]any{"to": "team-lead", "message": "ANN-TO-LEAD: report", "summary": "report"}},
				llmtest.Call{Name: "Bash", Input: map[string]any{"command": `touch "$CRASH_MARKER" && sleep 600`}})
		}
		if res := sendResult(r); res != nil && res.IsError {
			// Its send looks lost: a model would send it again.
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "team-lead", "message": "ANN-TO-LEAD: report", "summary": "report"})
		}
		return llmtest.Text("ann done")
	})
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
	for !exists(marker) || !journalHas(state, "ANN-TO-LEAD") {
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
	before := len(s.RequestsFor("MATE-ann"))
	p := rerun(t, cmd, "", "-p", "--resume", session, "LEAD continue", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions")
	if p.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	anns := s.RequestsFor("MATE-ann")
	if len(anns) <= before {
		t.Fatal("ann made no request after the resume")
	}
	res := sendResult(anns[before])
	if res == nil || res.IsError || !strings.Contains(res.ResultText(), "Message sent") {
		t.Errorf("ann's SendMessage after the resume reads %+v, want sent", res)
	}
	// The lead's whole conversation holds ann's message once.
	leads := s.RequestsFor("LEAD")
	lt := ""
	for _, m := range leads[len(leads)-1].Messages {
		lt += m.Text() + "\n"
	}
	if n := strings.Count(lt, "ANN-TO-LEAD"); n != 1 {
		t.Errorf("the lead read ann's message %d times, want 1:\n%s", n, lt)
	}
}

// sendResult is the result of the SendMessage call the request answers,
// nil when it answers none.
func sendResult(r *llmtest.Request) *llm.Block {
	if len(r.Messages) < 2 {
		return nil
	}
	prev := r.Messages[len(r.Messages)-2]
	for _, u := range prev.ToolUses() {
		if u.Name != "SendMessage" {
			continue
		}
		for _, b := range r.LastToolResults() {
			if b.ToolUseID == u.ID {
				return &b
			}
		}
	}
	return nil
}

// TestTeamApprovedModeAcrossKill: teammate pat, started in plan mode,
// has its plan approved with permissionMode acceptEdits and goes idle;
// kill -9, then --resume (headless, default mode: nobody to ask): the
// lead asks pat to write a file, and pat's Write runs, in acceptEdits as
// approved (team.json keeps the mode), where default would deny it.
func TestTeamApprovedModeAcrossKill(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AGENT_TEAMS"] = "1"
	session := uuid.NewString()
	cmd, _, errb, home := cadreCmd(t, env, "", "--session-id", session, "-p", "LEAD start")
	target := filepath.Join(cmd.Dir, "pat.txt")
	hold := make(chan struct{})
	s.ScriptFunc("LEAD", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Agent", map[string]any{"description": "pat", "prompt": "MATE-pat plan", "subagent_type": "general-purpose", "name": "pat", "mode": "plan"})
		case strings.Contains(last, "plan_approval_request"):
			id := requestIDRe.FindStringSubmatch(last)
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "pat", "message": map[string]any{"type": "plan_approval_response", "request_id": id[1], "approve": true, "permissionMode": "acceptEdits"}})
		case strings.Contains(last, "LEAD continue"):
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "pat", "message": "LEAD-TO-PAT: write it now", "summary": "write"})
		case strings.Contains(last, "idle_notification") && strings.Contains(last, "pat approved"):
			<-hold // killed meanwhile
		}
		return llmtest.Text("lead waits")
	})
	s.ScriptFunc("MATE-pat", func(r *llmtest.Request) llmtest.Turn {
		last := r.LastUserText()
		switch {
		case len(r.Messages) == 1:
			return llmtest.ToolUse("SendMessage", map[string]any{"to": "team-lead", "message": map[string]any{"type": "plan_approval_request", "plan": "PLAN"}})
		case strings.Contains(last, "LEAD-TO-PAT"):
			return llmtest.ToolUse("Write", map[string]any{"file_path": target, "content": "after the resume"})
		case strings.Contains(last, `"approved":true`):
			return llmtest.Text("pat approved")
		}
		return llmtest.Text("pat idle")
	})
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	state := filepath.Join(home, "state", "cadre")
	for !journalHas(state, "idle_notification", "pat approved") {
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
	close(hold)
	p := rerun(t, cmd, "", "-p", "--resume", session, "LEAD continue")
	if p.code != 0 {
		t.Fatalf("resume exit %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	pats := s.RequestsFor("MATE-pat")
	res := pats[len(pats)-1].LastToolResults()
	if _, err := os.Stat(target); err != nil {
		t.Errorf("pat's Write after the resume did not run (%v); pat read %+v", err, res)
	}
}

// requestIDRe finds a request id in a protocol message.
var requestIDRe = regexp.MustCompile(`"request_id":"([^"]+)"`)
