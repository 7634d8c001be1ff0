package loop

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

type oneIn struct {
	Text string `json:"text"`
}

// CallOne takes a single call through the steps a round gives it: the
// tool's result, a denial, a panic and an unknown tool each end as the
// round would have put them before the model.
func TestCallOne(t *testing.T) {
	ran := 0
	echo := tool.Func(tool.FuncConfig{Name: "Echo", Description: "echoes"}, func(_ context.Context, env *tool.Env, in oneIn) (tool.Output, error) {
		ran++
		return tool.Output{Text: "echo: " + in.Text + " call " + env.Call.ID}, nil
	})
	w := tool.Func(tool.FuncConfig{Name: "W", Description: "writes"}, func(context.Context, *tool.Env, oneIn) (tool.Output, error) {
		ran++
		return tool.Output{Text: "wrote"}, nil
	})
	boom := tool.Func(tool.FuncConfig{Name: "Boom", Description: "panics"}, func(context.Context, *tool.Env, oneIn) (tool.Output, error) {
		panic("kaboom")
	})
	cfg := Config{Tools: tool.NewPool(echo, w, boom), Authorizer: &denyAll{}}
	call := func(id, name string) llm.Block {
		return llm.Block{Type: llm.BlockToolUse, ID: id, Name: name, Input: json.RawMessage(`{"text":"hi"}`)}
	}
	for _, tc := range []struct {
		name, tool, want string
		isErr, denied    bool
	}{
		{"result", "Echo", "echo: hi call toolu_Echo", false, false},
		{"denied", "W", "W is denied by rule W", true, true},
		{"panic", "Boom", "kaboom", true, false},
		{"unknown", "Nope", "Nope", true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := ran
			res, block, err := CallOne(context.Background(), cfg, nil, call("toolu_"+tc.tool, tc.tool))
			if err != nil {
				t.Fatal(err)
			}
			if block.ToolUseID != "toolu_"+tc.tool || block.IsError != tc.isErr || res.Denied != tc.denied || !strings.Contains(block.ResultText(), tc.want) {
				t.Fatalf("result %+v, block %+v", res, block)
			}
			if (tc.name == "result") != (ran == before+1) {
				t.Fatalf("the tool ran %d times", ran-before)
			}
		})
	}
}
