package tui

import (
	"time"

	tasks "github.com/cadre-dev/cadre/task"

	"github.com/cadre-dev/cadre/run"
)

// State is where an agent of the tree is in its life, as the UI shows it.
type State int

// Agent states. The order is the order of a life; Waiting is shown while a
// permission prompt of the agent waits for an answer.
const (
	// StateIdle: the main agent between turns.
	StateIdle State = iota
	// StatePending: admitted by the spawn gate, waiting for a running slot.
	StatePending
	// StateRunning: working in the foreground.
	StateRunning
	// StateWaiting: a permission prompt of the agent waits for the user.
	StateWaiting
	// StateBackground: working in the background.
	StateBackground
	// StateCompleted, StateFailed, StateKilled: ended.
	StateCompleted
	StateFailed
	StateKilled
	// StateInterrupted: the main agent's turn was interrupted by the user.
	StateInterrupted
	// StateBudget: a sub-agent stopped at its budget (budget_exhausted).
	StateBudget
)

// String names the state as the tree shows it.
func (s State) String() string {
	switch s {
	case StateIdle:
		return "idle"
	case StatePending:
		return "pending"
	case StateRunning:
		return "running"
	case StateWaiting:
		return "waiting"
	case StateBackground:
		return "background"
	case StateCompleted:
		return "completed"
	case StateFailed:
		return "failed"
	case StateKilled:
		return "killed"
	case StateInterrupted:
		return "interrupted"
	case StateBudget:
		return "budget_exhausted"
	}
	return "unknown"
}

// Finished reports whether the state is an end state of a sub-agent.
func (s State) Finished() bool {
	return s == StateCompleted || s == StateFailed || s == StateKilled || s == StateBudget
}

// Live reports whether an agent in this state is working or waiting to.
func (s State) Live() bool {
	return s == StatePending || s == StateRunning || s == StateWaiting || s == StateBackground
}

// stateFromStatus maps the runtime's task status to a State.
func stateFromStatus(status tasks.Status) (State, bool) {
	switch status {
	case tasks.Pending:
		return StatePending, true
	case tasks.Running:
		return StateRunning, true
	case tasks.Backgrounded:
		return StateBackground, true
	case tasks.Completed:
		return StateCompleted, true
	case tasks.Failed:
		return StateFailed, true
	case tasks.Killed:
		return StateKilled, true
	case tasks.BudgetExhausted:
		return StateBudget, true
	}
	return 0, false
}

// Node is one agent of the tree.
type Node struct {
	// ID is the agent id; "" for the main agent.
	ID string
	// Teammate is a teammate's name in its team ("" for other agents).
	Teammate    string
	Type        string
	Description string
	Model       string
	// ToolUseID is the Agent call that started the agent.
	ToolUseID string
	// Parent is the id of the parent agent ("" for the main agent's
	// children and for the main agent itself).
	Parent     string
	Depth      int
	Background bool
	state      State
	// ToolUses counts the agent's tool calls; Tokens its own requests'
	// tokens (input, output and cache); LastTool its latest call.
	ToolUses int
	Tokens   int64
	LastTool string
	// Context is the size of the agent's conversation after its latest
	// answer (or its latest compaction), Window the context window it
	// compacts against: the context meter; Window is 0 until known.
	Context, Window int64
	// Started and Ended bound the agent's life (the main agent's current
	// or last turn); Ended is zero while it lives.
	Started, Ended time.Time
	// Error says why a failed agent failed; Report is an ended agent's
	// final text.
	Error  string
	Report string
	// Children are the ids of the agents it started, in start order.
	Children []string
	// TranscriptPath is the agent's transcript when the runtime said.
	TranscriptPath string
	// Reserved is what its spawn reserved (nil: no budget); Spent what
	// its subtree spent of it so far (S-15.2).
	Reserved *run.BudgetGrant
	Spent    run.Spend
}

// Elapsed is how long the agent has run, as of now.
func (n *Node) Elapsed(now time.Time) time.Duration {
	if n.Started.IsZero() {
		return 0
	}
	end := n.Ended
	if end.IsZero() {
		end = now
	}
	if d := end.Sub(n.Started); d > 0 {
		return d
	}
	return 0
}

// Tree is the live tree of agents, derived from a run's events and the
// prompts waiting for an answer. It is a plain value owned by the model:
// not safe for concurrent use, and it never blocks.
type Tree struct {
	// version counts changes, so a view of the tree can be kept until it
	// changes.
	version int
	nodes   map[string]*Node
	byCall  map[string]string // Agent tool-use id → agent id
	waiting map[string]int    // agent id → prompts waiting
	// tasks is the team's task list as last sent (teamtasks.go).
	tasks []run.TeamTask
}

// NewTree returns a tree holding only the idle main agent.
func NewTree() *Tree {
	t := &Tree{}
	t.Reset()
	return t
}

// Reset forgets every agent but an idle main one.
func (t *Tree) Reset() {
	t.version++
	t.nodes = map[string]*Node{"": {Type: "main", state: StateIdle}}
	t.byCall = map[string]string{}
	t.waiting = map[string]int{}
}

// Main is the main agent's node.
func (t *Tree) Main() *Node { return t.nodes[""] }

// Get returns the agent with the id, or nil.
func (t *Tree) Get(id string) *Node { return t.nodes[id] }

// ByToolUse returns the agent an Agent call started, or nil.
func (t *Tree) ByToolUse(toolUseID string) *Node {
	id, ok := t.byCall[toolUseID]
	if !ok {
		return nil
	}
	return t.nodes[id]
}

// State is the agent's state as shown: Waiting while one of its prompts
// waits, its own state otherwise.
func (t *Tree) State(n *Node) State {
	if t.waiting[n.ID] > 0 && (n.state.Live() || n.state == StateIdle) {
		return StateWaiting
	}
	return n.state
}

// Version changes whenever the tree does.
func (t *Tree) Version() int { return t.version }

// Len counts the agents, the main one included.
func (t *Tree) Len() int { return len(t.nodes) }

// Apply folds one event of a run into the tree; at is when it arrived.
func (t *Tree) Apply(ev run.Event, at time.Time) {
	t.version++
	switch ev.Type {
	case run.EventInit:
		m := t.Main()
		m.state, m.Started, m.Ended, m.Error = StateRunning, at, time.Time{}, ""
		if ev.Init != nil {
			m.Model = ev.Init.Model
			m.TranscriptPath = ev.Init.TranscriptPath
		}
		return
	case run.EventTaskStarted, run.EventTaskPending:
		t.startTask(ev, at)
		return
	case run.EventTaskCompleted:
		t.endTask(ev, at)
		return
	case run.EventResult:
		m := t.Main()
		m.state, m.Ended = StateIdle, at
		return
	case run.EventTeamTasks:
		t.tasks = ev.TeamTasks
		return
	case run.EventTaskProgress:
		// A teammate's state (working, idle, waiting for approval).
		if in := ev.Task; in != nil && in.Teammate != nil {
			if n := t.nodes[in.AgentID]; n != nil {
				n.Description, n.Teammate = teammateLabel(in), in.Teammate.Name
			}
		}
	}
	n := t.nodes[ev.AgentID]
	if n == nil {
		return
	}
	switch ev.Type {
	case run.EventToolStart:
		if ev.Call != nil {
			n.ToolUses++
			n.LastTool = ev.Call.Name
		}
	case run.EventAssistant:
		n.Tokens += ev.Usage.Total()
		if ev.Context.Window > 0 {
			n.Context, n.Window = ev.Context.Tokens, ev.Context.Window
		}
	case run.EventCompactBoundary:
		if ev.Compact != nil && n.Window > 0 {
			n.Context = ev.Compact.PostTokens
		}
	case run.EventTaskProgress:
		if ev.Task != nil && ev.Task.Spent != nil {
			n.Spent = *ev.Task.Spent
		}
	}
}

func (t *Tree) startTask(ev run.Event, at time.Time) {
	info := ev.Task
	if info == nil {
		return
	}
	id := info.AgentID
	if id == "" {
		id = ev.AgentID
	}
	if id == "" {
		return
	}
	state := StateRunning
	if ev.Type == run.EventTaskPending {
		state = StatePending
	}
	if info.Background && state == StateRunning {
		state = StateBackground
	}
	n := t.nodes[id]
	if n == nil {
		parent := info.Parent
		if parent == "main" {
			parent = ""
		}
		if t.nodes[parent] == nil {
			parent = ""
		}
		n = &Node{ID: id, Parent: parent}
		t.nodes[id] = n
		p := t.nodes[parent]
		p.Children = append(p.Children, id)
	}
	n.Type, n.Description, n.ToolUseID = info.AgentType, info.Description, info.ToolUseID
	if info.Teammate != nil {
		n.Description, n.Teammate = teammateLabel(info), info.Teammate.Name
	}
	n.Depth, n.Background = info.Depth, info.Background
	if info.Receipt.Model != "" {
		n.Model = info.Receipt.Model
	}
	if info.Receipt.Budget != nil {
		n.Reserved = info.Receipt.Budget
	}
	if n.Started.IsZero() || n.state == StatePending {
		n.Started = at
	}
	n.state = state
	if info.ToolUseID != "" {
		t.byCall[info.ToolUseID] = id
	}
}

func (t *Tree) endTask(ev run.Event, at time.Time) {
	res := ev.Subagent
	id := ev.AgentID
	if res != nil && res.AgentID != "" {
		id = res.AgentID
	}
	n := t.nodes[id]
	if n == nil {
		return
	}
	n.state, n.Ended = StateCompleted, at
	if res == nil {
		return
	}
	if s, ok := stateFromStatus(res.Status); ok {
		n.state = s
	}
	n.Error, n.Report = res.Error, res.Text
	if res.Budget != nil {
		n.Spent = res.Budget.Spent
	}
	if res.Model != "" {
		n.Model = res.Model
	}
	if res.ToolUses > n.ToolUses {
		n.ToolUses = res.ToolUses
	}
	n.TranscriptPath = res.TranscriptPath
}

// SetStatus moves an agent to the state a runtime task status names
// (moved to the background, stopped, notified); unknown ids and statuses
// are ignored.
func (t *Tree) SetStatus(id string, status tasks.Status, at time.Time) {
	t.version++
	n := t.nodes[id]
	s, ok := stateFromStatus(status)
	if n == nil || !ok || id == "" {
		return
	}
	if s == StateBackground {
		n.Background = true
	}
	n.state = s
	if s.Finished() && n.Ended.IsZero() {
		n.Ended = at
	}
}

// EndTurn marks the main agent's turn as ended: idle after a result,
// interrupted or failed otherwise. Sub-agents of the turn still alive are
// killed, since the runtime cancels them with it (background ones go on).
func (t *Tree) EndTurn(interrupted bool, errText string, at time.Time) {
	t.version++
	m := t.Main()
	m.Ended = at
	switch {
	case interrupted:
		m.state = StateInterrupted
	case errText != "":
		m.state, m.Error = StateFailed, errText
	default:
		m.state = StateIdle
	}
	for _, n := range t.nodes {
		if n.ID != "" && (n.state == StateRunning || n.state == StatePending) && !t.underBackground(n) {
			n.state, n.Ended = StateKilled, at
		}
	}
}

// underBackground reports whether an ancestor of n runs in the
// background: n then outlives the turn with it.
func (t *Tree) underBackground(n *Node) bool {
	for p := t.nodes[n.Parent]; p != nil && p.ID != ""; p = t.nodes[p.Parent] {
		if p.Background {
			return true
		}
	}
	return false
}

// Waiting adds delta to the count of prompts an agent has waiting.
func (t *Tree) Waiting(id string, delta int) {
	t.version++
	t.waiting[id] += delta
	if t.waiting[id] <= 0 {
		delete(t.waiting, id)
	}
}

// ClearFinished forgets every ended sub-agent whose whole subtree has
// ended, and returns how many it forgot.
func (t *Tree) ClearFinished() int {
	t.version++
	removed := 0
	var prune func(id string) bool // reports whether id's subtree is all ended
	prune = func(id string) bool {
		n := t.nodes[id]
		allDone := true
		kept := n.Children[:0]
		for _, c := range n.Children {
			if prune(c) {
				delete(t.nodes, c)
				removed++
				continue
			}
			kept = append(kept, c)
			allDone = false
		}
		n.Children = kept
		return allDone && n.state.Finished()
	}
	prune("")
	for call, id := range t.byCall {
		if t.nodes[id] == nil {
			delete(t.byCall, call)
		}
	}
	return removed
}

// Row is one line of the tree as shown: an agent and its place.
type Row struct {
	Node *Node
	// Level is the depth in the shown tree (0 for main).
	Level int
	// Guide is the tree drawing before the agent ("├─ ", "│  └─ ").
	Guide string
}

// Rows returns the agents depth first, children in start order.
func (t *Tree) Rows() []Row {
	rows := make([]Row, 0, len(t.nodes))
	var walk func(id, prefix string, level int)
	walk = func(id, prefix string, level int) {
		n := t.nodes[id]
		for i, c := range n.Children {
			last := i == len(n.Children)-1
			branch, next := "├─ ", "│  "
			if last {
				branch, next = "└─ ", "   "
			}
			rows = append(rows, Row{Node: t.nodes[c], Level: level + 1, Guide: prefix + branch})
			walk(c, prefix+next, level+1)
		}
	}
	rows = append(rows, Row{Node: t.Main()})
	walk("", "", 0)
	return rows
}

// Counts tallies the sub-agents by shown state.
func (t *Tree) Counts() map[State]int {
	out := map[State]int{}
	for id, n := range t.nodes {
		if id != "" {
			out[t.State(n)]++
		}
	}
	return out
}

// teammateLabel is a teammate's description in the tree: its name, team
// and state before the Agent call's description (issue 25).
func teammateLabel(info *run.TaskInfo) string {
	tm := info.Teammate
	label := "@" + tm.Name + " (" + tm.Team + ") " + tm.State
	if info.Description != "" {
		label += " · " + info.Description
	}
	return label
}
