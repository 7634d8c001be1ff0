package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// init's values, not only its keys: the tools the model is offered, the
// agents, the skills (also as slash commands, as Claude Code lists them),
// the mode, the key's source and the model.
func TestInitValues(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.Script("", llmtest.Text("ok"))
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "hi", "--output-format", "stream-json", "--verbose", "--permission-mode", "acceptEdits")
	dir := filepath.Join(home, ".claude", "skills", "release-notes")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "SKILL.md"), []byte("---\nname: release-notes\ndescription: Writes release notes.\n---\nWrite them.\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	var init struct {
		Tools          []string `json:"tools"`
		Agents         []string `json:"agents"`
		Skills         []string `json:"skills"`
		SlashCommands  []string `json:"slash_commands"`
		PermissionMode string   `json:"permissionMode"`
		APIKeySource   string   `json:"apiKeySource"`
		Model          string   `json:"model"`
		Cwd            string   `json:"cwd"`
	}
	first, _, _ := strings.Cut(out.String(), "\n")
	if err := json.Unmarshal([]byte(first), &init); err != nil {
		t.Fatal(err)
	}
	// The model is offered some tools and told the names of the deferred
	// ones (issue 24); together they are the init message's tools.
	req := s.Requests()[0]
	got := append(req.ToolNames(), deferredNames(req.System)...)
	if want := slices.Sorted(slices.Values(init.Tools)); !slices.Equal(want, slices.Sorted(slices.Values(got))) {
		t.Fatalf("init tools %v, the model got %v", init.Tools, got)
	}
	if !slices.Contains(init.Skills, "release-notes") || !slices.Contains(init.SlashCommands, "release-notes") {
		t.Fatalf("skills %v, slash commands %v", init.Skills, init.SlashCommands)
	}
	if !slices.Contains(init.Agents, "general-purpose") || init.PermissionMode != "acceptEdits" || init.APIKeySource != "ANTHROPIC_API_KEY" ||
		init.Model != "claude-sonnet-4-5" || init.Cwd == "" {
		t.Fatalf("init %+v", init)
	}
}

// deferredNames returns the deferred tools a system prompt names
// (prompts.DeferredTools' lines).
func deferredNames(system string) []string {
	var out []string
	for _, lead := range []string{"Deferred tools (load with ToolSearch before use): ", "Also deferred: "} {
		if _, rest, ok := strings.Cut(system, lead); ok {
			line, _, _ := strings.Cut(rest, ".")
			out = append(out, strings.Split(line, ", ")...)
		}
	}
	return out
}
