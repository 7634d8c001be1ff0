package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type readIn struct {
	Path  string `json:"file_path" jsonschema:"description=Absolute path"`
	Limit int    `json:"limit,omitempty"`
}

func reader(name string, readOnly bool) Tool {
	return Func(FuncConfig{Name: name, Description: "  reads  \n", ReadOnly: readOnly}, func(_ context.Context, _ *Env, in readIn) (Output, error) {
		return Output{Text: in.Path}, nil
	})
}

func TestFuncSchemaAndDecoding(t *testing.T) {
	r := reader("Read", true)
	spec := r.Spec()
	if spec.Description != "reads" {
		t.Fatalf("description %q", spec.Description)
	}
	var schema map[string]any
	if err := json.Unmarshal(spec.InputSchema, &schema); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]any{"file_path"}, schema["required"]); diff != "" {
		t.Fatalf("required:\n%s", diff)
	}
	if schema["additionalProperties"] != false {
		t.Fatalf("schema %s", spec.InputSchema)
	}
	if string(reader("Read", true).Spec().InputSchema) != string(spec.InputSchema) {
		t.Fatal("schema bytes differ between constructions")
	}
	cases := []struct {
		in      string
		want    string
		isError bool
	}{
		{`{"file_path":"/a"}`, "/a", false},
		{``, "", false},
		{`{"file_path":"/a","bogus":1}`, `unknown field "bogus"`, true},
		{`{"file_path":5}`, "invalid input for Read", true},
		{`[1]`, "invalid input for Read", true},
	}
	for _, c := range cases {
		out, err := r.Run(context.Background(), nil, json.RawMessage(c.in))
		if err != nil {
			t.Fatal(err)
		}
		if out.IsError != c.isError || !strings.Contains(out.Text, c.want) {
			t.Errorf("input %s: got %+v", c.in, out)
		}
	}
}

func TestPoolOrderReplaceFilter(t *testing.T) {
	p := NewPool(reader("B", true), reader("A", false), reader("C", true))
	p.Add(reader("A", true)) // replaces in place
	if diff := cmp.Diff([]string{"B", "A", "C"}, p.Names()); diff != "" {
		t.Fatalf("names:\n%s", diff)
	}
	if a, _ := p.Get("A"); !a.ReadOnly() {
		t.Fatal("A was not replaced")
	}
	q := p.Filter(func(t Tool) bool { return t.Spec().Name != "B" })
	if diff := cmp.Diff([]string{"A", "C"}, q.Names()); diff != "" || p.Len() != 3 {
		t.Fatalf("filter:\n%s", diff)
	}
	var nilPool *Pool
	if _, ok := nilPool.Get("A"); ok || nilPool.Len() != 0 || nilPool.Names() != nil {
		t.Fatal("nil pool")
	}
}

type safeTool struct{ Tool }

func (safeTool) ConcurrencySafe() bool { return true }

func TestRunsConcurrently(t *testing.T) {
	if !RunsConcurrently(reader("R", true)) || RunsConcurrently(reader("W", false)) || !RunsConcurrently(safeTool{reader("A", false)}) {
		t.Fatal("RunsConcurrently")
	}
}

func TestEnvCloneIsolatesFileState(t *testing.T) {
	parent := &Env{Cwd: "/p", Dirs: []string{"/d"}, Files: NewFileState(), Todos: &TodoList{}, Hidden: func(string) bool { return true }}
	parent.Files.Record("/p/a", FileStamp{ModTime: time.Unix(1, 0), Size: 3})
	child := parent.Clone("a1")
	if _, ok := child.Files.Lookup("/p/a"); !ok {
		t.Fatal("child does not know what the parent read")
	}
	child.Files.Record("/p/b", FileStamp{})
	child.Dirs[0] = "/changed"
	if _, ok := parent.Files.Lookup("/p/b"); ok || parent.Dirs[0] != "/d" {
		t.Fatal("the child wrote into the parent's state")
	}
	if child.AgentID != "a1" || child.Shells != nil || child.Hidden != nil {
		t.Fatalf("clone %+v", child)
	}
	if child.Spawner != nil || child.Answer != nil || child.Call.ID != "" || child.Todos == nil || child.Todos == parent.Todos {
		t.Fatalf("clone %+v", child)
	}
	call := parent.ForCall(Call{ID: "toolu_1"})
	if call.Call.ID != "toolu_1" || parent.Call.ID != "" || call.Files != parent.Files || call.Todos != parent.Todos {
		t.Fatal("a call's Env shares the agent's state and carries the call id; the agent's own Env does not")
	}
}

// Issue 29: what CheckInput reports before a call is authorized — every
// required field missing, a field of the wrong type, an unknown field.
func TestFuncCheckInput(t *testing.T) {
	type editIn struct {
		FilePath  string  `json:"file_path"`
		OldString string  `json:"old_string"`
		NewString *string `json:"new_string"`
		All       bool    `json:"replace_all,omitempty"`
	}
	e := Func(FuncConfig{Name: "Edit"}, func(context.Context, *Env, editIn) (Output, error) { return Output{}, nil })
	cases := []struct {
		in   string
		want []string
	}{
		{`{"file_path":"/a","old_string":"x","new_string":""}`, nil},
		{`{"file_path":"/a","old_string":"x","new_string":"y","replace_all":true}`, nil},
		{``, []string{"file_path is required", "old_string is required", "new_string is required"}},
		{`{"old_string":"x","new_string":null}`, []string{"file_path is required", "new_string is required"}},
		{`{"file_path":5,"old_string":"x","new_string":"y"}`, []string{"file_path must be a string, not a JSON number"}},
		{`{"file_path":"/a","old_string":"x","new_string":"y","replace_all":"yes"}`, []string{"replace_all must be a boolean, not a JSON string"}},
		{`{"file_path":"/a","old_string":"x","new_string":"y","path":"/b"}`, []string{`unknown field "path" (the fields are file_path, new_string, old_string, replace_all)`}},
		{`[1]`, []string{"the input must be a JSON object"}},
		{`null`, []string{"the input must be a JSON object"}},
	}
	for _, c := range cases {
		if diff := cmp.Diff(c.want, CheckInput(e, json.RawMessage(c.in))); diff != "" {
			t.Errorf("input %s (-want +got):\n%s", c.in, diff)
		}
	}
}

// TestPoolLargeAndSmallAlike: a pool past smallPool (indexed) and one
// below it (searched in order) keep order, find every tool and replace a
// same-named tool in place, before and after the index is built.
func TestPoolLargeAndSmallAlike(t *testing.T) {
	for _, n := range []int{3, smallPool, smallPool + 1, 3 * smallPool} {
		var tools []Tool
		for i := range n {
			tools = append(tools, reader(fmt.Sprintf("T%d", i), false))
		}
		tools = append(tools, reader("T0", true)) // replaces T0 in place
		p := NewPool(tools...)
		if p.Len() != n {
			t.Fatalf("n=%d: %d tools", n, p.Len())
		}
		for i, name := range p.Names() {
			if want := fmt.Sprintf("T%d", i); name != want {
				t.Fatalf("n=%d: tool %d is %s, want %s", n, i, name, want)
			}
			if got, ok := p.Get(name); !ok || got != p.Tools()[i] {
				t.Fatalf("n=%d: Get(%s) = %v, %v", n, name, got, ok)
			}
		}
		if got, _ := p.Get("T0"); !got.ReadOnly() {
			t.Errorf("n=%d: T0 was not replaced in place", n)
		}
		if _, ok := p.Get("missing"); ok {
			t.Errorf("n=%d: Get(missing) found a tool", n)
		}
		p.Add(reader("extra", false))
		if got, ok := p.Get("extra"); !ok || p.Tools()[n] != got {
			t.Errorf("n=%d: an added tool is not found at the end", n)
		}
	}
}
