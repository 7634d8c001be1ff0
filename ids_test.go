package cadre

import (
	"errors"
	"testing"

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
