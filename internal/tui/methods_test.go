package tui

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// maxMethods is the most methods a type of the package may have: the UI
// is made of components (the conversation pane, the editor, the agents
// panel, the permission dialog, the status bar, the turn, the session
// picker) that Model composes, not one type that does everything
// (issue 22).
const maxMethods = 25

// methodCounts counts the methods declared on each type in files.
func methodCounts(files []*ast.File) map[string]int {
	counts := map[string]int{}
	for _, f := range files {
		for _, d := range f.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || fn.Recv == nil || len(fn.Recv.List) == 0 {
				continue
			}
			counts[receiverType(fn.Recv.List[0].Type)]++
		}
	}
	return counts
}

// receiverType names the type of a method's receiver (T, *T, T[P]).
func receiverType(e ast.Expr) string {
	switch x := e.(type) {
	case *ast.StarExpr:
		return receiverType(x.X)
	case *ast.ParenExpr:
		return receiverType(x.X)
	case *ast.IndexExpr:
		return receiverType(x.X)
	case *ast.IndexListExpr:
		return receiverType(x.X)
	case *ast.Ident:
		return x.Name
	}
	return fmt.Sprintf("%T", e)
}

// tooMany lists the types with more than maxMethods methods.
func tooMany(counts map[string]int) []string {
	var out []string
	for typ, n := range counts {
		if n > maxMethods {
			out = append(out, fmt.Sprintf("%s has %d methods", typ, n))
		}
	}
	sort.Strings(out)
	return out
}

func TestNoTypeHasTooManyMethods(t *testing.T) {
	paths, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, p := range paths {
		f, err := parser.ParseFile(fset, p, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		files = append(files, f)
	}
	counts := methodCounts(files)
	if counts["Model"] == 0 || counts["convoPane"] == 0 {
		t.Fatalf("no method of Model or convoPane counted in %d files: the count reads the wrong files", len(paths))
	}
	if over := tooMany(counts); len(over) > 0 {
		t.Errorf("split these into components of at most %d methods: %s", maxMethods, strings.Join(over, "; "))
	}
}

// TestMethodCountSeesEveryReceiver checks the counter on a source with a
// type one method over the limit, receivers of every form.
func TestMethodCountSeesEveryReceiver(t *testing.T) {
	var b strings.Builder
	b.WriteString("package p\ntype big struct{}\ntype gen[T any] struct{}\ntype pair[K, V any] struct{}\n")
	for i := range maxMethods + 1 {
		if i%2 == 0 {
			fmt.Fprintf(&b, "func (b *big) m%d() {}\n", i)
		} else {
			fmt.Fprintf(&b, "func (big) m%d() {}\n", i)
		}
	}
	b.WriteString("func (g *gen[T]) a() {}\nfunc (p pair[K, V]) b() {}\nfunc free() {}\n")
	f, err := parser.ParseFile(token.NewFileSet(), "p.go", b.String(), parser.SkipObjectResolution)
	if err != nil {
		t.Fatal(err)
	}
	counts := methodCounts([]*ast.File{f})
	if counts["big"] != maxMethods+1 || counts["gen"] != 1 || counts["pair"] != 1 || len(counts) != 3 {
		t.Fatalf("counts %v", counts)
	}
	if over := tooMany(counts); len(over) != 1 || !strings.HasPrefix(over[0], "big has") {
		t.Fatalf("over the limit: %v", over)
	}
}
