package engine

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"slices"

	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// Typed results from sub-agents (S-15.6, issue 28): a child given an
// output schema — the Agent call's output_schema, else its definition's
// outputSchema — gets its own StructuredOutput tool with that schema and
// an answer slot; its parent's result carries the JSON that matched, and
// a child that spends its attempts fails with
// run.ErrorMaxStructuredOutputRetries.

// typedGlue is an agent's side of typed results.
type typedGlue struct{ a *agent }

func typedOf(a *agent) typedGlue { return typedGlue{a} }

// attach compiles the output schema of child (tg's agent) for the call in
// and gives the child the StructuredOutput tool and its answer slot. A
// schema that cannot be used refuses the spawn, naming the problem; no
// schema changes nothing.
func (tg typedGlue) attach(in agentInput) *refusal {
	c := tg.a
	raw, from := in.OutputSchema, "output_schema"
	if isNoSchema(raw) && c.def != nil {
		raw, from = c.def.OutputSchema, "definition's outputSchema ("+c.def.Name+", "+c.def.Path+")"
	}
	if isNoSchema(raw) {
		return nil
	}
	if c.fork {
		return &refusal{run.RefusedOutputSchema, prompts.OutputSchemaFork()}
	}
	so, err := builtin.NewStructuredOutput(raw)
	if err != nil {
		return &refusal{run.RefusedOutputSchema, prompts.OutputSchemaInvalid(from, err)}
	}
	// Its own tool replaces one it got through its parent (the main
	// agent's, under --json-schema).
	tools := slices.DeleteFunc(slices.Clone(c.pool.Tools()), func(t tool.Tool) bool {
		return t.Spec().Name == tool.StructuredOutput
	})
	c.pool = tool.NewPool(append(tools, so)...)
	r := &c.spawnReceipt
	r.Tools = append(slices.DeleteFunc(r.Tools, func(n string) bool { return n == tool.StructuredOutput }), tool.StructuredOutput)
	c.output = builtin.NewOutputSlot(c.run.rt.cfg.OutputRetries)
	c.output.LimitReminders(1) // a turn ended without the call is reminded once
	c.outputSchema = so.Spec().InputSchema
	return nil
}

// isNoSchema reports an absent output schema (unset or JSON null).
func isNoSchema(raw json.RawMessage) bool {
	b := bytes.TrimSpace(raw)
	return len(b) == 0 || string(b) == "null"
}

// failure is why the child failed when its loop ended with its attempts
// spent (or a second turn ended without the call after its one
// reminder); nil otherwise.
func (tg typedGlue) failure(res *loop.Result) error {
	c := tg.a
	if c.output == nil || res == nil || !res.OutputExhausted {
		return nil
	}
	if c.output.OutOfReminders() {
		return errors.New(prompts.SubagentOutputNotGiven())
	}
	return errors.New(prompts.SubagentOutputExhausted(cmp.Or(c.run.rt.cfg.OutputRetries, builtin.DefaultOutputAttempts)))
}

// result puts the child's typed result on out: the JSON that matched, or
// the failure subtype when the attempts were spent.
func (tg typedGlue) result(out *run.SubagentResult, res *loop.Result) {
	c := tg.a
	if c.output == nil {
		return
	}
	out.StructuredOutput = c.output.Value()
	if res != nil && res.OutputExhausted {
		out.Subtype = run.ErrorMaxStructuredOutputRetries
	}
}
