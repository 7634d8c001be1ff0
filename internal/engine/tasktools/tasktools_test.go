package tasktools

import (
	"context"
	"encoding/json"
	"slices"
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

// OfferRemote adds remote to the isolation field's values, and only
// there.
func TestOfferRemote(t *testing.T) {
	var s struct {
		Properties map[string]struct {
			Enum []string `json:"enum"`
		} `json:"properties"`
	}
	if err := json.Unmarshal(OfferRemote(AgentSchema(false, true, false)), &s); err != nil {
		t.Fatal(err)
	}
	if got := s.Properties["isolation"].Enum; !slices.Equal(got, []string{"worktree", "remote"}) {
		t.Fatalf("isolation enum %v", got)
	}
	if got := s.Properties["effort"].Enum; slices.Contains(got, "remote") {
		t.Fatalf("effort enum %v", got)
	}
	without := AgentSchema(false, false, false)
	if string(OfferRemote(without)) != string(without) {
		t.Fatal("a schema without isolation changed")
	}
}
