package sdkproto

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/permission"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// recorder is a Handler that records what it gets and answers requests
// with answer.
type recorder struct {
	mu       sync.Mutex
	users    []UserMessage
	requests []string
	answer   func(subtype string, req json.RawMessage) (any, error)
}

func (r *recorder) Request(_ context.Context, subtype string, req json.RawMessage) (any, error) {
	r.mu.Lock()
	r.requests = append(r.requests, subtype)
	r.mu.Unlock()
	if r.answer == nil {
		return nil, nil
	}
	return r.answer(subtype, req)
}

func (r *recorder) User(m UserMessage) {
	r.mu.Lock()
	r.users = append(r.users, m)
	r.mu.Unlock()
}

// program is the SDK's side of a connection: it writes lines to the CLI
// and reads what the CLI writes.
type program struct {
	in    *io.PipeWriter // the CLI's stdin
	out   *bufio.Scanner // the CLI's stdout
	conn  *Conn
	serve chan error
}

func newProgram(t *testing.T, h Handler) *program {
	t.Helper()
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	p := &program{in: inW, out: bufio.NewScanner(outR), conn: NewConn(inR, outW), serve: make(chan error, 1)}
	go func() { p.serve <- p.conn.Serve(context.Background(), h) }()
	t.Cleanup(func() {
		inW.Close()
		// Drain what the CLI still writes so Serve's goroutines end.
		go func() {
			for p.out.Scan() {
			}
		}()
		<-p.serve
		outW.Close()
	})
	return p
}

func (p *program) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.in, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

// next reads the CLI's next line as a map.
func (p *program) next(t *testing.T) map[string]any {
	t.Helper()
	if !p.out.Scan() {
		t.Fatalf("no line from the CLI: %v", p.out.Err())
	}
	var m map[string]any
	if err := json.Unmarshal(p.out.Bytes(), &m); err != nil {
		t.Fatalf("CLI wrote %q: %v", p.out.Text(), err)
	}
	return m
}

func TestServeUserMessagesAndRequests(t *testing.T) {
	h := &recorder{answer: func(subtype string, req json.RawMessage) (any, error) {
		if subtype == "set_model" {
			return nil, errors.New("no such model")
		}
		var in Initialize
		if err := json.Unmarshal(req, &in); err != nil {
			return nil, err
		}
		return map[string]any{"agents": len(in.Agents), "system": in.SystemPrompt.Text()}, nil
	}}
	p := newProgram(t, h)
	p.send(t, `{"type":"control_request","request_id":"r1","request":{"subtype":"initialize","systemPrompt":["be brief",""],"agents":{"a":{"description":"d","prompt":"p"}}}}`)
	resp := p.next(t)
	body := resp["response"].(map[string]any)
	if resp["type"] != "control_response" || body["subtype"] != "success" || body["request_id"] != "r1" {
		t.Fatalf("response %v", resp)
	}
	if got := body["response"].(map[string]any); got["agents"] != float64(1) || got["system"] != "be brief" {
		t.Fatalf("payload %v", got)
	}
	p.send(t, `{"type":"control_request","request_id":"r2","request":{"subtype":"set_model","model":"x"}}`)
	if body := p.next(t)["response"].(map[string]any); body["subtype"] != "error" || body["error"] != "no such model" || body["request_id"] != "r2" {
		t.Fatalf("error response %v", body)
	}
	p.send(t, `{"type":"keep_alive"}`)
	p.send(t, `{"type":"user","session_id":"","message":{"role":"user","content":"first"},"parent_tool_use_id":null}`)
	p.send(t, `{"type":"user","uuid":"u2","message":{"role":"user","content":[{"type":"text","text":"second"},{"type":"text","text":"part"}]}}`)
	p.in.Close()
	if err := <-p.serve; err != nil {
		t.Fatal(err)
	}
	p.serve <- nil // for the cleanup
	if len(h.users) != 2 || h.users[0].Text != "first" || h.users[1].Text != "second\n\npart" || h.users[1].UUID != "u2" {
		t.Fatalf("users %+v", h.users)
	}
}

func TestServeRejectsBadLines(t *testing.T) {
	tests := map[string]string{
		"not json":           `{"type":`,
		"unknown type":       `{"type":"telepathy"}`,
		"request without id": `{"type":"control_request","request":{"subtype":"interrupt"}}`,
		"image block":        `{"type":"user","message":{"role":"user","content":[{"type":"image","source":{}}]}}`,
		"assistant role":     `{"type":"user","message":{"role":"assistant","content":"x"}}`,
	}
	for name, l := range tests {
		t.Run(name, func(t *testing.T) {
			c := NewConn(strings.NewReader("\n"+l+"\n"), io.Discard)
			err := c.Serve(context.Background(), &recorder{})
			if err == nil || !strings.Contains(err.Error(), "stdin line 2") {
				t.Fatalf("err %v", err)
			}
		})
	}
	long := `{"type":"user","message":{"role":"user","content":"` + strings.Repeat("x", MaxLineBytes) + `"}}`
	if err := NewConn(strings.NewReader(long), io.Discard).Serve(context.Background(), &recorder{}); err == nil || !strings.Contains(err.Error(), "longer than") {
		t.Fatalf("long line: %v", err)
	}
}

func TestRequestRoundTrip(t *testing.T) {
	p := newProgram(t, &recorder{})
	got := make(chan json.RawMessage, 1)
	errc := make(chan error, 1)
	go func() {
		r, err := p.conn.MCPMessage(context.Background(), "probe", json.RawMessage(`{"jsonrpc":"2.0","id":1,"method":"tools/list"}`))
		got <- r
		errc <- err
	}()
	req := p.next(t)
	inner := req["request"].(map[string]any)
	if req["type"] != "control_request" || inner["subtype"] != "mcp_message" || inner["server_name"] != "probe" {
		t.Fatalf("request %v", req)
	}
	p.send(t, `{"type":"control_response","response":{"subtype":"success","request_id":"`+req["request_id"].(string)+`","response":{"mcp_response":{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}}}}`)
	if r, err := <-got, <-errc; err != nil || string(r) != `{"jsonrpc":"2.0","id":1,"result":{"tools":[]}}` {
		t.Fatalf("reply %s err %v", r, err)
	}

	// An error answer.
	go func() {
		_, err := p.conn.CallHook(context.Background(), "hook_0", json.RawMessage(`{}`), "t1")
		errc <- err
	}()
	req = p.next(t)
	p.send(t, `{"type":"control_response","response":{"subtype":"error","request_id":"`+req["request_id"].(string)+`","error":"callback threw"}}`)
	if err := <-errc; err == nil || !strings.Contains(err.Error(), "callback threw") || !strings.Contains(err.Error(), "hook_0") {
		t.Fatalf("err %v", err)
	}

	// A request the caller gives up on is withdrawn.
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_, err := p.conn.CallHook(ctx, "hook_1", json.RawMessage(`{}`), "")
		errc <- err
	}()
	req = p.next(t)
	cancel()
	if c := p.next(t); c["type"] != "control_cancel_request" || c["request_id"] != req["request_id"] {
		t.Fatalf("cancel %v", c)
	}
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}

	// When the program's input ends, waiting requests fail.
	go func() {
		_, err := p.conn.CallHook(context.Background(), "hook_2", json.RawMessage(`{}`), "")
		errc <- err
	}()
	p.next(t)
	p.in.Close()
	if err := <-errc; !errors.Is(err, ErrClosed) {
		t.Fatalf("err %v", err)
	}
	if _, err := p.conn.CallHook(context.Background(), "hook_3", nil, ""); !errors.Is(err, ErrClosed) {
		t.Fatalf("after close: %v", err)
	}
}

func TestPrompterAnswers(t *testing.T) {
	rule, _ := permission.ParseRule("Bash(touch:*)")
	prompt := permission.Prompt{
		Request:   permission.Request{Tool: "Bash", Input: json.RawMessage(`{"command":"touch a"}`), ToolUseID: "toolu_1", AgentID: "a1"},
		Decision:  permission.Decision{Behavior: permission.Ask, Reason: "Bash needs approval in default mode"},
		Suggested: rule, HasSuggestion: true,
	}
	tests := []struct {
		name   string
		answer string
		check  func(t *testing.T, r permission.Reply, interrupted bool)
	}{
		{"allow unchanged", `{"behavior":"allow","updatedInput":{"command":"touch a"}}`, func(t *testing.T, r permission.Reply, _ bool) {
			if r.Choice != permission.ChoiceAllowOnce || r.UpdatedInput != nil || r.Rules != nil {
				t.Fatalf("reply %+v", r)
			}
		}},
		{"allow rewritten and always", `{"behavior":"allow","updatedInput":{"command":"touch b"},"updatedPermissions":[{"type":"addRules","rules":[{"toolName":"Bash","ruleContent":"touch:*"}],"behavior":"allow","destination":"session"},{"type":"setMode","mode":"acceptEdits","destination":"session"}]}`,
			func(t *testing.T, r permission.Reply, _ bool) {
				if r.Choice != permission.ChoiceAllowSession || string(r.UpdatedInput) != `{"command":"touch b"}` || len(r.Rules) != 1 || r.Rules[0].String() != "Bash(touch:*)" {
					t.Fatalf("reply %+v", r)
				}
			}},
		{"deny and interrupt", `{"behavior":"deny","message":"not here","interrupt":true}`, func(t *testing.T, r permission.Reply, interrupted bool) {
			if r.Choice != permission.ChoiceDeny || r.Message != "not here" || !interrupted {
				t.Fatalf("reply %+v interrupted %v", r, interrupted)
			}
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := newProgram(t, &recorder{})
			interrupted := false
			pr := &Prompter{Conn: p.conn, Interrupt: func() { interrupted = true }}
			type result struct {
				r   permission.Reply
				err error
			}
			done := make(chan result, 1)
			go func() {
				r, err := pr.Prompt(context.Background(), prompt)
				done <- result{r, err}
			}()
			req := p.next(t)
			inner := req["request"].(map[string]any)
			if inner["subtype"] != "can_use_tool" || inner["tool_name"] != "Bash" || inner["tool_use_id"] != "toolu_1" || inner["agent_id"] != "a1" {
				t.Fatalf("request %v", inner)
			}
			sug := inner["permission_suggestions"].([]any)[0].(map[string]any)
			if sug["type"] != "addRules" || sug["rules"].([]any)[0].(map[string]any)["ruleContent"] != "touch:*" {
				t.Fatalf("suggestions %v", sug)
			}
			p.send(t, `{"type":"control_response","response":{"subtype":"success","request_id":"`+req["request_id"].(string)+`","response":`+tt.answer+`}}`)
			select {
			case res := <-done:
				if res.err != nil {
					t.Fatal(res.err)
				}
				tt.check(t, res.r, interrupted)
			case <-time.After(30 * time.Second):
				t.Fatal("no reply")
			}
		})
	}
}

func TestHookRegistrations(t *testing.T) {
	var in Initialize
	err := json.Unmarshal([]byte(`{"subtype":"initialize","hooks":{"PreToolUse":[{"matcher":"Bash","hookCallbackIds":["hook_0","hook_1"],"timeout":5}],"Stop":[{"hookCallbackIds":["hook_2"]}]}}`), &in)
	if err != nil {
		t.Fatal(err)
	}
	got := in.HookRegistrations()
	want := []HookRegistration{
		{Event: "PreToolUse", Matcher: "Bash", CallbackID: "hook_0", Timeout: 5 * time.Second},
		{Event: "PreToolUse", Matcher: "Bash", CallbackID: "hook_1", Timeout: 5 * time.Second},
		{Event: "Stop", CallbackID: "hook_2"},
	}
	if len(got) != len(want) {
		t.Fatalf("got %+v", got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("registration %d: %+v, want %+v", i, got[i], want[i])
		}
	}
}

func FuzzServe(f *testing.F) {
	for _, s := range []string{
		`{"type":"user","message":{"role":"user","content":"hi"}}`,
		`{"type":"control_request","request_id":"1","request":{"subtype":"interrupt"}}`,
		`{"type":"control_response","response":{"subtype":"success","request_id":"x"}}`,
		`{"type":"user","message":{"content":[{"type":"text","text":"a"}]}}`,
		`{"type":"control_request","request_id":"2","request":{"subtype":"initialize","systemPrompt":"x","hooks":{"A":[{"hookCallbackIds":["h"]}]}}}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in string) {
		c := NewConn(strings.NewReader(in), io.Discard)
		_ = c.Serve(context.Background(), &recorder{answer: func(subtype string, req json.RawMessage) (any, error) {
			var init Initialize
			if json.Unmarshal(req, &init) == nil {
				_ = init.HookRegistrations()
				_ = init.SystemPrompt.Text()
			}
			return nil, nil
		}})
	})
}
