package skills

import (
	"context"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// corpusAgent parses one agent of the shared corpus.
func corpusAgent(t *testing.T, rel string) *agentdef.Definition {
	t.Helper()
	path := filepath.Join("..", "..", "shared", "corpus", "claude-agents", rel)
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("needs the agent corpus (../shared/corpus beside the repository, which .ci/run requires): %v", err)
	}
	def, diags := agentdef.ParseFile(rel, data, agentdef.SourceProject)
	if def == nil {
		t.Fatalf("%s does not parse: %v", rel, diags)
	}
	return def
}

// poolFor is the built-in pool plus the Skill tool, narrowed to the tools
// the definition names, in pool order.
func poolFor(def *agentdef.Definition, set *Set) *tool.Pool {
	all := tool.NewPool(append(builtin.Tools(builtin.Config{}), NewTool(set))...)
	if def.AllTools() {
		return all
	}
	return all.Filter(func(tl tool.Tool) bool {
		return slices.ContainsFunc(def.Tools, func(e agentdef.ToolEntry) bool { return e.Name == tl.Spec().Name })
	})
}

func runAgent(t *testing.T, srv *llmtest.Server, system string, pool *tool.Pool, cwd, prompt string) *loop.Result {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	m, err := anthropic.New(anthropic.Config{BaseURL: srv.URL(), APIKey: "test", HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	cfg := loop.Config{Model: m, ModelID: "claude-test", System: system, Tools: pool, Env: &tool.Env{Cwd: cwd, Files: tool.NewFileState()}, MaxTurns: 5}
	var res *loop.Result
	for ev, err := range loop.Run(context.Background(), cfg, []llm.Message{llm.UserText(prompt)}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == loop.Done {
			res = ev.Result
		}
	}
	return res
}

// TestCorpusAgentUsesSkill: a real agent file that names Skill in its
// tools gets the Skill tool and loads a project skill through the loop.
func TestCorpusAgentUsesSkill(t *testing.T) {
	t.Parallel()
	def := corpusAgent(t, "HamzaAlayed__laravel-claude-agents/agents__qa-engineer.md")
	proj := t.TempDir()
	write(t, filepath.Join(proj, ".git", "HEAD"), "ref: refs/heads/main\n")
	write(t, filepath.Join(proj, ".claude", "skills", "pest-tests", "SKILL.md"), skillFile("pest-tests", "Write Pest tests for Laravel features.", "Use `php artisan test --filter`; put feature tests in tests/Feature."))
	set, err := Load(context.Background(), LoadOptions{Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	pool := poolFor(def, set)
	if _, ok := pool.Get(tool.Skill); !ok {
		t.Fatalf("the agent names Skill but its pool is %v", pool.Names())
	}
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("test the checkout", llmtest.ToolUse(tool.Skill, map[string]any{"skill": "pest-tests"}), llmtest.Text("Tests written."))
	res := runAgent(t, srv, def.Body+"\n\n"+set.Listing(), pool, proj, "test the checkout flow")
	if res == nil || res.Text != "Tests written." {
		t.Fatalf("result %+v", res)
	}
	reqs := srv.Requests()
	if !slices.Contains(reqs[0].ToolNames(), tool.Skill) || !strings.Contains(reqs[0].System, "- pest-tests: Write Pest tests") {
		t.Fatalf("first request: tools %v", reqs[0].ToolNames())
	}
	if got := reqs[1].LastToolResults(); len(got) != 1 || !strings.Contains(got[0].ResultText(), "php artisan test --filter") {
		t.Fatalf("skill result: %+v", got)
	}
}

// TestCorpusAgentPreloadsSkills: a real agent file with `skills:` gets the
// named skill's instructions in its system prompt from the first request.
func TestCorpusAgentPreloadsSkills(t *testing.T) {
	t.Parallel()
	def := corpusAgent(t, "shanraisshan__claude-code-best-practice/.claude__agents__weather-agent.md")
	if !slices.Equal(def.Skills, []string{"weather-fetcher"}) {
		t.Fatalf("skills = %v", def.Skills)
	}
	proj := t.TempDir()
	write(t, filepath.Join(proj, ".claude", "skills", "weather-fetcher", "SKILL.md"), skillFile("weather-fetcher", "Fetch the temperature of Dubai.", "Call the open-meteo API for latitude 25.2, longitude 55.3."))
	set, err := Load(context.Background(), LoadOptions{Cwd: proj})
	if err != nil {
		t.Fatal(err)
	}
	pre, missing := set.Preload(def.Skills)
	if len(missing) != 0 || pre == "" {
		t.Fatalf("preload: %q, missing %v", pre, missing)
	}
	srv := llmtest.NewServer()
	t.Cleanup(srv.Close)
	t.Cleanup(func() { srv.Check(t) })
	srv.Script("weather", llmtest.Text("It is 31°C."))
	res := runAgent(t, srv, def.Body+"\n\n"+pre, poolFor(def, set), proj, "weather in Dubai?")
	if res == nil || res.Text != "It is 31°C." {
		t.Fatalf("result %+v", res)
	}
	if sys := srv.Requests()[0].System; !strings.Contains(sys, `<skill name="weather-fetcher"`) || !strings.Contains(sys, "latitude 25.2") {
		t.Fatalf("system prompt lacks the preloaded skill:\n%s", sys)
	}
}
