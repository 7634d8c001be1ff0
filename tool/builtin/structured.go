package builtin

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

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

// schemaVersions are the $schema values an output schema may name (the
// drafts the validator implements); none means draft 2020-12.
var schemaVersions = []string{
	"",
	"https://json-schema.org/draft/2020-12/schema",
	"http://json-schema.org/draft-07/schema#",
	"https://json-schema.org/draft-07/schema#",
}

// jsonTypes are the names a schema's "type" may use.
var jsonTypes = []string{"null", "boolean", "object", "array", "number", "string", "integer"}

// StructuredOutput is the tool through which the main agent gives its
// final answer as JSON matching the caller's schema (Claude Code's
// --json-schema, the Agent SDK's outputFormat). Its input schema is the
// caller's schema. Each call is validated against it: every error, with
// where in the input it is, goes back to the model as a tool error; a
// call that matches is kept in the run's OutputSlot and ends the turn.
type StructuredOutput struct {
	spec     llm.ToolSpec
	root     *jsonschema.Schema
	resolved *jsonschema.Resolved
	cost     *costWalk
}

// NewStructuredOutput checks and resolves schema (JSON Schema, draft
// 2020-12 unless its $schema names draft-07). The root must be an object
// schema ("type": "object"); a schema that is not JSON, is too large,
// refers to documents outside itself or is not a valid schema is an error
// saying why.
func NewStructuredOutput(schema json.RawMessage) (*StructuredOutput, error) {
	var doc any
	if err := json.Unmarshal(schema, &doc); err != nil {
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
	sch := new(jsonschema.Schema)
	if err := json.Unmarshal(schema, sch); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	if !slices.Contains(schemaVersions, sch.Schema) {
		return nil, fmt.Errorf("output schema: $schema %q is not supported (draft 2020-12 and draft-07 are)", sch.Schema)
	}
	if err := checkTypes(sch, ""); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	rs, err := sch.Resolve(&jsonschema.ResolveOptions{Loader: noLoader})
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	cost, err := lintCost(sch) // schemacost.go: the validator's cost bounded
	if err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	compact := new(bytes.Buffer)
	if err := json.Compact(compact, schema); err != nil {
		return nil, fmt.Errorf("output schema: %w", err)
	}
	return &StructuredOutput{root: sch, resolved: rs, cost: cost, spec: llm.ToolSpec{
		Name: tool.StructuredOutput, Description: prompts.StructuredOutputDescription(), InputSchema: compact.Bytes(),
	}}, nil
}

// checkTypes reports a "type" naming no JSON type in s or a subschema of
// it, with the subschema's location (the validator would only notice it
// on an instance).
func checkTypes(s *jsonschema.Schema, at string) error {
	if s == nil {
		return nil
	}
	for _, t := range append([]string{s.Type}, s.Types...) {
		if t != "" && !slices.Contains(jsonTypes, t) {
			where := at
			if where == "" {
				where = "the root"
			}
			return fmt.Errorf("at %s: unknown type %q (want one of %s)", where, t, strings.Join(jsonTypes, ", "))
		}
	}
	var err error
	eachSubschema(s, at, func(sub *jsonschema.Schema, loc string) {
		if err == nil {
			err = checkTypes(sub, loc)
		}
	})
	return err
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
// output schema is one self-contained document, and resolving it reads
// neither files nor the network.
func noLoader(u *url.URL) (*jsonschema.Schema, error) {
	return nil, fmt.Errorf("the schema refers to %s; an output schema must be self-contained ($defs and local $ref only)", u)
}

// Spec is the tool's name, description and the caller's schema.
func (s *StructuredOutput) Spec() llm.ToolSpec { return s.spec }

// ReadOnly is true: the call changes nothing outside the run.
func (s *StructuredOutput) ReadOnly() bool { return true }

// Run validates the answer and keeps it in the agent's answer slot
// (Env.Answer).
func (s *StructuredOutput) Run(ctx context.Context, env *tool.Env, input json.RawMessage) (tool.Output, error) {
	if env == nil || env.Answer == nil {
		return tool.Output{Text: prompts.StructuredOutputElsewhere(), IsError: true}, nil
	}
	slot := env.Answer
	if slot.Done() {
		return tool.Output{Text: prompts.StructuredOutputAgain()}, nil
	}
	var inst any
	if err := json.Unmarshal(input, &inst); err != nil {
		return tool.Output{Text: prompts.StructuredOutputNotJSON(err.Error(), slot.Reject()), IsError: true}, nil
	}
	if err := s.cost.answerCost(inst); err != nil {
		return tool.Output{Text: prompts.StructuredOutputMismatch([]prompts.SchemaError{{Message: err.Error()}}, slot.Reject()), IsError: true}, nil
	}
	if err := s.resolved.Validate(inst); err != nil {
		return tool.Output{Text: prompts.StructuredOutputMismatch(SchemaErrors(s.root, inst, err), slot.Reject()), IsError: true}, nil
	}
	slot.Accept(input)
	return tool.Output{Text: prompts.StructuredOutputAccepted()}, nil
}

// Check validates input against the schema without an answer slot: nil
// when it matches, else an error listing every mismatch with its path
// (the typed Go helpers decode a result after it).
func (s *StructuredOutput) Check(input json.RawMessage) error {
	var inst any
	if err := json.Unmarshal(input, &inst); err != nil {
		return fmt.Errorf("not JSON: %w", err)
	}
	if err := s.cost.answerCost(inst); err != nil {
		return err
	}
	verr := s.resolved.Validate(inst)
	if verr == nil {
		return nil
	}
	var b strings.Builder
	b.WriteString("does not match the schema:")
	for _, e := range SchemaErrors(s.root, inst, verr) {
		fmt.Fprintf(&b, " at %s: %s;", cmp.Or(e.Path, "(root)"), e.Message)
	}
	return errors.New(strings.TrimSuffix(b.String(), ";"))
}

// SchemaErrors lists every error of inst against root, each with the JSON
// pointer of the input value it is about, in path order. The validator
// stops at its first error (verr); the list is made by walking the schema
// and the instance for the common keywords, and is verr's message alone
// when that walk finds nothing.
func SchemaErrors(root *jsonschema.Schema, inst any, verr error) []prompts.SchemaError {
	out := collect(root, inst)
	if len(out) == 0 {
		return []prompts.SchemaError{{Message: verr.Error()}}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
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
	// maxReminders, when above 0, bounds the turns ended without a call
	// that are answered with a reminder (LimitReminders); reminders
	// counts them.
	maxReminders, reminders int
}

// LimitReminders bounds the turns the model may end without a call to n
// reminders: the next one spends the slot whatever attempts are left (a
// sub-agent with an output schema is reminded once).
func (o *OutputSlot) LimitReminders(n int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.maxReminders = n
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
	return o.value == nil && (o.attempts >= o.max || o.maxReminders > 0 && o.reminders > o.maxReminders)
}

// OutOfReminders reports whether the slot was spent by a turn ended
// without a call after its reminders (LimitReminders), not by attempts.
func (o *OutputSlot) OutOfReminders() bool {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.value == nil && o.maxReminders > 0 && o.reminders > o.maxReminders
}

// Remind counts a turn ended without a matching call as an attempt and
// returns the message that asks for the call.
func (o *OutputSlot) Remind() string {
	o.mu.Lock()
	o.reminders++
	o.mu.Unlock()
	o.Reject()
	return prompts.StructuredOutputReminder()
}

// Reject counts a failed attempt and returns how many are left
// (tool.AnswerSlot).
func (o *OutputSlot) Reject() int {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.attempts++
	return o.max - o.attempts
}

// Accept keeps v as the answer (tool.AnswerSlot).
func (o *OutputSlot) Accept(v json.RawMessage) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.value = append(json.RawMessage(nil), v...)
}
