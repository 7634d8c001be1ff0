package cadre

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// Typed results in Go (S-15.6): the JSON Schema of a struct, for
// Config.OutputSchema or an Agent call's output_schema, and the structured
// output of a run or a sub-agent decoded into that struct.

// SchemaFor returns the JSON Schema derived from T: an object whose
// properties are T's exported fields by their json names, a field without
// omitempty or omitzero required, no other properties allowed. T must be a
// struct (a structured answer is a tool call's input, an object); the
// schema is checked as an output schema is.
func SchemaFor[T any]() (json.RawMessage, error) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		return nil, fmt.Errorf("schema for %T: %w", *new(T), err)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		return nil, fmt.Errorf("schema for %T: %w", *new(T), err)
	}
	if _, err := builtin.NewStructuredOutput(raw); err != nil {
		return nil, fmt.Errorf("schema for %T: %w", *new(T), err)
	}
	return raw, nil
}

// Decode decodes a structured output (run.Result.StructuredOutput,
// run.SubagentResult.StructuredOutput) into T after checking it against
// SchemaFor[T]: a value that does not match is an error listing every
// mismatch with its path, and no output at all is ErrNoOutput.
func Decode[T any](raw json.RawMessage) (T, error) {
	var out T
	if len(raw) == 0 {
		return out, ErrNoOutput
	}
	schema, err := SchemaFor[T]()
	if err != nil {
		return out, err
	}
	so, err := builtin.NewStructuredOutput(schema)
	if err != nil {
		return out, fmt.Errorf("decode %T: %w", out, err)
	}
	if err := so.Check(raw); err != nil {
		return out, fmt.Errorf("decode %T: %w", out, err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("decode %T: %w", out, err)
	}
	return out, nil
}

// ErrNoOutput is Decode's error for a result without structured output:
// no schema was given, or the agent spent its attempts
// (run.ErrorMaxStructuredOutputRetries).
var ErrNoOutput = errors.New("no structured output")

// DecodeSubagent decodes a sub-agent's typed result into T; a sub-agent
// that failed is an error saying how (its Subtype and Error).
func DecodeSubagent[T any](res *run.SubagentResult) (T, error) {
	var out T
	if res == nil {
		return out, ErrNoOutput
	}
	if res.StructuredOutput == nil && res.Error != "" {
		return out, fmt.Errorf("sub-agent %s (%s) %s: %s: %w", res.AgentID, res.AgentType, res.Status, res.Error, ErrNoOutput)
	}
	return Decode[T](res.StructuredOutput)
}

// RunTyped makes a Runtime of cfg whose main agent must answer with T
// (Config.OutputSchema set to SchemaFor[T]), runs prompt once, closes the
// Runtime and decodes the answer. res is the run's result, nil when the run
// failed before one; a run that ended without a matching answer is an
// error wrapping ErrNoOutput.
func RunTyped[T any](ctx context.Context, cfg Config, prompt string) (T, *run.Result, error) {
	var out T
	schema, err := SchemaFor[T]()
	if err != nil {
		return out, nil, err
	}
	cfg.OutputSchema = schema
	rt, err := New(cfg)
	if err != nil {
		return out, nil, err
	}
	var res *run.Result
	var runErr error
	for ev, err := range rt.Run(ctx, prompt) {
		if err != nil {
			runErr = err
			break
		}
		if ev.Type == run.EventResult {
			res = ev.Result
		}
	}
	if err := rt.Close(); err != nil && runErr == nil {
		runErr = err
	}
	if runErr != nil {
		return out, res, fmt.Errorf("run: %w", runErr)
	}
	if res == nil {
		return out, nil, errors.New("run: no result")
	}
	if res.StructuredOutput == nil {
		return out, res, fmt.Errorf("run ended %s: %s: %w", res.Subtype, res.Text, ErrNoOutput)
	}
	out, err = Decode[T](res.StructuredOutput)
	return out, res, err
}
