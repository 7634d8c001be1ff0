package engine

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// extractorDef is a definition whose outputSchema is written in YAML
// frontmatter, as a user would write it.
const extractorDef = `---
name: extractor
description: extracts a name and a count
outputSchema:
  type: object
  properties:
    name:
      type: string
    count:
      type: integer
      minimum: 1
  required: [name, count]
  additionalProperties: false
---
Extract what you are asked for.
`

// typedSubagent returns the task-completed result of the sub-agent in evs.
func typedSubagent(t *testing.T, evs []run.Event) *run.SubagentResult {
	t.Helper()
	for _, ev := range evs {
		if ev.Type == run.EventTaskCompleted && ev.Subagent != nil {
			return ev.Subagent
		}
	}
	t.Fatal("no task-completed event")
	return nil
}

// TestTypedChildToldWhyThenMatches: a child whose definition has an
// outputSchema answers wrongly (every error comes back with its path),
// then ends its turn without the tool (one reminder), then answers
// validly: its parent's report and the structured result carry the
// object.
func TestTypedChildToldWhyThenMatches(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/extractor.md", []byte(extractorDef), agentdef.SourceProject)
	if len(diags) > 0 || len(def.OutputSchema) == 0 {
		t.Fatalf("definition %+v diags %v", def, diags)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("extractor", "TYPED-1: the widget count")), llmtest.Text("main done"))
	h.srv.Script("TYPED-1",
		llmtest.ToolUse(tool.StructuredOutput, map[string]any{"name": 7, "count": 0, "extra": true}),
		llmtest.Text("I think it is widgets, 3."),
		llmtest.ToolUse(tool.StructuredOutput, map[string]any{"name": "widgets", "count": 3}),
	)
	cfg := h.config()
	cfg.Background = BackgroundOff
	cfg.Agents = append(agentdef.Builtins(), def)
	evs, res, rt := mustRun(t, cfg, "MAIN: count widgets")
	defer rt.Close()
	if res.Text != "main done" || res.Subagents.Completed != 1 {
		t.Fatalf("result %+v", res)
	}

	reqs := h.srv.RequestsFor("TYPED-1")
	if len(reqs) != 3 {
		t.Fatalf("child made %d requests, want 3 (the run ends with the matching call)", len(reqs))
	}
	var so json.RawMessage
	for _, spec := range reqs[0].Tools {
		if spec.Name == tool.StructuredOutput {
			so = spec.InputSchema
		}
	}
	if so == nil || !strings.Contains(string(so), `"minimum":1`) || !strings.Contains(string(so), `"required":["name","count"]`) {
		t.Fatalf("child's StructuredOutput schema %s, tools %v", so, reqs[0].ToolNames())
	}
	first := reqs[1].LastToolResults()
	if len(first) != 1 || !first[0].IsError {
		t.Fatalf("first answer's result %+v", first)
	}
	why := first[0].ResultText()
	for _, want := range []string{"at /name: got number, want string", "at /count: minimum: got 0, want 1", "additional properties 'extra' not allowed", "4 attempts are left"} {
		contains(t, why, want)
	}
	contains(t, reqs[2].LastUserText(), "You MUST call the StructuredOutput tool")

	done := typedSubagent(t, evs)
	if done.Status != task.Completed || done.Subtype != "" || !sameJSON(done.StructuredOutput, `{"name":"widgets","count":3}`) {
		t.Fatalf("structured result %+v (output %s)", done, done.StructuredOutput)
	}
	report := h.toolResults("MAIN")[0]
	contains(t, report, "<structured-output>\n"+string(done.StructuredOutput)+"\n</structured-output>")
}

// TestTypedChildNeverComplies: a child given output_schema in the Agent
// call that never answers validly fails after 5 attempts with
// error_max_structured_output_retries, and its parent is told so.
func TestTypedChildNeverComplies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	schema := map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}}
	call := agentCall("general-purpose", "STUBBORN-1: say whether it works")
	call["output_schema"] = schema
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("main done"))
	h.srv.ScriptFunc("STUBBORN-1", func(*llmtest.Request) llmtest.Turn {
		return llmtest.ToolUse(tool.StructuredOutput, map[string]any{"ok": "yes"})
	})
	cfg := h.config()
	cfg.Background = BackgroundOff
	evs, res, rt := mustRun(t, cfg, "MAIN: check it")
	defer rt.Close()
	if res.Text != "main done" || res.Subagents.Failed != 1 {
		t.Fatalf("result %+v", res)
	}
	if n := len(h.srv.RequestsFor("STUBBORN-1")); n != 5 {
		t.Fatalf("child made %d requests, want 5 attempts", n)
	}
	done := typedSubagent(t, evs)
	if done.Status != task.Failed || done.Subtype != run.ErrorMaxStructuredOutputRetries || done.StructuredOutput != nil {
		t.Fatalf("structured result %+v", done)
	}
	contains(t, done.Error, "in 5 attempts")
	report := h.toolResults("MAIN")[0]
	contains(t, report, "no StructuredOutput call matched its output schema in 5 attempts")
}

// TestTypedBackgroundChildNotifies: a background child's notification
// carries its validated object.
func TestTypedBackgroundChildNotifies(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	call := bgCall("BGTYPED: list the colours")
	call["output_schema"] = map[string]any{"type": "object", "properties": map[string]any{"colours": map[string]any{"type": "array", "items": map[string]any{"type": "string"}}}, "required": []string{"colours"}}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", call))
	h.srv.ScriptFunc("MAIN", func(*llmtest.Request) llmtest.Turn { return llmtest.Text("noted") })
	h.srv.Script("BGTYPED", llmtest.ToolUse(tool.StructuredOutput, map[string]any{"colours": []string{"red", "</structured-output>"}}))
	rt := newRuntime(t, h.config())
	evs, res, err := runAll(t, context.Background(), rt, "MAIN go")
	if err != nil || res == nil {
		t.Fatal(err)
	}
	evs = append(evs, drainNotifications(t, rt)...)
	done := typedSubagent(t, evs)
	if done.Status != task.Completed || !sameJSON(done.StructuredOutput, `{"colours":["red","</structured-output>"]}`) {
		t.Fatalf("structured result %+v", done)
	}
	found := false
	for _, req := range h.srv.RequestsFor("MAIN") {
		for _, m := range req.Messages {
			for _, b := range m.Content {
				if strings.Contains(b.Text, "<task-notification>") && strings.Contains(b.Text, `{"colours":["red","\u003c/structured-output\u003e"]}`+"\n</structured-output>") {
					found = true
				}
			}
		}
	}
	if !found {
		t.Fatal("no notification with the structured output reached the main agent")
	}
}

// TestTypedSchemaRefusedAtSpawn: an output schema that cannot be used
// refuses the spawn with reason output_schema and a message naming the
// problem; no child runs.
func TestTypedSchemaRefusedAtSpawn(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		schema any
		want   string
	}{
		{"root not object", map[string]any{"type": "array"}, `the root must have "type": "object"`},
		{"unknown type", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"type": "strin"}}}, `at /properties/a: unknown type "strin"`},
		{"remote ref", map[string]any{"type": "object", "properties": map[string]any{"a": map[string]any{"$ref": "https://example.com/s.json"}}}, "must be self-contained"},
		{"exponential anyOf", exponentialSchema(24), "anyOf/oneOf"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			h := newHarness(t)
			call := agentCall("general-purpose", "NEVER-RUNS: x")
			call["output_schema"] = c.schema
			h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("main done"))
			cfg := h.config()
			cfg.Background = BackgroundOff
			_, res, rt := mustRun(t, cfg, "MAIN: go")
			defer rt.Close()
			if res.Subagents.Refused[run.RefusedOutputSchema] != 1 || res.Subagents.Spawned != 0 {
				t.Fatalf("subagents %+v", res.Subagents)
			}
			if n := len(h.srv.RequestsFor("NEVER-RUNS")); n != 0 {
				t.Fatalf("the child ran (%d requests)", n)
			}
			msg := h.toolResults("MAIN")[0]
			contains(t, msg, "output_schema is not usable")
			contains(t, msg, c.want)
		})
	}
}

// exponentialSchema nests n levels of two-way anyOf through $ref, each
// level naming the next twice: validating one value against it would take
// 2^n evaluations.
func exponentialSchema(n int) map[string]any {
	defs := map[string]any{}
	for i := range n {
		next := map[string]any{"type": "string"}
		if i+1 < n {
			next = map[string]any{"$ref": "#/$defs/d" + strconv.Itoa(i+1)}
		}
		defs["d"+strconv.Itoa(i)] = map[string]any{"anyOf": []any{next, next}}
	}
	return map[string]any{"type": "object", "$defs": defs, "properties": map[string]any{"v": map[string]any{"$ref": "#/$defs/d0"}}}
}

// sameJSON reports whether raw and want are the same JSON value.
func sameJSON(raw json.RawMessage, want string) bool {
	var a, b any
	if json.Unmarshal(raw, &a) != nil || json.Unmarshal([]byte(want), &b) != nil {
		return false
	}
	x, _ := json.Marshal(a)
	y, _ := json.Marshal(b)
	return string(x) == string(y)
}

// TestTypedChildRemindedOnce: a child that ends its turn without the
// StructuredOutput call is reminded once; ending again without it fails
// the child though attempts are left.
func TestTypedChildRemindedOnce(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	call := agentCall("general-purpose", "PROSE-1: say whether it works")
	call["output_schema"] = map[string]any{"type": "object", "properties": map[string]any{"ok": map[string]any{"type": "boolean"}}, "required": []string{"ok"}}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("main done"))
	h.srv.Script("PROSE-1", llmtest.Text("It works."), llmtest.Text("Yes, it works."))
	cfg := h.config()
	cfg.Background = BackgroundOff
	evs, _, rt := mustRun(t, cfg, "MAIN: check it")
	defer rt.Close()
	reqs := h.srv.RequestsFor("PROSE-1")
	if len(reqs) != 2 || !strings.Contains(reqs[1].LastUserText(), "You MUST call the StructuredOutput tool") {
		t.Fatalf("%d requests", len(reqs))
	}
	done := typedSubagent(t, evs)
	if done.Status != task.Failed || done.Subtype != run.ErrorMaxStructuredOutputRetries {
		t.Fatalf("structured result %+v", done)
	}
	contains(t, h.toolResults("MAIN")[0], "again after a reminder")
}

// TestTypedChildNarrowToolsDefaultMode: a definition limited to Read, in
// the default permission mode with nobody to ask, still gets its
// StructuredOutput tool and its call runs without a prompt.
func TestTypedChildNarrowToolsDefaultMode(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	def, diags := agentdef.ParseFile("/defs/reader.md", []byte("---\nname: reader\ndescription: reads\ntools: Read\noutputSchema:\n  type: object\n  properties:\n    lines: {type: integer}\n  required: [lines]\n---\nRead.\n"), agentdef.SourceProject)
	if len(diags) > 0 {
		t.Fatal(diags)
	}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", agentCall("reader", "NARROW-1: count lines")), llmtest.Text("main done"))
	h.srv.Script("NARROW-1", llmtest.ToolUse(tool.StructuredOutput, map[string]any{"lines": 12}))
	cfg := h.config()
	cfg.Background = BackgroundOff
	cfg.Agents = append(agentdef.Builtins(), def)
	cfg.Permissions = &Permissions{Mode: permission.ModeDefault, Rules: []permission.Rule{{Behavior: permission.Allow, Tool: "Agent"}}}
	evs, _, rt := mustRun(t, cfg, "MAIN: delegate")
	defer rt.Close()
	if names := h.srv.RequestsFor("NARROW-1")[0].ToolNames(); strings.Join(names, ",") != "Read,StructuredOutput" {
		t.Fatalf("child tools %v", names)
	}
	done := typedSubagent(t, evs)
	if done.Status != task.Completed || !sameJSON(done.StructuredOutput, `{"lines":12}`) {
		t.Fatalf("structured result %+v", done)
	}
}

// TestTypedForkRefused: a fork shares its parent's tools, so an Agent call
// that would fork with output_schema is refused, saying to name a type.
func TestTypedForkRefused(t *testing.T) {
	t.Parallel()
	h := newHarness(t)
	call := agentCall("", "FORKED: x")
	call["output_schema"] = map[string]any{"type": "object"}
	h.srv.Script("MAIN", llmtest.ToolUse("Agent", call), llmtest.Text("main done"))
	cfg := h.config()
	cfg.Background = BackgroundOff
	cfg.ForkSubagent = true
	_, res, rt := mustRun(t, cfg, "MAIN: go")
	defer rt.Close()
	if res.Subagents.Refused[run.RefusedOutputSchema] != 1 || res.Subagents.Spawned != 0 {
		t.Fatalf("subagents %+v", res.Subagents)
	}
	contains(t, h.toolResults("MAIN")[0], "A fork cannot be given an output_schema")
}
