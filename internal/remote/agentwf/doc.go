// Package agentwf is a remote agent on Temporal: the workflow that runs
// one agent and the activities a worker runs for it.
//
// The agent's loop is workflow code (deterministic, replayed from the
// workflow's history); each model call and each tool call is an activity,
// recorded in the history once it completes. A worker that dies mid-agent
// costs at most the call in flight: the server hands the agent to another
// worker, which replays the history — completed calls are read back, not
// run again — and carries on. Sub-agents are child workflows cancelled
// with their parent (ParentClosePolicy REQUEST_CANCEL); messages are
// signals the loop reads at its next round; progress and events are
// queries; the workflow's result is the agent's report.
//
// Provider keys and the worker's permission ceiling live in the worker
// (Activities), never in a payload: what travels is the spawn request,
// the conversation and the calls' results.
//
// Only the companion binary cadre-remote imports this package: the cadre
// binary must not pay the Temporal SDK's start-up cost.
package agentwf
