package engine

import (
	"context"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// The task tools (TaskStop, TaskOutput, SendMessage) live in package
// tasktools; this file is the engine's side of them: the calling agent as
// a tasktools.Caller, and SendMessage's delivery.

// taskTools builds the task tools over the agent that owns each call.
func taskTools() []tool.Tool {
	return tasktools.Tools(func(_ context.Context, env *tool.Env) tasktools.Caller {
		a := agentFrom(env)
		if a == nil {
			return nil
		}
		return taskCaller{a, env.Call.ID}
	})
}

// taskCaller is an agent calling a task tool in its call callID.
type taskCaller struct {
	a      *agent
	callID string
}

// Registry implements tasktools.Caller.
func (c taskCaller) Registry() *task.Registry { return c.a.run.rt.bg.reg }

// FinalText implements tasktools.Caller.
func (c taskCaller) FinalText(id string) (string, bool) {
	if h := c.a.run.rt.bg.handle(id); h != nil && h.child != nil && h.child.final != nil {
		return h.child.final.Text, true
	}
	return "", false
}

// SendMessage implements tasktools.Caller.
func (c taskCaller) SendMessage(ctx context.Context, m tasktools.Message) (tool.Output, error) {
	return c.a.run.rt.bg.send(ctx, c.a, c.callID, m)
}

// ids lists every task id of the session, for messages.
func (b *background) ids() []string { return tasktools.IDs(b.reg) }

// handle returns the child run of agent id, nil if unknown.
func (b *background) handle(id string) *childRun {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.agents[id]
}

// send delivers a SendMessage (S-8.2): to main, queued for the main
// agent's next turn; to a running agent, queued for its next tool round;
// to a finished one, it continues the agent in the background (resume.go).
// One-shot types get an error, and so does an unknown id, with the list
// of known ones.
func (b *background) send(ctx context.Context, from *agent, callID string, in tasktools.Message) (tool.Output, error) {
	it := inboxItem{text: prompts.AgentMessage(from.name(), in.Summary, in.Message), from: from.name(), summary: in.Summary}
	to := strings.TrimSpace(in.To)
	if id, ok := b.mailboxes().Resolve(to); ok {
		to = id // an agent's name reaches its id
	}
	if to == "main" {
		if _, err := b.main.post(it); err != nil {
			return errorOutput(prompts.MessageNotKept(to, err)), nil
		}
		return tool.Output{Text: prompts.MessageQueued("main")}, nil
	}
	h := b.handle(to)
	if h == nil {
		h = resumeOf(b).earlier(to) // a foreground agent of an earlier process (resume.go)
	}
	if h == nil || (h.child == nil && h.resumable == nil) {
		return errorOutput(prompts.UnknownRecipient(to, resumeOf(b).known())), nil
	}
	if resumeOf(b).oneShot(h) {
		return errorOutput(prompts.OneShotNoMessages(to, h.agentType())), nil
	}
	if h.child == from {
		return errorOutput(prompts.MessageToSelf()), nil
	}
	return resumeOf(b).deliver(ctx, from, callID, h, it)
}

// withTaskTools adds the task tools to the main agent's pool whenever a
// sub-agent can run in the background: a model that can start one can
// also read, message and stop it.
func (tb toolbox) withTaskTools(p *tool.Pool) *tool.Pool {
	r := tb.r
	if r.cfg.Background == BackgroundOff && !r.cfg.Teams {
		return p
	}
	tools := p.Tools()
	extra := taskTools()
	if r.cfg.Teams {
		// SendMessage of teams, TeamCreate and TeamDelete (team.go).
		extra = slices.DeleteFunc(extra, func(t tool.Tool) bool { return t.Spec().Name == tool.SendMessage })
		extra = append(extra, teamLeadTools()...)
		if !slices.ContainsFunc(tools, func(x tool.Tool) bool { return x.Spec().Name == tool.ListAgents }) {
			extra = append(extra, listAgentsTool()) // coordinator.go: the roster
		}
	}
	for _, t := range extra {
		if !slices.ContainsFunc(tools, func(x tool.Tool) bool { return x.Spec().Name == t.Spec().Name }) {
			tools = append(tools, t)
		}
	}
	return tool.NewPool(tools...)
}
