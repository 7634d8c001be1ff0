package engine

import (
	"slices"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// The main agent gets the task tools whenever a sub-agent can run in the
// background (the default included), and not when background is off.
func TestTaskToolsFollowTheBackgroundMode(t *testing.T) {
	t.Parallel()
	taskTools := []string{tool.TaskStop, tool.TaskOutput, tool.SendMessage}
	for _, c := range []struct {
		mode BackgroundMode
		want bool
	}{{BackgroundOn, true}, {BackgroundDefault, true}, {BackgroundForced, true}, {BackgroundOff, false}} {
		h := newHarness(t)
		cfg := h.config()
		cfg.NoTranscript = true
		cfg.Background = c.mode
		rt := newRuntime(t, cfg)
		names := rt.ToolNames()
		for _, n := range taskTools {
			if slices.Contains(names, n) != c.want {
				t.Errorf("background %q: %s offered = %v, want %v (tools %v)", c.mode, n, !c.want, c.want, names)
			}
		}
	}
}
