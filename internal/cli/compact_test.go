package cli

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/llmtest"
)

// isSummaryRequest reports whether r asks for a compaction summary,
// cadre's or Claude Code's.
func isSummaryRequest(r *llmtest.Request) bool {
	last := r.LastUserText()
	return strings.Contains(last, "Your conversation is about to be compacted") || strings.Contains(last, "create a detailed summary of the conversation")
}

// isCompacted reports whether r continues a compacted conversation.
func isCompacted(r *llmtest.Request) bool {
	if len(r.Messages) == 0 {
		return false
	}
	first := r.Messages[0].Text()
	return strings.HasPrefix(first, "This conversation was compacted") || strings.Contains(first, "continued from a previous conversation")
}

// compactScenario scripts a main agent that fills an 8,000-token window
// (CADRE_AUTO_COMPACT_WINDOW / CLAUDE_CODE_AUTO_COMPACT_WINDOW) in two
// Bash calls, compacts, and finishes.
func compactScenario(s *llmtest.Server) {
	u := func(n int64) llm.Usage { return llm.Usage{InputTokens: n - 20, OutputTokens: 20} }
	s.ScriptFunc("COMPACT-MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("<summary>COMPACT-MAIN: ran two commands; next: finish</summary>").WithUsage(u(7100))
		case isCompacted(r):
			return llmtest.Text("COMPACT-MAIN finished").WithUsage(u(900))
		case len(r.Messages) == 1:
			return llmtest.ToolUse("Bash", map[string]any{"command": "echo one", "description": "First"}).WithUsage(u(3000))
		}
		return llmtest.ToolUse("Bash", map[string]any{"command": "echo two", "description": "Second"}).WithUsage(u(7000))
	})
}

// compactArgs run the scenario.
var compactArgs = []string{"-p", "COMPACT-MAIN: run two commands", "--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions",
	"--model", "claude-sonnet-4-5"}

// lines decodes stream-json output.
func lines(t *testing.T, out string) []map[string]any {
	t.Helper()
	var evs []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			t.Fatalf("bad line %q: %v", line, err)
		}
		evs = append(evs, m)
	}
	return evs
}

// TestStreamJSONCompactBoundary: a main agent that compacts writes
// system/status "compacting", then system/compact_boundary with
// compact_metadata {trigger, pre_tokens, post_tokens, duration_ms}, in
// Claude Code's shape, and finishes its task.
func TestStreamJSONCompactBoundary(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	env["CADRE_AUTO_COMPACT_WINDOW"] = "8000"
	compactScenario(s)
	p := runCadre(t, env, "", compactArgs...)
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var status, boundary, result map[string]any
	for _, ev := range lines(t, p.stdout) {
		switch {
		case ev["type"] == "system" && ev["subtype"] == "status" && ev["status"] == "compacting":
			status = ev
		case ev["type"] == "system" && ev["subtype"] == "compact_boundary":
			if status == nil {
				t.Fatal("compact_boundary before the compacting status")
			}
			boundary = ev
		case ev["type"] == "result":
			result = ev
		}
	}
	if boundary == nil || result == nil {
		t.Fatalf("no compact_boundary or result:\n%s", p.stdout)
	}
	md, _ := boundary["compact_metadata"].(map[string]any)
	if md["trigger"] != "auto" || md["pre_tokens"] != float64(7000) {
		t.Fatalf("compact_metadata %v", md)
	}
	for _, k := range []string{"post_tokens", "duration_ms"} {
		if _, ok := md[k].(float64); !ok {
			t.Fatalf("compact_metadata.%s is not a number: %v", k, md)
		}
	}
	for _, k := range []string{"uuid", "session_id"} {
		if _, ok := boundary[k].(string); !ok {
			t.Fatalf("compact_boundary.%s missing: %v", k, boundary)
		}
	}
	if result["result"] != "COMPACT-MAIN finished" {
		t.Fatalf("result %v", result["result"])
	}
}

// TestCompactCommandHeadless: "/compact [instructions]" is a prompt like
// any other in a stream-json session (as the Agent SDKs send it): the
// conversation is compacted with the instructions, the next prompt
// continues from the summary.
func TestCompactCommandHeadless(t *testing.T) {
	t.Parallel()
	s, env := server(t)
	s.ScriptFunc("CMD-MAIN", func(r *llmtest.Request) llmtest.Turn {
		switch {
		case isSummaryRequest(r):
			return llmtest.Text("<summary>CMD-MAIN: said hello</summary>")
		case isCompacted(r):
			return llmtest.Text("continued")
		}
		return llmtest.Text("hello")
	})
	user := func(text string) string {
		b, _ := json.Marshal(map[string]any{"type": "user", "message": map[string]any{"role": "user", "content": text}})
		return string(b) + "\n"
	}
	stdin := user("CMD-MAIN: say hello") + user("/compact keep the greeting") + user("what next?")
	p := runCadre(t, env, stdin, "--input-format", "stream-json", "--output-format", "stream-json", "--verbose")
	if p.code != 0 {
		t.Fatalf("code %d stderr %s", p.code, p.stderr)
	}
	var results []any
	var boundaries int
	for _, ev := range lines(t, p.stdout) {
		if ev["type"] == "result" {
			results = append(results, ev["result"])
		}
		if ev["subtype"] == "compact_boundary" {
			md, _ := ev["compact_metadata"].(map[string]any)
			if md["trigger"] != "manual" {
				t.Fatalf("trigger %v", md)
			}
			boundaries++
		}
	}
	if len(results) != 3 || results[0] != "hello" || results[2] != "continued" || boundaries != 1 {
		t.Fatalf("results %v, %d boundaries\n%s", results, boundaries, p.stdout)
	}
	reqs := s.RequestsFor("CMD-MAIN")
	if len(reqs) != 3 || !strings.Contains(reqs[1].LastUserText(), "keep the greeting") || len(reqs[2].Messages) != 1 {
		t.Fatalf("requests: %d", len(reqs))
	}
}
