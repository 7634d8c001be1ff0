package agentwf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/temporal"

	"github.com/cadre-dev/cadre/hooks"
	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/internal/telemetry"
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
	// Hooks are the worker's own hooks (its --settings), fired around
	// every tool call; nil: none. The launcher's never travel.
	Hooks *hooks.Dispatcher
	// MCP is the worker's own MCP servers (its --settings' mcpServers);
	// nil: none.
	MCP MCPTools
	// Tel is the worker's telemetry (nil: off); its tracer provider takes
	// span ids from telemetry.RemoteIDs (telemetry.go).
	Tel *telemetry.Telemetry

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

// pool is the tools of names that the worker has, in that order (its
// MCP servers' tools of the same names included); Agent is the
// workflow's, offered with its spec. Then the tools of the worker's MCP
// servers the agent's definition names (servers): the definition gives
// it those servers, and the worker connects them by name in its own
// settings (mcp.go).
func (a *Activities) pool(ctx context.Context, names, servers []string) *tool.Pool {
	mcpTools := a.mcpTools(ctx)
	have := tool.NewPool(append(slices.Clip(a.Tools), mcpTools...)...)
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
	for _, t := range mcpTools {
		if _, dup := p.Get(t.Spec().Name); !dup && namedServer(t, servers) {
			p.Add(t)
		}
	}
	return p
}

// specs are the tools a model call offers: the worker's of those named,
// the Agent tool (with its budget field when the agent has a budget), and
// the workflow's own (Extra).
func (a *Activities) specs(ctx context.Context, in ModelCall) []llm.ToolSpec {
	specs := a.pool(ctx, in.Tools, in.MCPServers).Specs()
	for i, s := range specs {
		if s.Name == "Agent" && in.Budget {
			specs[i].InputSchema = tasktools.AgentSchemaBudget(false, false, true, true)
		}
	}
	return append(specs, in.Extra...)
}

// ModelCall makes one model request and returns the complete answer.
func (a *Activities) ModelCall(ctx context.Context, in ModelCall) (*ModelAnswer, error) {
	if a.Model == nil {
		return nil, temporal.NewNonRetryableApplicationError("this worker has no model configured", "cadre.config", nil)
	}
	stop := heartbeat(ctx)
	defer stop()
	req := &llm.Request{Model: in.ModelID, System: in.System, SystemPrefix: in.SystemPrefix, Tools: a.specs(ctx, in),
		Messages: in.Messages, CacheHints: in.CacheHints, Effort: in.Effort}
	start := time.Now()
	sctx, observed := a.observeRequest(ctx, in, req) // telemetry.go
	for ev, err := range a.Model.Stream(sctx, req) {
		if err != nil {
			observed(nil, err)
			return nil, failure(ctx, "model request", err)
		}
		if ev.Kind == llm.EventDone {
			if ev.Response == nil {
				err := errors.New("the stream ended without a response")
				observed(nil, err)
				return nil, failure(ctx, "model request", err)
			}
			r := ev.Response
			observed(r, nil)
			return &ModelAnswer{Message: r.Message, Usage: r.Usage, ID: r.ID, Model: r.Model, StopReason: r.StopReason, APIDuration: time.Since(start)}, nil
		}
	}
	err := errors.New("the stream ended before the answer was complete")
	observed(nil, err)
	return nil, failure(ctx, "model request", err)
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
	cfg := loop.Config{Tools: a.pool(ctx, in.Ceiling.Tools, in.MCPServers), Env: env, Authorizer: sess, AgentID: in.AgentID, AgentType: in.AgentType,
		Background: in.Background, Unavailable: in.Ceiling.Unavailable}
	ctx = a.observeTool(ctx, in, &cfg) // telemetry.go
	if a.Hooks != nil {
		cfg.Hooks = a.Hooks.ForAgent(hooks.Scope{SessionID: in.Session, Cwd: in.Cwd, AgentID: in.AgentID, AgentType: in.AgentType,
			PermissionMode: func() permission.Mode { return mode }})
	}
	res, block, err := loop.CallOne(ctx, cfg, nil, in.Call)
	if err != nil {
		return nil, failure(ctx, "tool "+in.Call.Name, err)
	}
	done := &ToolDone{
		Result: run.ToolResult{Text: res.Output.Text, IsError: res.Output.IsError, Denied: res.Denied, Duration: res.Duration},
		Block:  block, Files: env.Files.Stamps(),
	}
	fitResult(done, MaxResultBytes) // payload.go: it travels in a payload
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
	return llm.ToolSpec{Name: "Agent", Description: prompts.AgentTool("", "general-purpose"), InputSchema: tasktools.AgentSchema(false, false, false)} // run_in_background: a background child workflow (background.go)
}

func (agentTool) ReadOnly() bool { return false }

func (agentTool) Run(context.Context, *tool.Env, json.RawMessage) (tool.Output, error) {
	return tool.Errorf("%s", "the Agent tool runs in the agent's workflow, not on a worker"), nil
}
