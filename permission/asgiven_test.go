package permission

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
)

// sdkPrompter answers every prompt with a reply in the SDKs' form, as a
// program's canUseTool or a permission-prompt tool does.
type sdkPrompter struct{ raw string }

func (p sdkPrompter) Prompt(_ context.Context, pr Prompt) (Reply, error) {
	return ParseSDKReply(json.RawMessage(p.raw), pr.Request.Input, nil)
}

// Issue 29: a deny message from canUseTool (or an MCP permission-prompt
// tool) reaches the model as given, not spliced into cadre's sentence; a
// deny without a message still gets cadre's explanation. It is a denial
// all the same.
func TestDenyMessageAsGiven(t *testing.T) {
	f := newFixture(t)
	const msg = "Nope: writes go through the review bot."
	s := newSession(t, f, ModeDefault, sdkPrompter{`{"behavior":"deny","message":"` + msg + `"}`}, false, nil)
	out, err := s.Authorize(context.Background(), writeReq(f, "new.txt"))
	if err != nil {
		t.Fatal(err)
	}
	if out.Allowed || out.Message != msg {
		t.Errorf("message %q, want exactly %q", out.Message, msg)
	}
	if len(s.Denials()) != 1 {
		t.Errorf("denials %+v", s.Denials())
	}
	s = newSession(t, f, ModeDefault, sdkPrompter{`{"behavior":"deny"}`}, false, nil)
	out, _ = s.Authorize(context.Background(), writeReq(f, "new.txt"))
	if out.Allowed || !strings.Contains(out.Message, "Permission denied") || !strings.Contains(out.Message, "permission callback denied") {
		t.Errorf("deny without a message: %q", out.Message)
	}
}

// Issue 29: in a workspace that is not trusted, a denial's hint names the
// user's settings file or a flag — never the workspace's .cadre/settings.json,
// which would be ignored.
func TestDenialHintUntrustedWorkspace(t *testing.T) {
	f := newFixture(t)
	c, err := NewChecker(Config{Mode: ModeDefault, Cwd: f.cwd, Home: f.home})
	if err != nil {
		t.Fatal(err)
	}
	for _, untrusted := range []bool{false, true} {
		s, err := NewSession(SessionConfig{Checker: c, UntrustedWorkspace: untrusted})
		if err != nil {
			t.Fatal(err)
		}
		out, _ := s.Authorize(context.Background(), writeReq(f, "new.txt"))
		names := strings.Contains(out.Message, ".cadre/settings.json")
		if untrusted && (names || !strings.Contains(out.Message, "~/.config/cadre/settings.json") || !strings.Contains(out.Message, "--allowedTools")) {
			t.Errorf("untrusted: %q", out.Message)
		}
		if !untrusted && !names {
			t.Errorf("trusted: %q does not name the project settings file", out.Message)
		}
	}
}
