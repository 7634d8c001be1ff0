package builtin

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

// Every built-in tool whose calls have a subject (a path, a command, a
// URL) declares it, and declares the same one the permission checker
// uses for a call it gets by name alone (tool.BuiltinSubject).
func TestBuiltinToolsDeclareTheirSubject(t *testing.T) {
	t.Parallel()
	inputs := map[string]string{
		NameRead: `{"file_path":"a.txt"}`, NameWrite: `{"file_path":"a.txt","content":"x"}`, NameEdit: `{"file_path":"a.txt"}`,
		tool.MultiEdit: `{"file_path":"a.txt"}`, tool.NotebookEdit: `{"notebook_path":"n.ipynb"}`,
		NameGlob: `{"pattern":"**/*.go","path":"src"}`, NameGrep: `{"pattern":"x"}`, tool.LS: `{"path":"/tmp"}`,
		NameBash: `{"command":"go test ./..."}`, tool.WebFetch: `{"url":"https://example.com","prompt":"p"}`,
	}
	declaring := 0
	for _, tl := range Tools(Config{}) {
		name := tl.Spec().Name
		want := tool.BuiltinSubject(name)
		got, declared, err := tool.SubjectOf(tl, json.RawMessage(inputs[name]))
		if want == nil {
			if declared {
				t.Errorf("%s declares a subject the checker does not know", name)
			}
			continue
		}
		declaring++
		if !declared || err != nil {
			t.Errorf("%s: declared %v, err %v", name, declared, err)
			continue
		}
		w, _ := want(json.RawMessage(inputs[name]))
		if diff := cmp.Diff(w, got); diff != "" || cmp.Equal(got, tool.Subject{}) {
			t.Errorf("%s: subject (-checker's +tool's):\n%s", name, diff)
		}
	}
	if declaring != len(inputs) {
		t.Errorf("%d tools declare a subject, want %d", declaring, len(inputs))
	}
}
