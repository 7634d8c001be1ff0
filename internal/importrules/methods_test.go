package importrules

import (
	"bytes"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxMethods is the most methods a type of the module may have (issue
// 22): a type with more does several jobs, and is split into parts that
// each do one (internal/engine/parts.go, permission/parts.go,
// internal/worktree/parts.go show how: small views of the type they
// serve).
const maxMethods = 25

// exception lets a type keep more than maxMethods methods: at most max,
// for the reason why.
type exception struct {
	max int
	why string
}

// allowed are the types still above maxMethods, keyed by methodKey, each
// with the count it may not grow past and a one-line reason it is not
// split yet. An entry that is no longer needed fails the test, so the
// list only shrinks.
var allowed = map[string]exception{
	".Runtime":                {26, "the embedder's whole API (Run, Stop, Background, Compact, MCP, tasks, settings): each a one-line delegation; grouping some behind accessors would break embedders for a count"},
	"internal/engine.Runtime": {26, "the engine's side of the root Runtime, method for method"},
}

// methodKey names a type by its package (relative to the module, "" for
// the root) and its name: "internal/engine.agent".
func methodKey(rel, typ string) string { return rel + "." + typ }

// receiverName names the type of a method's receiver (T, *T, T[P]).
func receiverName(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverName(x.X)
	case *ast.ParenExpr:
		return receiverName(x.X)
	case *ast.IndexExpr:
		return receiverName(x.X)
	case *ast.IndexListExpr:
		return receiverName(x.X)
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", e)
}

// countMethods adds the methods the files declare to counts, keyed by
// methodKey. A method is counted once by name, so that a method declared
// in one file per platform (build constraints) counts once.
func countMethods(rel string, files []*ast.File, names map[string]map[string]bool) {
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			k := methodKey(rel, receiverName(fn.Recv.List[0].Type))
			if names[k] == nil {
				names[k] = map[string]bool{}
			}
			names[k][fn.Name.Name] = true
		}
	}
}

// overLimit lists the types with more methods than allowed, and the
// allowlist entries no longer needed.
func overLimit(names map[string]map[string]bool, allowed map[string]exception) []string {
	var out []string
	for k, set := range names {
		n := len(set)
		a, listed := allowed[k]
		switch {
		case listed && n > a.max:
			out = append(out, fmt.Sprintf("%s has %d methods, more than the %d it is allowed (%s)", k, n, a.max, a.why))
		case !listed && n > maxMethods:
			out = append(out, fmt.Sprintf("%s has %d methods, more than %d: split it into parts with one job each", k, n, maxMethods))
		}
	}
	for k := range allowed {
		if len(names[k]) <= maxMethods {
			out = append(out, fmt.Sprintf("%s has %d methods now: remove it from the allowed list in methods_test.go", k, len(names[k])))
		}
	}
	sort.Strings(out)
	return out
}

// moduleFiles parses the non-test Go files of every package of the
// module, keyed by the package's path relative to the module.
func moduleFiles(t *testing.T) map[string][]*ast.File {
	t.Helper()
	cmd := exec.Command("go", "list", "-f", "{{.ImportPath}}\t{{.Dir}}", module+"/...")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list: %v\n%s", err, stderr.String())
	}
	fset := token.NewFileSet()
	pkgs := map[string][]*ast.File{}
	for line := range strings.Lines(string(out)) {
		path, dir, ok := strings.Cut(strings.TrimSpace(line), "\t")
		if !ok {
			t.Fatalf("go list: unexpected line %q", line)
		}
		rel, ok := relative(path)
		if !ok {
			continue
		}
		paths, err := filepath.Glob(filepath.Join(dir, "*.go"))
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range paths {
			if strings.HasSuffix(p, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatalf("parse %s: %v", p, err)
			}
			pkgs[rel] = append(pkgs[rel], f)
		}
	}
	return pkgs
}

func TestNoTypeHasTooManyMethods(t *testing.T) {
	names := map[string]map[string]bool{}
	for rel, files := range moduleFiles(t) {
		countMethods(rel, files, names)
	}
	if len(names) < 100 {
		t.Fatalf("methods of only %d types counted: the count reads the wrong files", len(names))
	}
	// The counter reads the right files: types known to have methods are
	// seen in the root, the engine and permission.
	for _, k := range []string{".Runtime", "internal/engine.agent", "permission.Checker"} {
		if len(names[k]) == 0 {
			t.Fatalf("no method of %s counted: the count reads the wrong files", k)
		}
	}
	if over := overLimit(names, allowed); len(over) > 0 {
		t.Errorf("types with too many methods:\n%s", strings.Join(over, "\n"))
	}
}

// TestMethodCountFindsBigTypes checks the counter and the limit on a
// source with a type one method over it, receivers of every form, a
// method declared twice (one file per platform) and a stale allowlist
// entry.
func TestMethodCountFindsBigTypes(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\ntype big struct{}\ntype gen[T any] struct{}\ntype pair[K, V any] struct{}\n")
	for i := range maxMethods + 1 {
		if i%2 == 0 {
			fmt.Fprintf(&b, "func (b *big) m%d() {}\n", i)
		} else {
			fmt.Fprintf(&b, "func (big) m%d() {}\n", i)
		}
	}
	b.WriteString("func (g *gen[T]) a() {}\nfunc (p pair[K, V]) b() {}\nfunc (p *pair[K, V]) c() {}\nfunc free() {}\n")
	parse := func(src string) *ast.File {
		f, err := parser.ParseFile(token.NewFileSet(), "p.go", src, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		return f
	}
	other := parse("package p\nfunc (b *big) m0() {}\n") // the same method for another platform
	names := map[string]map[string]bool{}
	countMethods("x/p", []*ast.File{parse(b.String()), other}, names)
	if len(names["x/p.big"]) != maxMethods+1 || len(names["x/p.gen"]) != 1 || len(names["x/p.pair"]) != 2 || len(names) != 3 {
		t.Fatalf("counts %v", names)
	}
	allow := map[string]exception{
		"x/p.gen":  {2, "allowed more than it has: the entry is stale"},
		"x/q.gone": {30, "a type that no longer exists"},
	}
	over := overLimit(names, allow)
	var big, stale int
	for _, o := range over {
		switch {
		case strings.HasPrefix(o, "x/p.big has 26 methods, more than 25"):
			big++
		case strings.Contains(o, "remove it from the allowed list"):
			stale++
		default:
			t.Errorf("unexpected: %s", o)
		}
	}
	if big != 1 || stale != len(allow) {
		t.Fatalf("over the limit: %v", over)
	}
}
