package mcpx

import (
	"context"
	"os"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/agentdef"
)

// A real agent file from the shared corpus lists mcp__context7 and
// mcp__figma among its tools. With a server named context7 configured it
// gets exactly that server's tools; figma, configured nowhere, is named as
// missing.
func TestCorpusAgentSelectsItsServers(t *testing.T) {
	t.Parallel()
	path := "../../../shared/corpus/claude-agents/HamzaAlayed__laravel-claude-agents/agents__mobile-developer.md"
	data, err := os.ReadFile(path)
	if err != nil {
		t.Skipf("needs the agent corpus (../shared/corpus beside the repository, which .ci/run requires): %v", err)
	}
	def, _ := agentdef.ParseFile(path, data, agentdef.SourceProject)
	if def == nil {
		t.Fatal("corpus agent did not parse")
	}
	var selectors []string
	for _, e := range def.Tools {
		if e.IsMCP() {
			selectors = append(selectors, e.Name)
		}
	}
	if !slices.Equal(selectors, []string{"mcp__context7", "mcp__figma"}) {
		t.Fatalf("MCP entries = %q", selectors)
	}
	m := newManager(t, []ServerConfig{
		{Name: "context7", Transport: HTTP, URL: goServer(t, HTTP, newGoServer("resolve-library-id", "get-library-docs"), "")},
		{Name: "sentry", Transport: HTTP, URL: goServer(t, HTTP, newGoServer("find_errors"), "")},
	}, Options{})
	m.Start()
	waitConnected(t, m)
	got := names(Select(m.Tools(context.Background()), selectors))
	if d := cmp.Diff([]string{"mcp__context7__get-library-docs", "mcp__context7__resolve-library-id"}, got); d != "" {
		t.Errorf("selected (-want +got):\n%s", d)
	}
	if missing := MissingServers(selectors, m.Names()); !slices.Equal(missing, []string{"figma"}) {
		t.Errorf("missing = %q, want figma", missing)
	}
}
