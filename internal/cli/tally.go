package cli

import (
	"encoding/json"
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
type tally struct {
	prices pricing.Table
	now    func() time.Time
	start  time.Time

	mainUsage  llm.Usage
	mainTurns  int
	mainTools  int
	stopReason llm.StopReason
	apiTime    time.Duration
	models     map[string]*modelTally
	webSearch  int

	// calls holds the input of every Agent call, by tool-use id.
	calls map[string]agentCall
	tasks map[string]*taskTally
	// results holds each ended sub-agent's result, by tool-use id.
	results map[string]*run.SubagentResult
	stats   subagentStatsJSON
	// todos holds each TodoWrite call's change, by tool-use id (todos.go).
	todos map[string]*run.TodoUpdate
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
		todos: map[string]*run.TodoUpdate{}}
	t.stats.ByType = map[string]int{}
	return t
}

// observe folds one event in.
func (t *tally) observe(ev run.Event) {
	switch ev.Type {
	case run.EventAssistant:
		t.assistant(ev)
	case run.EventToolStart:
		if ev.AgentID == "" {
			t.mainTools++
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
	out := t.base(session)
	if f.result != nil {
		out = t.result(f.result)
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
	out.Cadre.ToolUses, out.Cadre.TotalUsage, out.Cadre.TranscriptPath = res.ToolUses, res.Usage, res.TranscriptPath
	out.Cadre.Subagents = res.Subagents
	out.Cadre.Todos = res.Todos
	out.StructuredOutput = res.StructuredOutput
	if res.PermissionDenials != nil {
		out.PermissionDenials = res.PermissionDenials
	}
	r := res.Subagents.Refused
	out.SubagentStats.Refused.DepthLimit = r[run.RefusedDepth]
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
		DurationMS: t.now().Sub(t.start).Milliseconds(), DurationAPIMS: t.apiTime.Milliseconds(),
		NumTurns: t.mainTurns, TotalCostUSD: cost, ModelUsage: usage, SubagentStats: t.stats,
		PermissionDenials: []permission.Denial{},
		UUID:              uuid.NewString(),
		Cadre:             resultExtra{Version: Version, ToolUses: t.mainTools, UnpricedModels: unpriced, Tasks: t.tasksJSON()},
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
