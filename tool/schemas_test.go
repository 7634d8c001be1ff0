package tool

import (
	"context"
	"encoding/json"
	"slices"
	"strings"
	"testing"
)

func TestGeneratedSchemasSortedAndWellFormed(t *testing.T) {
	if len(generatedSchemas) < 20 {
		t.Fatalf("%d generated schemas; cadre's tools have more", len(generatedSchemas))
	}
	for i, g := range generatedSchemas {
		if i > 0 && generatedSchemas[i-1].key >= g.key {
			t.Errorf("generatedSchemas not sorted or not unique at %s", g.key)
		}
		if !strings.HasPrefix(g.key, "github.com/cadre-dev/cadre/") {
			t.Errorf("%s: not a type of cadre's module", g.key)
		}
		var s struct {
			Type       string                     `json:"type"`
			Properties map[string]json.RawMessage `json:"properties"`
		}
		if err := json.Unmarshal([]byte(g.schema), &s); err != nil || s.Type != "object" {
			t.Errorf("%s: schema %q is not an object schema: %v", g.key, g.schema, err)
		}
		props, required := schemaFields(json.RawMessage(g.schema))
		if !slices.Equal(props, g.props) || !slices.Equal(required, g.required) {
			t.Errorf("%s: fields %q %q, the schema has %q %q", g.key, g.props, g.required, props, required)
		}
		rs, ok := pregenerated(g.key)
		if !ok || string(rs.schema) != g.schema {
			t.Errorf("pregenerated(%s) = %v", g.key, ok)
		}
	}
	if _, ok := pregenerated("github.com/cadre-dev/cadre/tool.nothing"); ok {
		t.Error("pregenerated found a type not in the table")
	}
}

type notGeneratedIn struct {
	X string `json:"x"`
}

// A type outside the table is reflected; the stale-table guard panics on
// a generated entry that differs from the reflection.
func TestSchemaOutsideTableReflected(t *testing.T) {
	tl := Func(FuncConfig{Name: "T"}, func(context.Context, *Env, notGeneratedIn) (Output, error) { return Output{}, nil })
	if HasGeneratedSchema(tl) {
		t.Fatal("a test type is in the generated table")
	}
	if got := string(tl.Spec().InputSchema); !strings.Contains(got, `"x"`) {
		t.Fatalf("schema %s", got)
	}
	g := generatedSchemas[0]
	defer func() {
		if r := recover(); r == nil || !strings.Contains(r.(string), "stale for "+g.key) {
			t.Fatalf("recovered %v, want the stale-table panic", r)
		}
	}()
	checkPregenerated(g.key, &reflectedSchema{schema: json.RawMessage(`{"type":"object"}`)})
}
