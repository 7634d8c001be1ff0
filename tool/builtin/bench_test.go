package builtin

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/tool"
)

// BenchmarkGrep compares the Go search with ripgrep over a generated tree
// of 50,000 small files (with .gitignore files, hidden and binary files).
func BenchmarkGrep(b *testing.B) {
	root := b.TempDir()
	genTree(b, root, 50000, 7)
	env := &tool.Env{Cwd: root, Files: tool.NewFileState()}
	backends := map[string]Config{"go": {NoRipgrep: true}}
	if rg := requireRipgrep(b); rg != "" {
		backends["rg"] = Config{RipgrepPath: rg}
	}
	queries := []struct {
		name string
		in   map[string]any
	}{
		{"files", map[string]any{"pattern": `needle_in_the_stack\s+gamma`}},
		{"content", map[string]any{"pattern": `TODO.*fixme`, "output_mode": "content", "-C": 1}},
		{"count_type", map[string]any{"pattern": `(?i)haystack`, "output_mode": "count", "type": "go"}},
	}
	for _, q := range queries {
		raw, _ := json.Marshal(q.in)
		for _, name := range []string{"go", "rg"} {
			cfg, ok := backends[name]
			if !ok {
				continue
			}
			gr := NewGrep(cfg)
			b.Run(q.name+"/"+name, func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					out, err := gr.Run(context.Background(), env, raw)
					if err != nil || out.IsError {
						b.Fatalf("%v %s", err, out.Text)
					}
				}
			})
		}
	}
}
