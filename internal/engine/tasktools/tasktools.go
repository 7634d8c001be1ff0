// Package tasktools holds the model-facing tools that act on an agent's
// tasks — TaskStop, TaskOutput and SendMessage (S-7.4, S-8.2), in Claude
// Code's names and input shapes — and the Agent tool's input and schema.
// The tools decode and answer; the engine does the work behind Caller.
package tasktools

import (
	"cmp"
	"context"
	"encoding/json"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// Caller is the calling agent's side of the task tools: its session's
// task registry, the answers of ended tasks, and message delivery.
type Caller interface {
	// Registry is the session's task registry.
	Registry() *task.Registry
	// FinalText is the final answer of the ended task id, if it has one.
	FinalText(id string) (string, bool)
	// SendMessage delivers m from the calling agent (S-8.2).
	SendMessage(ctx context.Context, m Message) (tool.Output, error)
}

// Message is a SendMessage call's input.
type Message struct {
	To      string `json:"to" jsonschema:"description=The agent id of a sub-agent (running or finished) or main."`
	Message string `json:"message" jsonschema:"description=The message."`
	Summary string `json:"summary,omitempty" jsonschema:"description=A few words saying what the message is about."`
}

type taskStopInput struct {
	TaskID string `json:"task_id,omitempty" jsonschema:"description=The id of the background task (the agent id) to stop."`
	// ShellID is Claude Code's deprecated name for task_id.
	ShellID string `json:"shell_id,omitempty" jsonschema:"description=Deprecated: use task_id."`
}

type taskOutputInput struct {
	TaskID  string `json:"task_id" jsonschema:"description=The id of the background task: the agent id its launch or notification gave."`
	Block   *bool  `json:"block,omitempty" jsonschema:"description=Whether to wait for the task to end (default true); false returns its status at once."`
	Timeout int    `json:"timeout,omitempty" jsonschema:"description=With block: how long to wait in milliseconds (default 30000; at most 600000)."`
}

// Tools builds TaskStop, TaskOutput and SendMessage. caller finds the
// calling agent from a call's context and Env; nil means the call came
// from outside a session, which gets an error result.
func Tools(caller func(context.Context, *tool.Env) Caller) []tool.Tool {
	return []tool.Tool{
		tool.Func(tool.FuncConfig{Name: tool.TaskStop, Description: prompts.TaskStopTool}, func(ctx context.Context, env *tool.Env, in taskStopInput) (tool.Output, error) {
			c := caller(ctx, env)
			if c == nil {
				return ErrorOutput(prompts.AgentOutsideSession()), nil
			}
			id := strings.TrimSpace(cmp.Or(in.TaskID, in.ShellID))
			info, err := c.Registry().Stop(id)
			if err != nil {
				return ErrorOutput(prompts.TaskStopFailed(id, err.Error(), IDs(c.Registry()))), nil
			}
			b, _ := json.Marshal(map[string]string{"message": "Stopped task " + id, "task_id": id, "task_type": "local_agent", "command": info.Description})
			return tool.Output{Text: string(b)}, nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.TaskOutput, Description: prompts.TaskOutputTool, ReadOnly: true}, func(ctx context.Context, env *tool.Env, in taskOutputInput) (tool.Output, error) {
			c := caller(ctx, env)
			if c == nil {
				return ErrorOutput(prompts.AgentOutsideSession()), nil
			}
			reg := c.Registry()
			if _, ok := reg.Get(in.TaskID); !ok {
				return ErrorOutput(prompts.TaskStopFailed(in.TaskID, "no such task", IDs(reg))), nil
			}
			if in.Block == nil || *in.Block {
				wait := time.Duration(min(max(in.Timeout, 0), 600_000)) * time.Millisecond
				if in.Timeout == 0 {
					wait = 30 * time.Second
				}
				wctx, cancel := context.WithTimeout(ctx, wait)
				WaitEnded(wctx, reg, in.TaskID)
				cancel()
			}
			info, _ := reg.Get(in.TaskID)
			out := map[string]any{"task_id": info.ID, "task_type": "local_agent", "status": info.Status, "description": info.Description,
				"output_file": info.OutputFile, "progress": info.Progress}
			if info.Status.Terminal() {
				if text, ok := c.FinalText(info.ID); ok {
					out["output"] = text
				}
			}
			j, _ := json.Marshal(out)
			return tool.Output{Text: string(j)}, nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.SendMessage, Description: prompts.SendMessageTool}, func(ctx context.Context, env *tool.Env, in Message) (tool.Output, error) {
			c := caller(ctx, env)
			if c == nil {
				return ErrorOutput(prompts.AgentOutsideSession()), nil
			}
			return c.SendMessage(ctx, in)
		}),
	}
}

// IDs lists every task id of the registry, for messages.
func IDs(reg *task.Registry) []string {
	var out []string
	for _, t := range reg.List() {
		out = append(out, t.ID)
	}
	return out
}

// WaitEnded waits until task id ended (or is unknown) or ctx ends.
func WaitEnded(ctx context.Context, reg *task.Registry, id string) {
	for {
		ch := reg.Changed()
		if info, ok := reg.Get(id); !ok || info.Status.Terminal() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// ErrorOutput is a tool result the model reads as a failure.
func ErrorOutput(msg string) tool.Output { return tool.Output{Text: msg, IsError: true} }
