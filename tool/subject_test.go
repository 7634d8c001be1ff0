package tool_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

// The subjects of cadre's own tools: what each reads from its input, a
// field of the wrong type read as missing, an input that is not an object
// an error.
func TestBuiltinSubjects(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, input string
		want        tool.Subject
		wantErr     bool
	}{
		{name: tool.Read, input: `{"file_path":"/a/b","offset":3}`, want: tool.Subject{Paths: []string{"/a/b"}}},
		{name: tool.Write, input: `{"file_path":"x.go","content":"package x"}`, want: tool.Subject{Paths: []string{"x.go"}}},
		{name: tool.Edit, input: `{"file_path":5}`, want: tool.Subject{Paths: []string{""}}},
		{name: tool.MultiEdit, input: ``, want: tool.Subject{Paths: []string{""}}},
		{name: tool.NotebookEdit, input: `{"notebook_path":"n.ipynb"}`, want: tool.Subject{Paths: []string{"n.ipynb"}}},
		{name: tool.Glob, input: `{"pattern":"src/**/*.go"}`, want: tool.Subject{Paths: []string{"."}, Glob: "src/**/*.go"}},
		{name: tool.Glob, input: `{"pattern":"*.go","path":"/r"}`, want: tool.Subject{Paths: []string{"/r"}, Glob: "*.go"}},
		{name: tool.Grep, input: `{"pattern":"TODO"}`, want: tool.Subject{Paths: []string{"."}}},
		{name: tool.LS, input: `{"path":"~/x"}`, want: tool.Subject{Paths: []string{"~/x"}}},
		{name: tool.Bash, input: `{"command":"npm test","timeout":1000}`, want: tool.Subject{Content: "npm test"}},
		{name: tool.Bash, input: `{"command":null}`, want: tool.Subject{}},
		{name: tool.WebFetch, input: `{"url":"https://example.com/a","prompt":"p"}`, want: tool.Subject{URL: "https://example.com/a"}},
		{name: tool.Agent, input: `{"subagent_type":"Explore","prompt":"p"}`, want: tool.Subject{AgentType: "Explore"}},
		{name: tool.Task, input: `{"prompt":"p"}`, want: tool.Subject{}},
		{name: tool.Read, input: `["/a"]`, wantErr: true},
		{name: tool.Bash, input: `"ls"`, wantErr: true},
		{name: tool.WebFetch, input: `{"url":`, wantErr: true},
	} {
		got, err := tool.BuiltinSubject(tc.name)(json.RawMessage(tc.input))
		if (err != nil) != tc.wantErr {
			t.Errorf("%s %s: err = %v, want error %v", tc.name, tc.input, err, tc.wantErr)
			continue
		}
		if diff := cmp.Diff(tc.want, got); !tc.wantErr && diff != "" {
			t.Errorf("%s %s (-want +got):\n%s", tc.name, tc.input, diff)
		}
	}
	for _, name := range []string{tool.TodoWrite, tool.WebSearch, tool.BashOutput, "mcp__s__t", "MyTool"} {
		if tool.BuiltinSubject(name) != nil {
			t.Errorf("%s: a subject beyond the tool itself", name)
		}
	}
}

// A tool built with FuncConfig.Subject declares it; one built without does
// not.
func TestFuncDeclaresSubject(t *testing.T) {
	t.Parallel()
	type in struct {
		Path string `json:"path"`
	}
	run := func(context.Context, *tool.Env, in) (tool.Output, error) { return tool.Output{}, nil }
	declared := tool.Func(tool.FuncConfig{Name: "MyTool", Description: "d",
		Subject: tool.DecodeSubject(func(i in) tool.Subject { return tool.Subject{Paths: []string{i.Path}} })}, run)
	s, ok, err := tool.SubjectOf(declared, json.RawMessage(`{"path":"src/a"}`))
	if !ok || err != nil || !cmp.Equal(s, tool.Subject{Paths: []string{"src/a"}}) {
		t.Fatalf("declared: %+v %v %v", s, ok, err)
	}
	if _, _, err := tool.SubjectOf(declared, json.RawMessage(`{"path":1}`)); err == nil {
		t.Fatal("a typed view that does not fit must be an error")
	}
	if problems := tool.CheckInput(declared, json.RawMessage(`{}`)); len(problems) != 1 {
		t.Fatalf("a declaring tool still checks its input: %v", problems)
	}
	if _, ok, _ := tool.SubjectOf(tool.Func(tool.FuncConfig{Name: "Plain", Description: "d"}, run), nil); ok {
		t.Fatal("a tool built without Subject declares one")
	}
}

// An embedder's tool declares the path it touches, so permission rules
// such as `Publish(./site/**)` match it like Read and Edit rules.
func ExampleDecodeSubject() {
	type publishIn struct {
		Dir string `json:"dir"`
	}
	publish := tool.Func(tool.FuncConfig{Name: "Publish", Description: "Publishes a directory.",
		Subject: tool.DecodeSubject(func(in publishIn) tool.Subject { return tool.Subject{Paths: []string{in.Dir}} }),
	}, func(_ context.Context, _ *tool.Env, in publishIn) (tool.Output, error) {
		return tool.Output{Text: "published " + in.Dir}, nil
	})
	s, declared, err := tool.SubjectOf(publish, json.RawMessage(`{"dir":"site/blog"}`))
	fmt.Println(s.Paths, declared, err)
	// Output: [site/blog] true <nil>
}
