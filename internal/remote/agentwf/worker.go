package agentwf

import (
	"fmt"

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
	// one model or tool call at a time), across its shared queue and its
	// own; 0 means the SDK's default per queue.
	MaxAgents int
	// Activities are the worker's provider, tools and ceiling. When its
	// OwnQueue is set the worker also polls that queue, where the calls
	// of the agents whose trees it holds go.
	Activities *Activities
}

// OwnQueue is the queue only the worker id of queue polls.
func OwnQueue(queue, id string) string { return queue + "/" + id }

// Worker is a worker of agents: the shared task queue's, and the
// worker's own queue's when it holds workspaces.
type Worker struct {
	shared, own worker.Worker
}

// NewWorker returns a worker (not started) that runs agent workflows and
// their calls on opts.TaskQueue. On Stop it hands the calls it runs back:
// their contexts end, they return an error the server retries on another
// worker, and completed calls stay recorded.
func NewWorker(c client.Client, opts WorkerOptions) *Worker {
	shared, own := capOptions(opts.MaxAgents, opts.Activities)
	shared.MaxHeartbeatThrottleInterval, shared.DefaultHeartbeatThrottleInterval = HeartbeatTimeout/4, HeartbeatTimeout/4
	own.MaxHeartbeatThrottleInterval, own.DefaultHeartbeatThrottleInterval = HeartbeatTimeout/4, HeartbeatTimeout/4
	w := &Worker{shared: worker.New(c, opts.TaskQueue, shared)}
	w.shared.RegisterWorkflowWithOptions(Agent, workflow.RegisterOptions{Name: WorkflowName})
	register(w.shared, opts.Activities)
	if q := opts.Activities.OwnQueue; q != "" {
		own.DisableWorkflowWorker = true
		w.own = worker.New(c, q, own)
		register(w.own, opts.Activities)
	}
	return w
}

// capOptions are the options of the worker's shared queue and of its own
// queue. With a cap, the shared queue's calls draw their slots from a
// capGate that counts the trees the worker holds too (see capGate): the
// worker never runs more than maxAgents calls of both queues together.
func capOptions(maxAgents int, acts *Activities) (shared, own worker.Options) {
	if maxAgents <= 0 {
		return shared, own
	}
	g := newCapGate(maxAgents)
	acts.gate = g
	tuner := func(calls worker.SlotSupplier) worker.WorkerTuner {
		// Workflow tasks, local activities and Nexus tasks keep the SDK's
		// per-queue defaults. (The composite tuner's constructor returns
		// no error.)
		t, _ := worker.NewCompositeTuner(worker.CompositeTunerOptions{
			WorkflowSlotSupplier: fixedSlots(defaultSlots), LocalActivitySlotSupplier: fixedSlots(defaultSlots),
			NexusSlotSupplier: fixedSlots(defaultSlots), SessionActivitySlotSupplier: fixedSlots(defaultSlots),
			ActivitySlotSupplier: calls,
		})
		return t
	}
	shared.Tuner, own.Tuner = tuner(sharedSlots{g}), tuner(fixedSlots(maxAgents))
	return shared, own
}

// fixedSlots is a supplier of n slots; n is positive, the one case the
// SDK refuses.
func fixedSlots(n int) worker.SlotSupplier {
	s, _ := worker.NewFixedSizeSlotSupplier(n)
	return s
}

// defaultSlots is the SDK's default count of a worker's slots of one kind.
const defaultSlots = 1000

func register(w worker.Worker, a *Activities) {
	w.RegisterActivityWithOptions(a.ModelCall, activity.RegisterOptions{Name: ModelActivity})
	w.RegisterActivityWithOptions(a.ToolCall, activity.RegisterOptions{Name: ToolActivity})
	w.RegisterActivityWithOptions(a.Checkout, activity.RegisterOptions{Name: CheckoutActivity})
	w.RegisterActivityWithOptions(a.Finish, activity.RegisterOptions{Name: FinishActivity})
	w.RegisterActivityWithOptions(a.RecordSpan, activity.RegisterOptions{Name: SpanActivity})
}

// Start starts polling the worker's queues.
func (w *Worker) Start() error {
	if w.own != nil {
		if err := w.own.Start(); err != nil {
			return fmt.Errorf("the worker's own queue: %w", err)
		}
	}
	if err := w.shared.Start(); err != nil {
		if w.own != nil {
			w.own.Stop()
		}
		return err
	}
	return nil
}

// Stop stops polling and hands the calls in flight back.
func (w *Worker) Stop() {
	w.shared.Stop()
	if w.own != nil {
		w.own.Stop()
	}
}
