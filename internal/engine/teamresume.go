package engine

import (
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/cadre-dev/cadre/internal/safefs"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
)

// Resuming a team (issue 25, point 11): the roster is kept in team.json
// beside the task journal, written when a teammate joins or leaves. When
// a session is opened again (--resume, --continue), the teammates the
// roster names rejoin as they were: the same id, name, type and plan
// mode, each continued from its transcript, with the mail that waited
// for it in its mailbox (kept there, not moved to the lead) as its next
// turn; one whose transcript shows it was working is told the session
// was interrupted, one that was idle that it was resumed.

// rosterFile is team.json.
type rosterFile struct {
	Name     string         `json:"name"`
	Explicit bool           `json:"explicit,omitempty"`
	Members  []rosterMember `json:"members"`
}

type rosterMember struct {
	Name        string `json:"name"`
	AgentID     string `json:"agent_id"`
	AgentType   string `json:"agent_type"`
	Description string `json:"description"`
	Prompt      string `json:"prompt"`
	Plan        bool   `json:"plan,omitempty"`
	// Mode is the permission mode its approved plan continues in.
	Mode string `json:"permission_mode,omitempty"`
	Cwd  string `json:"cwd,omitempty"`
	// State is working, idle or waiting for approval when written.
	State string `json:"state,omitempty"`
}

// rosterPath is team.json's path ("" without transcripts).
func (b *background) rosterPath() string {
	p := b.journalPath()
	if p == "" {
		return ""
	}
	return filepath.Join(filepath.Dir(p), "team.json")
}

// saveRoster writes the roster; t.mu is held.
func (t *team) saveRoster() {
	b := t.rt.bg
	path := b.rosterPath()
	if path == "" {
		return
	}
	rf := rosterFile{Name: t.teamName(), Explicit: t.explicit}
	for _, n := range t.roster() {
		m := t.members[n]
		if m.a == nil || m.ended {
			continue
		}
		rm := rosterMember{Name: n, AgentID: m.a.id, AgentType: m.a.typ, Plan: m.plan, Mode: string(m.mode), Cwd: m.a.env.Cwd, Description: m.desc, Prompt: m.prompt,
			State: string(m.state)}
		rf.Members = append(rf.Members, rm)
	}
	data, err := json.MarshalIndent(rf, "", "  ")
	if err == nil {
		err = safefs.WriteFileAtomic(t.rt.cfg.StateDir, path, data, 0o600)
	}
	if err != nil {
		b.recordFailed("team roster", err)
	}
}

// loadRoster reads the roster an earlier process left (nil for none).
func (b *background) loadRoster() *rosterFile {
	path := b.rosterPath()
	if path == "" {
		return nil
	}
	data, err := os.ReadFile(path)
	if err != nil {
		if !errors.Is(err, fs.ErrNotExist) {
			b.recordFailed("team roster", err)
		}
		return nil
	}
	var rf rosterFile
	if err := json.Unmarshal(data, &rf); err != nil {
		b.recordFailed("team roster", err)
		return nil
	}
	return &rf
}

// rosterIDs are the agent ids of the roster an earlier process left:
// their mail stays theirs when the session is opened (background.go).
func (b *background) rosterIDs() map[string]bool {
	rf := b.loadRoster()
	if rf == nil {
		return nil
	}
	ids := map[string]bool{}
	for _, m := range rf.Members {
		ids[m.AgentID] = true
	}
	// Set while open holds b.mu, before any teammate runs; rejoin reads
	// it in the same run's goroutine.
	b.team.saved = rf
	return ids
}

// rejoin restarts the teammates of the roster an earlier process left,
// as children of the lead; once per process.
func (t *team) rejoin(ctx context.Context, lead *agent) {
	rf := t.saved
	t.saved = nil
	t.mu.Lock()
	if rf != nil && t.name == "" {
		t.name, t.explicit = rf.Name, rf.Explicit
	}
	t.mu.Unlock()
	if rf == nil || !t.rt.cfg.Teams {
		return
	}
	for _, rm := range rf.Members {
		if err := t.rejoinOne(ctx, lead, rm); err != nil {
			t.rt.bg.recordFailed("team resume", err)
		}
	}
}

// rejoinOne restarts teammate rm.
func (t *team) rejoinOne(ctx context.Context, lead *agent, rm rosterMember) error {
	b := t.rt.bg
	r := t.rt
	def := r.defs[rm.AgentType]
	if def == nil {
		return errors.New("teammate " + rm.Name + ": type " + rm.AgentType + " is no longer defined")
	}
	tpath, err := transcript.AgentFile(r.cfg.StateDir, r.cfg.Cwd, r.session, rm.AgentID)
	if err != nil {
		return err
	}
	entries, err := transcript.ReadFile(tpath)
	if err != nil {
		return err
	}
	history := transcript.Messages(entries)
	// The roster's state, written as it changed; the transcript's end
	// when it has none.
	working := len(history) == 0 || history[len(history)-1].Role == llm.RoleUser || len(history[len(history)-1].ToolUses()) > 0
	if rm.State != "" {
		working = rm.State == string(teammateWorking)
	}
	mail := b.mailboxes()
	_ = mail.Open(rm.AgentID, "")
	var texts []string
	if working {
		texts = append(texts, prompts.TeammateResumedWorking())
	} else {
		texts = append(texts, prompts.TeammateResumedIdle())
	}
	unread := mail.Take(rm.AgentID)
	for _, m := range unread {
		texts = append(texts, m.Text)
	}
	msgs, kept := continuation(history, strings.Join(texts, "\n\n"))
	msgs = sentAnswers(msgs, rm.AgentID, mail) // teamsend.go: a send the journal holds reads as sent
	cwd := lead.env.Cwd
	if st, err := os.Stat(rm.Cwd); rm.Cwd != "" && err == nil && st.IsDir() {
		cwd = rm.Cwd
	}
	in := agentInput{Description: rm.Description, Prompt: rm.Prompt, SubagentType: rm.AgentType, Name: rm.Name, RunInBackground: new(true)}
	child, ref := lead.newChildID(def, in, "", cwd, "", rm.AgentID)
	if ref != nil {
		mail.Requeue(rm.AgentID)
		return errors.New("teammate " + rm.Name + ": " + ref.msg)
	}
	child.start, child.resumed = msgs, &resumedFrom{kept: kept}
	// An approved plan's mode, bounded again by this session's lead
	// (teamplanmode.go); an unknown one is dropped.
	mode, _ := approvedMode(lead, rm.Mode)
	m := &member{name: rm.Name, team: t.teamNameLocked(), desc: rm.Description, prompt: rm.Prompt, plan: rm.Plan, mode: mode, state: teammateWorking, stop: make(chan struct{}), a: child,
		rejoinIdle: !working && len(unread) == 0} // it rests before a request (teamrest.go)
	t.mu.Lock()
	if _, taken := t.members[rm.Name]; taken {
		t.mu.Unlock()
		mail.Requeue(rm.AgentID)
		return errors.New("teammate " + rm.Name + ": the name is taken")
	}
	t.members[rm.Name] = m
	t.mu.Unlock()
	child.member = m
	child.system += prompts.TeammateSystem(rm.Name, m.team, m.plan)
	child.pool = tool.NewPool(append(slices.Clone(child.pool.Tools()), teamSendTool())...)
	if ref, err := mcpOf(child).acquire(ctx, lead); err != nil || ref != nil {
		t.drop(m)
		mail.Requeue(rm.AgentID)
		if err != nil {
			return err
		}
		return errors.New("teammate " + rm.Name + ": " + ref.msg)
	}
	_, out, err := lead.admit(ctx, tool.Turn{}, child, in, true) // background: nothing to wait on
	if err != nil || out.IsError {
		t.drop(m)
		mail.Requeue(rm.AgentID)
		if err != nil {
			return err
		}
		return errors.New("teammate " + rm.Name + ": " + out.Text)
	}
	t.mu.Lock()
	t.saveRoster()
	t.mu.Unlock()
	return nil
}

// teamNameLocked is teamName taking t.mu.
func (t *team) teamNameLocked() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.teamName()
}

// drop removes m if it is still the member of its name.
func (t *team) drop(m *member) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.members[m.name] == m {
		delete(t.members, m.name)
		t.wake()
	}
}
