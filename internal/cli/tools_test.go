package cli

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// TestToolsThroughTheCLI runs the command with a user skill, a SearXNG
// backend from the environment and a loopback page allowed by a
// WebFetch(domain:…) rule from a flag: init lists the skill, the system
// prompt lists it too, WebSearch is answered by the backend, WebFetch's
// prompt by the haiku model, and TodoWrite's result comes out in Claude
// Code's shape (tool_use_result with oldTodos and newTodos), with the
// final lists in the result's cadre part.
func TestToolsThroughTheCLI(t *testing.T) {
	t.Parallel()
	searx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"results":[{"title":"Go 1.26","url":"https://go.dev/blog/go1.26","content":"released"}]}`)
	}))
	t.Cleanup(searx.Close)
	page := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<p>Version 4.2 is current.</p>")
	}))
	t.Cleanup(page.Close)
	s, env := server(t)
	env["CADRE_SEARXNG_URL"] = searx.URL
	todo := []any{map[string]any{"content": "Look it up", "status": "in_progress", "activeForm": "Looking it up"}}
	s.Script("CLI-TOOLS", llmtest.ToolUses(
		llmtest.Call{Name: "TodoWrite", Input: map[string]any{"todos": todo}},
		llmtest.Call{Name: "WebSearch", Input: map[string]any{"query": "go release"}},
		llmtest.Call{Name: "WebFetch", Input: map[string]any{"url": page.URL, "prompt": "CLI-SMALL which version?"}},
	), llmtest.Text("done"))
	s.Script("CLI-SMALL", llmtest.Text("Version 4.2."))
	cmd, out, errb, home := cadreCmd(t, env, "", "-p", "CLI-TOOLS", "--output-format", "stream-json", "--verbose",
		"--allowedTools", "WebFetch(domain:127.0.0.1) WebSearch", "--permission-mode", "acceptEdits")
	skill := filepath.Join(home, ".claude", "skills", "deploy", "SKILL.md")
	if err := os.MkdirAll(filepath.Dir(skill), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(skill, []byte("---\nname: deploy\ndescription: Deploy the service.\n---\nRun make deploy.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	var initSkills []string
	var todoResult, result map[string]any
	results := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(out.String()), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("line %q: %v", line, err)
		}
		switch {
		case m["type"] == "system" && m["subtype"] == "init":
			for _, s := range m["skills"].([]any) {
				initSkills = append(initSkills, s.(string))
			}
		case m["type"] == "user":
			c := m["message"].(map[string]any)["content"].([]any)[0].(map[string]any)
			text, _ := c["content"].(string)
			results[text] = ""
			if r, ok := m["tool_use_result"].(map[string]any); ok {
				if _, ok := r["newTodos"]; ok {
					todoResult = r
				}
			}
		case m["type"] == "result":
			result = m
		}
	}
	if strings.Join(initSkills, ",") != "deploy" {
		t.Errorf("init skills %v", initSkills)
	}
	b, _ := json.Marshal(todoResult)
	if want := `{"newTodos":[{"activeForm":"Looking it up","content":"Look it up","status":"in_progress"}],"oldTodos":[]}`; string(b) != want {
		t.Errorf("TodoWrite tool_use_result %s\nwant %s", b, want)
	}
	b, _ = json.Marshal(result["cadre"].(map[string]any)["todos"])
	if want := `{"main":[{"activeForm":"Looking it up","content":"Look it up","status":"in_progress"}]}`; string(b) != want {
		t.Errorf("result todos %s", b)
	}
	var all []string
	for text := range results {
		all = append(all, text)
	}
	joined := strings.Join(all, "\n---\n")
	for _, want := range []string{"via SearXNG", "https://go.dev/blog/go1.26", "Answer drawn from", "Version 4.2."} {
		if !strings.Contains(joined, want) {
			t.Errorf("tool results lack %q:\n%s", want, joined)
		}
	}
	main := s.RequestsFor("CLI-TOOLS")[0]
	if !strings.Contains(main.System, "- deploy: Deploy the service.") {
		t.Errorf("system prompt lacks the skill listing:\n%s", main.System)
	}
	small := s.RequestsFor("CLI-SMALL")
	if len(small) != 1 || small[0].Model != "claude-haiku-4-5" {
		t.Fatalf("small model requests %d", len(small))
	}
}
