// Package task holds the vocabulary of the task registry (S-7.2): the
// states a sub-agent's task goes through and which moves between them are
// allowed. Every sub-agent is a task, foreground or background; the
// runtime reports a task's state in its events and results.
//
// The registry (registry.go) tracks progress, waiting and stopping; the
// task journal (journal.go) makes notifications exactly once across a
// crash; the mailbox store (mailbox.go) gives every addressable agent a
// journaled mailbox whose messages are delivered exactly once.
package task

// Status is where a task is in its life. The zero value is not a status.
type Status string

// Task statuses. A task starts pending (waiting in the spawn gate's queue
// for a free slot) or running, may be moved to the background while it
// runs, and ends completed, failed or killed.
const (
	// Pending: admitted by the spawn gate, waiting for a running slot.
	Pending Status = "pending"
	// Running: holds a slot and works in the foreground; its parent's
	// Agent call waits for it.
	Running Status = "running"
	// Backgrounded: works in the background; its parent goes on and hears
	// of its end through a notification.
	Backgrounded Status = "backgrounded"
	// Completed: ended with a report.
	Completed Status = "completed"
	// Failed: ended with an error (the model failed, the agent crashed).
	Failed Status = "failed"
	// Killed: ended because it was cancelled (its parent or the run ended,
	// or it was stopped), whether it was pending or running.
	Killed Status = "killed"
	// BudgetExhausted: stopped at its budget (S-15.2), with a partial
	// report.
	BudgetExhausted Status = "budget_exhausted"
)

// Statuses lists every status, in life order.
func Statuses() []Status {
	return []Status{Pending, Running, Backgrounded, Completed, Failed, Killed, BudgetExhausted}
}

// Valid reports whether s is one of the statuses.
func (s Status) Valid() bool {
	switch s {
	case Pending, Running, Backgrounded, Completed, Failed, Killed, BudgetExhausted:
		return true
	}
	return false
}

// Terminal reports whether s is an end state: completed, failed, killed
// or budget_exhausted.
func (s Status) Terminal() bool {
	return s == Completed || s == Failed || s == Killed || s == BudgetExhausted
}

// CanMove reports whether a task may go from one status to another:
// pending → running (or killed while it waits), running → backgrounded,
// and any live status → an end state. End states are final.
func CanMove(from, to Status) bool {
	switch from {
	case Pending:
		return to == Running || to == Killed
	case Running:
		return to == Backgrounded || to.Terminal()
	case Backgrounded:
		return to.Terminal()
	}
	return false
}
