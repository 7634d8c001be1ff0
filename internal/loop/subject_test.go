package loop

import (
	"context"
	"strings"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

type touchIn struct {
	Path string `json:"path"`
}

// The loop hands the checker the subject an embedder's tool declares, so
// its own content rules allow, ask (headless: refused) and deny calls by
// the path they touch.
func TestEmbedderToolSubjectThroughTheLoop(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	var mu sync.Mutex
	var touched []string
	touch := tool.Func(tool.FuncConfig{Name: "Touch", Description: "touches a file",
		Subject: tool.DecodeSubject(func(in touchIn) tool.Subject { return tool.Subject{Paths: []string{in.Path}} }),
	}, func(_ context.Context, _ *tool.Env, in touchIn) (tool.Output, error) {
		mu.Lock()
		defer mu.Unlock()
		touched = append(touched, in.Path)
		return tool.Output{Text: "touched " + in.Path}, nil
	})
	var rules []permission.Rule
	for b, raws := range map[permission.Behavior][]string{
		permission.Allow: {"Touch(./src/**)"},
		permission.Ask:   {"Touch(./docs/**)"},
		permission.Deny:  {"Touch(./secrets/**)"},
	} {
		rs, err := permission.ParseRules(b, "settings.json", "", raws)
		if err != nil {
			t.Fatal(err)
		}
		rules = append(rules, rs...)
	}
	c, err := permission.NewChecker(permission.Config{Cwd: dir, Rules: rules, Tools: []string{"Touch"}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := permission.NewSession(permission.SessionConfig{Checker: c})
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "Touch", `{"path":"src/a.go"}`), use("2", "Touch", `{"path":"docs/b.md"}`), use("3", "Touch", `{"path":"secrets/c"}`)),
		answer(llm.TextBlock("ok")),
	}}
	res, _, err := run(t, context.Background(), Config{Model: m, Tools: tool.NewPool(touch), Authorizer: s,
		Env: &tool.Env{Cwd: dir, Files: tool.NewFileState()}}, "go")
	if err != nil {
		t.Fatal(err)
	}
	if len(touched) != 1 || touched[0] != "src/a.go" {
		t.Fatalf("touched %v, want only src/a.go", touched)
	}
	results := res.Messages[2].Content
	for i, want := range []string{"touched src/a.go", "Touch(./docs/**)", "Touch(./secrets/**)"} {
		if got := results[i].ResultText(); !strings.Contains(got, want) {
			t.Errorf("result %d = %q, want it to name %q", i+1, got, want)
		}
	}
}
