package loop

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/tool"
)

// rewriter allows every call with its input replaced.
type rewriter struct{ input json.RawMessage }

func (r rewriter) Authorize(context.Context, permission.Request) (permission.Outcome, error) {
	return permission.Outcome{Allowed: true, UpdatedInput: r.input}, nil
}

// An authorizer that rewrites a call's input makes the tool run with the
// new input, while the history keeps what the model asked for.
func TestAuthorizerUpdatedInput(t *testing.T) {
	var ran string
	echo := tool.Func(tool.FuncConfig{Name: "Echo", Description: "Echoes."}, func(_ context.Context, _ *tool.Env, in struct {
		Text string `json:"text"`
	}) (tool.Output, error) {
		ran = in.Text
		return tool.Output{Text: in.Text}, nil
	})
	m := &fakeModel{turns: []func(*llm.Request) (*llm.Response, error){
		answer(llm.Block{Type: llm.BlockToolUse, ID: "t1", Name: "Echo", Input: json.RawMessage(`{"text":"asked"}`)}),
		answer(llm.TextBlock("done")),
	}}
	cfg := Config{Model: m, ModelID: "m", Tools: tool.NewPool(echo), Authorizer: rewriter{json.RawMessage(`{"text":"rewritten"}`)}}
	var res *Result
	for ev, err := range Run(context.Background(), cfg, []llm.Message{llm.UserText("go")}) {
		if err != nil {
			t.Fatal(err)
		}
		if ev.Kind == Done {
			res = ev.Result
		}
	}
	if ran != "rewritten" {
		t.Fatalf("the tool ran with %q", ran)
	}
	if got := string(res.Messages[1].Content[0].Input); got != `{"text":"asked"}` {
		t.Fatalf("history changed: %s", got)
	}
	if got := res.Messages[2].Content[0].ResultText(); got != "rewritten" {
		t.Fatalf("result %q", got)
	}
}
