package agentwf

import (
	"go.temporal.io/sdk/activity"
	"go.temporal.io/sdk/client"
	"go.temporal.io/sdk/worker"
	"go.temporal.io/sdk/workflow"
)

// WorkerOptions configure a worker of agents.
type WorkerOptions struct {
	// TaskQueue is the queue the worker serves.
	TaskQueue string
	// MaxAgents caps the agents working on this worker at once (each is in
	// one model or tool call at a time); 0 means the SDK's default.
	MaxAgents int
	// Activities are the worker's provider, tools and ceiling.
	Activities *Activities
}

// NewWorker returns a worker (not started) that runs agent workflows and
// their calls on opts.TaskQueue. On Stop it hands the calls it runs back:
// their contexts end, they return an error the server retries on another
// worker, and completed calls stay recorded.
func NewWorker(c client.Client, opts WorkerOptions) worker.Worker {
	wo := worker.Options{}
	if opts.MaxAgents > 0 {
		wo.MaxConcurrentActivityExecutionSize = opts.MaxAgents
	}
	w := worker.New(c, opts.TaskQueue, wo)
	w.RegisterWorkflowWithOptions(Agent, workflow.RegisterOptions{Name: WorkflowName})
	w.RegisterActivityWithOptions(opts.Activities.ModelCall, activity.RegisterOptions{Name: ModelActivity})
	w.RegisterActivityWithOptions(opts.Activities.ToolCall, activity.RegisterOptions{Name: ToolActivity})
	return w
}
