package builtin

import (
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// Every built-in tool's input schema is generated ahead (tool/schemas.go),
// so building the tools at start reflects nothing (issue 24).
func TestBuiltinSchemasGenerated(t *testing.T) {
	for _, tl := range append(Tools(Config{}), NewMultiEdit(Config{}), NewLS(Config{}), NewNotebookEdit(Config{})) {
		if !tool.HasGeneratedSchema(tl) {
			t.Errorf("%s: input schema not in tool/schemas_gen.go; regenerate it (see tool/schemas.go)", tl.Spec().Name)
		}
	}
}
