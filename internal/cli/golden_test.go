package cli

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm/llmtest"
)

// The golden comparison of stream-json with Claude Code's. The fixture
// testdata/claude-code.stream-json.schema.json holds only facts: for each
// kind of event Claude Code 2.1.328 printed on the scenario below (fan-out
// 2, one Read per child, sub-agents in the foreground, bypassPermissions,
// against peerbench's scripted server), every key path and its JSON type —
// no values. Regenerate it from such a capture with
//
//	go test ./internal/cli -run TestStreamJSONMatchesClaudeCode -claude-capture=stdout.txt
//
// The test runs cadre on the same scenario against llmtest and requires
// every key Claude Code emitted to be present with the same type, except
// the keys listed in notActionable, each with the reason a consumer cannot
// act on it (or why cadre cannot give it yet).

var claudeCapture = flag.String("claude-capture", "", "regenerate the golden stream-json schema from this capture of claude -p's stream-json output")

const schemaFile = "testdata/claude-code.stream-json.schema.json"

// notActionable are Claude Code's keys the comparison skips, by event kind
// ("*" for every kind) and key path.
var notActionable = map[string]map[string]string{
	"*": {
		"message.context_management": "always null in Claude Code's output",
		"message.content[].input":    "a tool call's input is what the model sent, not part of the format",
	},
	"system/init": {
		"terminal_slash_commands":   "interactive-terminal commands",
		"capabilities":              "Claude Code's protocol feature flags; cadre's protocol level is claude_code_version",
		"analytics_disabled":        "telemetry setting",
		"product_feedback_disabled": "telemetry setting",
		"memory_paths":              "Claude Code's auto-memory directory, a feature cadre does not have",
		"original_cwd":              "equals cwd",
		"messaging_socket_path":     "Claude Code's inter-session socket",
		"fast_mode_state":           "Anthropic account fast mode",
		"fast_mode_disabled_reason": "Anthropic account fast mode",
		"per_turn_effort_active":    "interactive effort toggle",
		"ultrathink_available":      "interactive keyword feature",
		"ultrathink_typed_raises":   "interactive keyword feature",
		"view_mode":                 "interactive terminal view",
		"plugins[].source":          "cadre loads no plugins yet",
	},
	"user": {
		"tool_result_meta":                            "per-call permission decision: not carried by cadre's events yet (a seam for the runtime)",
		"tool_use_result.harnessNoteCount":            "Claude Code's report-frame internals",
		"tool_use_result.harnessTailCount":            "Claude Code's report-frame internals",
		"tool_use_result.harnessSectionHash":          "Claude Code's report-frame internals",
		"tool_use_result.toolStats":                   "Claude Code's tool categories with line counts cadre does not measure; cadre's per-tool counts are in task_notification's cadre.tool_stats",
		"tool_use_result.usage.output_tokens_details": "thinking tokens are not reported apart by the providers cadre reads",
		"tool_use_result.usage.server_tool_use":       "per-agent server tool counts: in the result's usage",
		"tool_use_result.usage.service_tier":          "always standard",
		"tool_use_result.usage.cache_creation":        "cache write split by lifetime: in the result's usage",
		"tool_use_result.usage.inference_geo":         "Anthropic account detail",
		"tool_use_result.usage.iterations":            "Anthropic account detail",
		"tool_use_result.usage.speed":                 "Anthropic account fast mode",
		"tool_use_result.usage.fallback_credit":       "Anthropic account detail",
	},
	"result/success": {
		"fast_mode_state":               "Anthropic account fast mode",
		"fast_mode_disabled_reason":     "Anthropic account fast mode",
		"safety_stops":                  "Claude Code's safety classifier",
		"ttft_ms":                       "timing telemetry",
		"ttft_stream_ms":                "timing telemetry",
		"time_to_request_ms":            "timing telemetry",
		"first_content_frame_ms":        "timing telemetry",
		"queued_turn_count":             "a headless run has no queued turns",
		"model_usage_since_last_result": "cadre's modelUsage already covers one run",
		"usage.output_tokens_details":   "thinking tokens are not reported apart by the providers cadre reads",
		"usage.inference_geo":           "Anthropic account detail",
		"usage.iterations":              "Anthropic account detail",
		"usage.speed":                   "Anthropic account fast mode",
		"usage.fallback_credit":         "Anthropic account detail",
		"modelUsage.*.thinkingTokens":   "as usage.output_tokens_details",
		"modelUsage.*.cacheCreationEphemeral5mInputTokens": "cache write split by lifetime: in the result's usage.cache_creation",
		"modelUsage.*.cacheCreationEphemeral1hInputTokens": "as cacheCreationEphemeral5mInputTokens",
		"modelUsage.*.canonicalModel":                      "equals the key",
		"modelUsage.*.provider":                            "Claude Code's cloud provider name; cadre's provider is in init's cadre.provider",
		"modelUsage.*.costBasis":                           "always list",
	},
}

// dynamicMaps are objects keyed by names (models, agent types), flattened
// as "*".
var dynamicMaps = []string{"modelUsage", "model_usage_since_last_result", "subagent_stats.by_type"}

// eventKind classifies an event for the comparison.
func eventKind(ev map[string]any) string {
	kind, _ := ev["type"].(string)
	if st, ok := ev["subtype"].(string); ok {
		kind += "/" + st
	}
	if kind == "user" || kind == "assistant" {
		if ev["parent_tool_use_id"] != nil {
			kind += " (sub-agent"
			if msg, ok := ev["message"].(map[string]any); ok && kind == "user (sub-agent" {
				if c, ok := msg["content"].([]any); ok && len(c) > 0 {
					if b, ok := c[0].(map[string]any); ok && b["type"] == "text" {
						kind += " prompt"
					}
				}
			}
			kind += ")"
		}
	}
	return kind
}

// flatten adds every key path of v under prefix with its JSON type.
func flatten(out map[string]string, prefix string, v any) {
	switch x := v.(type) {
	case map[string]any:
		if prefix != "" {
			out[prefix] = "object"
		}
		dynamic := slices.Contains(dynamicMaps, prefix)
		for k, e := range x {
			key := k
			if dynamic {
				key = "*"
			}
			p := key
			if prefix != "" {
				p = prefix + "." + key
			}
			flatten(out, p, e)
		}
	case []any:
		out[prefix] = "array"
		for _, e := range x {
			if _, ok := e.(map[string]any); ok {
				flatten(out, prefix+"[]", e)
				out[prefix+"[]"] = "object"
			}
		}
	case string:
		merge(out, prefix, "string")
	case float64:
		merge(out, prefix, "number")
	case bool:
		merge(out, prefix, "boolean")
	case nil:
		merge(out, prefix, "null")
	}
}

// merge records a type; a path seen with a value and with null keeps the
// value's type, and two value types make "mixed".
func merge(out map[string]string, path, typ string) {
	old, ok := out[path]
	switch {
	case !ok || old == "null":
		out[path] = typ
	case typ == "null" || old == typ:
	default:
		out[path] = "mixed"
	}
}

// schemaOf reads stream-json lines into key paths and types per kind.
func schemaOf(t *testing.T, lines string) map[string]map[string]string {
	t.Helper()
	kinds := map[string]map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(lines))
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var ev map[string]any
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("not JSON: %q: %v", sc.Text(), err)
		}
		k := eventKind(ev)
		if kinds[k] == nil {
			kinds[k] = map[string]string{}
		}
		flatten(kinds[k], "", ev)
	}
	return kinds
}

type schemaFixture struct {
	Source string                       `json:"source"`
	Kinds  map[string]map[string]string `json:"kinds"`
}

// skipped reports whether path, or an object or array it is inside, is
// not compared.
func skipped(kind, path string) bool {
	for p := path; p != ""; {
		for _, k := range []string{"*", kind, strings.Fields(kind)[0]} {
			if _, ok := notActionable[k][p]; ok {
				return true
			}
		}
		i := strings.LastIndexAny(p, ".[")
		if i < 0 {
			break
		}
		p = p[:i]
	}
	return false
}

func TestStreamJSONMatchesClaudeCode(t *testing.T) {
	if *claudeCapture != "" {
		b, err := os.ReadFile(*claudeCapture)
		if err != nil {
			t.Fatal(err)
		}
		fx := schemaFixture{
			Source: "claude -p (2.1.328) --output-format stream-json --verbose --permission-mode bypassPermissions --model claude-sonnet-4-5 " +
				"on peerbench's fan-out 2 scenario with run_in_background false: key paths and JSON types only",
			Kinds: schemaOf(t, string(b)),
		}
		out, _ := json.MarshalIndent(fx, "", "  ")
		if err := os.WriteFile(schemaFile, append(out, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(schemaFile)
	if err != nil {
		t.Fatal(err)
	}
	var want schemaFixture
	if err := json.Unmarshal(b, &want); err != nil {
		t.Fatal(err)
	}

	s, env := server(t)
	const n = 2
	var calls []llmtest.Call
	for i := 1; i <= n; i++ {
		calls = append(calls, llmtest.Call{Name: "Agent", Input: map[string]any{
			"description": fmt.Sprintf("bench child %d", i), "subagent_type": "general-purpose",
			"prompt": fmt.Sprintf("BENCH-CHILD-%d: read the file bench-input.txt with a read-only tool, then reply exactly 'done %d'.", i, i)}})
	}
	s.Script("BENCH-MAIN", llmtest.ToolUses(calls...), llmtest.Text("BENCH-FINAL: 2 of 2 sub-agents reported done."))
	cmd, out, errb, _ := cadreCmd(t, env, "", "-p", "BENCH-MAIN-FANOUT-2: use your sub-agent tool to run 2 tiny tasks in parallel",
		"--output-format", "stream-json", "--verbose", "--permission-mode", "bypassPermissions", "--model", "claude-sonnet-4-5")
	file := filepath.Join(cmd.Dir, "bench-input.txt")
	if err := os.WriteFile(file, []byte("peerbench input file\nline two\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= n; i++ {
		s.Script(fmt.Sprintf("BENCH-CHILD-%d", i), llmtest.ToolUse("Read", map[string]string{"file_path": file}), llmtest.Text(fmt.Sprintf("done %d", i)))
	}
	if err := cmd.Run(); err != nil {
		t.Fatalf("%v: %s", err, errb)
	}
	got := schemaOf(t, out.String())

	missing := schemaDiffs(want.Kinds, got, "system/background_tasks_changed") // background tasks only
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("cadre's stream-json lacks what Claude Code's has:\n%s", strings.Join(missing, "\n"))
	}
	for path := range notActionable {
		if path != "*" && want.Kinds[path] == nil && got[path] == nil && !strings.HasPrefix(path, "user") {
			t.Errorf("notActionable names kind %q, which neither output has", path)
		}
	}
}

// schemaDiffs lists what got lacks of want (kind → key path → JSON type):
// a kind, a key, or a key's type; notActionable's keys, mixed types and
// the keys of array elements cadre's array has none of are not compared.
func schemaDiffs(want, got map[string]map[string]string, skipKinds ...string) []string {
	var missing []string
	for kind, keys := range want {
		if slices.Contains(skipKinds, kind) {
			continue
		}
		g := got[kind]
		if g == nil {
			missing = append(missing, fmt.Sprintf("%s: no such event", kind))
			continue
		}
		for path, typ := range keys {
			if skipped(kind, path) || typ == "mixed" {
				continue
			}
			parentEmpty := false
			if i := strings.LastIndex(path, "[]"); i >= 0 {
				// Element keys compare only when cadre's array has
				// elements there too.
				_, has := g[path[:i+2]]
				parentEmpty = !has
			}
			gt, ok := g[path]
			switch {
			case parentEmpty:
			case !ok:
				missing = append(missing, fmt.Sprintf("%s: %s missing (%s)", kind, path, typ))
			case typ != "null" && gt != typ && gt != "null":
				missing = append(missing, fmt.Sprintf("%s: %s is %s, Claude Code's is %s", kind, path, gt, typ))
			case typ != "null" && gt == "null":
				missing = append(missing, fmt.Sprintf("%s: %s is null, Claude Code's is %s", kind, path, typ))
			}
		}
	}
	sort.Strings(missing)
	return missing
}
