package agentdef

import (
	"io/fs"
	"testing"
)

// Every start parses the built-in definitions: each takes the fast path,
// none pays for go-yaml (issue 24).
func TestBuiltinsTakeFastPath(t *testing.T) {
	names, err := fs.Glob(builtinFS, "builtin/*.md")
	if err != nil || len(names) < 4 {
		t.Fatalf("built-in definitions %v: %v", names, err)
	}
	for _, name := range names {
		data, err := builtinFS.ReadFile(name)
		if err != nil {
			t.Fatal(err)
		}
		sp, ok := splitFrontmatter(normalize(data))
		if !ok {
			t.Fatalf("%s: no frontmatter", name)
		}
		if _, status, _ := fastBlock(sp.block, sp.blockLine); status != fastOK {
			t.Errorf("%s: the fast path gives %d, want fastOK", name, status)
		}
	}
}
