package engine

import (
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// The tools a run builds before its first request take their input
// schemas from tool/schemas_gen.go, not from reflection (issue 24).
func TestDefaultToolSchemasGenerated(t *testing.T) {
	tools := append(defaultTools(&Config{}), toolSearchTool())
	for _, tl := range tools {
		if !tool.HasGeneratedSchema(tl) {
			t.Errorf("%s: input schema not in tool/schemas_gen.go; regenerate it (see tool/schemas.go)", tl.Spec().Name)
		}
	}
}
