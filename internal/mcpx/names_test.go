package mcpx

import (
	"context"
	"encoding/json"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

func TestNormalize(t *testing.T) {
	t.Parallel()
	// Claude Code 2.1.328 replaces each character outside [A-Za-z0-9_-]
	// with '_', one for one, keeping case (checked against its bundle).
	for in, want := range map[string]string{
		"context7":           "context7",
		"task-master":        "task-master",
		"My Server.v2":       "My_Server_v2",
		"a__b":               "a__b",
		"café":               "caf_",
		"😀x":                 "__x",
		"resolve-library-id": "resolve-library-id",
		"a/b:c@d":            "a_b_c_d",
	} {
		if got := Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
	if got := ToolName("task master", "get.task"); got != "mcp__task_master__get_task" {
		t.Errorf("ToolName = %q", got)
	}
}

func TestMatchSelector(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		sel, server, tool string
		want              bool
	}{
		{"mcp__*", "any", "thing", true},
		{"mcp__github", "github", "create_issue", true},
		{"mcp__github", "gitlab", "create_issue", false},
		{"mcp__github__*", "github", "create_issue", true},
		{"mcp__github__create_issue", "github", "create_issue", true},
		{"mcp__github__create_issue", "github", "list_issues", false},
		{"mcp__github__get_*", "github", "get_me", true},
		{"mcp__github__get_*", "github", "list_me", false},
		{"mcp__github__*_issue", "github", "create_issue", true},
		{"mcp__git", "github", "x", false},
		// A server whose name contains "__" is matched by its whole name.
		{"mcp__a__b", "a__b", "t", true},
		{"mcp__a__b__t", "a__b", "t", true},
		{"mcp__a__b__u", "a__b", "t", false},
		{"mcp__a", "a__b", "t", false},
		{"mcp__", "a", "t", false},
		{"Bash", "a", "t", false},
	} {
		if got := MatchSelector(tt.sel, tt.server, tt.tool); got != tt.want {
			t.Errorf("MatchSelector(%q, %q, %q) = %v", tt.sel, tt.server, tt.tool, got)
		}
	}
}

// fakeTool is a stand-in MCP tool for selection tests (no server needed).
type fakeTool struct{ server, name string }

func (f fakeTool) Spec() llm.ToolSpec { return llm.ToolSpec{Name: ToolName(f.server, f.name)} }
func (f fakeTool) ReadOnly() bool     { return true }
func (f fakeTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Output, error) {
	return tool.Output{}, nil
}
func (f fakeTool) Server() string { return Normalize(f.server) }
func (f fakeTool) Remote() string { return f.name }

// builtinTool is not an MCP tool, so no selector covers it.
type builtinTool struct{}

func (builtinTool) Spec() llm.ToolSpec { return llm.ToolSpec{Name: "Read"} }
func (builtinTool) ReadOnly() bool     { return true }
func (builtinTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Output, error) {
	return tool.Output{}, nil
}

func TestSelectAndRemove(t *testing.T) {
	t.Parallel()
	pool := []tool.Tool{
		builtinTool{},
		fakeTool{"context7", "resolve-library-id"}, fakeTool{"context7", "get-library-docs"},
		fakeTool{"task-master", "get_task"}, fakeTool{"task-master", "set_task_status"},
		fakeTool{"sentry", "find_errors"},
	}
	for _, tt := range []struct {
		sel            []string
		kept, remained []string
	}{
		{[]string{"mcp__context7__*"},
			[]string{"mcp__context7__resolve-library-id", "mcp__context7__get-library-docs"},
			[]string{"Read", "mcp__task-master__get_task", "mcp__task-master__set_task_status", "mcp__sentry__find_errors"}},
		{[]string{"mcp__task-master__get_task", "mcp__sentry"},
			[]string{"mcp__task-master__get_task", "mcp__sentry__find_errors"},
			[]string{"Read", "mcp__context7__resolve-library-id", "mcp__context7__get-library-docs", "mcp__task-master__set_task_status"}},
		{[]string{"mcp__*"},
			[]string{"mcp__context7__resolve-library-id", "mcp__context7__get-library-docs", "mcp__task-master__get_task", "mcp__task-master__set_task_status", "mcp__sentry__find_errors"},
			[]string{"Read"}},
		{[]string{"Read", "mcp__linear"}, nil, []string{"Read", "mcp__context7__resolve-library-id", "mcp__context7__get-library-docs", "mcp__task-master__get_task", "mcp__task-master__set_task_status", "mcp__sentry__find_errors"}},
	} {
		if d := cmp.Diff(tt.kept, names(Select(pool, tt.sel))); d != "" {
			t.Errorf("Select(%q) (-want +got):\n%s", tt.sel, d)
		}
		if d := cmp.Diff(tt.remained, names(Remove(pool, tt.sel))); d != "" {
			t.Errorf("Remove(%q) (-want +got):\n%s", tt.sel, d)
		}
	}
}

func TestMissingServers(t *testing.T) {
	t.Parallel()
	got := MissingServers([]string{"Read", "mcp__context7__*", "mcp__linear", "mcp__linear__x", "mcp__*", "mcp__task_master__get"}, []string{"context7", "task master"})
	if !slices.Equal(got, []string{"linear"}) {
		t.Errorf("MissingServers = %q", got)
	}
}

func TestInitServers(t *testing.T) {
	t.Parallel()
	got := InitServers([]ServerStatus{
		{Name: "My Server.v2", State: StatePending, Source: Source{Scope: ScopeFlag}},
		{Name: "bad", State: StateFailed, Source: Source{Scope: ScopeProject}},
		{Name: "idle", State: StateIdle, Source: Source{Scope: ScopeUser}},
	})
	want := []InitServer{{Name: "My Server.v2", Status: "pending", Source: "dynamic"}, {Name: "bad", Status: "failed", Source: "project"},
		{Name: "idle", Status: "pending", Source: "user"}}
	if d := cmp.Diff(want, got); d != "" {
		t.Error(d)
	}
}

// A server tool declares the server its calls go to, so permission rules
// compare mcp__server with it instead of parsing the tool's name.
func TestServerToolDeclaresItsServer(t *testing.T) {
	t.Parallel()
	st := &serverTool{c: &conn{cfg: ServerConfig{Name: "my.srv__x"}}, remote: "get", spec: llm.ToolSpec{Name: ToolName("my.srv__x", "get")}}
	s, declared, err := tool.SubjectOf(st, json.RawMessage(`{"q":1}`))
	if !declared || err != nil || s.Server != "my_srv__x" {
		t.Fatalf("subject %+v declared %v err %v", s, declared, err)
	}
}
