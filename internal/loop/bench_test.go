package loop

import (
	"context"
	"encoding/json"
	"iter"
	"os"
	"path/filepath"
	"testing"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/tool/builtin"
)

// readOnceModel asks for one Read of path, then answers "done".
type readOnceModel struct{ input json.RawMessage }

func (m readOnceModel) Stream(_ context.Context, req *llm.Request) iter.Seq2[llm.Event, error] {
	return func(yield func(llm.Event, error) bool) {
		msg := llm.Message{Role: llm.RoleAssistant, Content: []llm.Block{llm.TextBlock("done")}}
		stop := llm.StopEndTurn
		if len(req.Messages) == 1 {
			msg.Content = []llm.Block{{Type: llm.BlockToolUse, ID: "toolu_1", Name: "Read", Input: m.input}}
			stop = llm.StopToolUse
		}
		yield(llm.Event{Kind: llm.EventDone, Response: &llm.Response{Message: msg, StopReason: stop}}, nil)
	}
}

// BenchmarkToolCallHooks is one agent run with one Read call, without
// hooks and with one no-op command hook on PreToolUse, and on PreToolUse
// and PostToolUse: the difference is what a no-op hook costs a tool call.
// The model is in-process so the figure is the hook's cost, not HTTP's.
func BenchmarkToolCallHooks(b *testing.B) {
	dir := b.TempDir()
	file := filepath.Join(dir, "bench-input.txt")
	if err := os.WriteFile(file, []byte("hello\n"), 0o644); err != nil {
		b.Fatal(err)
	}
	input, _ := json.Marshal(map[string]string{"file_path": file})
	noop := `[{"matcher":"*","hooks":[{"type":"command","command":"cat >/dev/null"}]}]`
	for _, bc := range []struct{ name, hooks string }{
		{"none", ``},
		{"pre", `{"PreToolUse":` + noop + `}`},
		{"pre+post", `{"PreToolUse":` + noop + `,"PostToolUse":` + noop + `}`},
	} {
		b.Run(bc.name, func(b *testing.B) {
			cfg := Config{Model: readOnceModel{input: input}, ModelID: "m", Tools: tool.NewPool(builtin.NewRead(builtin.Config{}))}
			if bc.hooks != "" {
				hc, _, err := hooks.Parse(json.RawMessage(bc.hooks), "bench.json")
				if err != nil {
					b.Fatal(err)
				}
				cfg.Hooks = hooks.New(hc, hooks.Options{ProjectDir: dir}).ForAgent(hooks.Scope{SessionID: "s1", Cwd: dir})
			}
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				cfg.Env = &tool.Env{Cwd: dir, Files: tool.NewFileState()}
				for ev, err := range Run(ctx, cfg, []llm.Message{llm.UserText("go")}) {
					if err != nil {
						b.Fatal(err)
					}
					if ev.Kind == ToolEnd && ev.ToolResult.Output.IsError {
						b.Fatal(ev.ToolResult.Output.Text)
					}
				}
			}
		})
	}
}
