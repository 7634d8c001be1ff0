package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

type deployIn struct {
	Env string `json:"env"`
}

// Rules may name an embedder's own tools: `Deploy(prod)`-style content
// aside, a deny rule on the whole tool or an ask rule on it is known, and
// holds for the main agent and its sub-agents; a rule naming a tool that
// exists nowhere still fails New, before any request.
func TestRulesNameEmbedderTools(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	ran := make(chan string, 4)
	deploy := tool.Func(tool.FuncConfig{Name: "Deploy", Description: "deploys"}, func(_ context.Context, _ *tool.Env, in deployIn) (tool.Output, error) {
		ran <- in.Env
		return tool.Output{Text: "deployed"}, nil
	})
	h.srv.Script("MAIN", llmtest.ToolUse("Deploy", map[string]string{"env": "prod"}), llmtest.Text("done"))
	cfg := h.config()
	cfg.Tools = []tool.Tool{deploy}
	cfg.Permissions = &Permissions{Mode: permission.ModeBypassPermissions, Rules: []permission.Rule{{Behavior: permission.Ask, Tool: "Deploy", Source: "test"}}}
	mustRun(t, cfg, "MAIN: ship it")
	if len(ran) != 0 {
		t.Fatal("an ask rule on the embedder's tool did not hold in a headless run")
	}
	if r := h.toolResults("MAIN")[0]; !strings.Contains(r, "Permission denied") || !strings.Contains(r, "Deploy") {
		t.Errorf("result %s", r)
	}
	cfg.Permissions.Rules = []permission.Rule{{Behavior: permission.Deny, Tool: "Deplyo", Source: "test"}}
	if _, err := New(cfg); err == nil || !strings.Contains(err.Error(), "Deplyo") {
		t.Errorf("a deny rule naming no tool: err %v", err)
	}
}
