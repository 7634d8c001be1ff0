package builtin

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestGlob(t *testing.T) {
	env := testEnv(t)
	dir := env.Cwd
	files := map[string]int{ // path → mtime offset
		"main.go":            5,
		"old.go":             1,
		"pkg/a.go":           9,
		"pkg/deep/b.go":      7,
		"pkg/deep/b_test.go": 7,
		"README.md":          3,
		".hidden.go":         2,
		".git/config.go":     100,
		"vendor/.git/x.go":   100,
		"ignored/y.go":       4,
		"web/app.ts":         6,
		"web/app.tsx":        8,
	}
	for name, m := range files {
		setMtime(t, writeFile(t, dir, name, "x"), m)
	}
	writeFile(t, dir, ".gitignore", "ignored/\n")
	abs := func(names ...string) string {
		for i, n := range names {
			names[i] = filepath.Join(dir, filepath.FromSlash(n))
		}
		return strings.Join(names, "\n")
	}
	sub := filepath.Join(dir, "pkg")
	tests := []struct {
		name    string
		in      map[string]any
		want    string
		wantErr bool
	}{
		{name: "all go files newest first, .git skipped, gitignored and hidden kept", in: map[string]any{"pattern": "**/*.go"},
			want: abs("pkg/a.go", "pkg/deep/b.go", "pkg/deep/b_test.go", "main.go", "ignored/y.go", ".hidden.go", "old.go")},
		{name: "top level only", in: map[string]any{"pattern": "*.go"}, want: abs("main.go", ".hidden.go", "old.go")},
		{name: "braces", in: map[string]any{"pattern": "web/*.{ts,tsx}"}, want: abs("web/app.tsx", "web/app.ts")},
		{name: "relative path", in: map[string]any{"pattern": "**/*_test.go", "path": "pkg"}, want: abs("pkg/deep/b_test.go")},
		{name: "absolute path", in: map[string]any{"pattern": "*.go", "path": sub}, want: abs("pkg/a.go")},
		{name: "absolute pattern", in: map[string]any{"pattern": filepath.Join(dir, "pkg", "**", "b.go")}, want: abs("pkg/deep/b.go")},
		{name: "literal path", in: map[string]any{"pattern": "pkg/deep/b.go"}, want: abs("pkg/deep/b.go")},
		{name: "prefix dir missing", in: map[string]any{"pattern": "nope/**/*.go"}, want: "No files found"},
		{name: "no match", in: map[string]any{"pattern": "**/*.rs"}, want: "No files found"},
		{name: "empty pattern", in: map[string]any{"pattern": ""}, wantErr: true},
		{name: "bad pattern", in: map[string]any{"pattern": "[abc"}, wantErr: true},
		{name: "missing dir", in: map[string]any{"pattern": "*", "path": "missing"}, wantErr: true},
		{name: "path is a file", in: map[string]any{"pattern": "*", "path": "main.go"}, wantErr: true},
	}
	gl := NewGlob(Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			out := call(t, gl, env, tc.in)
			if out.IsError != tc.wantErr {
				t.Fatalf("IsError = %v: %s", out.IsError, out.Text)
			}
			if tc.want != "" {
				if diff := cmp.Diff(tc.want, out.Text); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestGlobCap(t *testing.T) {
	env := testEnv(t)
	for i := range 12 {
		setMtime(t, writeFile(t, env.Cwd, fmt.Sprintf("f%02d.txt", i), "x"), i)
	}
	out := call(t, NewGlob(Config{GlobLimit: 5}), env, map[string]any{"pattern": "*.txt"})
	lines := strings.Split(out.Text, "\n")
	if len(lines) != 6 || lines[0] != filepath.Join(env.Cwd, "f11.txt") || !strings.Contains(lines[5], "showing 5 of 12") {
		t.Fatalf("capped output:\n%s", out.Text)
	}
}
