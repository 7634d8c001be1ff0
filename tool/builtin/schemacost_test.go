package builtin

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// TestSchemaCostLint: schemas the validator would loop on or take
// exponential time with are refused when compiled, naming where; the
// usual shapes (recursive trees, anchors, a few alternatives) pass.
func TestSchemaCostLint(t *testing.T) {
	t.Parallel()
	nested := func(levels int) string {
		var b strings.Builder
		b.WriteString(`{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{`)
		for i := range levels {
			fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d"}]},`, i, i+1, i+1)
		}
		fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, levels)
		return b.String()
	}
	for _, c := range []struct{ name, schema, want string }{
		{"self ref", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$ref":"#/$defs/x"}}}`, "at /$defs/x: $ref cycle"},
		{"cycle through anyOf", `{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$ref":"#/$defs/y"},"y":{"anyOf":[{"type":"string"},{"$ref":"#/$defs/x"}]}}}`, "$ref cycle that never reaches a value"},
		{"root cycle", `{"type":"object","allOf":[{"$ref":"#"}]}`, "at the root: $ref cycle"},
		{"exponential", nested(20), "more than 10000 schema checks of one value"},
		{"unknown anchor", `{"type":"object","properties":{"a":{"$ref":"#nope"}}}`, ""},
	} {
		_, err := NewStructuredOutput(json.RawMessage(c.schema))
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want an error with %q", c.name, err, c.want)
		}
	}
	for _, ok := range []string{
		nested(8), // 2^9 checks: fine
		`{"type":"object","properties":{"root":{"$ref":"#/$defs/node"}},"$defs":{"node":{"type":"object","properties":{"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#n"}},"$defs":{"x":{"$anchor":"n","type":"integer"}}}`,
		`{"type":"object","properties":{"a":{"$ref":"#"}}}`,
	} {
		if _, err := NewStructuredOutput(json.RawMessage(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
}

// TestSchemaCostAnswer: an answer whose checks against a recursive schema
// with alternatives would multiply past the bound is refused as too large
// (an attempt spent) without running the validator; a small one is
// validated as usual.
func TestSchemaCostAnswer(t *testing.T) {
	t.Parallel()
	// Each level of "c" is checked against both alternatives, each of
	// which checks the next level: 2^depth checks.
	schema := `{"type":"object","$defs":{"t":{"anyOf":[{"type":"object","properties":{"c":{"$ref":"#/$defs/t"}}},{"type":"object","properties":{"c":{"$ref":"#/$defs/t"}},"required":["x"]}]}},"properties":{"c":{"$ref":"#/$defs/t"}}}`
	so, err := NewStructuredOutput(json.RawMessage(schema))
	if err != nil {
		t.Fatal(err)
	}
	deep := func(n int) string { return strings.Repeat(`{"c":`, n) + `{}` + strings.Repeat(`}`, n) }
	slot := NewOutputSlot(5)
	out, err := so.Run(context.Background(), &tool.Env{Answer: slot}, json.RawMessage(deep(40)))
	if err != nil || !out.IsError || !strings.Contains(out.Text, "too large to check") || !strings.Contains(out.Text, "4 attempts are left") {
		t.Fatalf("%v %+v", err, out)
	}
	out, err = so.Run(context.Background(), &tool.Env{Answer: slot}, json.RawMessage(deep(5)))
	if err != nil || out.IsError || !slot.Done() {
		t.Fatalf("%v %+v", err, out)
	}
}

// TestOutputSlotOneReminder: with LimitReminders(1) the second turn ended
// without a call spends the slot though attempts are left; a failed call
// in between does not count as a reminder.
func TestOutputSlotOneReminder(t *testing.T) {
	t.Parallel()
	o := NewOutputSlot(5)
	o.LimitReminders(1)
	o.Remind()
	o.Reject()
	if o.Exhausted() || o.OutOfReminders() {
		t.Fatal("spent after one reminder and one failed call")
	}
	o.Remind()
	if !o.Exhausted() || !o.OutOfReminders() {
		t.Fatal("not spent after a second turn without a call")
	}
}
