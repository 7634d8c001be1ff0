package builtin

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/cadre-dev/cadre/tool"
)

// requireRipgrep returns the rg binary. Without it the test fails, naming
// what to install, unless CADRE_TEST_NO_RG=1 says this machine has no rg
// on purpose; then only the Go search is tested.
func requireRipgrep(t testing.TB) string {
	t.Helper()
	p, err := exec.LookPath("rg")
	if err == nil {
		return p
	}
	if os.Getenv("CADRE_TEST_NO_RG") == "1" {
		return ""
	}
	t.Fatalf("ripgrep (rg) is not on PATH: install it (apt-get install ripgrep, brew install ripgrep) so Grep's two search paths can be compared, or set CADRE_TEST_NO_RG=1 to test only the Go search")
	return ""
}

// grepBackends returns the configurations to run a Grep test under.
func grepBackends(t testing.TB) map[string]Config {
	m := map[string]Config{"go": {NoRipgrep: true, GrepWorkers: 3}}
	if rg := requireRipgrep(t); rg != "" {
		m["rg"] = Config{RipgrepPath: rg}
	}
	return m
}

func TestGrep(t *testing.T) {
	env := testEnv(t)
	d := env.Cwd
	tree := []struct {
		name, content string
	}{
		{".gitignore", "*.log\nbuild/\n!keep.log\n/rootonly.txt\n"},
		{"a.go", "package a\n\nfunc Hello() {}\n// hello world\n"},
		{"b.go", "package b\nfunc hello() {}\n"},
		{"notes.md", "Hello notes\nline2\nline3\nline4\nline5\nHello again\n"},
		{"x.log", "hello log\n"},
		{"keep.log", "hello keep\n"},
		{"build/out.go", "func Hello\n"},
		{"rootonly.txt", "hello\n"},
		{"sub/rootonly.txt", "hello sub\n"},
		{"sub/.gitignore", "*.md\n"},
		{"sub/doc.md", "hello md\n"},
		{"sub/c.py", "def hello():\n    pass\n"},
		{".hidden/h.go", "hello hidden\n"},
		{".dot.go", "func Hello dot\n"},
		{"bin.dat", "hello\x00bin"},
		{".git/HEAD", "hello git\n"},
	}
	for i, f := range tree {
		setMtime(t, writeFile(t, d, f.name, f.content), i)
	}
	tests := []struct {
		name    string
		in      map[string]any
		want    string
		wantErr string
	}{
		{name: "files default newest first", in: map[string]any{"pattern": "hello"},
			want: "Found 5 files\n{d}/sub/c.py\n{d}/sub/rootonly.txt\n{d}/keep.log\n{d}/b.go\n{d}/a.go"},
		{name: "files ignore case", in: map[string]any{"pattern": "hello", "-i": true},
			want: "Found 6 files\n{d}/sub/c.py\n{d}/sub/rootonly.txt\n{d}/keep.log\n{d}/notes.md\n{d}/b.go\n{d}/a.go"},
		{name: "content with line numbers", in: map[string]any{"pattern": "Hello", "output_mode": "content"},
			want: "{d}/a.go:3:func Hello() {}\n{d}/notes.md:1:Hello notes\n{d}/notes.md:6:Hello again"},
		{name: "content without line numbers", in: map[string]any{"pattern": "Hello", "output_mode": "content", "-n": false},
			want: "{d}/a.go:func Hello() {}\n{d}/notes.md:Hello notes\n{d}/notes.md:Hello again"},
		{name: "content -C", in: map[string]any{"pattern": "Hello", "output_mode": "content", "-C": 1},
			want: "{d}/a.go-2-\n{d}/a.go:3:func Hello() {}\n{d}/a.go-4-// hello world\n--\n{d}/notes.md:1:Hello notes\n{d}/notes.md-2-line2\n--\n{d}/notes.md-5-line5\n{d}/notes.md:6:Hello again"},
		{name: "content -A -B override -C", in: map[string]any{"pattern": "again", "output_mode": "content", "-C": 5, "-A": 0, "-B": 2},
			want: "{d}/notes.md-4-line4\n{d}/notes.md-5-line5\n{d}/notes.md:6:Hello again"},
		{name: "content -A merges groups", in: map[string]any{"pattern": "notes|line3", "output_mode": "content", "-A": 1},
			want: "{d}/notes.md:1:Hello notes\n{d}/notes.md-2-line2\n{d}/notes.md:3:line3\n{d}/notes.md-4-line4"},
		{name: "count", in: map[string]any{"pattern": "(?i)hello", "output_mode": "count"},
			want: "{d}/a.go:2\n{d}/b.go:1\n{d}/keep.log:1\n{d}/notes.md:2\n{d}/sub/c.py:1\n{d}/sub/rootonly.txt:1\n\nFound 8 matching lines in 6 files."},
		{name: "glob includes hidden file it names", in: map[string]any{"pattern": "Hello", "glob": "*.go"},
			want: "Found 2 files\n{d}/.dot.go\n{d}/a.go"},
		{name: "negated glob", in: map[string]any{"pattern": "hello", "glob": "!*.go"},
			want: "Found 3 files\n{d}/sub/c.py\n{d}/sub/rootonly.txt\n{d}/keep.log"},
		{name: "anchored glob", in: map[string]any{"pattern": "hello", "glob": "sub/*.txt"},
			want: "Found 1 file\n{d}/sub/rootonly.txt"},
		{name: "two globs", in: map[string]any{"pattern": "hello", "glob": "*.py *.log"},
			want: "Found 3 files\n{d}/sub/c.py\n{d}/keep.log\n{d}/x.log"},
		{name: "type", in: map[string]any{"pattern": "hello", "type": "py"}, want: "Found 1 file\n{d}/sub/c.py"},
		{name: "type go", in: map[string]any{"pattern": "(?i)hello", "type": "go", "output_mode": "count"},
			want: "{d}/.dot.go:1\n{d}/a.go:2\n{d}/b.go:1\n\nFound 4 matching lines in 3 files."},
		{name: "multiline", in: map[string]any{"pattern": `Hello\(\) \{\}\n// hello`, "multiline": true, "output_mode": "content"},
			want: "{d}/a.go:3:func Hello() {}\n{d}/a.go:4:// hello world"},
		{name: "multiline dot spans lines", in: map[string]any{"pattern": `notes.*line2`, "multiline": true, "output_mode": "count"},
			want: "{d}/notes.md:2\n\nFound 2 matching lines in 1 file."},
		{name: "without multiline no span", in: map[string]any{"pattern": `notes.*line2`}, want: "No files found"},
		{name: "head_limit files", in: map[string]any{"pattern": "hello", "head_limit": 2},
			want: "Found 5 files\n{d}/sub/c.py\n{d}/sub/rootonly.txt\n(3 more files not shown because of head_limit; narrow the search with path, glob or type, or raise head_limit.)"},
		{name: "head_limit content", in: map[string]any{"pattern": "Hello", "output_mode": "content", "head_limit": 1},
			want: "{d}/a.go:3:func Hello() {}\n(2 more lines not shown because of head_limit; narrow the search with path, glob or type, or raise head_limit.)"},
		{name: "explicit ignored file", in: map[string]any{"pattern": "hello", "path": "x.log", "output_mode": "content"},
			want: "{d}/x.log:1:hello log"},
		{name: "subdirectory", in: map[string]any{"pattern": "hello", "path": "sub"},
			want: "Found 2 files\n{d}/sub/c.py\n{d}/sub/rootonly.txt"},
		{name: "absolute subdirectory", in: map[string]any{"pattern": "hello", "path": d + "/sub", "output_mode": "count"},
			want: "{d}/sub/c.py:1\n{d}/sub/rootonly.txt:1\n\nFound 2 matching lines in 2 files."},
		{name: "hidden dir explicit", in: map[string]any{"pattern": "hello", "path": ".hidden"}, want: "Found 1 file\n{d}/.hidden/h.go"},
		{name: "no files", in: map[string]any{"pattern": "zzz"}, want: "No files found"},
		{name: "no matches", in: map[string]any{"pattern": "zzz", "output_mode": "content"}, want: "No matches found"},
		{name: "pattern starting with dash", in: map[string]any{"pattern": "-dash"}, want: "No files found"},
		{name: "bad regex", in: map[string]any{"pattern": "a(b"}, wantErr: "invalid regular expression"},
		{name: "empty pattern", in: map[string]any{"pattern": ""}, wantErr: "pattern is required"},
		{name: "unknown type", in: map[string]any{"pattern": "a", "type": "cobol"}, wantErr: "known types"},
		{name: "bad mode", in: map[string]any{"pattern": "a", "output_mode": "lines"}, wantErr: "output_mode"},
		{name: "negative context", in: map[string]any{"pattern": "a", "-A": -1}, wantErr: "-A must not be negative"},
		{name: "negative head_limit", in: map[string]any{"pattern": "a", "head_limit": -3}, wantErr: "head_limit"},
		{name: "missing path", in: map[string]any{"pattern": "a", "path": "nope"}, wantErr: "cannot search"},
		{name: "newline without multiline", in: map[string]any{"pattern": `a\nb`}, wantErr: "set multiline"},
		{name: "bad glob", in: map[string]any{"pattern": "a", "glob": "[x"}, wantErr: "invalid glob"},
	}
	for backend, cfg := range grepBackends(t) {
		gr := NewGrep(cfg)
		for _, tc := range tests {
			t.Run(backend+"/"+tc.name, func(t *testing.T) {
				out := call(t, gr, env, tc.in)
				if tc.wantErr != "" {
					checkOutput(t, out, true, tc.wantErr)
					return
				}
				checkOutput(t, out, false)
				if diff := cmp.Diff(strings.ReplaceAll(tc.want, "{d}", d), out.Text); diff != "" {
					t.Errorf("(-want +got):\n%s", diff)
				}
			})
		}
	}
}

func TestGrepParentGitignore(t *testing.T) {
	top := t.TempDir()
	writeFile(t, top, ".gitignore", "*.tmp\n")
	writeFile(t, top, "repo/.git/HEAD", "ref\n")
	writeFile(t, top, "repo/.gitignore", "*.gen\n")
	writeFile(t, top, "repo/sub/a.txt", "needle\n")
	writeFile(t, top, "repo/sub/b.gen", "needle\n")
	writeFile(t, top, "repo/sub/c.tmp", "needle\n") // above the repo root: not ignored
	env := testEnv(t)
	env.Cwd = filepath.Join(top, "repo", "sub")
	for backend, cfg := range grepBackends(t) {
		out := call(t, NewGrep(cfg), env, map[string]any{"pattern": "needle", "output_mode": "count"})
		want := fmt.Sprintf("%[1]s/a.txt:1\n%[1]s/c.tmp:1\n\nFound 2 matching lines in 2 files.", env.Cwd)
		if diff := cmp.Diff(want, out.Text); diff != "" {
			t.Errorf("%s (-want +got):\n%s", backend, diff)
		}
	}
}

func TestGrepCancelled(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Cwd, "a.txt", "x\n")
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	for backend, cfg := range grepBackends(t) {
		out := callCtx(t, ctx, NewGrep(cfg), env, map[string]any{"pattern": "x"})
		checkOutput(t, out, true, "cancelled")
		_ = backend
	}
}

// genTree writes a reproducible tree of n small files under root, with
// nested .gitignore files, negations, hidden files and directories,
// binary files and CRLF lines, for comparing the two search paths.
func genTree(t testing.TB, root string, n int, seed uint64) {
	t.Helper()
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	words := []string{"alpha", "beta", "gamma", "delta", "needle", "Needle", "haystack", "func", "return", "TODO", "fixme", "x := 1", "if err != nil {", "}", "\t", "// comment", "ünïcode", "needle_in_the_stack"}
	dirs := []string{"", "src", "src/pkg", "src/pkg/deep", "build", "docs", "vendor/lib", ".config", "gen/out", "src/gen", "logs", "node_modules/m"}
	exts := []string{".go", ".py", ".md", ".txt", ".log", ".js", ".ts", ".json", ".yaml", ".tmp", ""}
	ignores := map[string]string{
		"":         "*.log\nbuild/\n!important.log\n/rootonly.txt\n**/gen/**\n# comment\n\n*.tmp\n!src/*.tmp\nnode_modules\n",
		"src":      "*.json\n!keep.json\ndeep/*.md\n",
		"docs":     "!*.log\n",
		"src/pkg":  "/local.txt\n*.ya?l\n",
		"vendor":   "*\n!*/\n!*.go\n",
		".config":  "*.md\n",
		"gen":      "!*.go\n",
		"src/gen":  "",
		"logs":     "*.txt\n",
		"src/pkg/": "",
	}
	for dir, content := range ignores {
		writeFile(t, root, filepath.Join(dir, ".gitignore"), content)
	}
	special := []string{"rootonly.txt", "src/rootonly.txt", "important.log", "docs/x.log", "src/keep.json", "src/a.json", "src/pkg/local.txt", "src/pkg/deep/local.txt", "src/pkg/c.yml", "src/pkg/deep/r.md", ".hidden.go", "src/.h.py", "vendor/lib/v.go", "vendor/lib/v.txt", "src/x.tmp", "y.tmp"}
	for i := range n {
		var name string
		if i < len(special) {
			name = special[i]
		} else {
			dir := dirs[r.IntN(len(dirs))]
			base := fmt.Sprintf("f%d", i)
			if r.IntN(15) == 0 {
				base = "." + base
			}
			name = filepath.Join(dir, base+exts[r.IntN(len(exts))])
		}
		var b strings.Builder
		lines := 1 + r.IntN(12)
		for l := 0; l < lines; l++ {
			k := 1 + r.IntN(4)
			for w := 0; w < k; w++ {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[r.IntN(len(words))])
			}
			if r.IntN(10) == 0 {
				b.WriteByte('\r')
			}
			b.WriteByte('\n')
		}
		content := b.String()
		if r.IntN(6) == 0 {
			content = strings.TrimSuffix(content, "\n")
		}
		if r.IntN(40) == 0 {
			content += "\x00binary"
		}
		p := writeFile(t, root, name, content)
		setMtime(t, p, r.IntN(100000))
	}
}

// normalize sorts results by path and drops what the mode does not use.
func normalize(q *grepQuery, files []grepFile) []grepFile {
	out := append([]grepFile(nil), files...)
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	for i := range out {
		if q.mode == modeFiles {
			out[i].Matched = 0
		}
	}
	return out
}

func TestGrepRipgrepParity(t *testing.T) {
	rg := requireRipgrep(t)
	if rg == "" {
		t.Log("CADRE_TEST_NO_RG=1: ripgrep parity not checked")
		return
	}
	root := t.TempDir()
	genTree(t, root, 600, 1)
	env := testEnv(t)
	env.Cwd = root
	inputs := []grepInput{
		{Pattern: "needle"},
		{Pattern: "needle", IgnoreCase: true, OutputMode: modeCount},
		{Pattern: `^func\b`, OutputMode: modeContent},
		{Pattern: `needle\s+(alpha|beta)$`, OutputMode: modeContent, Context: ptr(2)},
		{Pattern: "TODO", OutputMode: modeContent, Before: ptr(1), After: ptr(3)},
		{Pattern: "gamma", Glob: "*.go"},
		{Pattern: "gamma", Glob: "!*.md", OutputMode: modeCount},
		{Pattern: "gamma", Glob: "src/**/*.{go,py}", OutputMode: modeCount},
		{Pattern: "delta", Type: "go", OutputMode: modeCount},
		{Pattern: "delta", Type: "md", OutputMode: modeContent},
		{Pattern: "haystack", Path: "src"},
		{Pattern: "haystack", Path: "vendor", OutputMode: modeCount},
		{Pattern: `alpha.beta`, Multiline: true, OutputMode: modeContent},
		{Pattern: `needle\n\S+`, Multiline: true, OutputMode: modeCount},
		{Pattern: `}\s*\n\s*\w`, Multiline: true, OutputMode: modeContent, After: ptr(1)},
		{Pattern: `^\s*$`, OutputMode: modeCount},
		{Pattern: `\bfunc\b|\Bdle`, OutputMode: modeCount},
		{Pattern: `[^\w\s]+code`, OutputMode: modeContent},
		{Pattern: `ü`, OutputMode: modeContent},
		{Pattern: `x*`, OutputMode: modeCount, Glob: "*.txt"},
		{Pattern: `return\r$`, OutputMode: modeCount},
	}
	goCfg := Config{NoRipgrep: true}.withDefaults()
	for _, in := range inputs {
		name := fmt.Sprintf("%s/%s/%s/%s/ml=%v", in.Pattern, in.OutputMode, in.Glob, in.Type, in.Multiline)
		t.Run(name, func(t *testing.T) {
			q, problem := newGrepQuery(env, in)
			if problem != "" {
				t.Fatal(problem)
			}
			viaGo, err := grepGo(context.Background(), q, goCfg.GrepWorkers)
			if err != nil {
				t.Fatal(err)
			}
			viaRg, err := grepRipgrep(context.Background(), rg, q)
			if err != nil {
				t.Fatal(err)
			}
			if len(viaGo) == 0 {
				t.Errorf("query found nothing; it tests little")
			}
			if diff := cmp.Diff(normalize(q, viaRg), normalize(q, viaGo)); diff != "" {
				t.Errorf("ripgrep and Go results differ (-rg +go):\n%s", diff)
			}
			// And the rendered answers are the same bytes.
			outGo := call(t, NewGrep(Config{NoRipgrep: true}), env, in)
			outRg := call(t, NewGrep(Config{RipgrepPath: rg}), env, in)
			if outGo.Text != outRg.Text || outGo.IsError != outRg.IsError {
				t.Errorf("rendered output differs:\n--- rg\n%s\n--- go\n%s", outRg.Text, outGo.Text)
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestParseIgnoreLine(t *testing.T) {
	tests := []struct {
		line string
		want ignorePattern
		ok   bool
	}{
		{"", ignorePattern{}, false},
		{"# comment", ignorePattern{}, false},
		{"   ", ignorePattern{}, false},
		{"*.log", ignorePattern{glob: "**/*.log"}, true},
		{"*.log  ", ignorePattern{glob: "**/*.log"}, true},
		{`trail\ `, ignorePattern{glob: `**/trail\ `}, true},
		{`\#hash`, ignorePattern{glob: `**/\#hash`}, true},
		{"!keep.log", ignorePattern{glob: "**/keep.log", negated: true}, true},
		{"build/", ignorePattern{glob: "**/build", dirOnly: true}, true},
		{"/root.txt", ignorePattern{glob: "root.txt"}, true},
		{"a/b", ignorePattern{glob: "a/b"}, true},
		{"**/gen", ignorePattern{glob: "**/gen"}, true},
		{"gen/**", ignorePattern{glob: "gen/**/*"}, true},
		{"/", ignorePattern{}, false},
		{"[x", ignorePattern{}, false},
		{"x\r", ignorePattern{glob: "**/x"}, true},
	}
	for _, tc := range tests {
		got, ok := parseIgnoreLine(tc.line)
		if ok != tc.ok || ok && got != tc.want {
			t.Errorf("parseIgnoreLine(%q) = %+v, %v; want %+v, %v", tc.line, got, ok, tc.want, tc.ok)
		}
	}
}

func TestAsciiWordBoundaries(t *testing.T) {
	tests := map[string]string{
		`\bfoo\b`: `(?-u:\b)foo(?-u:\b)`,
		`\Bx`:     `(?-u:\B)x`,
		`\\b`:     `\\b`,
		`a\\\bc`:  `a\\(?-u:\b)c`,
		`trail\`:  `trail\`,
	}
	for in, want := range tests {
		if got := asciiWordBoundaries(in); got != want {
			t.Errorf("asciiWordBoundaries(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestGrepExplicitBinaryFile(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Cwd, "b.bin", "needle\x00rest")
	for backend, cfg := range grepBackends(t) {
		out := call(t, NewGrep(cfg), env, map[string]any{"pattern": "needle", "path": "b.bin"})
		if out.Text != "No files found" {
			t.Errorf("%s: %q", backend, out.Text)
		}
	}
}

// FuzzGrepInput runs the Go search with arbitrary patterns, globs and
// flags over a small tree: any input gives a result, never a panic.
func FuzzGrepInput(f *testing.F) {
	f.Add("needle", "*.go", "", "content", 1, true, false)
	f.Add(`a\nb`, "!x", "go", "count", 0, false, true)
	f.Add("(", "[", "nope", "x", -1, false, false)
	root := f.TempDir()
	genTree(f, root, 60, 3)
	env := &tool.Env{Cwd: root}
	gr := NewGrep(Config{NoRipgrep: true, GrepWorkers: 2})
	f.Fuzz(func(t *testing.T, pattern, glob, typ, mode string, ctxLines int, ci, ml bool) {
		in := map[string]any{"pattern": pattern, "glob": glob, "type": typ, "output_mode": mode, "-C": ctxLines, "-i": ci, "multiline": ml}
		out := call(t, gr, env, in)
		if out.Text == "" {
			t.Fatal("empty answer")
		}
	})
}

// FuzzGrepParity feeds arbitrary patterns to both search paths over a
// small tree and requires the same results.
func FuzzGrepParity(f *testing.F) {
	rg := requireRipgrep(f)
	f.Add(`\bfunc\b`, false, false)
	f.Add(`(?i)NEEDLE\s`, true, false)
	f.Add(`}\s*\n\s*\w`, false, true)
	f.Add(`[^a-z]+$`, false, false)
	f.Add(`\pL+code`, false, false)
	root := f.TempDir()
	genTree(f, root, 80, 5)
	env := &tool.Env{Cwd: root}
	f.Fuzz(func(t *testing.T, pattern string, ci, ml bool) {
		if rg == "" {
			return
		}
		in := grepInput{Pattern: pattern, IgnoreCase: ci, Multiline: ml, OutputMode: modeContent, Context: ptr(1)}
		q, problem := newGrepQuery(env, in)
		if problem != "" {
			return
		}
		viaGo, err := grepGo(context.Background(), q, 2)
		if err != nil {
			t.Fatal(err)
		}
		viaRg, err := grepRipgrep(context.Background(), rg, q)
		if err != nil {
			t.Logf("ripgrep rejected %q (as %q): %v", pattern, q.rgPattern, err)
			return
		}
		if diff := cmp.Diff(normalize(q, viaRg), normalize(q, viaGo)); diff != "" {
			t.Fatalf("pattern %q (rg: %q): results differ (-rg +go):\n%s", pattern, q.rgPattern, diff)
		}
	})
}

// FuzzGrepGlobParity feeds arbitrary glob filters and ignore-file lines to
// both search paths and requires the same files.
func FuzzGrepGlobParity(f *testing.F) {
	rg := requireRipgrep(f)
	f.Add("*.go", "*.log")
	f.Add("!src/**", "!*.md")
	f.Add("**/gen/*.{go,py}", "src/\n!src/pkg/")
	f.Add(".*", "/f1*\n")
	f.Fuzz(func(t *testing.T, glob, ignoreLines string) {
		if rg == "" || strings.ContainsAny(glob+ignoreLines, "\x00\\") {
			return
		}
		root := t.TempDir()
		genTree(t, root, 40, 9)
		writeFile(t, root, "src/.gitignore", ignoreLines)
		env := &tool.Env{Cwd: root}
		in := grepInput{Pattern: "e", Glob: glob, OutputMode: modeCount}
		q, problem := newGrepQuery(env, in)
		if problem != "" {
			return
		}
		viaGo, err := grepGo(context.Background(), q, 2)
		if err != nil {
			t.Fatal(err)
		}
		viaRg, err := grepRipgrep(context.Background(), rg, q)
		if err != nil {
			t.Logf("ripgrep rejected glob %q: %v", glob, err)
			return
		}
		if diff := cmp.Diff(normalize(q, viaRg), normalize(q, viaGo)); diff != "" {
			t.Fatalf("glob %q, src/.gitignore %q: results differ (-rg +go):\n%s", glob, ignoreLines, diff)
		}
	})
}

func TestBelow(t *testing.T) {
	tests := []struct {
		dir, abs, want string
		ok             bool
	}{
		{"/a", "/a/b/c", "b/c", true},
		{"/a", "/a", "", false},
		{"/a", "/ab/c", "", false},
		{"/", "/x/y", "x/y", true},
		{"/", "/", "", false},
		{"/a/b", "/a", "", false},
	}
	for _, tc := range tests {
		got, ok := below(tc.dir, tc.abs)
		if got != tc.want || ok != tc.ok {
			t.Errorf("below(%q, %q) = %q, %v; want %q, %v", tc.dir, tc.abs, got, ok, tc.want, tc.ok)
		}
	}
}

func TestGrepOutputLimit(t *testing.T) {
	env := testEnv(t)
	writeFile(t, env.Cwd, "a.txt", strings.Repeat("needle here\n", 500))
	writeFile(t, env.Cwd, "b.txt", "needle "+strings.Repeat("ü", 5000)+"\n")
	outs := map[string]string{}
	for backend, cfg := range grepBackends(t) {
		cfg.GrepOutputLimit = 200
		cfg.MaxLineChars = 10
		out := call(t, NewGrep(cfg), env, map[string]any{"pattern": "needle", "output_mode": "content"})
		checkOutput(t, out, false, "(499 more lines not shown because of the output size limit")
		if len(out.Text) > 400 {
			t.Errorf("%s: %d bytes despite the limit", backend, len(out.Text))
		}
		out = call(t, NewGrep(cfg), env, map[string]any{"pattern": "needle", "output_mode": "content", "path": "b.txt"})
		checkOutput(t, out, false, "b.txt:1:needle üüü… [line truncated: 4997 more characters]")
		outs[backend] = out.Text
	}
	if len(outs) == 2 && outs["go"] != outs["rg"] {
		t.Errorf("backends differ:\n%s\n---\n%s", outs["go"], outs["rg"])
	}
}
