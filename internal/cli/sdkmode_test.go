package cli

import (
	"bufio"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The SDK protocol through the command, driven by a scripted program on
// stdin (the real SDK drives it in agentsdk_test.go): control requests are
// answered in order, the initialize's agents and system prompt and a
// set_model apply to the turn, user messages are replayed, partial
// messages stream, and the session ends when stdin does.
func TestSDKProtocolThroughTheCommand(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	// Both turns belong to key FIRST: the conversation's first message.
	s.Script("FIRST", llmtest.Text("first answer"), llmtest.Text("second answer"))
	stdin := strings.Join([]string{
		`{"type":"control_request","request_id":"init-1","request":{"subtype":"initialize","systemPrompt":[""],"appendSystemPrompt":"APPENDED BY THE PROGRAM","agents":{"tester":{"description":"Tests things.","prompt":"You test."}}}}`,
		`{"type":"control_request","request_id":"model-1","request":{"subtype":"set_model","model":"haiku"}}`,
		`{"type":"user","session_id":"","uuid":"u-1","message":{"role":"user","content":"FIRST: go"},"parent_tool_use_id":null}`,
		`{"type":"control_request","request_id":"mode-1","request":{"subtype":"set_permission_mode","mode":"acceptEdits"}}`,
		`{"type":"control_request","request_id":"bad-1","request":{"subtype":"rewind_files","user_message_id":"x"}}`,
		`{"type":"user","message":{"role":"user","content":[{"type":"text","text":"SECOND: go"}]}}`,
	}, "\n") + "\n"
	p := runCadre(t, env, stdin, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose",
		"--replay-user-messages", "--include-partial-messages")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s\n%s", p.code, p.stderr, p.stdout)
	}
	var kinds []string
	responses := map[string]map[string]any{}
	var inits []map[string]any
	var states []string
	sc := bufio.NewScanner(strings.NewReader(p.stdout))
	for sc.Scan() {
		var m map[string]any
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		k, _ := m["type"].(string)
		if st, ok := m["subtype"].(string); ok {
			k += "/" + st
		}
		if m["isReplay"] == true {
			k += "(replay)"
		}
		switch m["type"] {
		case "control_response":
			body := m["response"].(map[string]any)
			responses[body["request_id"].(string)] = body
			continue
		case "stream_event":
			k += ":" + m["event"].(map[string]any)["type"].(string)
		}
		if k == "system/session_state_changed" {
			states = append(states, m["state"].(string))
			continue
		}
		if k == "system/init" {
			inits = append(inits, m)
		}
		kinds = append(kinds, k)
	}
	for _, id := range []string{"init-1", "model-1", "mode-1"} {
		if responses[id]["subtype"] != "success" {
			t.Fatalf("response to %s: %v", id, responses[id])
		}
	}
	if r := responses["bad-1"]; r["subtype"] != "error" || !strings.Contains(r["error"].(string), "rewind_files") {
		t.Fatalf("unsupported request answered %v", r)
	}
	initResp := responses["init-1"]["response"].(map[string]any)
	found := false
	for _, a := range initResp["agents"].([]any) {
		found = found || a.(map[string]any)["name"] == "tester"
	}
	if !found || initResp["claude_code_version"] == "" || initResp["current_permission_mode"] != "default" {
		t.Fatalf("initialize response %v", initResp)
	}
	want := "user(replay) system/init stream_event:message_start stream_event:content_block_start"
	if got := strings.Join(kinds, " "); !strings.HasPrefix(got, want) || !strings.Contains(got, "stream_event:message_stop assistant result/success user(replay) system/init") {
		t.Fatalf("lines:\n%s", got)
	}
	// The session runs from the first message until nothing runs.
	if strings.Join(states, " ") != "running idle" {
		t.Fatalf("session states %v", states)
	}
	// The mode change came before the second message, so the second turn
	// has it; the first may or may not (it may start before the change is
	// read, as in Claude Code).
	if len(inits) != 2 || inits[1]["permissionMode"] != "acceptEdits" || inits[0]["model"] != "claude-haiku-4-5" {
		t.Fatalf("inits %v", inits)
	}
	reqs := s.RequestsFor("FIRST")
	if len(reqs) != 2 {
		t.Fatalf("%d requests", len(reqs))
	}
	if reqs[0].Model != "claude-haiku-4-5" || !strings.HasSuffix(reqs[0].System, "APPENDED BY THE PROGRAM") || !strings.Contains(reqs[0].Tools[0].Description, "tester") {
		t.Fatalf("first request model %s", reqs[0].Model)
	}
	// The second turn continues the conversation.
	if m := reqs[1].Messages; len(m) != 3 || m[1].Text() != "first answer" || m[2].Text() != "SECOND: go" {
		t.Fatalf("second request %+v", m)
	}
}
