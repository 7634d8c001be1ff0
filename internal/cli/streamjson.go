package cli

import (
	"cmp"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"slices"
	"time"

	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/google/uuid"
)

// lineWriter writes one JSON line. The SDK session shares one between the
// printer and the control protocol, so lines never interleave.
type lineWriter interface {
	WriteLine(line []byte) error
}

// runInfo is what init reports that the runtime's Init does not carry.
type runInfo struct {
	AddDirs        []string
	PermissionMode permission.Mode
	APIKeySource   string
	Provider       string
	Agents         []string
	MCPServers     []mcpServerJSON
	// Skills are the session's skills, which init lists as skills and as
	// slash commands, as Claude Code does.
	Skills []string
}

// streamPrinter writes a run as Claude Code's stream-json: one JSON object
// per line, init first and the result last.
type streamPrinter struct {
	out     lineWriter
	tally   *tally
	info    runInfo
	session string
	// partial turns on stream_event lines (--include-partial-messages).
	partial bool
	// hookEvents writes every hook run (--include-hook-events;
	// hookevents.go), not only SessionStart's.
	hookEvents bool
	// hookIDs maps the runs being written to their hook_id.
	hookIDs map[string]string
	// open tracks, per agent, the streamed message being assembled for
	// stream_event lines.
	open map[string]*partialMessage
	// launches holds the user lines of background Agent launches whose
	// task_started has not been written yet, by task id: as in Claude
	// Code, the launch's result follows the task's start, which gives it
	// the resolved model.
	launches map[string]*userJSON
	// launchOrder is the task ids of launches in the order they came.
	launchOrder []string
}

// partialMessage is an answer being streamed as stream_event lines.
type partialMessage struct {
	index int
	kind  llm.EventKind // the kind of the open content block; 0 when none
}

func newStreamPrinter(out lineWriter, tl *tally, info runInfo, partial bool) *streamPrinter {
	return &streamPrinter{out: out, tally: tl, info: info, partial: partial, open: map[string]*partialMessage{},
		hookIDs: map[string]string{}, launches: map[string]*userJSON{}}
}

func (p *streamPrinter) write(v any) error {
	line, err := marshalLine(v)
	if err != nil {
		return err
	}
	return p.out.WriteLine(line)
}

func (p *streamPrinter) event(ev run.Event) error {
	p.tally.observe(ev)
	parent := parentID(ev)
	switch ev.Type {
	case run.EventInit:
		return p.init(ev.Init)
	case run.EventText, run.EventThinking:
		if p.partial {
			return p.delta(ev, parent)
		}
	case run.EventRetry:
		delete(p.open, ev.AgentID)
		return p.retry(ev, parent)
	case run.EventAssistant:
		if err := p.closePartial(ev, parent); err != nil {
			return err
		}
		return p.assistant(ev, parent)
	case run.EventUser:
		return p.user(ev, parent)
	case run.EventTaskPending:
		return p.taskPending(ev) // taskpending.go
	case run.EventTaskStarted:
		// A task that starts in the background joins the live set before
		// its task_started, as in Claude Code.
		if ev.Task.Background && !slices.Contains(*p.tally.live, ev.Task.AgentID) {
			*p.tally.live = append(*p.tally.live, ev.Task.AgentID)
			if err := p.backgroundTasksChanged(); err != nil {
				return err
			}
		}
		if err := p.taskStarted(ev); err != nil {
			return err
		}
		return p.writeLaunch(ev.Task.AgentID)
	case run.EventTaskCompleted:
		if err := p.taskCompleted(ev.Subagent); err != nil {
			return err
		}
		// An ended task leaves the live set after its notification.
		if i := slices.Index(*p.tally.live, ev.Subagent.AgentID); i >= 0 {
			*p.tally.live = slices.Delete(*p.tally.live, i, i+1)
			return p.backgroundTasksChanged()
		}
		return nil
	case run.EventTaskProgress:
		return p.taskProgress(ev)
	case run.EventTeamMessage:
		return teamLines{p}.message(ev) // teammsg.go
	case run.EventResult:
		if err := p.flushLaunches(); err != nil {
			return err
		}
		return p.write(p.tally.result(ev.Result))
	case run.EventHookStarted, run.EventHookFinished:
		return p.hookEvent(ev)
	case run.EventCompacting, run.EventCompactBoundary:
		return printCompaction(p, ev) // compact.go
	}
	return nil
}

// everyResult marks stream-json as writing every turn's result.
func (p *streamPrinter) everyResult() {}

// interruptNoter is a printer that shows an interrupted turn before its
// result, as Claude Code does.
type interruptNoter interface {
	interrupted() error
}

// interrupted writes the user message Claude Code writes when a turn is
// interrupted.
func (p *streamPrinter) interrupted() error {
	return p.write(userJSON{Type: "user", Message: userMessage{Role: llm.RoleUser, Content: []any{llm.TextBlock("[Request interrupted by user]")}},
		SessionID: p.session, UUID: uuid.NewString(), Timestamp: timestamp(p.tally.now())})
}

// fail writes the result of a run that ended with an error.
func (p *streamPrinter) fail(f failure) error {
	if err := p.flushLaunches(); err != nil {
		return err
	}
	return p.write(p.tally.failed(p.session, f))
}

// writeLaunch writes the held launch line of the task that just started,
// with the model its start resolved.
func (p *streamPrinter) writeLaunch(taskID string) error {
	out := p.launches[taskID]
	if out == nil {
		return nil
	}
	delete(p.launches, taskID)
	if l, ok := out.ToolUseResult.(*asyncLaunchResult); ok {
		if tk := p.tally.tasks[taskID]; tk != nil {
			l.ResolvedModel = tk.info.Receipt.Model
		}
	}
	return p.write(out)
}

// flushLaunches writes every launch line still held (its task's start
// never came in this stream), in the order they came.
func (p *streamPrinter) flushLaunches() error {
	for _, id := range p.launchOrder {
		if err := p.writeLaunch(id); err != nil {
			return err
		}
	}
	p.launchOrder = p.launchOrder[:0]
	return nil
}

func parentID(ev run.Event) *string {
	if ev.ParentToolUseID == "" {
		return nil
	}
	s := ev.ParentToolUseID
	return &s
}

func (p *streamPrinter) init(in *run.Init) error {
	p.session = in.SessionID
	ev := initJSON{
		Type: "system", Subtype: "init", Cwd: in.Cwd, SessionID: in.SessionID, Tools: nonNil(in.Tools),
		MCPServers: p.mcpServers(in), Model: in.Model, PermissionMode: p.info.PermissionMode,
		SlashCommands: nonNil(p.info.Skills), APIKeySource: p.info.APIKeySource, ClaudeCodeVersion: protocolVersion, AddDirs: nonNil(p.info.AddDirs),
		OutputStyle: "default", Agents: nonNil(p.info.Agents), Skills: nonNil(p.info.Skills), Plugins: []pluginJSON{},
		UUID: uuid.NewString(), Cadre: initExtra{Version: Version, Provider: p.info.Provider, TranscriptPath: in.TranscriptPath,
			Trust: trustOf(cmp.Or(p.info.PermissionMode, in.PermissionMode), in.Provenance), Sandbox: sandboxOf(in.Sandbox)},
	}
	if ev.MCPServers == nil {
		ev.MCPServers = mcpServersJSON(in.MCPServers) // mcp.go
	}
	return p.write(ev)
}

// mcpServers is init's mcp_servers: the runtime's servers and their
// status when the run started.
func (p *streamPrinter) mcpServers(in *run.Init) []mcpServerJSON {
	out := append([]mcpServerJSON{}, p.info.MCPServers...)
	for _, s := range in.MCPServers {
		out = append(out, mcpServerJSON{Name: s.Name, Status: s.Status})
	}
	return out
}

// task returns the sub-agent an event belongs to, or nil for the main
// agent.
func (p *streamPrinter) task(agentID string) *taskTally {
	if agentID == "" {
		return nil
	}
	return p.tally.tasks[agentID]
}

func (p *streamPrinter) assistant(ev run.Event, parent *string) error {
	msg := apiMessage{ID: ev.MessageID, Type: "message", Role: llm.RoleAssistant, Model: ev.Model,
		Content: ev.Message.Content, Usage: ev.Usage}
	if msg.ID == "" {
		msg.ID = "msg_" + randomHex(12)
	}
	if ev.StopReason != "" {
		s := string(ev.StopReason)
		msg.StopReason = &s
	}
	out := assistantJSON{Type: "assistant", Message: msg, ParentToolUseID: parent, AgentID: ev.AgentID,
		SessionID: p.session, UUID: uuid.NewString(), Timestamp: timestamp(p.tally.now())}
	task := p.task(ev.AgentID)
	if task != nil {
		out.SubagentType, out.TaskDescription = task.info.AgentType, task.info.Description
	}
	return p.write(out)
}

// taskProgress writes system/task_progress from the runtime's
// EventTaskProgress (the task registry's progress, sent as a sub-agent
// makes each tool call): tool uses, last tool and elapsed time from the
// registry, total_tokens as Claude Code counts it (the agent's latest
// request).
func (p *streamPrinter) taskProgress(ev run.Event) error {
	in := ev.Task
	if in == nil || p.task(in.AgentID) == nil {
		return nil // a task this stream never saw start
	}
	usage := p.tally.progress(in.AgentID)
	usage.ToolUses, usage.DurationMS = in.Progress.ToolUses, in.Progress.Elapsed.Milliseconds()
	out := taskProgressJSON{Type: "system", Subtype: "task_progress", TaskID: in.AgentID, RunID: p.tally.runID(in.AgentID),
		ToolUseID: in.ToolUseID, Description: in.Description, SubagentType: in.AgentType,
		Usage: usage, LastToolName: in.Progress.LastTool, UUID: uuid.NewString(), SessionID: p.session}
	if in.Spent != nil || in.Teammate != nil {
		x := &taskProgressExtra{}
		if in.Spent != nil {
			x.Spent, x.Reserved = in.Spent, in.Receipt.Budget
		}
		if in.Teammate != nil {
			x.Parent, x.Receipt, x.Teammate = in.Parent, &in.Receipt, in.Teammate
		}
		out.Cadre = x
	}
	return p.write(out)
}

// user writes one user event per tool result, as Claude Code does, each
// of the main agent's with its tool_use_result.
func (p *streamPrinter) user(ev run.Event, parent *string) error {
	task := p.task(ev.AgentID)
	for _, b := range ev.Message.Content {
		out := userJSON{Type: "user", Message: userMessage{Role: llm.RoleUser, Content: []any{p.userBlock(b)}},
			ParentToolUseID: parent, AgentID: ev.AgentID, SessionID: p.session, UUID: uuid.NewString(), Timestamp: timestamp(p.tally.now())}
		if task != nil {
			out.SubagentType, out.TaskDescription = task.info.AgentType, task.info.Description
		} else if b.Type == llm.BlockToolResult {
			out.ToolUseResult = p.toolUseResult(b)
			if l, ok := out.ToolUseResult.(*asyncLaunchResult); ok && p.tally.tasks[l.AgentID] == nil {
				// Written once the task's start is (writeLaunch).
				p.launches[l.AgentID] = &out
				p.launchOrder = append(p.launchOrder, l.AgentID)
				continue
			}
		}
		if err := p.write(out); err != nil {
			return err
		}
	}
	return nil
}

// userBlock renders a block of a user event: a tool result of any tool but
// Agent with its text as a string, as Claude Code writes it.
//
// Every tool_result block says is_error, false included.
func (p *streamPrinter) userBlock(b llm.Block) any {
	if b.Type != llm.BlockToolResult {
		return b
	}
	if p.tally.isAgentCall(b.ToolUseID) || len(b.Content) != 1 || b.Content[0].Type != llm.BlockText {
		return toolResultBlocksJSON{ToolUseID: b.ToolUseID, Type: string(llm.BlockToolResult), Content: nonNilBlocks(b.Content), IsError: b.IsError}
	}
	return toolResultJSON{ToolUseID: b.ToolUseID, Type: string(llm.BlockToolResult), Content: b.Content[0].Text, IsError: b.IsError}
}

// nonNilBlocks returns bs, or an empty list for none.
func nonNilBlocks(bs []llm.Block) []llm.Block {
	if bs == nil {
		return []llm.Block{}
	}
	return bs
}

// toolUseResult is the structured result of a main-agent tool call: the
// sub-agent's result for an Agent call, the text otherwise ("Error: …"
// for a failed call, as Claude Code writes it).
func (p *streamPrinter) toolUseResult(b llm.Block) any {
	if r := p.tally.results[b.ToolUseID]; r != nil {
		return agentToolResult{
			Status: r.Status, Prompt: p.tally.calls[b.ToolUseID].Prompt, AgentID: r.AgentID, AgentType: r.AgentType,
			Content: []llm.Block{llm.TextBlock(r.Text)}, ToolsUsed: sortedKeys(r.ToolStats), ResolvedModel: r.Model, TotalDurationMS: r.Duration.Milliseconds(),
			TotalTokens: p.tally.progress(r.AgentID).TotalTokens, TotalToolUseCount: r.ToolUses, Usage: r.Usage,
			CanContinueAgent: r.Continuable,
		}
	}
	if l := p.asyncLaunch(b); l != nil {
		return l
	}
	if u := p.tally.todos[b.ToolUseID]; u != nil && !b.IsError {
		return todoToolResult{OldTodos: u.Old, NewTodos: u.New} // todos.go
	}
	res, ok := p.tally.structured[b.ToolUseID]
	delete(p.tally.structured, b.ToolUseID)
	if b.IsError {
		return "Error: " + b.ResultText()
	}
	if ok {
		return json.RawMessage(res) // the tool's own (tool/builtin/toolresult.go)
	}
	return b.ResultText()
}

// asyncLaunch is tool_use_result of an Agent call that started its agent
// in the background, in the shape the Agent SDK's AgentOutput gives it;
// nil for any other result.
func (p *streamPrinter) asyncLaunch(b llm.Block) *asyncLaunchResult {
	if b.IsError || !p.tally.isAgentCall(b.ToolUseID) || p.tally.results[b.ToolUseID] != nil {
		return nil
	}
	call := p.tally.calls[b.ToolUseID]
	// The registry knows the task as soon as the call starts it; its
	// task_started line may come after the call's result.
	if p.tally.taskList == nil {
		return nil
	}
	for _, in := range p.tally.taskList() {
		if in.ToolUseID != b.ToolUseID || !in.Background {
			continue
		}
		out := &asyncLaunchResult{Status: "async_launched", IsAsync: true, AgentID: in.ID, Description: in.Description,
			Prompt: call.Prompt, OutputFile: in.OutputFile, CanReadOutputFile: in.OutputFile != "", CanContinueAgent: in.OutputFile != "" && in.AgentType != "fork"}
		if tk := p.tally.tasks[in.ID]; tk != nil {
			out.ResolvedModel = tk.info.Receipt.Model
		}
		return out
	}
	return nil
}

func (p *streamPrinter) taskStarted(ev run.Event) error {
	in := ev.Task
	task := p.tally.tasks[in.AgentID]
	if err := p.write(taskStartedJSON{Type: "system", Subtype: "task_started", TaskID: in.AgentID, ToolUseID: in.ToolUseID,
		Description: in.Description, SubagentType: in.AgentType, IsBackgrounded: in.Background, SpawnDepth: in.Depth,
		TaskType: taskType(in), Prompt: task.prompt, RunID: p.tally.runID(in.AgentID), UUID: uuid.NewString(), SessionID: p.session,
		Cadre: taskStartExtra{Parent: in.Parent, Receipt: in.Receipt, Teammate: in.Teammate}}); err != nil {
		return err
	}
	if p.tally.runs[in.AgentID] > 1 || in.Background {
		// A later run of the task (the agent continued): its first
		// message is not the prompt of the first run, which was shown.
		// A background task's prompt is in its task_started and the
		// launch's tool_use_result; Claude Code 2.1.328 writes no user
		// line for it either (toolshapes_test.go).
		return nil
	}
	// A foreground sub-agent's first message, its prompt, as Claude Code
	// shows it.
	parent := in.ToolUseID
	return p.write(userJSON{Type: "user", Message: userMessage{Role: llm.RoleUser, Content: []any{llm.TextBlock(task.prompt)}},
		ParentToolUseID: &parent, AgentID: in.AgentID, SessionID: p.session, UUID: uuid.NewString(), Timestamp: timestamp(p.tally.now()),
		SubagentType: in.AgentType, TaskDescription: in.Description})
}

// backgroundTasksChanged writes system/background_tasks_changed: every
// background task live after a change, in the Agent SDK's shape.
func (p *streamPrinter) backgroundTasksChanged() error {
	tasks := make([]backgroundTaskJSON, 0, len(*p.tally.live))
	for _, id := range *p.tally.live {
		tk := p.tally.tasks[id]
		if tk == nil {
			continue
		}
		e := backgroundTaskJSON{TaskID: id, RunID: p.tally.runID(id), TaskType: taskType(&tk.info), SubagentType: tk.info.AgentType,
			Description: tk.info.Description}
		if tk.info.Parent != "" && tk.info.Parent != "main" {
			e.ParentTaskID = tk.info.Parent
		}
		tasks = append(tasks, e)
	}
	return p.write(backgroundTasksJSON{Type: "system", Subtype: "background_tasks_changed", Tasks: tasks,
		UUID: uuid.NewString(), SessionID: p.session})
}

func (p *streamPrinter) taskCompleted(r *run.SubagentResult) error {
	patch := taskPatch{Status: r.Status, EndTime: p.tally.now().UnixMilli(), Error: r.Error}
	if err := p.write(taskUpdatedJSON{Type: "system", Subtype: "task_updated", TaskID: r.AgentID, RunID: p.tally.runID(r.AgentID), Patch: patch,
		UUID: uuid.NewString(), SessionID: p.session}); err != nil {
		return err
	}
	summary := r.Text
	if r.Error != "" {
		summary = r.Error
	}
	return p.write(taskNotificationJSON{Type: "system", Subtype: "task_notification", TaskID: r.AgentID, RunID: p.tally.runID(r.AgentID), ToolUseID: r.ToolUseID,
		Status: notificationStatusOf(r.Status), OutputFile: r.TranscriptPath, Summary: summary, SummaryIsReport: r.Error == "", Usage: p.tally.progress(r.AgentID),
		UUID: uuid.NewString(), SessionID: p.session, Cadre: subagentExtra{
			AgentType: r.AgentType, Model: r.Model, ModelRule: string(r.ModelRule), ModelsUsed: r.ModelsUsed, Error: r.Error,
			MaxTurnsHit: r.MaxTurnsHit, Turns: r.Turns, ToolUses: r.ToolUses, ToolStats: r.ToolStats, Usage: r.Usage,
			DurationMS: r.Duration.Milliseconds(), Receipt: r.Receipt, StructuredOutput: r.StructuredOutput, Subtype: r.Subtype,
			Budget: r.Budget, Status: budgetStatus(r.Status),
		}})
}

func (p *streamPrinter) retry(ev run.Event, parent *string) error {
	r := ev.Retry
	out := retryJSON{Type: "system", Subtype: "api_retry", Attempt: r.Attempt, MaxRetries: r.MaxRetries,
		Error: retryErrorKind(r), ParentToolUseID: parent, UUID: uuid.NewString(), SessionID: p.session}
	out.RetryDelayMS = r.Wait.Milliseconds()
	if r.Status != 0 {
		s := r.Status
		out.ErrorStatus = &s
	}
	out.Cadre.Cause, out.Cadre.Message, out.Cadre.AgentID = r.Cause, r.Err, ev.AgentID
	return p.write(out)
}

// retryErrorKind names a retried failure with the Agent SDK's error kinds.
func retryErrorKind(r *llm.Retry) string {
	switch {
	case r.Status == 429:
		return "rate_limit"
	case r.Status == 529:
		return "overloaded"
	case r.Status >= 500:
		return "server_error"
	}
	return "unknown"
}

// delta writes a streamed piece of an answer as Messages API stream
// events, opening the message and its content blocks as needed.
func (p *streamPrinter) delta(ev run.Event, parent *string) error {
	kind := llm.EventTextDelta
	blockType, deltaType, field := "text", "text_delta", "text"
	if ev.Type == run.EventThinking {
		kind = llm.EventThinkingDelta
		blockType, deltaType, field = "thinking", "thinking_delta", "thinking"
	}
	m := p.open[ev.AgentID]
	if m == nil {
		m = &partialMessage{index: -1}
		p.open[ev.AgentID] = m
		if err := p.streamEvent(map[string]any{"type": "message_start", "message": map[string]any{
			"id": "msg_" + randomHex(12), "type": "message", "role": "assistant", "content": []any{}}}, parent); err != nil {
			return err
		}
	}
	if m.kind != kind {
		if m.kind != 0 {
			if err := p.streamEvent(map[string]any{"type": "content_block_stop", "index": m.index}, parent); err != nil {
				return err
			}
		}
		m.index++
		m.kind = kind
		if err := p.streamEvent(map[string]any{"type": "content_block_start", "index": m.index,
			"content_block": map[string]any{"type": blockType, field: ""}}, parent); err != nil {
			return err
		}
	}
	return p.streamEvent(map[string]any{"type": "content_block_delta", "index": m.index,
		"delta": map[string]any{"type": deltaType, field: ev.Text}}, parent)
}

// closePartial ends the streamed message of the agent whose answer is now
// complete.
func (p *streamPrinter) closePartial(ev run.Event, parent *string) error {
	m := p.open[ev.AgentID]
	if !p.partial || m == nil {
		return nil
	}
	delete(p.open, ev.AgentID)
	if m.kind != 0 {
		if err := p.streamEvent(map[string]any{"type": "content_block_stop", "index": m.index}, parent); err != nil {
			return err
		}
	}
	if err := p.streamEvent(map[string]any{"type": "message_delta", "delta": map[string]any{"stop_reason": ev.StopReason},
		"usage": map[string]any{"output_tokens": ev.Usage.OutputTokens}}, parent); err != nil {
		return err
	}
	return p.streamEvent(map[string]any{"type": "message_stop"}, parent)
}

func (p *streamPrinter) streamEvent(e any, parent *string) error {
	return p.write(streamEventJSON{Type: "stream_event", Event: e, ParentToolUseID: parent, UUID: uuid.NewString(), SessionID: p.session})
}

// jsonPrinter writes only the result object on stdout, and each retry on
// stderr.
type jsonPrinter struct {
	out     lineWriter
	errOut  io.Writer
	tally   *tally
	session string
}

func (p *jsonPrinter) event(ev run.Event) error {
	p.tally.observe(ev)
	switch ev.Type {
	case run.EventRetry:
		label := ""
		if ev.AgentID != "" {
			label = "[" + ev.AgentID + "] "
		}
		printRetry(p.errOut, label, ev.Retry)
	case run.EventInit:
		p.session = ev.Init.SessionID
	case run.EventResult:
		line, err := marshalLine(p.tally.result(ev.Result))
		if err != nil {
			return err
		}
		return p.out.WriteLine(line)
	}
	return nil
}

func (p *jsonPrinter) fail(f failure) error {
	line, err := marshalLine(p.tally.failed(p.session, f))
	if err != nil {
		return err
	}
	return p.out.WriteLine(line)
}

// sortedKeys returns the keys of m in order, never nil.
func sortedKeys(m map[string]int) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// timestamp renders t as Claude Code does: UTC, milliseconds, Z.
func timestamp(t time.Time) string { return t.UTC().Format("2006-01-02T15:04:05.000Z") }

// writerLines adapts an io.Writer to lineWriter.
type writerLines struct {
	w interface{ Write([]byte) (int, error) }
}

func (w writerLines) WriteLine(line []byte) error {
	_, err := w.w.Write(line)
	return err
}

// taskType is Claude Code's task type of a task: in_process_teammate for
// a teammate (issue 25), else local_agent.
func taskType(in *run.TaskInfo) string {
	if in != nil && in.Teammate != nil {
		return "in_process_teammate"
	}
	return "local_agent"
}
