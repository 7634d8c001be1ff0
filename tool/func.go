package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/invopop/jsonschema"

	"github.com/cadre-dev/cadre/llm"
)

// FuncConfig describes a tool built from a typed function.
type FuncConfig struct {
	Name        string
	Description string
	ReadOnly    bool
}

// Func builds a Tool from a function taking a typed input struct. The JSON
// schema is reflected from In once, here; field docs come from `json` and
// `jsonschema` struct tags (for example
// `jsonschema:"description=Absolute path"`). Fields without omitempty are
// required. Unknown input fields and JSON that does not fit In become an
// error result the model can read.
func Func[In any](cfg FuncConfig, run func(ctx context.Context, env *Env, in In) (Output, error)) Tool {
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	var zero In
	s := r.Reflect(&zero)
	s.Version = ""
	s.ID = ""
	schema, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", cfg.Name, err)) // programmer error, at construction
	}
	props, required := schemaFields(schema)
	return &funcTool[In]{
		spec:     llm.ToolSpec{Name: cfg.Name, Description: strings.TrimSpace(cfg.Description), InputSchema: schema},
		readOnly: cfg.ReadOnly,
		run:      run,
		props:    props,
		required: required,
	}
}

type funcTool[In any] struct {
	spec     llm.ToolSpec
	readOnly bool
	run      func(ctx context.Context, env *Env, in In) (Output, error)
	// props and required are the schema's fields and required ones.
	props, required []string
}

// CheckInput implements InputChecker: a required field missing (or
// null), a field of the wrong type, an unknown field.
func (t *funcTool[In]) CheckInput(input json.RawMessage) []string {
	var in In
	return checkObject(input, t.props, t.required, &in)
}

func (t *funcTool[In]) Spec() llm.ToolSpec { return t.spec }
func (t *funcTool[In]) ReadOnly() bool     { return t.readOnly }

func (t *funcTool[In]) Run(ctx context.Context, env *Env, input json.RawMessage) (Output, error) {
	var in In
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	dec := json.NewDecoder(strings.NewReader(string(input)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return Errorf("invalid input for %s: %v", t.spec.Name, err), nil
	}
	return t.run(ctx, env, in)
}
