package engine

// A remote agent's transcript on the launcher (issue 26): the worker
// keeps the conversation in its workflow, and the launcher writes it to
// the agent's own transcript file as the executor streams it, at tool-round
// granularity — its first user turn, then each answer of its model and
// each round of tool results (with the messages it was sent) as they come
// back —, and at its end how it ended (a run_end entry) and its
// .meta.json, as a local sub-agent's. TaskOutput, `cadre agents`, the
// terminal UI and continuing the agent with SendMessage (resume.go) read
// that file as they read a local agent's.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/loop"
	"github.com/cadre-dev/cadre/internal/remote/workspace"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/transcript"
)

// remoteLog is a remote child's transcript and metadata being written.
type remoteLog struct {
	c            *agent
	jw           *transcript.JournalWriter
	rec          loop.Recorder
	tpath, mpath string
	meta         *agentMeta
	// failed is the first write that failed; later lines are not tried.
	failed error
	// skip counts the run's messages an earlier launcher wrote already
	// (attached): the executor's events of a run it re-attached to start
	// from the run's first.
	skip int
}

// attached makes the log go on with a transcript that an earlier launcher
// of the session started for the same run of the agent (it died, and this
// one re-attached to the run): its first turn and the messages it wrote
// of the run (those after the last run_end entry, the first turn aside)
// are not written again, and its .meta.json keeps its start.
func (l *remoteLog) attached(entries []transcript.Entry) {
	l.skip = writtenOfRun(entries)
	if raw, err := os.ReadFile(l.mpath); err == nil {
		var m agentMeta
		if json.Unmarshal(raw, &m) == nil && m.AgentID == l.c.id {
			l.meta.StartedAt, l.meta.Description, l.meta.ToolUseID, l.meta.Parent = m.StartedAt, m.Description, m.ToolUseID, m.Parent
		}
	}
}

// openRemoteLog starts the remote child's transcript: its metadata and
// its first user turn (the prompt, a fork's inherited conversation, or
// for a continued agent the message that continues it). nil when the
// session keeps no transcripts; an error when the file cannot be named
// or started, which fails the child as a local one's does.
func openRemoteLog(c *agent, parent *agent, in agentInput) (*remoteLog, error) {
	rs, rt := c.run, c.run.rt
	if rs.journal == nil {
		return nil, nil
	}
	tpath, err := transcript.AgentFile(rt.cfg.StateDir, rt.cfg.Cwd, rt.session, c.id)
	if err != nil {
		return nil, err
	}
	l := &remoteLog{c: c, tpath: tpath, mpath: strings.TrimSuffix(tpath, ".jsonl") + ".meta.json"}
	l.meta = &agentMeta{AgentID: c.id, AgentType: c.typ, Description: in.Description, ToolUseID: c.toolUseID, Depth: c.depth,
		Parent: parent.name(), Model: c.modelID, Background: true, StartedAt: rt.cfg.Now().UTC(), Receipt: c.spawnReceipt,
		Isolation: agentdef.IsolationRemote}
	l.jw = rs.journal.Transcript(tpath, rt.session, c.id, rt.cfg.Now)
	l.rec = c.resumeRecorder(l.jw) // a continued agent's history is in the file already (resume.go)
	if c.resumed == nil {
		if entries, err := transcript.ReadFile(tpath); err == nil && len(entries) > 0 {
			l.attached(entries)
			return l, nil
		}
	}
	if err := writeMeta(rs.journal, l.mpath, l.meta); err != nil {
		_ = l.jw.Release()
		return nil, err
	}
	prompt := in.Prompt
	if c.def.InitialPrompt != "" {
		prompt = c.def.InitialPrompt + "\n\n" + prompt
	}
	if prompt == "" && c.start == nil {
		return l, nil // re-attached before the first launcher wrote its first turn: the run's prompt is not known here
	}
	msgs, err := forkOf(c).startMessages(prompt, l.rec) // a fork's inherited turns first (fork.go)
	if err == nil {
		err = l.rec.AppendMessage(msgs[len(msgs)-1], "", nil)
	}
	if err != nil {
		_ = l.jw.Release()
		return nil, fmt.Errorf("write the remote agent's first turn: %w", err)
	}
	return l, nil
}

// event writes what of ev belongs in the child's own transcript: its
// model's answers and its rounds of tool results. Events of the agents it
// started remotely carry their own ids and are not its conversation.
func (l *remoteLog) event(ev run.Event) {
	if l == nil || l.failed != nil || ev.AgentID != l.c.id || ev.Message == nil {
		return
	}
	if (ev.Type == run.EventAssistant || ev.Type == run.EventUser) && l.skip > 0 {
		l.skip-- // written by the launcher that started the run (attached)
		return
	}
	var err error
	switch ev.Type {
	case run.EventAssistant:
		u := ev.Usage
		err = l.rec.AppendMessage(*ev.Message, ev.Model, &u)
	case run.EventUser:
		err = l.rec.AppendMessage(*ev.Message, "", nil)
	default:
		return
	}
	if err != nil {
		l.failed = err
	}
}

// close records how the child ended (a run_end entry and its finished
// .meta.json) and waits until its lines are written; the error is a line
// that could not be, which the launcher reports as a warning of the
// child (its run is over and happened remotely).
func (l *remoteLog) close(ctx context.Context, res *run.SubagentResult) error {
	if l == nil {
		return nil
	}
	rs, rt := l.c.run, l.c.run.rt
	defer func() { _ = l.jw.Release() }()
	end := transcript.RunEnd{Subtype: "success", Error: res.Error, NumTurns: res.Turns, ToolUses: res.ToolUses,
		DurationMS: res.Duration.Milliseconds(), Usage: res.Usage}
	switch {
	case res.Status == task.Killed:
		end.Subtype, end.IsError, end.Cancelled = "error_during_execution", true, true
	case res.Status == task.Failed:
		end.Subtype, end.IsError = "error_during_execution", true
	case res.MaxTurnsHit:
		end.Subtype = "error_max_turns"
	}
	if l.failed == nil {
		l.failed = l.jw.AppendEnd(end)
	}
	l.meta.Finished, l.meta.Status, l.meta.FinishedAt = true, res.Status, rt.cfg.Now().UTC()
	if res.Worktree != nil {
		l.meta.Worktree = res.Worktree.Path
	}
	if err := writeMeta(rs.journal, l.mpath, l.meta); err != nil && l.failed == nil {
		l.failed = err
	}
	if err := rs.journal.Written(l.tpath, l.mpath); err != nil && l.failed == nil {
		l.failed = err
	}
	if l.failed != nil {
		return fmt.Errorf("the remote agent's transcript %s is incomplete: %w", l.tpath, l.failed)
	}
	return nil
}

// writtenOfRun counts the messages of a transcript's last run that came
// from the agent's events: those after its last run_end entry, less the
// run's first turn, which the launcher writes itself.
func writtenOfRun(entries []transcript.Entry) int {
	n := 0
	for _, e := range entries {
		switch e.Type {
		case transcript.EntryRunEnd:
			n = 0
		case string(llm.RoleUser), string(llm.RoleAssistant):
			n++
		}
	}
	return max(n-1, 0)
}

// ranRemotely reports whether the agent whose transcript is tpath ran on
// a remote worker, as its .meta.json says (an agent of an earlier process
// of the session has no live record saying so).
func ranRemotely(tpath string) bool {
	if tpath == "" {
		return false
	}
	raw, err := os.ReadFile(strings.TrimSuffix(tpath, ".jsonl") + ".meta.json")
	if err != nil {
		return false
	}
	var m agentMeta
	return json.Unmarshal(raw, &m) == nil && m.Isolation == agentdef.IsolationRemote
}

// seed makes a continued remote agent's source its landed branch: the
// tip of worktree-agent-<id> and, as a bundle, the commits its first
// run's base lacks (worktree.Manager.SeedBundle), so that its worker
// starts from the tree its earlier run left. Without a landed branch, or
// with one too big to travel, it starts from src as described (the
// launcher's commit), and a warning says why.
func (rr remoteRun) seed(ctx context.Context, parent *agent, src *workspace.Source) {
	c := rr.a
	if c.resumed == nil {
		return
	}
	m, err := glueOf(c.run.rt).worktreeManager()
	if err != nil {
		c.warn("the continued remote agent starts from the launcher's commit, not its earlier work: " + err.Error())
		return
	}
	dir, err := os.MkdirTemp("", "cadre-seed-")
	if err != nil {
		c.warn("the continued remote agent starts from the launcher's commit, not its earlier work: " + err.Error())
		return
	}
	defer os.RemoveAll(dir)
	file := filepath.Join(dir, "seed.bundle")
	tip, err := m.SeedBundle(ctx, parent.env.Cwd, c.id, file)
	switch {
	case err != nil:
		c.warn("the continued remote agent starts from the launcher's commit, not its earlier work: " + err.Error())
		return
	case tip == "":
		return // no work of its earlier run was landed
	}
	seed, err := os.ReadFile(file)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		c.warn("the continued remote agent starts from the launcher's commit, not its earlier work: " + err.Error())
		return
	}
	if len(seed) > workspace.DefaultMaxBundle {
		c.warn(fmt.Sprintf("the continued remote agent starts from the launcher's commit: its earlier work is a %d-byte bundle, over the %d-byte cap for what travels", len(seed), workspace.DefaultMaxBundle))
		return
	}
	src.Commit, src.Seed = tip, seed
}
