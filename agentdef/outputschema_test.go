package agentdef

import (
	"strings"
	"testing"
)

// TestOutputSchemaKey: outputSchema is read from YAML frontmatter and
// from JSON as a schema object, kept as JSON; any other value is a
// warning and ignored.
func TestOutputSchemaKey(t *testing.T) {
	t.Parallel()
	def, diags := ParseFile("/d/a.md", []byte("---\nname: a\ndescription: d\noutputSchema:\n  type: object\n  properties:\n    n: {type: integer}\n  required: [n]\n---\nBody.\n"), SourceProject)
	if len(diags) != 0 || string(def.OutputSchema) != `{"properties":{"n":{"type":"integer"}},"required":["n"],"type":"object"}` {
		t.Fatalf("schema %s diags %v", def.OutputSchema, diags)
	}
	def, diags = ParseFile("/d/b.md", []byte("---\nname: b\ndescription: d\noutputSchema: an object please\n---\nBody.\n"), SourceProject)
	if def == nil || def.OutputSchema != nil || len(diags) != 1 || !strings.Contains(diags[0].Message, `"outputSchema" must be a JSON Schema object, not a string`) {
		t.Fatalf("def %+v diags %v", def, diags)
	}
	def, diags = ParseFile("/d/c.md", []byte("---\nname: c\ndescription: d\noutputSchema:\n  type: array\n---\nBody.\n"), SourceProject)
	if def == nil || def.OutputSchema == nil || len(diags) != 1 || !strings.Contains(diags[0].Message, `"outputSchema" is not usable: the root must have "type": "object"`) || diags[0].Line != 4 {
		t.Fatalf("def %+v diags %+v", def, diags)
	}
}
