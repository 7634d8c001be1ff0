package cadre

import (
	"cmp"
	"context"
	"encoding/json"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
)

// The task tools of the main agent (S-7.4, S-8.2): TaskStop, TaskOutput
// and SendMessage, in Claude Code's names and input shapes. They act on
// the session's task registry through the runtime that owns the calling
// agent.

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

type sendMessageInput struct {
	To      string `json:"to" jsonschema:"description=The agent id of a sub-agent (running or finished) or main."`
	Message string `json:"message" jsonschema:"description=The message."`
	Summary string `json:"summary,omitempty" jsonschema:"description=A few words saying what the message is about."`
}

// taskTools builds the tools for the runtime.
func taskTools() []tool.Tool {
	return []tool.Tool{
		tool.Func(tool.FuncConfig{Name: tool.TaskStop, Description: prompts.TaskStopTool}, func(ctx context.Context, env *tool.Env, in taskStopInput) (tool.Output, error) {
			a := agentFrom(env)
			if a == nil {
				return errorOutput(prompts.AgentOutsideSession()), nil
			}
			id := strings.TrimSpace(cmp.Or(in.TaskID, in.ShellID))
			info, err := a.run.rt.bg.reg.Stop(id)
			if err != nil {
				return errorOutput(prompts.TaskStopFailed(id, err.Error(), a.run.rt.bg.ids())), nil
			}
			b, _ := json.Marshal(map[string]string{"message": "Stopped task " + id, "task_id": id, "task_type": "local_agent", "command": info.Description})
			return tool.Output{Text: string(b)}, nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.TaskOutput, Description: prompts.TaskOutputTool, ReadOnly: true}, func(ctx context.Context, env *tool.Env, in taskOutputInput) (tool.Output, error) {
			a := agentFrom(env)
			if a == nil {
				return errorOutput(prompts.AgentOutsideSession()), nil
			}
			b := a.run.rt.bg
			if _, ok := b.reg.Get(in.TaskID); !ok {
				return errorOutput(prompts.TaskStopFailed(in.TaskID, "no such task", b.ids())), nil
			}
			if in.Block == nil || *in.Block {
				wait := time.Duration(min(max(in.Timeout, 0), 600_000)) * time.Millisecond
				if in.Timeout == 0 {
					wait = 30 * time.Second
				}
				wctx, cancel := context.WithTimeout(ctx, wait)
				b.waitEnded(wctx, in.TaskID)
				cancel()
			}
			info, _ := b.reg.Get(in.TaskID)
			out := map[string]any{"task_id": info.ID, "task_type": "local_agent", "status": info.Status, "description": info.Description,
				"output_file": info.OutputFile, "progress": info.Progress}
			if h := b.handle(info.ID); h != nil && info.Status.Terminal() && h.child != nil && h.child.final != nil {
				out["output"] = h.child.final.Text
			}
			j, _ := json.Marshal(out)
			return tool.Output{Text: string(j)}, nil
		}),
		tool.Func(tool.FuncConfig{Name: tool.SendMessage, Description: prompts.SendMessageTool}, func(ctx context.Context, env *tool.Env, in sendMessageInput) (tool.Output, error) {
			a := agentFrom(env)
			if a == nil {
				return errorOutput(prompts.AgentOutsideSession()), nil
			}
			return a.run.rt.bg.send(ctx, a, env.Call.ID, in)
		}),
	}
}

// ids lists every task id of the session, for messages.
func (b *background) ids() []string {
	var out []string
	for _, t := range b.reg.List() {
		out = append(out, t.ID)
	}
	return out
}

// handle returns the child run of agent id, nil if unknown.
func (b *background) handle(id string) *childRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agents[id]
}

// waitEnded waits until task id ended or ctx ends.
func (b *background) waitEnded(ctx context.Context, id string) {
	for {
		ch := b.reg.Changed()
		if info, ok := b.reg.Get(id); !ok || info.Status.Terminal() {
			return
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
	}
}

// send delivers a SendMessage (S-8.2): to main, queued for the main
// agent's next turn; to a running agent, queued for its next tool round;
// to a finished one, it continues the agent in the background (resume.go).
// One-shot types get an error, and so does an unknown id, with the list
// of known ones.
func (b *background) send(ctx context.Context, from *agent, callID string, in sendMessageInput) (tool.Output, error) {
	text := prompts.AgentMessage(from.name(), in.Summary, in.Message)
	to := strings.TrimSpace(in.To)
	if to == "main" {
		b.main.push(inboxItem{text: text})
		return tool.Output{Text: prompts.MessageQueued("main")}, nil
	}
	h := b.handle(to)
	if h == nil {
		h = b.earlier(to) // a foreground agent of an earlier process (resume.go)
	}
	if h == nil || (h.child == nil && h.resumable == nil) {
		return errorOutput(prompts.UnknownRecipient(to, b.known())), nil
	}
	if b.oneShot(h) {
		return errorOutput(prompts.OneShotNoMessages(to, h.agentType())), nil
	}
	if h.child == from {
		return errorOutput(prompts.MessageToSelf()), nil
	}
	return b.deliver(ctx, from, callID, h, text)
}

// withTaskTools adds the task tools to the main agent's pool whenever a
// sub-agent can run in the background: a model that can start one can
// also read, message and stop it.
func (r *Runtime) withTaskTools(p *tool.Pool) *tool.Pool {
	if r.cfg.Background == BackgroundOff {
		return p
	}
	tools := p.Tools()
	for _, t := range taskTools() {
		if !slices.ContainsFunc(tools, func(x tool.Tool) bool { return x.Spec().Name == t.Spec().Name }) {
			tools = append(tools, t)
		}
	}
	return tool.NewPool(tools...)
}
