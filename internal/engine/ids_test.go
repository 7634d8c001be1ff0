package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"

	"github.com/cadre-dev/cadre/transcript"
)

// Issue 9: a session id was a path (`../../../../tmp/x` wrote outside the
// state directory). The runtime takes only UUIDs as session ids when it
// writes transcripts.
func TestSessionIDIsNotAPath(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, id := range []string{"../../../../tmp/x", "a/b", "..", "x"} {
		cfg := h.config()
		cfg.SessionID = id
		if _, err := New(cfg); !errors.Is(err, transcript.ErrBadID) {
			t.Errorf("SessionID %q: err %v, want ErrBadID", id, err)
		}
	}
	cfg := h.config()
	cfg.SessionID = "123e4567-e89b-42d3-a456-426614174000"
	if _, err := New(cfg); err != nil {
		t.Errorf("a UUID session id: %v", err)
	}
}

// Issue 9: an agent named ".." with memory: user made ~/.config/cadre a
// working directory of the agent. agentdef refuses such names when it
// loads files; a definition built in Go is refused by New.
func TestAgentNameCannotEscapeMemoryDir(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	for _, name := range []string{"..", "."} {
		cfg := h.config()
		cfg.Home = t.TempDir()
		cfg.Agents = []*agentdef.Definition{{Name: name, Description: "d", Memory: "user", Path: "evil.md"}}
		if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "memory directory") {
			t.Errorf("agent %q with memory: err %v", name, err)
		}
	}
}
