package permission

import (
	"context"
	"encoding/json"
	"testing"
)

// scripted answers every prompt with one reply and counts the prompts.
type scripted struct {
	reply Reply
	n     int
}

func (s *scripted) Prompt(context.Context, Prompt) (Reply, error) { s.n++; return s.reply, nil }

// A prompter may rewrite the input of a call it allows, and grant its own
// rules for the session instead of the suggested one.
func TestReplyUpdatedInputAndRules(t *testing.T) {
	dir := t.TempDir()
	checker, err := NewChecker(Config{Mode: ModeDefault, Cwd: dir})
	if err != nil {
		t.Fatal(err)
	}
	touch := Request{Tool: "Bash", Input: json.RawMessage(`{"command":"touch a.txt"}`), Cwd: dir}
	rule, err := ParseRule("Bash(touch:*)")
	if err != nil {
		t.Fatal(err)
	}
	p := &scripted{reply: Reply{Choice: ChoiceAllowSession, UpdatedInput: json.RawMessage(`{"command":"touch b.txt"}`), Rules: []Rule{rule}}}
	s, err := NewSession(SessionConfig{Checker: checker, Prompter: p})
	if err != nil {
		t.Fatal(err)
	}
	out, err := s.Authorize(context.Background(), touch)
	if err != nil || !out.Allowed || string(out.UpdatedInput) != `{"command":"touch b.txt"}` {
		t.Fatalf("outcome %+v err %v", out, err)
	}
	// The granted rule covers another touch: no second prompt.
	out, err = s.Authorize(context.Background(), Request{Tool: "Bash", Input: json.RawMessage(`{"command":"touch c.txt"}`), Cwd: dir})
	if err != nil || !out.Allowed || p.n != 1 || out.UpdatedInput != nil {
		t.Fatalf("second outcome %+v prompts %d err %v", out, p.n, err)
	}
	if got := s.SessionRules(); len(got) != 1 || got[0].String() != "Bash(touch:*)" || got[0].Source != SourceSession {
		t.Fatalf("session rules %+v", got)
	}
}
