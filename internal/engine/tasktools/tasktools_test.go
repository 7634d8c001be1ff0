package tasktools

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

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
	for _, tl := range Tools(func(context.Context, *tool.Env) Caller { return nil }) {
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
