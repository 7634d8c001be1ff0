package engine

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"github.com/cadre-dev/cadre/internal/compact"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
)

// Context compaction (issue 27, S-1.5): the engine's side. The loop
// decides when and does it (internal/loop/compact.go, internal/compact);
// the engine gives each agent its thresholds, gathers what must survive
// from the agent, records the boundary in its transcript, forwards the
// events, and takes manual requests (Runtime.Compact, /compact).
//
// What lives on the agent and not in its messages needs no keeping: the
// fork marker (agent.fork), depth, capability ceiling and spawn receipt
// are fields of *agent, untouched by a compaction.

// compactQueue holds a manual compaction asked for while the agent runs;
// the loop takes it between turns.
type compactQueue struct {
	mu      sync.Mutex
	pending *string
}

// ask queues a compaction with instructions (a later ask replaces them).
func (q *compactQueue) ask(instructions string) {
	q.mu.Lock()
	q.pending = &instructions
	q.mu.Unlock()
}

// take returns the queued request, if any, and clears it.
func (q *compactQueue) take() (string, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.pending == nil {
		return "", false
	}
	s := *q.pending
	q.pending = nil
	return s, true
}

// compaction is the loop's compaction config for a, recording into the
// transcript at tpath ("" for none); nil when compaction is off.
func (g compactGlue) compaction(tpath string) *loop.Compaction {
	a := g.a
	s := a.run.rt.cfg.Compaction
	if s.Disable {
		return nil
	}
	return &loop.Compaction{
		Thresholds: compact.Compute(g.window(), a.run.rt.cfg.MaxTokens, s.Percent),
		Auto:       s.Auto(),
		Keep:       compactOf(a).keepAcrossCompaction,
		Transcript: tpath,
		Manual:     a.compactQ.take,

		ClearResults: s.ClearToolResults,
		KeepResults:  keepResultsOf,
	}
}

// window is the context window a compacts against: its definition's
// autoCompactWindow, else the session's for its model.
func (g compactGlue) window() int64 {
	a := g.a
	if a.def != nil && a.def.AutoCompactWindow > 0 {
		return a.def.AutoCompactWindow // the agent definition's own
	}
	return a.run.rt.cfg.Compaction.WindowFor(a.modelID)
}

// contextUse is how full a's context is after an answer with usage u,
// for the TUI's meter; c is its loop's compaction (nil when off).
func (g compactGlue) contextUse(u llm.Usage, c *loop.Compaction) run.ContextUse {
	if c == nil {
		return run.ContextUse{Tokens: compact.Size(u), Window: g.window()}
	}
	out := run.ContextUse{Tokens: compact.Size(u), Window: c.Thresholds.Window}
	if c.Auto {
		out.CompactAt = c.Thresholds.Compact
	}
	return out
}

// keepResultsOf names the tools whose results clearing leaves alone: a
// skill's instructions and a child agent's report are what the agent
// works from, not output it can fetch again.
func keepResultsOf(name string) bool { return name == tool.Skill || name == tool.Agent }

// keepAcrossCompaction gathers what must survive a compaction of msgs:
// the last files read (read again now, capped), skills invoked, the todo
// list, the agent's live background tasks, and for a teammate or a lead
// of teammates (issue 25) its team, role, current task and unread mail
// (Keep.Extra, team.go).
func (g compactGlue) keepAcrossCompaction(_ context.Context, msgs []llm.Message) compact.Keep {
	a := g.a
	var k compact.Keep
	for _, path := range compact.RecentReads(msgs, tool.Read, compact.MaxFiles) {
		if a.env.Hidden != nil && a.env.Hidden(path) {
			continue
		}
		content, err := readCapped(path, compact.MaxFileBytes+1)
		if err != nil {
			continue // gone or unreadable now: the summary names it
		}
		k.Files = append(k.Files, compact.File{Path: path, Content: content})
	}
	k.Skills = compact.InvokedSkills(msgs, tool.Skill)
	for _, t := range a.env.Todos.Items() {
		k.Todos = append(k.Todos, prompts.CompactTodo{Content: t.Content, Status: string(t.Status)})
	}
	for _, info := range a.run.rt.bg.reg.List() {
		if info.Parent == a.name() && !info.Status.Terminal() {
			k.Tasks = append(k.Tasks, prompts.CompactTask{ID: info.ID, Kind: info.AgentType, Description: info.Description, Status: string(info.Status)})
		}
	}
	k.Extra = teammateOf(a).keep()
	return k
}

// readCapped reads at most n bytes of the file at path.
func readCapped(path string, n int64) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, n))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", path, err)
	}
	return string(b), nil
}

// compactAppender is a transcript writer that records boundaries.
type compactAppender interface {
	AppendCompact(transcript.CompactBoundary) error
	Path() string
}

// compactRecorder wraps rec so the loop's boundaries reach the
// transcript; it returns rec as it is when no writer is below it.
func compactRecorder(rec loop.Recorder) (loop.Recorder, string) {
	w, ok := rec.(compactAppender)
	if s, isSkip := rec.(*skipRecorder); !ok && isSkip {
		w, ok = s.rec.(compactAppender)
	}
	if !ok {
		return rec, ""
	}
	br := boundaryRecorder{Recorder: rec, w: w}
	if wr, ok := rec.(writtenRecorder); ok {
		// Kept visible: writtenFirst (agent.go) waits on it.
		return writtenBoundary{br, wr}, w.Path()
	}
	return br, w.Path()
}

// writtenBoundary is a boundaryRecorder over a recorder that can wait for
// its queued lines (writtenRecorder), which it still offers.
type writtenBoundary struct {
	boundaryRecorder
	wr writtenRecorder
}

// Written implements writtenRecorder.
func (b writtenBoundary) Written() error { return b.wr.Written() }

// boundaryRecorder records a loop.Boundary as a compact_boundary entry.
type boundaryRecorder struct {
	loop.Recorder
	w compactAppender
}

// AppendBoundary implements loop.BoundaryRecorder.
func (b boundaryRecorder) AppendBoundary(x loop.Boundary) error {
	return b.w.AppendCompact(transcript.CompactBoundary{Trigger: string(x.Trigger), PreTokens: x.PreTokens, PostTokens: x.PostTokens,
		DurationMs: x.Duration.Milliseconds(), Summary: x.Summary})
}

// compactEvent turns a loop compaction event into the run's, counting a
// summary request's usage as the agent's (S-1.4).
func (g compactGlue) compactEvent(ev loop.Event, out *run.Event, threshold int64) {
	a := g.a
	c := ev.Compact
	info := &run.Compaction{Trigger: string(c.Trigger), PreTokens: c.PreTokens, PostTokens: c.PostTokens, Duration: c.Duration, Summary: c.Summary}
	switch ev.Kind {
	case loop.CompactStart:
		out.Type = run.EventCompacting
	case loop.ContextWarning:
		out.Type = run.EventContextWarning
		info.Threshold = threshold
	case loop.CompactEnd:
		a.addUsage(ev.Usage)
		a.run.addUsage(ev.Usage)
		out.Type, out.Usage, out.Model, out.MessageID = run.EventCompactBoundary, ev.Usage, ev.Model, ev.MessageID
	}
	out.Compact = info
}

// compactBook finds a running agent's compaction queue by id ("" for the
// main agent), for Runtime.Compact.
type compactBook struct {
	mu sync.Mutex
	qs map[string]*compactQueue
}

// running lists a's queue while it runs; the returned func unlists it.
func (b *compactBook) running(a *agent) func() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.qs == nil {
		b.qs = map[string]*compactQueue{}
	}
	b.qs[a.id] = &a.compactQ
	return func() {
		b.mu.Lock()
		defer b.mu.Unlock()
		if b.qs[a.id] == &a.compactQ {
			delete(b.qs, a.id)
		}
	}
}

func (b *compactBook) find(id string) (*compactQueue, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q, ok := b.qs[id]
	return q, ok
}

// Compact implements the root's Runtime.Compact.
func (r *Runtime) Compact(ctx context.Context, agentID, instructions string) error {
	if r.cfg.Compaction.Disable {
		return errors.New("cadre: compact: compaction is disabled (DISABLE_COMPACT)")
	}
	if agentID == "main" {
		agentID = ""
	}
	if q, ok := r.compacts.find(agentID); ok {
		q.ask(instructions)
		return nil
	}
	if agentID != "" {
		return fmt.Errorf("cadre: compact: no running agent %s", agentID)
	}
	var failed error
	for ev, err := range r.Run(ctx, strings.TrimSpace(compactPrefix+" "+instructions)) {
		if err != nil {
			return err
		}
		if ev.Type == run.EventResult && ev.Result.IsError {
			failed = errors.New("cadre: compact: " + ev.Result.Error)
		}
	}
	return failed
}

// compactPrefix is the command that asks for a compaction as a prompt.
const compactPrefix = "/compact"

// compactCommand reports whether prompt is "/compact [instructions]",
// and the instructions.
func compactCommand(prompt string) (string, bool) {
	p := strings.TrimSpace(prompt)
	rest, ok := strings.CutPrefix(p, compactPrefix)
	if !ok || (rest != "" && rest[0] != ' ' && rest[0] != '\n' && rest[0] != '\t') {
		return "", false
	}
	return strings.TrimSpace(rest), true
}

// compacted is the answer of a run that compacted on /compact.
const compacted = "Compacted."

// compactNow compacts the idle main agent's conversation (the prompt
// /compact), recording into rec, and returns the run's loop result:
// the new conversation, the summary request's usage.
func (g compactGlue) compactNow(ctx context.Context, instructions string, rec loop.Recorder) (*loop.Result, error) {
	a := g.a
	rt := a.run.rt
	if rt.cfg.Compaction.Disable {
		return nil, errors.New("compaction is disabled (DISABLE_COMPACT)")
	}
	rt.mu.Lock()
	msgs := append([]llm.Message(nil), rt.messages...)
	rt.mu.Unlock()
	if len(msgs) == 0 {
		return nil, errors.New("there is no conversation to compact yet")
	}
	rec, tpath := compactRecorder(rec)
	offered, dynamic := setupOf(a).offered() // deferred.go
	cfg := loop.Config{
		Model: rt.cfg.Model, ModelID: a.modelID, System: a.system, SystemPrefix: a.systemPrefix, Tools: offered, Env: a.env,
		SharedTools: setupOf(a).sharedTools(offered), Dynamic: dynamic,
		MaxTokens: rt.cfg.MaxTokens, Thinking: rt.cfg.Thinking, Effort: a.effort, Recorder: rec,
		AgentID: a.id, AgentType: a.typ, Now: rt.cfg.Now, Hooks: hooksOf(a).firer(),
		Compaction: compactOf(a).compaction(tpath),
	}
	start := rt.cfg.Now()
	for ev, err := range loop.Compact(ctx, cfg, msgs, instructions) {
		if err != nil {
			return nil, err
		}
		out := run.Event{AgentID: a.id, ParentToolUseID: a.toolUseID}
		compactOf(a).compactEvent(ev, &out, cfg.Compaction.Thresholds.Compact)
		if err := a.run.send(ctx, out); err != nil {
			return nil, err
		}
		if ev.Kind == loop.CompactEnd {
			return &loop.Result{Text: compacted, Messages: ev.Compact.Messages, Usage: ev.Usage, StopReason: llm.StopEndTurn,
				Duration: rt.cfg.Now().Sub(start)}, nil
		}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	return nil, errors.New("compaction ended without a result")
}
