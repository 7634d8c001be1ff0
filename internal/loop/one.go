package loop

import (
	"context"
	"slices"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/tool"
)

// CallOne runs a single tool call of an agent through the steps every call
// of a round takes (input checks, PreToolUse hooks, the authorizer, the
// tool, PostToolUse hooks) and returns how it ended and the tool_result
// block the model reads. conversation is the history up to the answer
// that made the call (tool.Call.Conversation). It is for executors that
// run each call as its own unit of work (a remote worker's activity):
// the outcome is exactly what the loop would have put in its round. A Go
// error is one that would have ended the agent's turn.
func CallOne(ctx context.Context, cfg Config, conversation []llm.Message, call llm.Block) (ToolResult, llm.Block, error) {
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Env == nil {
		cfg.Env = &tool.Env{Files: tool.NewFileState(), Todos: &tool.TodoList{}}
	}
	if cfg.Tools == nil {
		cfg.Tools = tool.NewPool()
	}
	r := &runner{cfg: cfg, yield: func(Event, error) bool { return true }, conversation: slices.Clip(conversation)}
	r.turnTools(ctx)
	res, err := r.runOne(ctx, &call, tool.Turn{})
	if err != nil {
		return res, llm.Block{}, err
	}
	return res, resultBlock(call.ID, res.Output), nil
}
