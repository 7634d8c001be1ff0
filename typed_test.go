package cadre_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/llm/anthropic"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
)

// verdict is a typed result: its schema is derived from the struct.
type verdict struct {
	Decision string   `json:"decision"`
	Score    int      `json:"score"`
	Notes    []string `json:"notes,omitempty"`
}

// typedConfig is a Config against srv that lets every call run.
func typedConfig(t *testing.T, srv *llmtest.Server) cadre.Config {
	t.Helper()
	tr := &http.Transport{}
	t.Cleanup(tr.CloseIdleConnections)
	model, err := anthropic.New(anthropic.Config{APIKey: "test", BaseURL: srv.URL(), HTTPClient: &http.Client{Transport: tr}})
	if err != nil {
		t.Fatal(err)
	}
	return cadre.Config{Model: model, ModelID: "claude-sonnet-4-5", Cwd: t.TempDir(), StateDir: t.TempDir(), Permissions: cadre.AllowAll()}
}

// TestSchemaForAndDecode: the schema comes from the struct's fields, and
// Decode checks a value against it before decoding, every mismatch named.
func TestSchemaForAndDecode(t *testing.T) {
	t.Parallel()
	schema, err := cadre.SchemaFor[verdict]()
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		Type       string                     `json:"type"`
		Required   []string                   `json:"required"`
		Properties map[string]json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(schema, &s); err != nil {
		t.Fatal(err)
	}
	if s.Type != "object" || strings.Join(s.Required, ",") != "decision,score" || len(s.Properties) != 3 || !strings.Contains(string(s.Properties["score"]), `"integer"`) {
		t.Fatalf("schema %s", schema)
	}
	v, err := cadre.Decode[verdict](json.RawMessage(`{"decision":"approve","score":7,"notes":["tidy"]}`))
	if err != nil || v.Decision != "approve" || v.Score != 7 || len(v.Notes) != 1 {
		t.Fatalf("%+v %v", v, err)
	}
	_, err = cadre.Decode[verdict](json.RawMessage(`{"decision":3,"extra":1}`))
	if err == nil {
		t.Fatal("a mismatch decoded")
	}
	for _, want := range []string{"at /decision: got number, want string", "missing property 'score'", "additional properties 'extra' not allowed"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error %q lacks %q", err, want)
		}
	}
	if _, err := cadre.Decode[verdict](nil); !errors.Is(err, cadre.ErrNoOutput) {
		t.Fatalf("no output: %v", err)
	}
	if _, err := cadre.SchemaFor[[]string](); err == nil {
		t.Fatal("a slice is not an object schema")
	}
}

// TestRunTypedMainAgent: the main agent answers with StructuredOutput;
// RunTyped gives the struct.
func TestRunTypedMainAgent(t *testing.T) {
	t.Parallel()
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("REVIEW", llmtest.ToolUse("StructuredOutput", map[string]any{"decision": "reject", "score": 2}))
	v, res, err := cadre.RunTyped[verdict](context.Background(), typedConfig(t, srv), "REVIEW the change")
	if err != nil || v.Decision != "reject" || v.Score != 2 || res.Subtype != run.Success {
		t.Fatalf("%+v %+v %v", v, res, err)
	}
	srv.Check(t)
}

// TestDecodeSubagentTyped: a parent gives a child the struct's schema as
// output_schema; the child's result decodes into the struct.
func TestDecodeSubagentTyped(t *testing.T) {
	t.Parallel()
	schema, err := cadre.SchemaFor[verdict]()
	if err != nil {
		t.Fatal(err)
	}
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("MAIN", llmtest.ToolUse("Agent", map[string]any{"description": "review", "prompt": "CHILD-REVIEW: judge it",
		"subagent_type": "general-purpose", "output_schema": json.RawMessage(schema)}), llmtest.Text("reviewed"))
	srv.Script("CHILD-REVIEW", llmtest.ToolUse("StructuredOutput", map[string]any{"decision": "approve", "score": 9, "notes": []string{"clean"}}))
	cfg := typedConfig(t, srv)
	cfg.Background = cadre.BackgroundOff
	rt, err := cadre.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	var child *run.SubagentResult
	for ev, err := range rt.Run(context.Background(), "MAIN: get a review") {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Type == run.EventTaskCompleted {
			child = ev.Subagent
		}
	}
	if child == nil || child.Status != task.Completed {
		t.Fatalf("child %+v", child)
	}
	v, err := cadre.DecodeSubagent[verdict](child)
	if err != nil || v.Decision != "approve" || v.Score != 9 || len(v.Notes) != 1 || v.Notes[0] != "clean" {
		t.Fatalf("%+v %v", v, err)
	}
	srv.Check(t)
}
