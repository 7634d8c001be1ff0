package cli

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/google/uuid"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/transcript"
)

// crashMidToolCall runs cadre (this test binary) with args in a new
// session whose model (some agent of it) calls Bash, and kills it with
// SIGKILL, with every process it started, while the command runs: once
// the command has started and the answer holding the call is in a
// transcript. It returns the command (its Dir and Env make later runs see
// the same project and state) and the main transcript.
func crashMidToolCall(t *testing.T, env map[string]string, session string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	args = append([]string{"--session-id", session, "--permission-mode", "bypassPermissions"}, args...)
	cmd, _, errb, home := cadreCmd(t, env, "", args...)
	marker := filepath.Join(t.TempDir(), "started")
	cmd.Args = append(cmd.Args, "--add-dir", filepath.Dir(marker))
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Env = append(cmd.Env, "CRASH_MARKER="+marker)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	work, _ := filepath.EvalSymlinks(cmd.Dir)
	path := transcript.SessionPath(filepath.Join(home, "state", "cadre"), work, session)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	// Wait (for as long as the test may run) until the command runs and
	// the call is recorded; cadre must not have ended by itself.
	for !bashCallRecorded(path) || !exists(marker) {
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
	return cmd, path
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// bashCallRecorded reports whether the session of the main transcript at
// path has a Bash call recorded, in its own or a sub-agent's transcript.
func bashCallRecorded(path string) bool {
	files, _ := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "agent-*.jsonl"))
	for _, f := range append(files, path) {
		if b, _ := os.ReadFile(f); strings.Contains(string(b), `"name":"Bash"`) {
			return true
		}
	}
	return false
}

// rerun runs cadre again in the crashed run's project and state.
func rerun(t *testing.T, crashed *exec.Cmd, stdin string, args ...string) proc {
	t.Helper()
	cmd, out, errb, _ := cadreCmd(t, nil, stdin, args...)
	cmd.Dir = crashed.Dir
	cmd.Env = append(cmd.Env[:0:0], crashed.Env...)
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	return proc{out.String(), errb.String(), code}
}

// interruptedResult checks that the conversation answers call id with an
// error result saying it was interrupted, in the user message right after
// the call.
func interruptedResult(t *testing.T, msgs []llm.Message, id string) {
	t.Helper()
	for i, m := range msgs {
		for _, u := range m.ToolUses() {
			if u.ID != id {
				continue
			}
			if i+1 >= len(msgs) {
				t.Fatalf("call %s is the last message", id)
			}
			for _, b := range msgs[i+1].Content {
				if b.Type == llm.BlockToolResult && b.ToolUseID == id {
					if !b.IsError || b.ResultText() != prompts.CallInterrupted() {
						t.Fatalf("result of %s: error %v %q", id, b.IsError, b.ResultText())
					}
					return
				}
			}
			t.Fatalf("call %s has no result in %+v", id, msgs[i+1])
		}
	}
	t.Fatalf("no call %s in %+v", id, msgs)
}

// After kill -9 during a tool call the transcript ends with the call and
// no result; --resume (print mode, stream-json as the SDK drives it)
// sends a request the API accepts: the call answered as interrupted (the
// server's invariant check fails the test otherwise).
func TestResumeAfterKillMidToolCall(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"print", "stream-json"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			s.Script("build it", llmtest.ToolUse("Bash", map[string]any{"command": `touch "$CRASH_MARKER" && sleep 600`}), llmtest.Text("resumed fine"))
			session := uuid.NewString()
			crashed, path := crashMidToolCall(t, env, session, "-p", "build it")
			entries, err := transcript.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			last := entries[len(entries)-1]
			if last.Message == nil || len(last.Message.ToolUses()) != 1 {
				t.Fatalf("the transcript does not end with the call: %+v", last)
			}
			callID := last.Message.ToolUses()[0].ID
			var p proc
			if mode == "print" {
				p = rerun(t, crashed, "", "-p", "go on", "--resume", session, "--output-format", "json")
			} else {
				p = rerun(t, crashed, `{"type":"user","message":{"role":"user","content":"go on"}}`+"\n",
					"--resume", session, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
			}
			if p.code != 0 || !strings.Contains(p.stdout, "resumed fine") {
				t.Fatalf("code %d\nstdout %s\nstderr %s", p.code, p.stdout, p.stderr)
			}
			reqs := s.Requests()
			req := reqs[len(reqs)-1]
			interruptedResult(t, req.Messages, callID)
			if got := req.LastUserText(); !strings.Contains(got, "go on") {
				t.Fatalf("last user text %q", got)
			}
			// The transcript reads back to the same conversation.
			entries, err = transcript.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			msgs := transcript.Messages(entries)
			interruptedResult(t, msgs, callID)
			if msgs[len(msgs)-1].Text() != "resumed fine" {
				t.Fatalf("transcript ends %+v", msgs[len(msgs)-1])
			}
		})
	}
}

// A crash in the middle of writing a record leaves a torn last line: a
// resume warns about it, skips it, and starts its own records on a new
// line, so the session resumes again after that.
func TestResumeAfterTornLastLine(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("remember", llmtest.Text("first"), llmtest.Text("second"), llmtest.Text("third"))
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "remember ZEBRA", "--output-format", "json")
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	session := jsonField(t, out.String(), "session_id")
	work, _ := filepath.EvalSymlinks(cmd.Dir)
	path := transcript.SessionPath(filepath.Join(home, "state", "cadre"), work, session)
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	torn := `{"type":"assistant","sessionId":"` + session + `","message":{"role":"assistant","content":[{"type":"text","text":"half a rec`
	if _, err := f.WriteString(torn); err != nil {
		t.Fatal(err)
	}
	f.Close()

	p := rerun(t, cmd, "", "-p", "what word?", "--resume", session, "--output-format", "json")
	if p.code != 0 || jsonField(t, p.stdout, "result") != "second" {
		t.Fatalf("code %d stdout %s stderr %s", p.code, p.stdout, p.stderr)
	}
	if !strings.Contains(p.stderr, "warning") || !strings.Contains(p.stderr, path) || !strings.Contains(p.stderr, "cut short") {
		t.Fatalf("no warning about the torn line: %q", p.stderr)
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), torn+"\n{") {
		t.Fatalf("the next record does not start a line of its own:\n%s", b)
	}
	p = rerun(t, cmd, "", "-p", "again?", "--resume", session, "--output-format", "json")
	if p.code != 0 || jsonField(t, p.stdout, "result") != "third" {
		t.Fatalf("second resume: code %d stdout %s stderr %s", p.code, p.stdout, p.stderr)
	}
	reqs := s.Requests()
	var texts []string
	for _, m := range reqs[len(reqs)-1].Messages {
		texts = append(texts, m.Text())
	}
	if got := strings.Join(texts, "|"); got != "remember ZEBRA|first|what word?|second|again?" {
		t.Fatalf("resumed conversation %q", got)
	}
}

// A write of the transcript fails (here: the file size limit, EFBIG, as a
// full disk fails with ENOSPC) in the middle of a record: the record is
// cut back, the run ends with an error naming the transcript and a
// complete result, and the session resumes with a request the API
// accepts.
func TestTranscriptWriteFailure(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	big := strings.Repeat("a long argument ", 600) // ~9.6 KB: past the 4 KiB limit
	s.Script("fill", llmtest.ToolUse("Read", map[string]any{"file_path": "/nonexistent/" + big[:100], "note": big}),
		llmtest.Text("done"), llmtest.Text("after resume"))
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "fill the disk", "--output-format", "json")
	// The test binary under a 4 KiB file size limit (bash counts 1 KiB
	// blocks); Go ignores SIGXFSZ, so the write fails with EFBIG.
	cmd.Args = append([]string{"bash", "-c", `ulimit -f 4 && exec "$0" "$@"`, cmd.Path}, cmd.Args[1:]...)
	cmd.Path = "/bin/bash"
	err := cmd.Run()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() == 0 {
		t.Fatalf("run: %v\nstdout %s\nstderr %s", err, out, errb)
	}
	if jsonField(t, out.String(), "subtype") != "error_during_execution" || !strings.Contains(out.String(), `"is_error":true`) {
		t.Fatalf("result %s", out)
	}
	msg := jsonField(t, out.String(), "result")
	session := jsonField(t, out.String(), "session_id")
	work, _ := filepath.EvalSymlinks(cmd.Dir)
	path := transcript.SessionPath(filepath.Join(home, "state", "cadre"), work, session)
	if !strings.Contains(msg, "transcript") || !strings.Contains(msg, path) || !strings.Contains(msg, "file too large") {
		t.Fatalf("error %q does not name the transcript and the failure", msg)
	}
	entries, torn, err := transcript.ScanFile(path)
	if err != nil || len(torn) != 0 {
		t.Fatalf("transcript after the failure: torn %v err %v", torn, err)
	}
	b, _ := os.ReadFile(path)
	if len(b) == 0 || b[len(b)-1] != '\n' || len(entries) == 0 || strings.Contains(string(b), big) {
		t.Fatalf("partial record left (%d bytes, %d entries):\n%.300s", len(b), len(entries), b)
	}
	p := rerun(t, cmd, "", "-p", "go on", "--resume", session, "--output-format", "json")
	if p.code != 0 || jsonField(t, p.stdout, "subtype") != "success" {
		t.Fatalf("resume: code %d stdout %s stderr %s", p.code, p.stdout, p.stderr)
	}
}

// agentIDs lists the sub-agents of the session whose main transcript is
// at path.
func agentIDs(t *testing.T, path string) []string {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(strings.TrimSuffix(path, ".jsonl"), "agent-*.meta.json"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []string
	for _, f := range files {
		ids = append(ids, strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "agent-"), ".meta.json"))
	}
	return ids
}

// A foreground sub-agent of an earlier process — killed in the middle of
// a tool call, or finished — is continued by SendMessage after --resume
// (S-8.2): with its whole history, and the call the crash interrupted
// answered as interrupted.
func TestSendMessageContinuesAForegroundAgentAfterResume(t *testing.T) {
	t.Parallel()
	for _, crash := range []bool{true, false} {
		name := map[bool]string{true: "killed mid tool call", false: "finished"}[crash]
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			s, env := server(t)
			spawn := llmtest.ToolUse("Agent", map[string]any{"description": "worker", "prompt": "CHILD: build", "subagent_type": "general-purpose"})
			s.Script("MAIN", spawn)
			var crashed *exec.Cmd
			var path string
			session := uuid.NewString()
			if crash {
				s.Script("CHILD", llmtest.ToolUse("Bash", map[string]any{"command": `touch "$CRASH_MARKER" && sleep 600`}), llmtest.Text("child continued"))
				crashed, path = crashMidToolCall(t, env, session, "-p", "MAIN: start")
			} else {
				s.Script("CHILD", llmtest.Text("child built it"), llmtest.Text("child continued"))
				s.Script("MAIN", llmtest.Text("first run done"))
				cmd, out, errb, home := cadreCmd(t, env, "", "-p", "MAIN: start", "--session-id", session, "--output-format", "json")
				if err := cmd.Run(); err != nil {
					t.Fatalf("%v: %s", err, errb)
				}
				if got := jsonField(t, out.String(), "result"); got != "first run done" {
					t.Fatalf("first run: %s", out)
				}
				work, _ := filepath.EvalSymlinks(cmd.Dir)
				crashed, path = cmd, transcript.SessionPath(filepath.Join(home, "state", "cadre"), work, session)
			}
			ids := agentIDs(t, path)
			if len(ids) != 1 {
				t.Fatalf("sub-agents %v", ids)
			}
			s.Script("MAIN", llmtest.ToolUse("SendMessage", map[string]any{"to": ids[0], "message": "CONTINUE with the tests", "summary": "more"}))
			s.ScriptFunc("MAIN", func(r *llmtest.Request) llmtest.Turn { return llmtest.Text("main heard it") })
			p := rerun(t, crashed, "", "-p", "MAIN: go on", "--resume", session, "--output-format", "json")
			if p.code != 0 {
				t.Fatalf("code %d stdout %s stderr %s", p.code, p.stdout, p.stderr)
			}
			var sendResult string
			for _, r := range s.RequestsFor("MAIN") {
				for _, b := range r.LastToolResults() {
					sendResult = b.ResultText()
				}
			}
			if !strings.Contains(sendResult, ids[0]) || strings.Contains(sendResult, "No agent") {
				t.Fatalf("SendMessage result %q", sendResult)
			}
			child := s.RequestsFor("CHILD")
			last := child[len(child)-1]
			if !strings.Contains(last.LastUserText(), "CONTINUE with the tests") || last.Messages[0].Text() != "CHILD: build" {
				t.Fatalf("continued child request %+v", last.Messages)
			}
			if crash {
				uses := last.Messages[1].ToolUses()
				if len(uses) != 1 {
					t.Fatalf("child history %+v", last.Messages)
				}
				interruptedResult(t, last.Messages, uses[0].ID)
			}
			if !strings.Contains(p.stdout, "main heard it") {
				t.Fatalf("result %s", p.stdout)
			}
		})
	}
}

// The Claude Agent SDK's resume option after kill -9 mid tool call: the
// SDK starts cadre with --resume over stream-json, and the request it
// leads to answers the interrupted call.
func TestSDKResumeAfterKillMidToolCall(t *testing.T) {
	t.Parallel()
	dir := sdkDir(t)
	s, env := server(t)
	s.Script("build it", llmtest.ToolUse("Bash", map[string]any{"command": `touch "$CRASH_MARKER" && sleep 600`}), llmtest.Text("resumed by the SDK"))
	session := uuid.NewString()
	crashed, path := crashMidToolCall(t, env, session, "-p", "build it")
	entries, err := transcript.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	callID := entries[len(entries)-1].Message.ToolUses()[0].ID
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	var home string
	for _, kv := range crashed.Env {
		if v, ok := strings.CutPrefix(kv, "HOME="); ok {
			home = v
		}
	}
	cmd := exec.Command("node", filepath.Join("testdata", "agentsdk", "drive.mjs"), "resume")
	cmd.Env = append(os.Environ(), "CADRE_SDK_DIR="+dir, "CADRE_EXE="+exe, "CADRE_WORK="+crashed.Dir, "CADRE_HOME="+home,
		"CADRE_BASE_URL="+s.URL(), "CADRE_RESUME="+session)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "resumed by the SDK") {
		t.Fatalf("drive.mjs resume: %v\n%s", err, out)
	}
	reqs := s.Requests()
	interruptedResult(t, reqs[len(reqs)-1].Messages, callID)
}
