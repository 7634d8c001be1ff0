package loop

import (
	"context"
	"slices"
	"sync"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// fakeSource offers the tools of the current step; Resolve answers late,
// a tool that arrived after the turn's list, or withholds one.
type fakeSource struct {
	mu       sync.Mutex
	tools    []tool.Tool
	late     tool.Tool
	withheld string
}

func (f *fakeSource) set(ts ...tool.Tool) {
	f.mu.Lock()
	f.tools = ts
	f.mu.Unlock()
}

func (f *fakeSource) Tools(context.Context) []tool.Tool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.tools)
}

func (f *fakeSource) Resolve(_ context.Context, name string) (tool.Tool, string) {
	if f.late != nil && name == f.late.Spec().Name {
		return f.late, ""
	}
	if name == f.withheld {
		return nil, "withheld: " + name
	}
	return nil, ""
}

// The dynamic tools join the static ones after them; an unchanged set
// keeps the request's tool list (the same slice: no rebuilt prefix); a
// change shows at the next turn; a tool the turn did not list runs when
// the source resolves it; a withheld one gets the source's message; an
// image block of a result reaches the model.
func TestDynamicTools(t *testing.T) {
	t.Parallel()
	src := &fakeSource{withheld: "mcp__s__secret", late: echo("mcp__s__late", true)}
	src.set(echo("mcp__s__a", true))
	img := recTool{name: "mcp__s__img", readOnly: true, run: func(context.Context, echoIn) (tool.Output, error) {
		return tool.Output{Blocks: []llm.Block{llm.ImageBlock("image/png", "iVBORw0KGgo=")}}, nil
	}}.build()
	fm := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(use("1", "mcp__s__a", `{"text":"x"}`)),
		func(req *llm.Request) (*llm.Response, error) {
			// The set changes before the third request.
			src.set(echo("mcp__s__a", true), img)
			return answer(use("2", "mcp__s__late", `{"text":"y"}`), use("3", "mcp__s__secret", `{}`))(req)
		},
		answer(use("4", "mcp__s__img", `{"text":""}`)),
		answer(llm.TextBlock("done")),
	}}
	cfg := Config{Model: fm, ModelID: "m", Tools: tool.NewPool(echo("Static", true)), Dynamic: src}
	if _, _, err := run(t, context.Background(), cfg, "go"); err != nil {
		t.Fatal(err)
	}
	names := func(i int) []string {
		var out []string
		for _, s := range fm.reqs[i].Tools {
			out = append(out, s.Name)
		}
		return out
	}
	if !slices.Equal(names(0), []string{"Static", "mcp__s__a"}) || !slices.Equal(names(2), []string{"Static", "mcp__s__a", "mcp__s__img"}) {
		t.Fatalf("tools %v then %v", names(0), names(2))
	}
	if &fm.reqs[0].Tools[0] != &fm.reqs[1].Tools[0] {
		t.Error("an unchanged tool set rebuilt the tool list")
	}
	res := fm.reqs[2].Messages[len(fm.reqs[2].Messages)-1].Content
	if res[0].ResultText() != "mcp__s__late:y" || res[1].ResultText() != "withheld: mcp__s__secret" || !res[1].IsError {
		t.Fatalf("results %+v", res)
	}
	last := fm.reqs[3].Messages[len(fm.reqs[3].Messages)-1].Content[0]
	if len(last.Content) != 1 || last.Content[0].Type != llm.BlockImage || last.Content[0].MediaType != "image/png" {
		t.Fatalf("image result %+v", last)
	}
}
