package agentwf

// A remote agent's typed result (S-15.6) on the worker. The launcher
// compiled and checked the output schema at spawn (it travels in
// executor.Definition.OutputSchema); the workflow compiles it again and
// runs the agent's StructuredOutput calls itself — validation is pure and
// its attempts are workflow state, rebuilt from the recorded answers on
// any worker — with the local implementation (tool/builtin's
// StructuredOutput and OutputSlot): every mismatch and its path go back to
// the model, at most OutputAttempts failed calls, one reminder when it
// ends its turn without the call. The JSON that matched is the result's
// StructuredOutput; spent attempts fail it with
// run.ErrorMaxStructuredOutputRetries.

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// typed is an agent's output schema in its workflow (nil: none).
type typed struct {
	so       *builtin.StructuredOutput
	slot     *builtin.OutputSlot
	attempts int
}

// newTyped compiles req's output schema; an error is why the schema
// cannot be used (the agent fails saying so).
func newTyped(schema json.RawMessage, attempts int) (*typed, error) {
	if b := bytes.TrimSpace(schema); len(b) == 0 || string(b) == "null" {
		return nil, nil
	}
	so, err := builtin.NewStructuredOutput(schema)
	if err != nil {
		return nil, err
	}
	slot := builtin.NewOutputSlot(attempts)
	slot.LimitReminders(1)
	return &typed{so: so, slot: slot, attempts: cmp.Or(attempts, builtin.DefaultOutputAttempts)}, nil
}

// extra is the tool the model call offers for it.
func (t *typed) extra() []llm.ToolSpec {
	if t == nil {
		return nil
	}
	return []llm.ToolSpec{t.so.Spec()}
}

// handles reports whether the workflow runs call c itself.
func (t *typed) handles(c llm.Block) bool {
	return t != nil && c.Name == tool.StructuredOutput
}

// call runs one StructuredOutput call against the schema.
func (t *typed) call(c llm.Block) ToolDone {
	out, err := t.so.Run(context.Background(), &tool.Env{Answer: t.slot}, c.Input)
	if err != nil {
		out = tool.Output{Text: err.Error(), IsError: true}
	}
	return ToolDone{Result: run.ToolResult{Text: out.Text, IsError: out.IsError}, Block: llm.ToolResultBlock(c.ID, out.Text, out.IsError)}
}

// done reports whether a call matched (the agent's turn ends).
func (t *typed) done() bool { return t != nil && t.slot.Done() }

// exhausted is the end of an agent that spent its attempts.
func (t *typed) exhausted() (task.Status, string, string, bool) {
	if t.slot.OutOfReminders() {
		return task.Failed, "", prompts.SubagentOutputNotGiven(), false
	}
	return task.Failed, "", prompts.SubagentOutputExhausted(t.attempts), false
}

// remind is the message for a turn ended without a matching call; ok is
// false when that spent the attempts (the agent ends: exhausted).
func (t *typed) remind() (string, bool) {
	text := t.slot.Remind()
	return text, !t.slot.Exhausted()
}

// result puts the typed result on res.
func (t *typed) result(res *run.SubagentResult) {
	if t == nil {
		return
	}
	res.StructuredOutput = t.slot.Value()
	if t.slot.Exhausted() {
		res.Subtype = run.ErrorMaxStructuredOutputRetries
	}
}
