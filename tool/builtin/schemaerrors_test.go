package builtin

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
)

// TestSchemaErrorsEvery checks that a call breaking several rules at once
// gets every error, each at the JSON pointer of the value it is about,
// for each common keyword; the validator agrees that the input fails.
func TestSchemaErrorsEvery(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name, schema, input string
		want                []string // "path: message", in path order
	}{
		{
			name:   "types nested in arrays and objects",
			schema: `{"type":"object","properties":{"a":{"type":"array","items":{"type":"object","properties":{"n":{"type":"integer"},"s":{"type":["string","null"]}}}}}}`,
			input:  `{"a":[{"n":1.5,"s":true},{"n":"x"},{"n":2,"s":null}]}`,
			want:   []string{"/a/0/n: got number, want integer", "/a/0/s: got boolean, want string or null", "/a/1/n: got string, want integer"},
		},
		{
			name:   "required, additionalProperties false, escaped keys",
			schema: `{"type":"object","required":["x","y","z"],"properties":{"x":{},"a/b":{"type":"string"},"t~":{"type":"string"}},"additionalProperties":false}`,
			input:  `{"x":1,"a/b":2,"t~":3,"q":0,"r":0}`,
			want: []string{": missing properties 'y', 'z'", ": additional properties 'q', 'r' not allowed",
				"/a~1b: got number, want string", "/t~0: got number, want string"},
		},
		{
			name:   "additionalProperties schema and patternProperties",
			schema: `{"type":"object","patternProperties":{"^n_":{"type":"number"}},"additionalProperties":{"type":"string"}}`,
			input:  `{"n_a":"1","n_b":2,"other":3}`,
			want:   []string{"/n_a: got string, want number", "/other: got number, want string"},
		},
		{
			name: "string and number bounds",
			schema: `{"type":"object","properties":{"s":{"type":"string","minLength":3,"maxLength":4,"pattern":"^[a-z]+$"},"t":{"type":"string","maxLength":2},` +
				`"n":{"type":"number","minimum":1,"maximum":5,"multipleOf":2},"e":{"exclusiveMinimum":0,"exclusiveMaximum":1}}}`,
			input: `{"s":"A1","t":"héé","n":7,"e":1}`,
			want: []string{`/e: exclusiveMaximum: got 1, want less than 1`, `/n: maximum: got 7, want 5`, `/n: multipleOf: got 7, want a multiple of 2`,
				`/s: minLength: got 2, want 3`, `/s: "A1" does not match pattern "^[a-z]+$"`, `/t: maxLength: got 3, want 2`},
		},
		{
			name:   "enum, const, arrays",
			schema: `{"type":"object","properties":{"c":{"const":"on"},"e":{"enum":["a",1,null]},"l":{"type":"array","minItems":3,"uniqueItems":true},"m":{"maxItems":1}}}`,
			input:  `{"c":"off","e":2,"l":[1,1],"m":[0,0]}`,
			want: []string{`/c: value must be "on"`, `/e: value must be one of "a", 1, null`, `/l: minItems: got 2, want 3`,
				`/l: items at 0 and 1 are equal, want unique items`, `/m: maxItems: got 2, want 1`},
		},
		{
			name:   "prefixItems then items false",
			schema: `{"type":"object","properties":{"p":{"type":"array","prefixItems":[{"type":"string"},{"type":"integer"}],"items":false}}}`,
			input:  `{"p":[1,"x",true]}`,
			want:   []string{"/p/0: got number, want string", "/p/1: got string, want integer", "/p/2: value not allowed here"},
		},
		{
			name:   "$ref to $defs, recursive",
			schema: `{"type":"object","properties":{"tree":{"$ref":"#/$defs/node"},"old":{"$ref":"#/$defs/id"}},"$defs":{"id":{"type":"string","pattern":"^id-"},"node":{"type":"object","required":["v"],"properties":{"v":{"type":"integer"},"kids":{"type":"array","items":{"$ref":"#/$defs/node"}}}}}}`,
			input:  `{"tree":{"v":1,"kids":[{"v":"two"},{"kids":[]}]},"old":"x"}`,
			want:   []string{`/old: "x" does not match pattern "^id-"`, "/tree/kids/0/v: got string, want integer", "/tree/kids/1: missing property 'v'"},
		},
		{
			name:   "allOf, anyOf, oneOf",
			schema: `{"type":"object","properties":{"all":{"allOf":[{"minimum":3},{"multipleOf":5}]},"any":{"anyOf":[{"type":"string"},{"type":"integer","minimum":10}]},"one":{"oneOf":[{"type":"number"},{"type":"integer"}]}}}`,
			input:  `{"all":2,"any":4,"one":3}`,
			want: []string{"/all: minimum: got 2, want 3", "/all: multipleOf: got 2, want a multiple of 5",
				"/any: value matches none of the 2 anyOf alternatives; the closest one fails with:", "/any: minimum: got 4, want 10",
				"/one: value matches oneOf alternatives 0 and 1, want exactly one"},
		},
		{
			name:   "draft-07 items array, additionalItems, definitions",
			schema: `{"$schema":"http://json-schema.org/draft-07/schema#","type":"object","properties":{"t":{"items":[{"type":"boolean"}],"additionalItems":{"type":"string"}},"d":{"$ref":"#/definitions/id"}},"definitions":{"id":{"type":"integer"}}}`,
			input:  `{"t":[1,"a",2],"d":"x"}`,
			want:   []string{"/d: got string, want integer", "/t/0: got number, want boolean", "/t/2: got number, want string"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			so, err := NewStructuredOutput(json.RawMessage(tc.schema))
			if err != nil {
				t.Fatal(err)
			}
			var inst any
			if err := json.Unmarshal([]byte(tc.input), &inst); err != nil {
				t.Fatal(err)
			}
			verr := so.resolved.Validate(inst)
			if verr == nil {
				t.Fatalf("the validator accepts %s", tc.input)
			}
			var got []string
			for _, e := range SchemaErrors(so.root, inst, verr) {
				got = append(got, e.Path+": "+e.Message)
			}
			if !slices.Equal(got, tc.want) {
				t.Fatalf("errors\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(tc.want, "\n  "))
			}
		})
	}
}

// TestSchemaErrorsFallback: when the walk knows none of the failing
// keywords, the validator's own message is the one error.
func TestSchemaErrorsFallback(t *testing.T) {
	t.Parallel()
	so, err := NewStructuredOutput(json.RawMessage(`{"type":"object","properties":{"a":{"not":{"type":"string"}}}}`))
	if err != nil {
		t.Fatal(err)
	}
	inst := map[string]any{"a": "s"}
	verr := so.resolved.Validate(inst)
	if verr == nil {
		t.Fatal("the validator accepts a string under not string")
	}
	errs := SchemaErrors(so.root, inst, verr)
	if len(errs) != 1 || errs[0].Path != "" || errs[0].Message != verr.Error() {
		t.Fatalf("errors %+v, want the validator's %q", errs, verr)
	}
}

// TestSchemaErrorsRefCycle: a $ref that leads back to itself ends the
// walk instead of looping.
func TestSchemaErrorsRefCycle(t *testing.T) {
	t.Parallel()
	var s jsonschema.Schema
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":{"$ref":"#/$defs/x"}},"$defs":{"x":{"$ref":"#/$defs/x"}}}`), &s); err != nil {
		t.Fatal(err)
	}
	_ = collect(&s, map[string]any{"a": 1})
}

// TestSchemaErrorsBounded: nested anyOf through $ref, linear in size but
// exponential to walk in full, ends within the step bound.
func TestSchemaErrorsBounded(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString(`{"type":"object","properties":{"a":{"$ref":"#/$defs/d0"}},"$defs":{`)
	const levels = 40
	for i := range levels {
		fmt.Fprintf(&b, `"d%d":{"anyOf":[{"$ref":"#/$defs/d%d"},{"$ref":"#/$defs/d%d","minimum":%d}]},`, i, i+1, i+1, i)
	}
	fmt.Fprintf(&b, `"d%d":{"type":"string"}}}`, levels)
	// NewStructuredOutput now refuses such a schema (schemacost.go); the
	// walk is bounded on its own all the same.
	if _, err := NewStructuredOutput(json.RawMessage(b.String())); err == nil || !strings.Contains(err.Error(), "anyOf/oneOf/allOf nested through $ref") {
		t.Fatalf("NewStructuredOutput: %v, want the cost refused", err)
	}
	root := new(jsonschema.Schema)
	if err := json.Unmarshal([]byte(b.String()), root); err != nil {
		t.Fatal(err)
	}
	c := &collector{root: root, regexps: map[string]*regexp.Regexp{}}
	c.walk(root, map[string]any{"a": 1.0}, "", 0)
	if c.steps > maxCollectSteps {
		t.Fatalf("%d steps, more than %d", c.steps, maxCollectSteps)
	}
}
