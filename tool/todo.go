package tool

import (
	"slices"
	"sync"
)

// TodoStatus is the state of one item of an agent's todo list.
type TodoStatus string

// Todo states, as TodoWrite takes them.
const (
	TodoPending    TodoStatus = "pending"
	TodoInProgress TodoStatus = "in_progress"
	TodoCompleted  TodoStatus = "completed"
)

// Todo is one item of an agent's todo list (TodoWrite).
type Todo struct {
	// Content says what is to be done, in the imperative ("Run the tests").
	Content string `json:"content"`
	// Status is pending, in_progress or completed.
	Status TodoStatus `json:"status"`
	// ActiveForm says it while it is being done ("Running the tests").
	ActiveForm string `json:"activeForm"`
}

// TodoList is an agent's own todo list: each agent has one in its Env, a
// sub-agent starts with an empty one, and no two agents share one. The
// zero value is an empty list ready to use; it is safe for concurrent use,
// so the runtime may read it (to report it in stream-json) while the agent
// runs.
type TodoList struct {
	mu       sync.Mutex
	items    []Todo
	prev     []Todo
	onChange func([]Todo)
}

// Items returns a copy of the list.
func (l *TodoList) Items() []Todo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.items)
}

// Replace sets the list to items and returns what it held before. The
// change callback, if any, gets the new list.
func (l *TodoList) Replace(items []Todo) []Todo {
	l.mu.Lock()
	old := l.items
	l.prev, l.items = old, slices.Clone(items)
	fn := l.onChange
	l.mu.Unlock()
	if fn != nil {
		fn(slices.Clone(items))
	}
	return old
}

// OnChange sets a function called with a copy of the new list after every
// Replace (the runtime emits it as an event). It is called on the
// goroutine of the tool call, outside the list's lock; nil removes it.
func (l *TodoList) OnChange(fn func([]Todo)) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.onChange = fn
}

// Previous returns a copy of what the list held before the last Replace.
func (l *TodoList) Previous() []Todo {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.prev)
}
