package builtin

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/santhosh-tekuri/jsonschema/v6"
	"golang.org/x/text/language"
	"golang.org/x/text/message"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// DefaultOutputAttempts is how many StructuredOutput calls that do not
// match (and turns ended without one) a run allows before it fails with
// error_max_structured_output_retries; MAX_STRUCTURED_OUTPUT_RETRIES
// changes it in the cadre command.
const DefaultOutputAttempts = 5

// maxSchemaNodes bounds the size of an output schema (objects, arrays and
// values counted), as Claude Code does.
const maxSchemaNodes = 100000

// schemaURL names the caller's schema inside the compiler.
const schemaURL = "urn:cadre:structured-output"

// StructuredOutput is the tool through which the main agent gives its
// final answer as JSON matching the caller's schema (Claude Code's
// --json-schema, the Agent SDK's outputFormat). Its input schema is the
// caller's schema. Each call is validated against it: every error, with
// where in the input it is, goes back to the model as a tool error; a
// call that matches is kept in the run's OutputSlot and ends the turn.
type StructuredOutput struct {
	spec   llm.ToolSpec
	schema *jsonschema.Schema
}

// NewStructuredOutput compiles schema (JSON Schema, draft 2020-12 unless
// it says otherwise). The root must be an object schema ("type":
// "object"); a schema that is not JSON, is too large, refers to documents
// outside itself or does not compile is an error saying why.
func NewStructuredOutput(schema json.RawMessage) (*StructuredOutput, error) {
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(schema))
	if err != nil {
		return nil, fmt.Errorf("output schema: not JSON: %w", err)
	}
	root, ok := doc.(map[string]any)
	if !ok {
		return nil, errors.New("output schema: the root must be a JSON object with \"type\": \"object\"")
	}
	if t, _ := root["type"].(string); t != "object" {
		return nil, fmt.Errorf("output schema: the root must have \"type\": \"object\" (the answer is the input of a tool call, which is an object), not %s", describeType(root["type"]))
	}
	if n := countNodes(doc); n > maxSchemaNodes {
		return nil, fmt.Errorf("output schema: %d nodes, more than the %d allowed", n, maxSchemaNodes)
	}
	c := jsonschema.NewCompiler()
	c.UseLoader(noLoader{})
	if err := c.AddResource(schemaURL, doc); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	sch, err := c.Compile(schemaURL)
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	compact := new(bytes.Buffer)
	if err := json.Compact(compact, schema); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return &StructuredOutput{schema: sch, spec: llm.ToolSpec{
		Name: tool.StructuredOutput, Description: prompts.StructuredOutputDescription(), InputSchema: compact.Bytes(),
	}}, nil
}

// describeType names a schema's "type" value for an error.
func describeType(v any) string {
	if v == nil {
		return "no type"
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// countNodes counts the values of a decoded JSON document.
func countNodes(v any) int {
	n := 1
	switch x := v.(type) {
	case map[string]any:
		for _, e := range x {
			n += countNodes(e)
		}
	case []any:
		for _, e := range x {
			n += countNodes(e)
		}
	}
	return n
}

// noLoader refuses every document a schema refers to outside itself: an
// output schema is one self-contained document, and compiling it reads
// neither files nor the network.
type noLoader struct{}

func (noLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("the schema refers to %s; an output schema must be self-contained ($defs and local $ref only)", url)
}

// Spec is the tool's name, description and the caller's schema.
func (s *StructuredOutput) Spec() llm.ToolSpec { return s.spec }

// ReadOnly is true: the call changes nothing outside the run.
func (s *StructuredOutput) ReadOnly() bool { return true }

// Run validates the answer and keeps it in the run's OutputSlot.
func (s *StructuredOutput) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Output, error) {
	slot := outputSlotFrom(ctx)
	if slot == nil {
		return tool.Output{Text: prompts.StructuredOutputElsewhere(), IsError: true}, nil
	}
	if slot.Done() {
		return tool.Output{Text: prompts.StructuredOutputAgain()}, nil
	}
	inst, err := jsonschema.UnmarshalJSON(bytes.NewReader(input))
	if err != nil {
		return tool.Output{Text: prompts.StructuredOutputNotJSON(err.Error(), slot.fail()), IsError: true}, nil
	}
	if err := s.schema.Validate(inst); err != nil {
		var ve *jsonschema.ValidationError
		if !errors.As(err, &ve) {
			return tool.Output{}, fmt.Errorf("validate structured output: %w", err)
		}
		return tool.Output{Text: prompts.StructuredOutputMismatch(SchemaErrors(ve), slot.fail()), IsError: true}, nil
	}
	slot.set(input)
	return tool.Output{Text: prompts.StructuredOutputAccepted()}, nil
}

// SchemaErrors lists every leaf error of a validation, each with the JSON
// pointer of the input value it is about, in path order.
func SchemaErrors(ve *jsonschema.ValidationError) []prompts.SchemaError {
	p := message.NewPrinter(language.English)
	var out []prompts.SchemaError
	var walk func(e *jsonschema.ValidationError)
	walk = func(e *jsonschema.ValidationError) {
		if len(e.Causes) == 0 {
			out = append(out, prompts.SchemaError{Path: pointer(e.InstanceLocation), Message: e.ErrorKind.LocalizedString(p)})
			return
		}
		for _, c := range e.Causes {
			walk(c)
		}
	}
	walk(ve)
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// pointer is the JSON pointer of a path of tokens.
func pointer(tokens []string) string {
	var b strings.Builder
	for _, t := range tokens {
		b.WriteByte('/')
		b.WriteString(strings.NewReplacer("~", "~0", "/", "~1").Replace(t))
	}
	return b.String()
}

// OutputSlot is one run's structured output: the answer once a call
// matched, and the attempts spent (calls that did not match, and turns the
// model ended without a call). The loop asks it whether the turn may end
// (internal/loop's Output).
type OutputSlot struct {
	mu       sync.Mutex
	max      int
	attempts int
	value    json.RawMessage
}

// NewOutputSlot makes a slot allowing max failed attempts (0 means
// DefaultOutputAttempts).
func NewOutputSlot(max int) *OutputSlot {
	if max <= 0 {
		max = DefaultOutputAttempts
	}
	return &OutputSlot{max: max}
}

// Value is the answer, nil until a call matched.
func (o *OutputSlot) Value() json.RawMessage {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.value
}

// Done reports whether a call matched.
func (o *OutputSlot) Done() bool { return o.Value() != nil }

// Exhausted reports whether the attempts are spent without a match.
func (o *OutputSlot) Exhausted() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.value == nil && o.attempts >= o.max
}

// Remind counts a turn ended without a matching call as an attempt and
// returns the message that asks for the call.
func (o *OutputSlot) Remind() string {
	o.fail()
	return prompts.StructuredOutputReminder()
}

// fail counts a failed attempt and returns how many are left.
func (o *OutputSlot) fail() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts++
	return o.max - o.attempts
}

func (o *OutputSlot) set(v json.RawMessage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.value = append(json.RawMessage(nil), v...)
}

type outputSlotKey struct{}

// WithOutputSlot returns ctx carrying the run's slot for StructuredOutput
// calls; nil marks an agent whose calls give no answer (a sub-agent).
func WithOutputSlot(ctx context.Context, slot *OutputSlot) context.Context {
	return context.WithValue(ctx, outputSlotKey{}, slot)
}

func outputSlotFrom(ctx context.Context) *OutputSlot {
	s, _ := ctx.Value(outputSlotKey{}).(*OutputSlot)
	return s
}
