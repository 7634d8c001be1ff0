package task

import (
	"fmt"
	"slices"
	"sync"
	"time"
)

// Progress is what a task has done so far (S-7.2).
type Progress struct {
	// ToolUses counts the agent's tool calls; LastTool names the latest.
	ToolUses int    `json:"tool_uses"`
	LastTool string `json:"last_tool,omitempty"`
	// Tokens is the agent's token use so far (its own requests and its
	// finished children's).
	Tokens int64 `json:"tokens"`
	// Elapsed is the time since the task started running (to its end once
	// it ended); zero while it waits for a slot.
	Elapsed time.Duration `json:"elapsed_ns"`
}

// Info is a snapshot of one task.
type Info struct {
	// ID is the task id; for a sub-agent it is the agent id.
	ID string `json:"task_id"`
	// ToolUseID is the Agent call that started it.
	ToolUseID   string `json:"tool_use_id"`
	AgentType   string `json:"agent_type"`
	Description string `json:"description"`
	// Parent is the id of the agent that started it ("main" for the main
	// agent).
	Parent string `json:"parent"`
	Depth  int    `json:"depth"`
	// Background is true while the parent does not wait for the task (it
	// hears of its end through a notification).
	Background bool   `json:"background"`
	Status     Status `json:"status"`
	// OutputFile is the agent's transcript ("" when transcripts are off).
	OutputFile string    `json:"output_file,omitempty"`
	Progress   Progress  `json:"progress"`
	Started    time.Time `json:"started,omitzero"`
	Ended      time.Time `json:"ended,omitzero"`
	// Error says why a failed or killed task ended.
	Error string `json:"error,omitempty"`
	// Remote is true for a sub-agent that runs on a remote executor
	// (isolation: remote): a later process of its session re-attaches to
	// it rather than report it interrupted (issue 26).
	Remote bool `json:"remote,omitempty"`
}

// Registry knows every task of a session, foreground or background, live
// or ended, and the tree they form (S-7.2). It is the one place that can
// stop a task with its descendants. Safe for concurrent use.
type Registry struct {
	now func() time.Time

	mu    sync.Mutex
	tasks map[string]*entry
	order []string // ids in the order they were added
	live  int
	// liveOf counts the live tasks of each parent: LiveChildren runs at
	// every agent's end, and a scan of every task made a fan-out of n
	// cost n² under the lock.
	liveOf  map[string]int
	changed chan struct{} // closed on a change; nil until someone waits (Changed)
}

type entry struct {
	info Info
	stop func() // cancels the task's context; nil once it ended
}

// NewRegistry returns an empty registry with clock now (nil: time.Now).
func NewRegistry(now func() time.Time) *Registry {
	if now == nil {
		now = time.Now
	}
	return &Registry{now: now, tasks: map[string]*entry{}, liveOf: map[string]int{}}
}

// notify wakes everyone waiting on Changed. r.mu must be held.
func (r *Registry) notify() {
	// A channel is made only for a waiter: most changes (a child's
	// start, its progress, its end) have none, and a new channel per
	// change was five allocations per sub-agent.
	if r.changed != nil {
		close(r.changed)
		r.changed = nil
	}
}

// Changed returns a channel closed at the next change of any task.
func (r *Registry) Changed() <-chan struct{} {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.changed == nil {
		r.changed = make(chan struct{})
	}
	return r.changed
}

// Add registers a task in status Pending or Running; stop cancels its
// work (it must not block). An id may be added again once its previous
// task ended (an agent resumed with SendMessage).
func (r *Registry) Add(info Info, stop func()) error {
	if info.Status != Pending && info.Status != Running {
		return fmt.Errorf("task %s: a task starts pending or running, not %q", info.ID, info.Status)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if e, ok := r.tasks[info.ID]; ok {
		if !e.info.Status.Terminal() {
			return fmt.Errorf("task %s is already registered and %s", info.ID, e.info.Status)
		}
		r.order = slices.DeleteFunc(r.order, func(id string) bool { return id == info.ID })
	}
	if info.Status == Running && info.Started.IsZero() {
		info.Started = r.now()
	}
	r.tasks[info.ID] = &entry{info: info, stop: stop}
	r.order = append(r.order, info.ID)
	r.live++
	r.liveOf[info.Parent]++
	r.notify()
	return nil
}

// Start moves a pending task to running.
func (r *Registry) Start(id string) {
	r.update(id, func(i *Info) bool {
		if !CanMove(i.Status, Running) {
			return false
		}
		i.Status, i.Started = Running, r.now()
		return true
	})
}

// SetBackground marks a live task as running in the background and
// reports whether it was live.
func (r *Registry) SetBackground(id string) bool {
	return r.update(id, func(i *Info) bool {
		if i.Status.Terminal() {
			return false
		}
		i.Background = true
		return true
	})
}

// Update changes a live task's progress.
func (r *Registry) Update(id string, f func(p *Progress)) {
	r.update(id, func(i *Info) bool {
		if i.Status.Terminal() {
			return false
		}
		f(&i.Progress)
		return true
	})
}

// Finish ends a task with status (completed, failed or killed) and errText.
// Only the first Finish of a task counts: it returns false when the task
// had already ended or is unknown.
func (r *Registry) Finish(id string, status Status, errText string) bool {
	if !status.Terminal() {
		return false
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tasks[id]
	if !ok || !CanMove(e.info.Status, status) {
		return false
	}
	e.info.Status, e.info.Error, e.info.Ended, e.stop = status, errText, r.now(), nil
	r.live--
	if r.liveOf[e.info.Parent]--; r.liveOf[e.info.Parent] <= 0 {
		delete(r.liveOf, e.info.Parent)
	}
	r.notify()
	return true
}

func (r *Registry) update(id string, f func(i *Info) bool) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tasks[id]
	if !ok || !f(&e.info) {
		return false
	}
	r.notify()
	return true
}

// Get returns a snapshot of the task id.
func (r *Registry) Get(id string) (Info, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e, ok := r.tasks[id]
	if !ok {
		return Info{}, false
	}
	return r.snapshot(e), true
}

// snapshot copies e's info with its elapsed time. r.mu must be held.
func (r *Registry) snapshot(e *entry) Info {
	i := e.info
	switch {
	case i.Started.IsZero():
	case i.Ended.IsZero():
		i.Progress.Elapsed = r.now().Sub(i.Started)
	default:
		i.Progress.Elapsed = i.Ended.Sub(i.Started)
	}
	return i
}

// List returns every task in the order they were added.
func (r *Registry) List() []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Info, 0, len(r.order))
	for _, id := range r.order {
		out = append(out, r.snapshot(r.tasks[id]))
	}
	return out
}

// Live counts the tasks that have not ended.
func (r *Registry) Live() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.live
}

// LiveChildren counts the live tasks whose parent is the agent parent.
func (r *Registry) LiveChildren(parent string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.liveOf[parent]
}

// Stop cancels the live task id and every live task below it (S-7.4) and
// returns the task's snapshot. The tasks end (and are Finished) on their
// own once their work has wound down; Stop does not wait.
func (r *Registry) Stop(id string) (Info, error) {
	r.mu.Lock()
	e, ok := r.tasks[id]
	if !ok {
		r.mu.Unlock()
		return Info{}, fmt.Errorf("no task %s", id)
	}
	info := r.snapshot(e)
	if info.Status.Terminal() {
		r.mu.Unlock()
		return info, fmt.Errorf("task %s already ended (%s)", id, info.Status)
	}
	stops := r.subtreeStops(id)
	r.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
	return info, nil
}

// StopBelow cancels every live task below the agent id (not the agent
// itself): an agent that is killed takes its background children with it.
func (r *Registry) StopBelow(id string) {
	r.mu.Lock()
	stops := r.subtreeStops(id)
	if e, ok := r.tasks[id]; ok && e.stop != nil {
		stops = stops[1:] // subtreeStops puts id's own first
	}
	r.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}

// subtreeStops returns the stop functions of the live task id (first, when
// it is live) and of every live task below it. r.mu must be held.
func (r *Registry) subtreeStops(id string) []func() {
	var stops []func()
	if e, ok := r.tasks[id]; ok && e.stop != nil {
		stops = append(stops, e.stop)
	}
	for cid := range r.below(id) {
		if c := r.tasks[cid]; c.stop != nil {
			stops = append(stops, c.stop)
		}
	}
	return stops
}

// below returns the ids of every task below the agent id (not id itself),
// whatever order they were added in (a resumed agent is added again, after
// its children). r.mu must be held.
func (r *Registry) below(id string) map[string]bool {
	// One pass over the tasks for their children, then the tree: not a
	// pass per task reached (n² for the main agent of a fan-out of n).
	kids := map[string][]string{}
	for _, cid := range r.order {
		if cid != id {
			p := r.tasks[cid].info.Parent
			kids[p] = append(kids[p], cid)
		}
	}
	out := map[string]bool{}
	frontier := []string{id}
	for len(frontier) > 0 {
		parent := frontier[0]
		frontier = frontier[1:]
		for _, cid := range kids[parent] {
			if !out[cid] {
				out[cid] = true
				frontier = append(frontier, cid)
			}
		}
	}
	return out
}

// LiveBelow returns the live tasks below the agent id (its children and
// theirs), in the order they were added.
func (r *Registry) LiveBelow(id string) []Info {
	r.mu.Lock()
	defer r.mu.Unlock()
	below := r.below(id)
	var out []Info
	for _, cid := range r.order {
		if e := r.tasks[cid]; below[cid] && !e.info.Status.Terminal() {
			out = append(out, r.snapshot(e))
		}
	}
	return out
}

// StopAll cancels every live task.
func (r *Registry) StopAll() {
	r.mu.Lock()
	var stops []func()
	for _, e := range r.tasks {
		if e.stop != nil {
			stops = append(stops, e.stop)
		}
	}
	r.mu.Unlock()
	for _, stop := range stops {
		stop()
	}
}
