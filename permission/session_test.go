package permission

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"testing"
)

func newSession(t *testing.T, f fixture, mode Mode, p Prompter, bg bool, log *DenialLog, rules ...string) *Session {
	t.Helper()
	var rs []Rule
	for _, s := range rules {
		b, body, _ := cut(s)
		r, err := ParseRule(f.expand(body))
		if err != nil {
			t.Fatal(err)
		}
		r.Behavior, r.Source = Behavior(b), f.cwd+"/.cadre/settings.json"
		rs = append(rs, r)
	}
	c, err := NewChecker(Config{Mode: mode, Cwd: f.cwd, Home: f.home, Rules: rs})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(SessionConfig{Checker: c, Prompter: p, AgentID: "a0123456789abcdef", AgentType: "worker", Background: bg, Log: log})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func writeReq(f fixture, name string) Request {
	return Request{Tool: "Write", Input: json.RawMessage(fileIn("file_path", f.cwd+"/"+name)), Cwd: f.cwd, ToolUseID: "toolu_1"}
}

func TestSessionHeadlessDenies(t *testing.T) {
	f := newFixture(t)
	log := &DenialLog{}
	s := newSession(t, f, ModeDefault, nil, false, log)
	ctx := context.Background()
	out, err := s.Authorize(ctx, writeReq(f, "new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Allowed {
		t.Fatal("headless write allowed")
	}
	for _, want := range []string{"Write", "headless", "Edit(./new.txt)", "permissions.allow", "--allowedTools"} {
		if !strings.Contains(out.Message, want) {
			t.Errorf("message %q lacks %q", out.Message, want)
		}
	}
	if strings.Contains(out.Message, "do not retry") {
		t.Errorf("first denial already says stop: %q", out.Message)
	}
	out, _ = s.Authorize(ctx, Request{Tool: "Write", Input: json.RawMessage(" {\"file_path\": \"" + f.cwd + "/new.txt\"} "), Cwd: f.cwd})
	if out.Allowed || !strings.Contains(out.Message, "do not retry") || !strings.Contains(out.Message, "report") {
		t.Errorf("second identical denial: %q", out.Message)
	}
	den := s.Denials()
	if len(den) != 2 || den[0].AgentID != "a0123456789abcdef" || den[0].AgentType != "worker" || den[0].ToolName != "Write" || den[0].ToolUseID != "toolu_1" || !strings.Contains(string(den[0].ToolInput), "new.txt") {
		t.Errorf("denials = %+v", den)
	}
	if len(log.All()) != 2 {
		t.Errorf("run log has %d denials", len(log.All()))
	}
	// A read inside the working directory needs no prompt.
	out, _ = s.Authorize(ctx, Request{Tool: "Read", Input: json.RawMessage(fileIn("file_path", "a.txt")), Cwd: f.cwd})
	if !out.Allowed {
		t.Errorf("read denied: %s", out.Message)
	}
}

func TestSessionDenyRuleMessage(t *testing.T) {
	f := newFixture(t)
	s := newSession(t, f, ModeBypassPermissions, nil, false, nil, "deny:Bash(rm:*)")
	out, err := s.Authorize(context.Background(), Request{Tool: "Bash", Input: json.RawMessage(bashIn("rm -rf build")), Cwd: f.cwd})
	if err != nil || out.Allowed {
		t.Fatalf("rm: %+v %v", out, err)
	}
	for _, want := range []string{"Bash(rm:*)", ".cadre/settings.json", "deny rule"} {
		if !strings.Contains(out.Message, want) {
			t.Errorf("message %q lacks %q", out.Message, want)
		}
	}
	if out.Decision.Rule != "Bash(rm:*)" {
		t.Errorf("decision = %+v", out.Decision)
	}
}

func TestTerminalPrompter(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	t.Run("always for session", func(t *testing.T) {
		var out bytes.Buffer
		p := NewTerminalPrompter(strings.NewReader("2\n"), &out)
		s := newSession(t, f, ModeDefault, p, false, nil)
		req := Request{Tool: "Bash", Input: json.RawMessage(bashIn("npm test --watch")), Cwd: f.cwd}
		o, err := s.Authorize(ctx, req)
		if err != nil || !o.Allowed {
			t.Fatalf("first: %+v %v", o, err)
		}
		if !strings.Contains(out.String(), "Bash(npm test:*)") || !strings.Contains(out.String(), "command: npm test --watch") {
			t.Errorf("prompt shows %q", out.String())
		}
		if got := s.SessionRules(); len(got) != 1 || got[0].String() != "Bash(npm test:*)" || got[0].Source != SourceSession {
			t.Errorf("session rules = %+v", got)
		}
		// Input is exhausted: a second prompt would deny, so this must
		// pass on the session rule.
		o, _ = s.Authorize(ctx, Request{Tool: "Bash", Input: json.RawMessage(bashIn("npm test")), Cwd: f.cwd})
		if !o.Allowed || o.Decision.Rule != "Bash(npm test:*)" || o.Decision.Source != SourceSession {
			t.Errorf("second: %+v", o)
		}
		if got := s.Effective().Rules; len(got) != 1 {
			t.Errorf("effective rules = %+v", got)
		}
	})
	t.Run("once then deny", func(t *testing.T) {
		var out bytes.Buffer
		p := NewTerminalPrompter(strings.NewReader("1\nwhat\n3\n"), &out)
		s := newSession(t, f, ModeDefault, p, false, nil)
		req := Request{Tool: "Bash", Input: json.RawMessage(bashIn("curl x")), Cwd: f.cwd}
		if o, _ := s.Authorize(ctx, req); !o.Allowed {
			t.Errorf("once: %+v", o)
		}
		o, _ := s.Authorize(ctx, req)
		if o.Allowed || !strings.Contains(o.Message, "user denied") {
			t.Errorf("deny: %+v", o)
		}
		if !strings.Contains(out.String(), "Please answer") {
			t.Errorf("no re-prompt after a bad answer: %q", out.String())
		}
	})
	t.Run("eof denies", func(t *testing.T) {
		p := NewTerminalPrompter(strings.NewReader(""), &bytes.Buffer{})
		s := newSession(t, f, ModeDefault, p, false, nil)
		if o, _ := s.Authorize(ctx, writeReq(f, "x")); o.Allowed {
			t.Error("allowed at EOF")
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		c, cancel := context.WithCancel(ctx)
		cancel()
		s := newSession(t, f, ModeDefault, NewTerminalPrompter(strings.NewReader("1\n"), &bytes.Buffer{}), false, nil)
		if _, err := s.Authorize(c, writeReq(f, "x")); err == nil {
			t.Error("no error for a cancelled context")
		}
	})
}

type recordingPrompter struct {
	mu      sync.Mutex
	prompts []Prompt
	reply   Choice
}

func (r *recordingPrompter) Prompt(_ context.Context, p Prompt) (Reply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.prompts = append(r.prompts, p)
	return Reply{Choice: r.reply}, nil
}

func TestBackgroundAndBubble(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	root := &recordingPrompter{reply: ChoiceAllowOnce}
	log := &DenialLog{}

	// A background agent never prompts, even with a terminal available.
	bg := newSession(t, f, ModeDefault, root, true, log)
	o, err := bg.Authorize(ctx, writeReq(f, "x"))
	if err != nil || o.Allowed {
		t.Fatalf("background write: %+v %v", o, err)
	}
	if !strings.Contains(o.Message, "background") || len(root.prompts) != 0 {
		t.Errorf("message %q, prompts %d", o.Message, len(root.prompts))
	}
	if d := log.All(); len(d) != 1 || !d[0].Background || d[0].AgentID != "a0123456789abcdef" {
		t.Errorf("denials = %+v", d)
	}

	// A background agent in bubble mode asks the root, labelled.
	bub := newSession(t, f, ModeBubble, BubblePrompter{Parent: root}, true, log)
	o, _ = bub.Authorize(ctx, writeReq(f, "y"))
	if !o.Allowed || len(root.prompts) != 1 || root.prompts[0].Label != "agent worker (a0123456789abcdef)" {
		t.Errorf("bubble: %+v prompts %+v", o, root.prompts)
	}

	// AutoDenyPrompter and NoPrompter always deny.
	for _, p := range []Prompter{AutoDenyPrompter{}, NoPrompter{}, BubblePrompter{}} {
		r, err := p.Prompt(ctx, Prompt{})
		if err != nil || r.Choice != ChoiceDeny || r.Message == "" {
			t.Errorf("%T: %+v %v", p, r, err)
		}
	}
}

func TestSessionConcurrent(t *testing.T) {
	f := newFixture(t)
	root := &recordingPrompter{reply: ChoiceAllowSession}
	s := newSession(t, f, ModeDefault, root, false, &DenialLog{})
	var wg sync.WaitGroup
	for i := 0; i < 16; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			cmd := "npm test"
			if i%2 == 0 {
				cmd = "rm -rf x"
			}
			if _, err := s.Authorize(context.Background(), Request{Tool: "Bash", Input: json.RawMessage(bashIn(cmd)), Cwd: f.cwd}); err != nil {
				t.Error(err)
			}
		}(i)
	}
	wg.Wait()
	if len(s.SessionRules()) == 0 {
		t.Error("no session rules recorded")
	}
}

func TestNewSessionNeedsChecker(t *testing.T) {
	if _, err := NewSession(SessionConfig{}); err == nil {
		t.Error("no error")
	}
}

// answerer answers every prompt with reply (ok says whether it decided)
// and counts the prompts it saw.
type answerer struct {
	reply Reply
	ok    bool
	err   error
	seen  []Prompt
}

func (a *answerer) Answer(_ context.Context, p Prompt) (Reply, bool, error) {
	a.seen = append(a.seen, p)
	return a.reply, a.ok, a.err
}

// TestSessionAnswererDecidesForBackground: a background agent's call that
// would be asked about goes to the Answerer (the PermissionRequest hooks)
// before it is denied for want of a prompt; its decision stands, and
// without one the denial is the background denial.
func TestSessionAnswererDecidesForBackground(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		name       string
		a          *answerer
		allowed    bool
		message    string
		background bool
	}{
		{"allow", &answerer{reply: Reply{Choice: ChoiceAllowOnce}, ok: true}, true, "", false},
		{"deny", &answerer{reply: Reply{Choice: ChoiceDeny, Message: "hook says no"}, ok: true}, false, "hook says no", false},
		{"no decision", &answerer{}, false, "background", true},
		{"failure", &answerer{err: errors.New("boom")}, false, "boom", false},
	}
	for _, tt := range tests {
		c, err := NewChecker(Config{Mode: ModeDefault, Cwd: f.cwd, Home: f.home})
		if err != nil {
			t.Fatal(err)
		}
		s, err := NewSession(SessionConfig{Checker: c, AgentID: "a1", AgentType: "worker", Background: true, Answerer: tt.a})
		if err != nil {
			t.Fatal(err)
		}
		out, err := s.Authorize(context.Background(), writeReq(f, "new.txt"))
		if err != nil {
			t.Fatal(err)
		}
		if out.Allowed != tt.allowed || !strings.Contains(out.Message, tt.message) {
			t.Errorf("%s: %+v", tt.name, out)
		}
		if len(tt.a.seen) != 1 || tt.a.seen[0].Request.AgentID != "a1" || !tt.a.seen[0].Request.Background {
			t.Errorf("%s: answerer saw %+v", tt.name, tt.a.seen)
		}
		den := s.Denials()
		if tt.allowed != (len(den) == 0) || (len(den) == 1 && den[0].Background != tt.background) {
			t.Errorf("%s: denials %+v", tt.name, den)
		}
	}
	// A foreground agent's prompt goes to its Prompter, not the Answerer.
	a := &answerer{reply: Reply{Choice: ChoiceAllowOnce}, ok: true}
	c, err := NewChecker(Config{Mode: ModeDefault, Cwd: f.cwd, Home: f.home})
	if err != nil {
		t.Fatal(err)
	}
	s, err := NewSession(SessionConfig{Checker: c, Answerer: a})
	if err != nil {
		t.Fatal(err)
	}
	if out, err := s.Authorize(context.Background(), writeReq(f, "new.txt")); err != nil || out.Allowed || len(a.seen) != 0 {
		t.Errorf("foreground: %+v %v, answerer saw %d", out, err, len(a.seen))
	}
}
