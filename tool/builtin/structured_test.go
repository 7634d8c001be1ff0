package builtin

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

const reviewSchema = `{
  "type": "object",
  "properties": {
    "verdict": {"type": "string", "enum": ["approve", "reject"]},
    "score": {"type": "integer", "minimum": 0, "maximum": 10},
    "issues": {"type": "array", "items": {"type": "object", "properties": {"line": {"type": "integer"}}, "required": ["line"]}}
  },
  "required": ["verdict", "score"],
  "additionalProperties": false
}`

func TestStructuredOutputSchemaErrors(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, schema, want string }{
		{"not JSON", `{"type":`, "not JSON"},
		{"array root", `[{"type":"object"}]`, `the root must be a JSON object`},
		{"string root type", `{"type":"string"}`, `not "string"`},
		{"no root type", `{"properties":{}}`, "not no type"},
		{"type list", `{"type":["object","null"]}`, `not ["object","null"]`},
		{"bad keyword value", `{"type":"object","properties":{"a":{"type":"strin"}}}`, "strin"},
		{"outside reference", `{"type":"object","properties":{"a":{"$ref":"file:///etc/passwd"}}}`, "must be self-contained"},
		{"too large", `{"type":"object","enum":[` + strings.Repeat(`1,`, maxSchemaNodes) + `1]}`, "more than the 100000 allowed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, err := NewStructuredOutput(json.RawMessage(tc.schema))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}

func TestStructuredOutputValidates(t *testing.T) {
	t.Parallel()
	so, err := NewStructuredOutput(json.RawMessage(reviewSchema))
	if err != nil {
		t.Fatal(err)
	}
	if spec := so.Spec(); spec.Name != "StructuredOutput" || !strings.Contains(string(spec.InputSchema), `"required":["verdict","score"]`) {
		t.Fatalf("spec %+v", spec)
	}
	slot := NewOutputSlot(3)
	env := &tool.Env{Answer: slot}
	run := func(input string) (string, bool) {
		t.Helper()
		out, err := so.Run(context.Background(), env, json.RawMessage(input))
		if err != nil {
			t.Fatal(err)
		}
		return out.Text, out.IsError
	}
	// Every error comes back, each with where it is.
	text, isErr := run(`{"verdict":"maybe","score":11,"issues":[{"line":"x"},{}],"extra":1}`)
	if !isErr {
		t.Fatalf("a mismatch is a tool error: %s", text)
	}
	for _, want := range []string{"Output does not match required schema:", "- at /verdict: value must be one of", "- at /score: maximum: got 11, want 10",
		"- at /issues/0/line: got string, want integer", "- at /issues/1: missing property 'line'", "- at (root): additional properties 'extra' not allowed",
		"2 attempts are left"} {
		if !strings.Contains(text, want) {
			t.Errorf("result lacks %q:\n%s", want, text)
		}
	}
	if slot.Done() || slot.Exhausted() {
		t.Fatal("one mismatch neither answers nor exhausts")
	}
	if text, isErr = run(`[1]`); !isErr || !strings.Contains(text, "got array, want object") || !strings.Contains(text, "1 attempt is left") {
		t.Fatalf("array input: %s", text)
	}
	if text, isErr = run(`{"verdict":"approve","score":7}`); isErr || text != "Structured output provided successfully" {
		t.Fatalf("matching input: %v %s", isErr, text)
	}
	if !slot.Done() || slot.Exhausted() || string(slot.Value()) != `{"verdict":"approve","score":7}` {
		t.Fatalf("slot after a match: done %v value %s", slot.Done(), slot.Value())
	}
	if text, isErr = run(`{"verdict":"reject","score":1}`); isErr || !strings.Contains(text, "already provided") || string(slot.Value()) != `{"verdict":"approve","score":7}` {
		t.Fatalf("a second call: %s, value %s", text, slot.Value())
	}
}

func TestOutputSlotAttempts(t *testing.T) {
	t.Parallel()
	so, err := NewStructuredOutput(json.RawMessage(`{"type":"object","required":["a"]}`))
	if err != nil {
		t.Fatal(err)
	}
	slot := NewOutputSlot(2)
	env := &tool.Env{Answer: slot}
	if r := slot.Remind(); !strings.Contains(r, "You MUST call the StructuredOutput tool") || slot.Exhausted() {
		t.Fatalf("reminder %q, exhausted %v", r, slot.Exhausted())
	}
	out, err := so.Run(context.Background(), env, json.RawMessage(`{}`))
	if err != nil || !out.IsError || !strings.Contains(out.Text, "No attempts are left.") {
		t.Fatalf("%v %+v", err, out)
	}
	if !slot.Exhausted() || slot.Done() {
		t.Fatal("two failed attempts of two exhaust the slot")
	}
	if NewOutputSlot(0).max != DefaultOutputAttempts {
		t.Fatal("0 means the default")
	}
	// An agent without the run's slot (a sub-agent, a fork) gives no answer.
	out, err = so.Run(context.Background(), &tool.Env{}, json.RawMessage(`{"a":1}`))
	if err != nil || !out.IsError || !strings.Contains(out.Text, "cannot call it") {
		t.Fatalf("%v %+v", err, out)
	}
}

// FuzzStructuredOutput feeds schemas and inputs from outside (the caller's
// --json-schema, the model's call): never a panic.
func FuzzStructuredOutput(f *testing.F) {
	f.Add(reviewSchema, `{"verdict":"approve","score":7}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"type":"string","pattern":"^a+$"}}}`, `{"a":"b"}`)
	f.Add(`{"type":"object","patternProperties":{"(":{}}}`, `{}`)
	f.Add(`{"type":"object"}`, `not json`)
	// A $ref cycle through anyOf (a stack overflow in the validator, were
	// it let through) and alternatives nested through $ref (exponential).
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$ref":"#/$defs/y"},"y":{"anyOf":[{"$ref":"#/$defs/x"}]}}}`, `{"a":1}`)
	f.Add(`{"type":"object","$defs":{"t":{"anyOf":[{"type":"object","properties":{"c":{"$ref":"#/$defs/t"}}},{"$ref":"#/$defs/t"}]}},"properties":{"c":{"$ref":"#/$defs/t"}}}`, `{"c":{"c":{"c":{}}}}`)
	f.Add(`{"type":"object","properties":{"a":{"$ref":"#n"}},"$defs":{"x":{"$anchor":"n","type":"integer"}}}`, `{"a":1.5}`)
	f.Fuzz(func(t *testing.T, schema, input string) {
		so, err := NewStructuredOutput(json.RawMessage(schema))
		if err != nil {
			return
		}
		slot := NewOutputSlot(2)
		out, err := so.Run(context.Background(), &tool.Env{Answer: slot}, json.RawMessage(input))
		if err != nil {
			t.Fatalf("schema %s input %s: %v", schema, input, err)
		}
		if !out.IsError && !slot.Done() {
			t.Fatalf("accepted without keeping the value: %s", input)
		}
	})
}
