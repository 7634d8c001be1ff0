package llmtest

import (
	"bufio"
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzDecode feeds arbitrary bodies to both decoders, the invariant checks,
// the cache accounting and the whole handler: nothing may panic, and the
// handler answers every body with JSON or an event stream.
func FuzzDecode(f *testing.F) {
	f.Add([]byte(`{"model":"m","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}`), false)
	f.Add([]byte(`{"model":"m","stream":true,"system":[{"type":"text","text":"s","cache_control":{"type":"ephemeral"}}],"tools":[{"name":"R","input_schema":{}}],"messages":[{"role":"user","content":[{"type":"text","text":"go"}]},{"role":"assistant","content":[{"type":"tool_use","id":"a","name":"R","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"a","content":[{"type":"text","text":"x","cache_control":{}}]}]}]}`), false)
	f.Add([]byte(`{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"system","content":"s"},{"role":"user","content":[{"type":"text","text":"q"}]},{"role":"assistant","tool_calls":[{"id":"c","function":{"name":"R","arguments":"{"}}]},{"role":"tool","tool_call_id":"c","content":"r"}]}`), true)
	f.Add([]byte(`{"messages":[{"role":"user","content":null}]}`), true)
	f.Add([]byte(`[]`), false)
	f.Add([]byte(``), true)
	s := newServer(WithMaxRequests(1 << 30))
	s.Script("", Text("a"), ToolUse("R", map[string]int{"x": 1}), Text("b").WithThinking("t", "s"))
	f.Fuzz(func(t *testing.T, body []byte, openai bool) {
		for _, p := range []Protocol{Anthropic, OpenAI} {
			var d *decoded
			var err error
			if p == Anthropic {
				d, err = decodeAnthropic(body)
			} else {
				d, err = decodeOpenAI(body)
			}
			if err != nil {
				continue
			}
			checkRequest(p, d)
			c := prefixCache{}
			c.anthropic(d.model, d.blocks, 0)
			c.openai(d.model, d.blocks, 0)
		}
		path := "/v1/messages"
		if openai {
			path = "/v1/chat/completions"
		}
		rec := httptest.NewRecorder()
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		s.serveHTTP(rec, req)
		ct := rec.Header().Get("Content-Type")
		switch ct {
		case "application/json":
			if rec.Code == 200 && !json.Valid(rec.Body.Bytes()) {
				t.Errorf("invalid JSON reply %q", rec.Body.Bytes())
			}
		case "text/event-stream":
		default:
			t.Errorf("content type %q", ct)
		}
		s.mu.Lock()
		s.requests, s.violations = nil, nil
		s.mu.Unlock()
	})
}

// FuzzStreamRoundTrip checks that any text, thinking and tool input
// streamed as SSE deltas joins back to exactly what was scripted.
func FuzzStreamRoundTrip(f *testing.F) {
	f.Add("hello world", "thinking…", `{"a":1}`)
	f.Add("", "", "")
	f.Add("日本語のテキスト\n\n", "data: x\n\n", `{"p":"\u2028"}`)
	f.Fuzz(func(t *testing.T, text, thinking, input string) {
		if !utf8.ValidString(text) || !utf8.ValidString(thinking) || !utf8.ValidString(input) {
			return // JSON replaces invalid UTF-8; model output is always valid

		}
		turn := Text(text).WithThinking(thinking, "sig")
		turn.parts = append(turn.parts, part{kind: partToolUse, id: "id", name: "R", input: input})
		rp := &reply{id: "msg", model: "m", parts: turn.parts, stop: turn.stopReason(), stream: true}
		var got [3]strings.Builder
		for _, ev := range anthropicEvents(rp) {
			events := splitSSE(t, ev.bytes())
			if len(events) != 1 || events[0][0] != ev.name {
				t.Fatalf("event %q framed as %q", ev.name, events)
			}
			var e struct {
				Index int `json:"index"`
				Delta struct {
					Type, Text, Thinking string
					PartialJSON          string `json:"partial_json"`
				} `json:"delta"`
			}
			if err := json.Unmarshal([]byte(events[0][1]), &e); err != nil {
				t.Fatalf("event data %q: %v", events[0][1], err)
			}
			switch e.Delta.Type {
			case "thinking_delta":
				got[0].WriteString(e.Delta.Thinking)
			case "text_delta":
				got[1].WriteString(e.Delta.Text)
			case "input_json_delta":
				got[2].WriteString(e.Delta.PartialJSON)
			}
		}
		if got[0].String() != thinking || got[1].String() != text || got[2].String() != input {
			t.Errorf("round trip: %q %q %q", got[0].String(), got[1].String(), got[2].String())
		}
		var oaiText strings.Builder
		for _, ev := range openaiEvents(rp) {
			events := splitSSE(t, ev.bytes())
			if len(events) != 1 {
				t.Fatalf("openai chunk framed as %q", events)
			}
			if events[0][1] == "[DONE]" {
				continue
			}
			var c struct {
				Choices []struct {
					Delta struct{ Content string } `json:"delta"`
				} `json:"choices"`
			}
			if err := json.Unmarshal([]byte(events[0][1]), &c); err != nil {
				t.Fatalf("chunk %q: %v", events[0][1], err)
			}
			for _, ch := range c.Choices {
				oaiText.WriteString(ch.Delta.Content)
			}
		}
		if oaiText.String() != text {
			t.Errorf("openai text %q", oaiText.String())
		}
	})
}

// splitSSE parses event-stream bytes into (event name, data) pairs.
func splitSSE(t *testing.T, b []byte) [][2]string {
	t.Helper()
	var out [][2]string
	var cur [2]string
	open := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			if open {
				out = append(out, cur)
			}
			cur, open = [2]string{}, false
		case strings.HasPrefix(line, "event: "):
			cur[0], open = line[len("event: "):], true
		case strings.HasPrefix(line, "data: "):
			cur[1], open = line[len("data: "):], true
		default:
			t.Fatalf("stray line %q", line)
		}
	}
	return out
}
