// Package executor is the seam between the engine and whatever runs a
// child agent. The engine decides a child (the checks, its ceiling, model
// and place in the spawn gate) and hands it over as a SpawnRequest — plain
// data that survives JSON — to an Executor, which starts it and returns a
// Handle: the child's events, a way to send it a message, to stop its
// subtree and to wait for its structured result.
//
// Two executors implement it: the local one (goroutines in this process,
// the engine's own path) and a remote one (a workflow per agent on a
// durable engine, run by `cadre worker`). Package executortest holds the
// conformance suite both must pass; the guarantees it checks are written
// on the methods below.
package executor

import (
	"context"
	"errors"
	"fmt"
	"iter"

	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/run"
)

// Executor starts children.
type Executor interface {
	// Start starts the child req describes and returns its handle. It
	// returns once the child is registered with the executor (a Handle
	// whose methods work), not when the child has run; an error means
	// nothing was started and nothing will be reported for req.AgentID.
	// ctx is the parent's turn: a foreground child (req.Background false)
	// is stopped when it ends, as its parent's Agent call is; a background
	// child outlives it and ends with its session, or when stopped.
	Start(ctx context.Context, req SpawnRequest) (Handle, error)
}

// Handle is one started child. Its methods may be called from any
// goroutine, in any order, and more than once (Events: once per caller).
type Handle interface {
	// Events yields the events of the child and of the agents it starts,
	// in the order they happened, from the child's first event to its
	// EventTaskCompleted (the last one), then ends. Every event of the
	// child carries its AgentID and the ParentToolUseID of the Agent call
	// that started it (SpawnRequest.ToolUseID); a grandchild's carry the
	// grandchild's id and the child's call. Streaming text may be
	// coalesced by a remote executor; tool starts and ends, messages, task
	// events and the completion are never dropped, duplicated or
	// reordered. Breaking out of the loop stops watching, not the child.
	// An error ends the sequence: the executor lost track of the child,
	// or (ErrNotWatched) it keeps no events per child — the local
	// executor, in the engine's own use, delivers every event to the
	// session's stream and keeps them per child only when made to watch.
	Events() iter.Seq2[run.Event, error]
	// Send gives a message to the child (S-8.2). A running child gets it
	// at its next tool round or turn, exactly once; a child that has ended
	// is continued with it (Resumed; Wait then waits for the continued
	// run) or Send says why not with a *RefusedError. A message is never
	// silently dropped: every nil error is a delivery.
	Send(ctx context.Context, m Message) (Delivery, error)
	// Stop stops the child and every agent it started, and returns once
	// all of them have ended: nothing of the subtree runs, holds a slot
	// or is left in the task registry as live afterwards. A child that
	// was already done is left as it is. Wait then reports the child as
	// killed (unless it had ended before).
	Stop(ctx context.Context) error
	// Wait blocks until the child has ended and returns its structured
	// result: completed, failed (its model failed, it crashed, its
	// transcript could not be written) or killed. A child's own failure
	// is a result with Status failed and Error set, never a Go error and
	// never a hang; the error is for ctx ending first or an executor that
	// lost the child. After a message continued the child (Send returned
	// Resumed) it is the continued run's result, which names the call
	// that continued it. For a background child, its notification has been
	// queued for its parent before Wait returns.
	Wait(ctx context.Context) (*run.SubagentResult, error)
}

// WorkHandle is a Handle whose child worked in a tree of its own on
// another machine (a remote child given a SpawnRequest.Workspace): once
// Wait has returned, Work returns the work it left — its commits and
// what it left uncommitted, as a git bundle — for the launcher to land as
// the branch worktree-agent-<id> (workspace.Land). nil with no error: the
// child had no workspace.
type WorkHandle interface {
	Handle
	Work(ctx context.Context) (*workspace.Result, error)
}

// Message is a message for a running or finished agent (SendMessage).
type Message struct {
	// From is the sender's agent id ("main" for the main agent).
	From string `json:"from"`
	// Text is what the receiver reads; Summary a short preview of it.
	Text    string `json:"text"`
	Summary string `json:"summary,omitempty"`
}

// Delivery says how a message reached its agent.
type Delivery string

// Deliveries.
const (
	// Queued: the agent is running and gets the message at its next tool
	// round or turn.
	Queued Delivery = "queued"
	// Resumed: the agent had ended and was continued with the message as
	// its next user turn, keeping its id and transcript.
	Resumed Delivery = "resumed"
)

// RefusedError is a message that was not delivered, with why.
type RefusedError struct {
	AgentID string
	// Reason says why, for the sender ("it is a fork, which ...").
	Reason string
}

func (e *RefusedError) Error() string {
	return fmt.Sprintf("message to agent %s not delivered: %s", e.AgentID, e.Reason)
}

// ErrNotWatched is what Events yields from an executor that delivers a
// child's events to its session's stream and keeps none per child.
var ErrNotWatched = errors.New("this executor keeps no events per child: they go to the session's stream")

// Attacher is an Executor that can take up again a child started
// earlier — by a launcher that died meanwhile — without starting it
// again: a session resumed after its launcher was killed re-attaches to
// its remote agents this way. The handle is the child's latest run,
// running or ended; its Events start from the child's first event. An
// error wrapping ErrUnknownChild means the executor has no such child
// (it was never started, or its record was removed); any other, that the
// executor could not be asked.
type Attacher interface {
	Executor
	Attach(ctx context.Context, req SpawnRequest) (Handle, error)
}

// ErrUnknownChild is what Attach wraps when the executor has no child of
// the request's id.
var ErrUnknownChild = errors.New("the executor has no such child")
