package agentwf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// Activities are a worker's side of agents: its provider (the model and
// its key), its tools and its own permission ceiling. None of it travels
// in a payload.
type Activities struct {
	// Model answers every model call the worker runs.
	Model llm.Model
	// Tools are the tools the worker can run; a call's agent gets those
	// its ceiling names.
	Tools []tool.Tool
	// MaxMode caps the permission mode of every agent the worker runs
	// ("" caps nothing); Rules are added to every agent's rules (a deny
	// here binds whatever the launcher allowed).
	MaxMode permission.Mode
	Rules   []permission.Rule
	// Pool is the worker's clones (`--repo`); nil refuses agents that
	// carry a workspace. WorkerID names the worker; OwnQueue is the queue
	// only it polls, where an agent's calls go once its tree is here;
	// Wait is how long such a call may wait there before the agent takes
	// the worker for gone (0: DefaultPlacementWait).
	Pool     *workspace.Pool
	WorkerID string
	OwnQueue string
	Wait     time.Duration

	mu    sync.Mutex
	trees map[string]*workspace.Checkout
	// gate, with a cap, counts the trees held (see capGate).
	gate *capGate
}

// DefaultPlacementWait is how long a call of an agent with a workspace
// waits for the worker holding its tree when the worker sets no wait.
const DefaultPlacementWait = time.Minute

// Checkout makes the agent's worktree on this worker and returns where
// its later calls go.
func (a *Activities) Checkout(ctx context.Context, in Checkout) (*Placement, error) {
	if a.Pool == nil || a.OwnQueue == "" {
		return nil, temporal.NewNonRetryableApplicationError(prompts.RemoteNoRepos(a.WorkerID), "cadre.config", nil)
	}
	stop := heartbeat(ctx)
	defer stop()
	a.mu.Lock()
	old := a.trees[in.AgentID]
	a.mu.Unlock()
	if old != nil {
		// A retried checkout whose first attempt got through.
		return a.placement(in.AgentID, old), nil
	}
	var co *workspace.Checkout
	var err error
	if in.Snapshot != nil {
		co, err = a.Pool.Restore(ctx, in.Source, *in.Snapshot, in.AgentID, in.SessionID)
	} else {
		co, err = a.Pool.Checkout(ctx, in.Source, in.AgentID, in.SessionID)
	}
	if err != nil {
		return nil, failure(ctx, "checkout", err)
	}
	a.mu.Lock()
	if a.trees == nil {
		a.trees = map[string]*workspace.Checkout{}
	}
	a.trees[in.AgentID] = co
	a.mu.Unlock()
	if a.gate != nil {
		a.gate.treeAdded()
	}
	return a.placement(in.AgentID, co), nil
}

func (a *Activities) placement(agentID string, co *workspace.Checkout) *Placement {
	wait := a.Wait
	if wait <= 0 {
		wait = DefaultPlacementWait
	}
	return &Placement{Queue: a.OwnQueue, Dir: co.Dir(), Wait: wait, Owner: agentID}
}

// tree is the checkout of agent id held here, or an error the agent sees.
func (a *Activities) tree(id string) (*workspace.Checkout, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	co := a.trees[id]
	if co == nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("worker %s holds no worktree of agent %s (it restarted since the checkout)", a.WorkerID, id), "cadre.workspace", nil)
	}
	return co, nil
}

// Finish brings the agent's work back as a workspace.Result and removes
// its tree from the worker.
func (a *Activities) Finish(ctx context.Context, agentID string) (*workspace.Result, error) {
	co, err := a.tree(agentID)
	if err != nil {
		return nil, err
	}
	stop := heartbeat(ctx)
	defer stop()
	res, err := co.Finish(ctx)
	a.mu.Lock()
	delete(a.trees, agentID)
	a.mu.Unlock()
	if a.gate != nil {
		a.gate.treeRemoved()
	}
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("bring back the work of agent %s: %v", agentID, err), "cadre.workspace", nil)
	}
	return &res, nil
}

// heartbeat keeps the call's activity alive while fn runs, so a lost
// worker is noticed within HeartbeatTimeout and a cancel reaches the call.
func heartbeat(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(HeartbeatTimeout / 4)
		defer t.Stop()
		for {
			activity.RecordHeartbeat(ctx)
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
		}
	}()
	return func() { cancel(); <-done }
}

// failure is what an activity returns for err: when the activity's
// context ended (the worker stops, or the agent was cancelled), a plain
// error the server may retry elsewhere; otherwise an error of the call
// itself, which the agent sees and which is never retried.
func failure(ctx context.Context, what string, err error) error {
	if ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, ctx.Err())
	}
	return temporal.NewNonRetryableApplicationError(fmt.Sprintf("%s: %v", what, err), "cadre.call", nil)
}

// pool is the tools of names that the worker has, in that order; Agent is
// the workflow's, offered with its spec.
func (a *Activities) pool(names []string) *tool.Pool {
	have := tool.NewPool(a.Tools...)
	p := tool.NewPool()
	for _, n := range names {
		if n == "Agent" {
			p.Add(agentTool{})
			continue
		}
		if t, ok := have.Get(n); ok {
			p.Add(t)
		}
	}
	return p
}

// ModelCall makes one model request and returns the complete answer.
func (a *Activities) ModelCall(ctx context.Context, in ModelCall) (*ModelAnswer, error) {
	if a.Model == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no model configured", "cadre.config", nil)
	}
	stop := heartbeat(ctx)
	defer stop()
	req := &llm.Request{Model: in.ModelID, System: in.System, SystemPrefix: in.SystemPrefix, Tools: a.pool(in.Tools).Specs(),
		Messages: in.Messages, CacheHints: in.CacheHints, Effort: in.Effort}
	start := time.Now()
	for ev, err := range a.Model.Stream(ctx, req) {
		if err != nil {
			return nil, failure(ctx, "model request", err)
		}
		if ev.Kind == llm.EventDone {
			if ev.Response == nil {
				return nil, failure(ctx, "model request", errors.New("the stream ended without a response"))
			}
			r := ev.Response
			return &ModelAnswer{Message: r.Message, Usage: r.Usage, ID: r.ID, Model: r.Model, StopReason: r.StopReason, APIDuration: time.Since(start)}, nil
		}
	}
	return nil, failure(ctx, "model request", errors.New("the stream ended before the answer was complete"))
}

// ToolCall runs one tool call through the loop's steps for a call (input
// checks, the authorizer, the tool) under the agent's ceiling narrowed by
// the worker's.
func (a *Activities) ToolCall(ctx context.Context, in ToolCall) (*ToolDone, error) {
	var co *workspace.Checkout
	if in.Tree != "" {
		var err error
		if co, err = a.tree(in.Tree); err != nil {
			return nil, err
		}
		in.Cwd = co.Dir()
	}
	stop := heartbeat(ctx)
	defer stop()
	mode := in.Mode
	if a.MaxMode != "" && permission.Rank(mode) > permission.Rank(a.MaxMode) {
		mode = a.MaxMode
	}
	rules := append(append([]permission.Rule(nil), in.Ceiling.Rules...), a.Rules...)
	checker, err := permission.NewChecker(permission.Config{Mode: mode, Cwd: in.Cwd, Rules: rules, NoPrompt: true, ReadOnly: in.Ceiling.ReadOnly, Tools: in.Ceiling.Tools})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("permissions of agent %s: %v", in.AgentID, err), "cadre.config", nil)
	}
	sess, err := permission.NewSession(permission.SessionConfig{Checker: checker, AgentID: in.AgentID, AgentType: in.AgentType, Background: true})
	if err != nil {
		return nil, temporal.NewNonRetryableApplicationError(fmt.Sprintf("permissions of agent %s: %v", in.AgentID, err), "cadre.config", nil)
	}
	env := &tool.Env{Cwd: in.Cwd, AgentID: in.AgentID, OmitResults: true, Files: tool.FileStateFrom(in.Files), Todos: &tool.TodoList{}}
	cfg := loop.Config{Tools: a.pool(in.Ceiling.Tools), Env: env, Authorizer: sess, AgentID: in.AgentID, AgentType: in.AgentType,
		Background: in.Background, Unavailable: in.Ceiling.Unavailable}
	res, block, err := loop.CallOne(ctx, cfg, nil, in.Call)
	if err != nil {
		return nil, failure(ctx, "tool "+in.Call.Name, err)
	}
	done := &ToolDone{
		Result: run.ToolResult{Text: res.Output.Text, IsError: res.Output.IsError, Denied: res.Denied, Duration: res.Duration},
		Block:  block, Files: env.Files.Stamps(),
	}
	if co != nil && in.Tree == in.AgentID && !readOnly(cfg.Tools, in.Call.Name) {
		// The tree after the call travels with its result, so that the
		// agent can go on elsewhere should this worker die.
		if done.Snapshot, err = co.Snapshot(ctx); err != nil {
			if ctx.Err() != nil {
				return nil, failure(ctx, "snapshot", err)
			}
			done.Snapshot, done.SnapshotError = nil, err.Error()
		}
	}
	return done, nil
}

// readOnly reports whether the tool name of p changes no file.
func readOnly(p *tool.Pool, name string) bool {
	t, ok := p.Get(name)
	return ok && t.ReadOnly()
}

// agentTool is the Agent tool's spec on a worker: the workflow runs its
// calls (as child workflows), so it never runs here.
type agentTool struct{}

func (agentTool) Spec() llm.ToolSpec {
	return llm.ToolSpec{Name: "Agent", Description: prompts.AgentTool("", "general-purpose"), InputSchema: tasktools.AgentSchema(false, false, true)}
}

func (agentTool) ReadOnly() bool { return false }

func (agentTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Output, error) {
	return tool.Errorf("%s", "the Agent tool runs in the agent's workflow, not on a worker"), nil
}
