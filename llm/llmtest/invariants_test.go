package llmtest_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

const (
	toolRead = `{"name":"Read","description":"d","input_schema":{"type":"object"}}`
	useA     = `{"type":"tool_use","id":"tu_a","name":"Read","input":{"path":"a"}}`
	useB     = `{"type":"tool_use","id":"tu_b","name":"Read","input":{"path":"b"}}`
	resultA  = `{"type":"tool_result","tool_use_id":"tu_a","content":"ok"}`
	resultB  = `{"type":"tool_result","tool_use_id":"tu_b","content":[{"type":"text","text":"ok"}]}`
	cc       = `"cache_control":{"type":"ephemeral"}`
)

func anthBody(tools, system, messages string) string {
	b := `{"model":"m","max_tokens":5`
	if tools != "" {
		b += `,"tools":[` + tools + `]`
	}
	if system != "" {
		b += `,"system":` + system
	}
	return b + `,"messages":[` + messages + `]}`
}

func msg(role string, blocks ...string) string {
	return `{"role":"` + role + `","content":[` + strings.Join(blocks, ",") + `]}`
}

func text(s string, extra ...string) string {
	b := `{"type":"text","text":` + mustJSONString(s)
	for _, e := range extra {
		b += "," + e
	}
	return b + "}"
}

func mustJSONString(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func TestInvariants(t *testing.T) {
	cases := []struct {
		name  string
		path  string
		body  string
		wants []string // fragments of one violation; nil means no violation
	}{
		{"valid tool round trip", "/v1/messages", anthBody(toolRead, "", msg("user", text("go"))+","+msg("assistant", useA, useB)+","+msg("user", resultA, resultB)), nil},
		{"result without use", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", useA)+","+msg("user", resultA, resultB)),
			[]string{"messages[2]", "tool_result tu_b has no tool_use"}},
		{"unanswered use", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", useA, useB)+","+msg("user", resultA)),
			[]string{"messages[1]", "tool_use tu_b (Read) is not answered"}},
		{"use answered two messages later", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", useA)+","+msg("user", text("wait"))+","+msg("assistant", text("ok"))+","+msg("user", resultA)),
			[]string{"tool_use tu_a (Read) is not answered"}},
		{"trailing unanswered use", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", useA)),
			[]string{"tool_use tu_a (Read) is not answered"}},
		{"duplicate result", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", useA)+","+msg("user", resultA, resultA)),
			[]string{"tool_result tu_a appears twice"}},
		{"starts with assistant", "/v1/messages", anthBody("", "", msg("assistant", text("hi"))+","+msg("user", text("go"))),
			[]string{"messages[0]", "starts with \"assistant\""}},
		{"two user messages", "/v1/messages", anthBody("", "", msg("user", text("a"))+","+msg("user", text("b"))),
			[]string{"messages[1]", "two user messages in a row"}},
		{"empty text block", "/v1/messages", anthBody("", "", msg("user", text("a"), text(""))),
			[]string{"messages[0].content[1]", "empty text block"}},
		{"whitespace text block", "/v1/messages", anthBody("", "", msg("user", text(" \n"))),
			[]string{"empty text block"}},
		{"empty string content", "/v1/messages", anthBody("", "", `{"role":"user","content":""}`),
			[]string{"empty text content"}},
		{"empty content array", "/v1/messages", anthBody("", "", msg("user")+","+msg("assistant", text("x"))+","+msg("user", text("y"))),
			[]string{"messages[0]: empty content"}},
		{"empty prefill is fine", "/v1/messages", anthBody("", "", msg("user", text("x"))+","+msg("assistant")), nil},
		{"empty system block", "/v1/messages", anthBody("", `[{"type":"text","text":""}]`, msg("user", text("x"))),
			[]string{"system[0]: empty text block"}},
		{"empty text in tool result", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", useA)+","+msg("user", `{"type":"tool_result","tool_use_id":"tu_a","content":[{"type":"text","text":""}]}`)),
			[]string{"content[0].content[0]: empty text block"}},
		{"four breakpoints", "/v1/messages", anthBody(`{"name":"Read","input_schema":{},`+cc+`}`, `[{"type":"text","text":"s",`+cc+`}]`, msg("user", text("a", cc), text("b", cc))), nil},
		{"five breakpoints", "/v1/messages", anthBody(`{"name":"Read","input_schema":{},`+cc+`}`, `[{"type":"text","text":"s",`+cc+`}]`, msg("user", text("a", cc), text("b", cc), text("c", cc))),
			[]string{"5 cache_control breakpoints"}},
		{"duplicate tool names", "/v1/messages", anthBody(toolRead+","+toolRead, "", msg("user", text("x"))),
			[]string{`tool name "Read" is offered twice`}},
		{"tool input not an object", "/v1/messages", anthBody("", "", msg("user", text("go"))+","+msg("assistant", `{"type":"tool_use","id":"tu_a","name":"Read","input":"{\"path\":"}`)+","+msg("user", resultA)),
			[]string{"tool_use tu_a input is not a JSON object"}},

		{"openai valid", "/v1/chat/completions", `{"model":"m","tools":[{"type":"function","function":{"name":"Read"}}],"messages":[` +
			`{"role":"system","content":"s"},{"role":"user","content":"go"},` +
			`{"role":"assistant","content":null,"tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"{}"}},{"id":"c2","type":"function","function":{"name":"Read","arguments":"{\"a\":1}"}}]},` +
			`{"role":"tool","tool_call_id":"c1","content":"x"},{"role":"tool","tool_call_id":"c2","content":"y"},{"role":"user","content":"more"}]}`, nil},
		{"openai tool message without call", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"},{"role":"tool","tool_call_id":"c9","content":"x"}]}`,
			[]string{"tool_result c9 has no tool_use"}},
		{"openai unanswered call", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"{}"}}]},{"role":"user","content":"next"}]}`,
			[]string{"tool_use c1 (Read) is not answered"}},
		{"openai invalid arguments", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":"go"},` +
			`{"role":"assistant","tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"{\"a\":"}}]},{"role":"tool","tool_call_id":"c1","content":"x"}]}`,
			[]string{"tool call c1 arguments are not a JSON object"}},
		{"openai empty user content", "/v1/chat/completions", `{"model":"m","messages":[{"role":"user","content":""}]}`,
			[]string{"empty user content"}},
		{"openai duplicate tools", "/v1/chat/completions", `{"model":"m","tools":[{"type":"function","function":{"name":"A"}},{"type":"function","function":{"name":"A"}}],"messages":[{"role":"user","content":"x"}]}`,
			[]string{`tool name "A" is offered twice`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s := newServer(t)
			s.ScriptFunc("", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("ok") })
			res := post(t, s, tc.path, tc.body)
			if res.status != 200 {
				t.Fatalf("status %d: %s", res.status, res.body)
			}
			if tc.wants == nil {
				noViolations(t, s)
				return
			}
			wantViolation(t, s, tc.wants...)
		})
	}
}

func TestInvariantsOnOpenAIView(t *testing.T) {
	s := newServer(t)
	s.Script("", llmtest.Text("ok"))
	post(t, s, "/v1/chat/completions", `{"model":"m","messages":[{"role":"developer","content":"dev"},{"role":"user","content":"go"},`+
		`{"role":"assistant","content":"calling","tool_calls":[{"id":"c1","type":"function","function":{"name":"Read","arguments":"nope"}}]},`+
		`{"role":"tool","tool_call_id":"c1","content":[{"type":"text","text":"res"}]}]}`)
	r := s.Requests()[0]
	if r.System != "dev" || len(r.Messages) != 3 {
		t.Fatalf("view %+v", r)
	}
	use := r.Messages[1].Content[1]
	if string(use.Input) != "{}" || use.InvalidInput != "nope" {
		t.Errorf("tool use %+v", use)
	}
	if res := r.Messages[2].Content[0]; res.ToolUseID != "c1" || res.ResultText() != "res" {
		t.Errorf("tool result %+v", res)
	}
}
