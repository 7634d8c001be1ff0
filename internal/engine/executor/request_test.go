package executor

import (
	"encoding/json"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
)

// full returns a request with every field of every struct it holds set,
// at least once (full checks that).
func full() SpawnRequest {
	inner := llm.TextBlock("inner")
	return SpawnRequest{
		AgentID: "a1b2c3", ParentID: "main", RootID: "session-1", ToolUseID: "toolu_01", Depth: 2, Background: true,
		Description: "review the parser",
		Definition: Definition{
			Name: "code-reviewer", Path: "/p/.claude/agents/code-reviewer.md", SystemPrefix: "You are a sub-agent.", System: "Review code.",
			InitialPrompt: "First read the README.", Model: "sonnet", Effort: agentdef.Effort("high"), PermissionMode: permission.Mode("acceptEdits"),
			MaxTurns: 12, MCPServers: []string{"github", "inline-db"}, Hooks: json.RawMessage(`{"PreToolUse":[{"matcher":"Bash"}]}`),
			HooksFrom: "/p/.claude/agents/code-reviewer.md", Skills: []string{"go-style"}, Isolation: agentdef.Isolation("worktree"),
			OneShot: true, Fork: true, OutputSchema: json.RawMessage(`{"type":"object"}`), OutputAttempts: 3,
		},
		Prompt: "Review parse.go",
		Messages: []llm.Message{
			{Role: llm.RoleUser, Content: []llm.Block{llm.TextBlock("hello")}},
			{Role: llm.RoleAssistant, Content: []llm.Block{{
				Type: llm.BlockToolUse, Text: "t", ID: "toolu_02", Name: "Read", Input: json.RawMessage(`{"file_path":"/x"}`),
				InvalidInput: "{bad", InputOverLimit: 7, ToolUseID: "toolu_03", Content: []llm.Block{inner}, IsError: true,
				Thinking: "hmm", Signature: "sig", Data: "ZGF0YQ==", MediaType: "image/png",
				Raw: json.RawMessage(`{"type":"web_search_tool_result"}`), Citations: json.RawMessage(`[{"url":"https://example.com"}]`),
			}}},
		},
		CacheHints: []llm.CacheHint{{Message: 1, Block: 3}},
		Ceiling: Ceiling{
			Tools: []string{"Read", "Grep", "Agent"}, AgentTypes: []string{"Explore"},
			Rules:    []permission.Rule{{Behavior: permission.Deny, Tool: "Bash", Content: "rm:*", Source: "/p/.claude/settings.json", Base: "/p"}},
			NoPrompt: true, ReadOnly: true, Unavailable: map[string]string{"Agent": "depth limit"},
		},
		Model: Model{ID: "claude-sonnet-4-5", Rule: run.ModelRuleDefinition},
		Mode:  permission.Mode("dontAsk"),
		Cwd:   "/p/.claude/worktrees/agent-a1b2c3",
		Isolation: Isolation{Kind: agentdef.Isolation("worktree"), Worktree: "/p/.claude/worktrees/agent-a1b2c3",
			Branch: "worktree-agent-a1b2c3"},
		Workspace: &workspace.Source{Remote: "github.com/o/r", Roots: []string{strings.Repeat("a", 40)}, Commit: strings.Repeat("b", 40), Seed: []byte("# v2 git bundle\n")},
		Receipt: run.Receipt{
			AgentType: "code-reviewer", Model: "claude-sonnet-4-5", ModelRule: run.ModelRuleDefinition, Tools: []string{"Read"},
			Dropped: []run.DroppedTool{{Name: "Bash", Reason: "not in the definition's tools"}}, AllowedAgentTypes: []string{"Explore"},
			PermissionMode: permission.Mode("dontAsk"), Depth: 2, Background: true, Queued: true, QueuePosition: 3, QueueWait: 1500 * time.Millisecond,
			Warnings: []string{"git status was not ready"}, MCPServers: []string{"github"},
			Worktree: "/p/.claude/worktrees/agent-a1b2c3", WorktreeBranch: "worktree-agent-a1b2c3", MCPStart: 40 * time.Millisecond,
			Budget: &run.BudgetGrant{USD: 1.25, Tokens: 200_000, Turns: 30, WallTime: 10 * time.Minute, Why: "usd 1.25 (asked)"},
		},
		Budget:      Budget{USD: 1.25, Tokens: 200_000, Turns: 30, WallTime: 10 * time.Minute},
		Trace:       TraceContext{TraceParent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", TraceState: "cadre=1"},
		Prices:      pricing.Table{"claude-sonnet-4-5": {Input: 3, Output: 15, CacheWrite: 3.75, CacheRead: 0.3, ContextWindow: 200_000, MaxOutputTokens: 32_000}},
		TypeBudgets: map[string]Budget{"reviewer": {Turns: 3}},
	}
}

// A spawn request is plain data: marshalled and read back, it is what it
// was, so a remote executor can ship it.
func TestSpawnRequestSurvivesJSON(t *testing.T) {
	t.Parallel()
	req := full()
	b, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	var back SpawnRequest
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(req, back) {
		t.Fatalf("the request changed in a JSON round trip (-sent +received):\n%s", cmp.Diff(req, back))
	}
	// Twice: what a remote executor re-encodes is the same bytes.
	b2, err := json.Marshal(back)
	if err != nil {
		t.Fatal(err)
	}
	if string(b) != string(b2) {
		t.Fatalf("re-encoded differently:\n%s\n%s", b, b2)
	}
}

// The round trip above covers every field: a field added to the request
// (or to anything it holds) that full does not set fails here, so it
// cannot slip past the round trip unchecked.
func TestFullRequestSetsEveryField(t *testing.T) {
	t.Parallel()
	for _, miss := range unset(reflect.ValueOf(full())) {
		t.Errorf("full() leaves %s at its zero value: set it, so the JSON round trip covers it", miss)
	}
}

// The check above finds an unset field, nested or not.
func TestUnsetFindsZeroFields(t *testing.T) {
	t.Parallel()
	req := full()
	req.Trace.TraceState = ""
	req.Receipt.Dropped[0].Reason = ""
	got := strings.Join(unset(reflect.ValueOf(req)), "; ")
	for _, want := range []string{"executor.TraceContext.TraceState", "run.DroppedTool.Reason"} {
		if !strings.Contains(got, want) {
			t.Errorf("unset missed %s: %q", want, got)
		}
	}
}

// unset names every exported field of every struct type found in v
// (through fields, pointers, slices and maps) that is zero in every
// instance of its type: a recursive type (a block's content) needs each
// field set somewhere, not in every nesting.
func unset(v reflect.Value) []string {
	seen := map[reflect.Type][]bool{}
	var walk func(v reflect.Value)
	walk = func(v reflect.Value) {
		switch v.Kind() {
		case reflect.Pointer, reflect.Interface:
			if !v.IsNil() {
				walk(v.Elem())
			}
		case reflect.Slice, reflect.Array:
			if v.Type().Elem().Kind() == reflect.Uint8 {
				return // bytes ([]byte, json.RawMessage) are a value
			}
			for i := range v.Len() {
				walk(v.Index(i))
			}
		case reflect.Map:
			for _, k := range v.MapKeys() {
				walk(v.MapIndex(k))
			}
		case reflect.Struct:
			t := v.Type()
			set := seen[t]
			if set == nil {
				set = make([]bool, t.NumField())
				seen[t] = set
			}
			for i := range t.NumField() {
				if !t.Field(i).IsExported() {
					continue
				}
				f := v.Field(i)
				if !f.IsZero() {
					set[i] = true
				}
				walk(f)
			}
		}
	}
	walk(v)
	var out []string
	for t, set := range seen {
		for i, ok := range set {
			if !ok && t.Field(i).IsExported() {
				out = append(out, t.String()+"."+t.Field(i).Name)
			}
		}
	}
	return out
}
