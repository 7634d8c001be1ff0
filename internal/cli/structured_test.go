package cli

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

const answerSchema = `{"type":"object","properties":{"answer":{"type":"string"},"confidence":{"type":"number","minimum":0,"maximum":1}},"required":["answer","confidence"]}`

// toolResultText is the text of the request's tool result for call n.
func toolResultText(t *testing.T, req *llmtest.Request) (string, bool) {
	t.Helper()
	res := req.LastToolResults()
	if len(res) != 1 {
		t.Fatalf("tool results %+v", res)
	}
	var b strings.Builder
	for _, c := range res[0].Content {
		b.WriteString(c.Text)
	}
	return b.String() + res[0].Text, res[0].IsError
}

func TestStructuredOutputJSON(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("",
		llmtest.ToolUse("StructuredOutput", map[string]any{"answer": 42, "confidence": 3}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"answer": "forty-two", "confidence": 0.9}))
	p := runCadre(t, env, "", "-p", "answer as JSON", "--output-format", "json", "--json-schema", answerSchema)
	if p.code != 0 {
		t.Fatalf("code %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d requests, want 2: a matching call ends the turn", len(reqs))
	}
	tool := slices.IndexFunc(reqs[0].Tools, func(sp llm.ToolSpec) bool { return sp.Name == "StructuredOutput" })
	if tool < 0 {
		t.Fatalf("no StructuredOutput tool offered: %v", reqs[0].ToolNames())
	}
	var got, want any
	_ = json.Unmarshal(reqs[0].Tools[tool].InputSchema, &got)
	_ = json.Unmarshal([]byte(answerSchema), &want)
	if gb, _ := json.Marshal(got); string(gb) != func() string { b, _ := json.Marshal(want); return string(b) }() {
		t.Fatalf("input schema %s, want the caller's %s", reqs[0].Tools[tool].InputSchema, answerSchema)
	}
	// The mismatch went back with both errors and their paths.
	text, isErr := toolResultText(t, reqs[1])
	if !isErr || !strings.Contains(text, "- at /answer: got number, want string") || !strings.Contains(text, "- at /confidence: maximum: got 3, want 1") {
		t.Fatalf("tool result (error %v):\n%s", isErr, text)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, p.stdout)
	}
	so, _ := res["structured_output"].(map[string]any)
	if res["subtype"] != "success" || res["is_error"] != false || so["answer"] != "forty-two" || so["confidence"] != 0.9 || res["num_turns"] != float64(2) {
		t.Fatalf("result %v", res)
	}
}

func TestStructuredOutputStreamJSONAndReminder(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	// The model first answers in prose: it is asked for the call.
	s.Script("", llmtest.Text("The answer is yes."), llmtest.ToolUse("StructuredOutput", map[string]any{"answer": "yes", "confidence": 1}))
	p := runCadre(t, env, "", "-p", "answer", "--output-format", "stream-json", "--verbose", "--json-schema", answerSchema)
	if p.code != 0 {
		t.Fatalf("code %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	reqs := s.Requests()
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "You MUST call the StructuredOutput tool") {
		t.Fatalf("%d requests; last user text %q", len(reqs), reqs[len(reqs)-1].LastUserText())
	}
	res := lastResult(t, p.stdout)
	so, _ := res["structured_output"].(map[string]any)
	if res["subtype"] != "success" || so["answer"] != "yes" {
		t.Fatalf("result %v", res)
	}
	if !strings.Contains(p.stdout, `"tools":[`) || !strings.Contains(p.stdout, `"StructuredOutput"`) {
		t.Fatalf("init does not list StructuredOutput:\n%s", p.stdout)
	}
}

func TestStructuredOutputRetriesExhausted(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["MAX_STRUCTURED_OUTPUT_RETRIES"] = "2"
	s.Script("",
		llmtest.ToolUse("StructuredOutput", map[string]any{"answer": "no confidence"}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"confidence": 0.5}))
	p := runCadre(t, env, "", "-p", "answer", "--output-format", "json", "--json-schema", answerSchema)
	if p.code != ExitFailed {
		t.Fatalf("code %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	if n := len(s.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2 (two attempts)", n)
	}
	var res map[string]any
	if err := json.Unmarshal([]byte(p.stdout), &res); err != nil {
		t.Fatalf("%v: %s", err, p.stdout)
	}
	if res["subtype"] != "error_max_structured_output_retries" || res["is_error"] != true || res["terminal_reason"] != "structured_output_retry_exhausted" {
		t.Fatalf("result %v", res)
	}
	if _, ok := res["structured_output"]; ok {
		t.Fatalf("a failed run carries structured_output: %v", res)
	}
}

func TestStructuredOutputBadSchema(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ schema, want string }{
		{`{"type":"array","items":{}}`, `invalid --json-schema: the root must have "type": "object"`},
		{`{"type":"object"`, "invalid --json-schema: not JSON"},
		{`{"type":"object","properties":{"a":{"minimum":"x"}}}`, "invalid --json-schema:"},
	} {
		p := runCadre(t, map[string]string{"ANTHROPIC_API_KEY": "k"}, "", "-p", "go", "--json-schema", tc.schema)
		if p.code != ExitUsage || !strings.Contains(p.stderr, tc.want) {
			t.Errorf("%s: code %d stderr %s", tc.schema, p.code, p.stderr)
		}
	}
	p := runCadre(t, map[string]string{"ANTHROPIC_API_KEY": "k", "MAX_STRUCTURED_OUTPUT_RETRIES": "none"}, "", "-p", "go", "--json-schema", answerSchema)
	if p.code != ExitUsage || !strings.Contains(p.stderr, `invalid MAX_STRUCTURED_OUTPUT_RETRIES "none"`) {
		t.Errorf("code %d stderr %s", p.code, p.stderr)
	}
}

// TestTypedSubagentStreamJSON: a sub-agent defined with --agents and an
// outputSchema answers wrongly, then validly; its task_notification
// carries the object. A second one given output_schema in the Agent call
// never complies and ends with the failure subtype after
// MAX_STRUCTURED_OUTPUT_RETRIES attempts.
func TestTypedSubagentStreamJSON(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["MAX_STRUCTURED_OUTPUT_RETRIES"] = "2"
	agents := `{"rater":{"description":"rates","prompt":"Rate it.","outputSchema":` + answerSchema + `}}`
	s.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "rate", "prompt": "RATER-1: rate it", "subagent_type": "rater"}),
		llmtest.ToolUse("Agent", map[string]any{"description": "rate again", "prompt": "RATER-2: rate it", "subagent_type": "general-purpose",
			"output_schema": json.RawMessage(answerSchema)}),
		llmtest.Text("done"))
	s.Script("RATER-1", llmtest.ToolUse("StructuredOutput", map[string]any{"answer": 1}),
		llmtest.ToolUse("StructuredOutput", map[string]any{"answer": "good", "confidence": 0.5}))
	s.Script("RATER-2", llmtest.Text("no"), llmtest.Text("still no"))
	p := runCadre(t, env, "", "-p", "MAIN: rate", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", "--agents", agents)
	if p.code != 0 {
		t.Fatalf("code %d\n%s\n%s", p.code, p.stdout, p.stderr)
	}
	var notes []map[string]any
	for line := range strings.SplitSeq(strings.TrimSpace(p.stdout), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		if m["subtype"] == "task_notification" {
			notes = append(notes, m)
		}
	}
	if len(notes) != 2 {
		t.Fatalf("%d task notifications:\n%s", len(notes), p.stdout)
	}
	first, _ := notes[0]["cadre"].(map[string]any)
	so, _ := first["structured_output"].(map[string]any)
	if notes[0]["status"] != "completed" || so["answer"] != "good" || so["confidence"] != 0.5 {
		t.Fatalf("first notification %v", notes[0])
	}
	second, _ := notes[1]["cadre"].(map[string]any)
	if notes[1]["status"] != "failed" || second["subtype"] != "error_max_structured_output_retries" || second["structured_output"] != nil {
		t.Fatalf("second notification %v", notes[1])
	}
	if n := len(s.RequestsFor("RATER-2")); n != 2 {
		t.Fatalf("RATER-2 made %d requests, want 2 attempts", n)
	}
}
