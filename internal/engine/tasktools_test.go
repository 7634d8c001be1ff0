package engine

import (
	"encoding/json"
	"slices"
	"strings"
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

// Issue 29: the task tools' field descriptions are whole sentences (a comma
// in a jsonschema tag once cut SendMessage's "to" short), and TaskOutput's
// say what task_id is, that block defaults to true and the timeout's unit
// and bounds.
func TestTaskToolSchemaTexts(t *testing.T) {
	t.Parallel()
	want := map[string][]string{
		tool.TaskOutput:  {"agent id", "default true", "milliseconds", "30000", "600000"},
		tool.SendMessage: {"or main."},
	}
	for _, tl := range taskTools() {
		var s struct {
			Properties map[string]struct {
				Description string `json:"description"`
			} `json:"properties"`
		}
		if err := json.Unmarshal(tl.Spec().InputSchema, &s); err != nil {
			t.Fatal(err)
		}
		var all []string
		for name, p := range s.Properties {
			if !strings.HasSuffix(p.Description, ".") {
				t.Errorf("%s.%s: description %q is not a whole sentence", tl.Spec().Name, name, p.Description)
			}
			all = append(all, p.Description)
		}
		for _, w := range want[tl.Spec().Name] {
			if !strings.Contains(strings.Join(all, " "), w) {
				t.Errorf("%s: field descriptions %q lack %q", tl.Spec().Name, all, w)
			}
		}
	}
}
