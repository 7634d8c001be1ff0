package tool

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"sync"

	"github.com/invopop/jsonschema"

	"github.com/cadre-dev/cadre/llm"
)

// FuncConfig describes a tool built from a typed function.
type FuncConfig struct {
	Name        string
	Description string
	ReadOnly    bool
	// Subject, when set, declares what a call acts on, for permission
	// rules (see Subject and DecodeSubject); the tool then implements
	// SubjectDeclarer. Unset, rules name the tool as a whole.
	Subject func(input json.RawMessage) (Subject, error)
}

// Func builds a Tool from a function taking a typed input struct. The JSON
// schema is reflected from In once, here; field docs come from `json` and
// `jsonschema` struct tags (for example
// `jsonschema:"description=Absolute path"`). Fields without omitempty are
// required. Unknown input fields and JSON that does not fit In become an
// error result the model can read.
func Func[In any](cfg FuncConfig, run func(ctx context.Context, env *Env, in In) (Output, error)) Tool {
	rs := reflectSchema[In](cfg.Name)
	t := &funcTool[In]{
		spec:     llm.ToolSpec{Name: cfg.Name, Description: strings.TrimSpace(cfg.Description), InputSchema: rs.schema},
		readOnly: cfg.ReadOnly,
		run:      run,
		props:    rs.props,
		required: rs.required,
		flat:     rs.flat,
	}
	if cfg.Subject != nil {
		return &declaredFuncTool[In]{funcTool: t, subject: cfg.Subject}
	}
	return t
}

// declaredFuncTool is a funcTool that declares its calls' subject.
type declaredFuncTool[In any] struct {
	*funcTool[In]
	subject func(json.RawMessage) (Subject, error)
}

// Subject implements SubjectDeclarer.
func (t *declaredFuncTool[In]) Subject(input json.RawMessage) (Subject, error) {
	return t.subject(input)
}

// reflectedSchema is the schema reflected from one input type, with its
// fields and required ones. It is never modified once made.
type reflectedSchema struct {
	schema          json.RawMessage
	props, required []string
	// flat: no field of the type can hold an object (flatInput).
	flat bool
}

// schemaCache maps an input type (reflect.Type) to its *reflectedSchema.
// Reflecting a schema costs hundreds of allocations per tool and its result
// depends on the type alone, so every Runtime and every agent share one
// copy per type, the way encoding/json caches its per-type encoders. It
// only ever gains entries, each immutable.
var schemaCache sync.Map

// reflectSchema returns the schema of In, reflected on first use.
func reflectSchema[In any](name string) *reflectedSchema {
	typ := reflect.TypeFor[In]()
	if rs, ok := schemaCache.Load(typ); ok {
		return rs.(*reflectedSchema)
	}
	key := schemaKey(typ)
	rs, ok := pregenerated(key) // schemas.go: cadre's own tools, generated ahead
	if test := inTestBinary(); !ok || test {
		rs = reflectNow[In](name)
		if test {
			checkPregenerated(key, rs)
		}
	}
	rs.flat = flatInput(typ)
	got, _ := schemaCache.LoadOrStore(typ, rs)
	return got.(*reflectedSchema)
}

// reflectNow reflects the schema of In.
func reflectNow[In any](name string) *reflectedSchema {
	r := jsonschema.Reflector{DoNotReference: true, ExpandedStruct: true, AllowAdditionalProperties: false}
	var zero In
	s := r.Reflect(&zero)
	s.Version = ""
	s.ID = ""
	schema, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tool %s: schema: %v", name, err)) // programmer error, at construction
	}
	props, required := schemaFields(schema)
	// Clipped: an append to a shared schema or field list must copy.
	return &reflectedSchema{schema: slices.Clip(schema), props: slices.Clip(props), required: slices.Clip(required)}
}

type funcTool[In any] struct {
	spec     llm.ToolSpec
	readOnly bool
	run      func(ctx context.Context, env *Env, in In) (Output, error)
	// props and required are the schema's fields and required ones.
	props, required []string
	// flat is flatInput of In: CheckInput may decode it without a
	// strict decoder when every field is known.
	flat bool
}

// CheckInput implements InputChecker: a required field missing (or
// null), a field of the wrong type, an unknown field.
func (t *funcTool[In]) CheckInput(input json.RawMessage) []string {
	var in In
	return checkObject(input, t.props, t.required, &in, t.flat)
}

func (t *funcTool[In]) Spec() llm.ToolSpec { return t.spec }
func (t *funcTool[In]) ReadOnly() bool     { return t.readOnly }

func (t *funcTool[In]) Run(ctx context.Context, env *Env, input json.RawMessage) (Output, error) {
	var in In
	if len(input) == 0 {
		input = json.RawMessage("{}")
	}
	if err := decodeInput(input, &in, t.props, t.flat); err != nil {
		return Errorf("invalid input for %s: %v", t.spec.Name, err), nil
	}
	return t.run(ctx, env, in)
}
