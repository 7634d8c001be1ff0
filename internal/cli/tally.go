package cli

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/pricing"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
	"github.com/google/uuid"
)

// tally follows a run's events and keeps what the result and the task
// events report beyond what the runtime's Result carries: usage per model
// and its cost, the main agent's own usage and last stop reason, the time
// spent in model requests, and each sub-agent's progress. It sees every
// event, so a run that ends in an error still gets a result with its
// numbers.
//
// A run has one result per turn of the main agent (a headless run's
// first turn, then one per batch of task notifications), and its figures
// follow Claude Code's: num_turns, usage, the main agent's tool uses and
// stop reason are the turn's (reset by each turn's init); modelUsage,
// total_cost_usd, cadre.total_usage, the sub-agent counts and the
// permission denials are the whole run's so far, background agents'
// requests made between two turns included.
type tally struct {
	prices pricing.Table
	now    func() time.Time
	start  time.Time

	// The main agent's figures of the current turn, since its init.
	turnStart  time.Time
	mainUsage  llm.Usage
	mainTurns  int
	mainTools  int
	stopReason llm.StopReason
	// allTurns counts the main agent's model requests of every turn.
	allTurns int
	apiTime  time.Duration
	// models is every agent's usage by model over the run (an SDK
	// session's turns share it).
	models map[string]*modelTally
	// webSearch counts the main agent's web searches of the turn.
	webSearch int
	// origin is the result's origin: set for a turn run on task
	// notifications, nil for one run on a prompt.
	origin *originJSON
	// seq numbers the results (result_index); shared by the tallies of
	// one SDK session.
	seq *resultSeq
	// runtime holds what only the runtime's per-turn results count (calls
	// queued for a slot, refusals), summed over the run's results.
	runtime *run.SubagentStats
	// runs numbers each task's runs, for run_id.
	runs map[string]int
	// live lists the background tasks running, in the order they joined
	// (system/background_tasks_changed); shared like runs.
	live *[]string

	// calls holds the input of every Agent call, by tool-use id.
	calls map[string]agentCall
	tasks map[string]*taskTally
	// results holds each ended sub-agent's result, by tool-use id.
	results map[string]*run.SubagentResult
	stats   *subagentStatsJSON
	// todos holds each TodoWrite call's change, by tool-use id (todos.go).
	todos map[string]*run.TodoUpdate
	// structured holds the main agent's tool calls' structured results,
	// by tool-use id (tool.Output.Result), until their user event.
	structured map[string][]byte
	// taskList lists the session's tasks for the result's cadre.tasks
	// (tasksjson.go); nil leaves the key out.
	taskList taskLister
}

// modelTally is one model's usage.
type modelTally struct {
	usage     llm.Usage
	webSearch int
}

// agentCall is what an Agent call asked for.
type agentCall struct {
	Description  string `json:"description"`
	Prompt       string `json:"prompt"`
	SubagentType string `json:"subagent_type"`
	Background   *bool  `json:"run_in_background"`
}

// taskTally is one sub-agent's progress.
type taskTally struct {
	info       run.TaskInfo
	prompt     string
	started    time.Time
	lastTokens int64
	toolUses   int
	lastTool   string
}

func newTally(now func() time.Time, prices pricing.Table) *tally {
	if now == nil {
		now = time.Now
	}
	if prices == nil {
		prices = pricing.Default()
	}
	t := &tally{prices: prices, now: now, start: now(), models: map[string]*modelTally{},
		calls: map[string]agentCall{}, tasks: map[string]*taskTally{}, results: map[string]*run.SubagentResult{},
		todos: map[string]*run.TodoUpdate{}, structured: map[string][]byte{}, seq: &resultSeq{}, runs: map[string]int{}, live: &[]string{},
		stats: &subagentStatsJSON{ByType: map[string]int{}}}
	t.turnStart = t.start
	t.runtime = &run.SubagentStats{Refused: map[run.RefusalReason]int{}}
	return t
}

// resultSeq counts the results written so far.
type resultSeq struct{ n int }

// next returns the next result_index.
func (s *resultSeq) next() int {
	n := s.n
	s.n++
	return n
}

// originJSON is a result's origin: what started its turn, in the Agent
// SDK's SDKMessageOrigin shape.
type originJSON struct {
	Kind string `json:"kind"`
	// Producer and RunID name what produced the turn's input: the
	// session's task whose run's notification the turn answers first.
	Producer string `json:"producer,omitempty"`
	RunID    string `json:"runId,omitempty"`
}

// notificationOrigin is the origin of a turn run on task notifications.
var notificationOrigin = originJSON{Kind: "task-notification"}

// notificationTurn marks the turns that follow as run on task
// notifications (their results carry origin).
func (t *tally) notificationTurn() {
	o := notificationOrigin
	t.origin = &o
}

// skipResult numbers a turn's result that is not written (json and text
// write only the run's last).
func (t *tally) skipResult() { t.seq.next() }

// beginTurn resets the main agent's figures for a new turn.
func (t *tally) beginTurn() {
	t.turnStart = t.now()
	t.mainUsage, t.mainTurns, t.mainTools, t.stopReason, t.webSearch = llm.Usage{}, 0, 0, "", 0
}

// runID is the id of a task's current run: its task id and how many times
// it started, so the runs of one task sort in the order they opened; ""
// for a task this stream never saw start.
func (t *tally) runID(taskID string) string {
	n := t.runs[taskID]
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("%s-run%03d", taskID, n)
}

// observe folds one event in.
func (t *tally) observe(ev run.Event) {
	switch ev.Type {
	case run.EventInit:
		t.beginTurn()
	case run.EventAssistant:
		t.assistant(ev)
	case run.EventToolStart:
		if ev.AgentID == "" {
			t.mainTools++
		}
	case run.EventToolEnd:
		if ev.AgentID == "" && ev.ToolResult != nil && len(ev.ToolResult.Result) > 0 && ev.Call != nil {
			t.structured[ev.Call.ID] = ev.ToolResult.Result
		}
	case run.EventNotification:
		// The first notification a notification turn delivers to the
		// main agent names the run its result answers.
		if n := ev.Notification; n != nil && ev.AgentID == "" && t.origin != nil && t.origin.RunID == "" {
			t.origin.Producer, t.origin.RunID = "session-task", t.runID(n.TaskID)
		}
	case run.EventTodos:
		t.todos[ev.Todos.ToolUseID] = ev.Todos
	case run.EventTaskStarted:
		t.taskStarted(ev.Task)
	case run.EventTaskCompleted:
		t.results[ev.Subagent.ToolUseID] = ev.Subagent
		switch ev.Subagent.Status {
		case task.Completed:
			t.stats.Completed++
		case task.Failed:
			t.stats.Failed++
		case task.Killed:
			t.stats.Killed.User++
		}
	}
}

func (t *tally) assistant(ev run.Event) {
	t.apiTime += ev.APIDuration
	model := ev.Model
	mt := t.models[model]
	if mt == nil {
		mt = &modelTally{}
		t.models[model] = mt
	}
	mt.usage = mt.usage.Add(ev.Usage)
	if ev.AgentID == "" {
		t.mainUsage = t.mainUsage.Add(ev.Usage)
		t.mainTurns++
		t.allTurns++
		t.stopReason = ev.StopReason
	}
	if task := t.tasks[ev.AgentID]; task != nil {
		task.lastTokens = ev.Usage.Total()
	}
	for _, b := range ev.Message.Content {
		switch {
		case b.Type == llm.BlockToolUse && (b.Name == tool.Agent || b.Name == tool.Task):
			var c agentCall
			_ = json.Unmarshal(b.Input, &c)
			t.calls[b.ID] = c
			switch {
			case c.Background == nil:
				t.stats.Requested.Unset++
			case *c.Background:
				t.stats.Requested.Background++
			default:
				t.stats.Requested.Foreground++
			}
		case b.Type == "server_tool_use" && b.Name == "web_search":
			mt.webSearch++
			if ev.AgentID == "" {
				t.webSearch++
			}
		}
		if task := t.tasks[ev.AgentID]; task != nil && b.Type == llm.BlockToolUse {
			task.toolUses++
			task.lastTool = b.Name
		}
	}
}

func (t *tally) taskStarted(info *run.TaskInfo) {
	t.stats.Spawned++
	t.stats.ByType[info.AgentType]++
	if info.Background {
		t.stats.StartedInBackground++
	}
	t.stats.MaxDepth = max(t.stats.MaxDepth, info.Depth)
	if info.Depth > 1 {
		t.stats.SpawnedBySubagents++
	}
	if info.Teammate != nil && t.runs[info.AgentID] == 0 {
		t.stats.Teammates++
	}
	t.runs[info.AgentID]++
	t.tasks[info.AgentID] = &taskTally{info: *info, prompt: t.calls[info.ToolUseID].Prompt, started: t.now()}
}

// isAgentCall reports whether a tool-use id is an Agent call.
func (t *tally) isAgentCall(id string) bool {
	_, ok := t.calls[id]
	return ok
}

// progress is a sub-agent's usage for task events.
func (t *tally) progress(agentID string) taskUsage {
	task := t.tasks[agentID]
	if task == nil {
		return taskUsage{}
	}
	return taskUsage{TotalTokens: task.lastTokens, ToolUses: task.toolUses, DurationMS: t.now().Sub(task.started).Milliseconds()}
}

// modelUsage renders usage per model with its cost, and the total cost;
// unpriced lists models whose price is unknown (their cost counts as 0).
func (t *tally) modelUsage() (out map[string]modelUsageJSON, total float64, unpriced []string) {
	out = make(map[string]modelUsageJSON, len(t.models))
	for id, m := range t.models {
		p, known := t.prices.Lookup(id)
		if !known {
			unpriced = append(unpriced, id)
		}
		cost := p.Cost(m.usage)
		total += cost
		out[id] = modelUsageJSON{
			InputTokens: m.usage.InputTokens, OutputTokens: m.usage.OutputTokens,
			CacheReadInputTokens: m.usage.CacheReadTokens, CacheCreationInputTokens: m.usage.CacheWriteTokens,
			WebSearchRequests: m.webSearch, CostUSD: cost, ContextWindow: p.ContextWindow, MaxOutputTokens: p.MaxOutputTokens,
		}
	}
	slices.Sort(unpriced)
	return out, total, unpriced
}

// cost is the run's cost so far.
func (t *tally) cost() float64 {
	_, total, _ := t.modelUsage()
	return total
}

// failed builds the result object of a run that ended with an error.
func (t *tally) failed(session string, f failure) resultJSON {
	var out resultJSON
	if f.result != nil {
		out = t.result(f.result)
	} else {
		out = t.base(session)
	}
	out.Subtype, out.IsError, out.Result, out.Errors = f.subtype, true, f.msg, []string{f.msg}
	out.TerminalReason = terminalReason(f.subtype, f.msg)
	if f.apiStatus != 0 {
		s := f.apiStatus
		out.APIErrorStatus = &s
		out.TerminalReason = "api_error"
	}
	return out
}

// result builds the result object from the runtime's result.
func (t *tally) result(res *run.Result) resultJSON {
	out := t.base(res.SessionID)
	out.Subtype, out.IsError, out.Result = res.Subtype, res.IsError, res.Text
	out.NumTurns, out.DurationMS = res.NumTurns, res.Duration.Milliseconds()
	if t.origin != nil {
		// A turn run on notifications starts when they are there (its
		// init), not when the wait for them began.
		out.DurationMS = t.now().Sub(t.turnStart).Milliseconds()
	}
	out.Cadre.ToolUses, out.Cadre.TranscriptPath = res.ToolUses, res.TranscriptPath
	// The runtime's result counts its own turn; the sub-agents it
	// started, and what they spend after it, count in the run's figures
	// (base), which the tally follows across turns.
	t.runtime.Spawned += res.Subagents.Spawned
	t.runtime.Queued += res.Subagents.Queued
	for k, n := range res.Subagents.Refused {
		t.runtime.Refused[k] += n
	}
	out.Cadre.Subagents = t.subagents()
	out.Cadre.Todos = res.Todos
	out.StructuredOutput = res.StructuredOutput
	if res.PermissionDenials != nil {
		out.PermissionDenials = res.PermissionDenials
	}
	out.SubagentStats.Refused.DepthLimit = t.runtime.Refused[run.RefusedDepth]
	// Calls beyond the running cap wait in the gate's queue, so none is
	// ever refused for concurrency; the key stays for Claude Code's shape.
	out.TerminalReason = "completed"
	if res.IsError {
		out.Errors = []string{res.Text}
		out.TerminalReason = terminalReason(res.Subtype, "")
	}
	return out
}

// base is the result object from what the tally saw: an error result
// until the runtime's result fills it in.
func (t *tally) base(session string) resultJSON {
	usage, cost, unpriced := t.modelUsage()
	out := resultJSON{
		Type: "result", Subtype: run.ErrorDuringExecution, IsError: true, SessionID: session,
		DurationMS: t.now().Sub(t.turnStart).Milliseconds(), DurationAPIMS: t.apiTime.Milliseconds(),
		NumTurns: t.mainTurns, TotalCostUSD: cost, ModelUsage: usage, SubagentStats: *t.stats,
		PermissionDenials: []permission.Denial{}, ResultIndex: t.seq.next(), Origin: t.origin,
		UUID:  uuid.NewString(),
		Cadre: resultExtra{Version: Version, ToolUses: t.mainTools, TotalTurns: t.allTurns, UnpricedModels: unpriced, Tasks: t.tasksJSON(), Subagents: t.subagents()},
	}
	out.Usage.InputTokens = t.mainUsage.InputTokens
	out.Usage.OutputTokens = t.mainUsage.OutputTokens
	out.Usage.CacheReadInputTokens = t.mainUsage.CacheReadTokens
	out.Usage.CacheCreationInputTokens = t.mainUsage.CacheWriteTokens
	out.Usage.CacheCreation.Ephemeral5m = t.mainUsage.CacheWriteTokens
	out.Usage.ServerToolUse.WebSearchRequests = t.webSearch
	out.Usage.ServiceTier = "standard"
	if t.stopReason != "" {
		s := string(t.stopReason)
		out.StopReason = &s
	}
	for _, m := range t.models {
		out.Cadre.TotalUsage = out.Cadre.TotalUsage.Add(m.usage)
	}
	return out
}

// subagents is cadre.subagents: the run's sub-agents so far, from the
// task events of every turn (a background child that ends after the turn
// that started it counts), with the queued and refused calls of the
// runtime's results. A call queued for a slot is spawned before it
// starts (and may be stopped before it does): spawned is the larger of
// the tasks seen starting and the runtime's count.
func (t *tally) subagents() run.SubagentStats {
	out := run.SubagentStats{Spawned: max(t.stats.Spawned, t.runtime.Spawned), Completed: t.stats.Completed, Failed: t.stats.Failed,
		Killed: t.stats.Killed.User + t.stats.Killed.Parent + t.stats.Killed.System, Queued: t.runtime.Queued,
		Refused: maps.Clone(t.runtime.Refused), Teammates: t.stats.Teammates}
	return out
}

// terminalReason names how a run ended, with the Agent SDK's words.
func terminalReason(subtype run.Subtype, msg string) string {
	switch subtype {
	case run.ErrorMaxTurns:
		return "max_turns"
	case run.ErrorMaxBudget:
		return "budget_exhausted"
	case run.ErrorMaxStructuredOutputRetries:
		return "structured_output_retry_exhausted"
	}
	if msg == "interrupted" || strings.HasPrefix(msg, "terminated") {
		return "aborted_streaming"
	}
	return "api_error"
}
