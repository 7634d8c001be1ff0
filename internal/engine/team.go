package engine

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/cadre-dev/cadre/internal/engine/tasktools"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/prompts"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/task"
	"github.com/cadre-dev/cadre/tool"
)

// Agent teams (issue 25, S-11.1). With Config.Teams on, the main agent
// is the lead of one team per session (named after the session unless
// TeamCreate named it), and an Agent call with a name starts a teammate:
// a background child, admitted through the spawn gate like any other,
// whose loop does not end when its model ends a turn but goes idle
// (loop.Config.Idle): the lead is told once (an idle_notification in its
// mailbox), the teammate's slot in the gate is given back, and it waits
// on its mailbox's Changed channel, so a message wakes it at once. It
// ends when it approved a shutdown_request, when the grace period after
// one passed without an answer (then it is stopped), or when it is
// stopped like any task.
//
// Idle notifications do not cost the lead a turn each: while a teammate
// is busy (working, or with mail waiting), notices alone do not wake the
// lead (leadWakes); they wait in its mailbox and are taken together with
// whatever wakes it, or once no teammate is busy. An idle teammate with
// no mail is not counted as a running task (RunningTasks), so a headless
// run ends when its lead is done and every teammate is idle; Close then
// stops them.

// defaultShutdownGrace is how long a teammate may take to answer a
// shutdown_request when Config.TeamShutdownGrace is 0.
const defaultShutdownGrace = 60 * time.Second

// teammateState is what a teammate is doing, for the lead and the UI.
type teammateState string

// Teammate states.
const (
	teammateWorking  teammateState = "working"
	teammateIdle     teammateState = "idle"
	teammateAwaiting teammateState = "waiting for approval"
)

// member is one teammate. Its fields are guarded by its team's mu.
type member struct {
	name, team string
	// desc and prompt are its Agent call's, for the roster.
	desc, prompt string
	a            *agent
	// plan is set while a teammate started with mode plan has no
	// approved plan: it works read-only.
	plan  bool
	state teammateState
	// shutdownID is the shutdown_request it has not answered; timer
	// stops it when the grace period passes.
	shutdownID string
	timer      *time.Timer
	// planID is the plan_approval_request the lead has not answered.
	planID string
	// prompts counts its permission prompts waiting for a person
	// (teamprompt.go).
	prompts int
	// mode is the permission mode its approved plan continues in,
	// bounded by the lead's (teamplanmode.go); "" keeps its own.
	mode permission.Mode
	// stop is closed when it is to end at its next idle (shutdown
	// approved); stopping says so.
	stop     chan struct{}
	stopping bool
	// idleSeq is its idle notice still queued for the lead (0: none).
	idleSeq int64
	ended   bool
	// claiming is set while it claims a task: busy meanwhile.
	claiming bool
	// rejoinIdle is set for a teammate that rejoins a resumed session
	// idle with no mail: it waits before its first request (teamrest.go).
	rejoinIdle bool
}

// team is the session's team.
type team struct {
	rt *Runtime

	mu          sync.Mutex
	name        string // "" until first asked: the implicit name
	description string
	explicit    bool
	members     map[string]*member // live teammates by name
	reqSeq      int
	// idleSeqs are the lead's mailbox messages that are idle notices.
	idleSeqs map[int64]bool
	changed  chan struct{}
	// saved is the roster an earlier process left, until rejoin
	// (teamresume.go).
	saved *rosterFile
}

func newTeam(r *Runtime) *team {
	return &team{rt: r, members: map[string]*member{}, idleSeqs: map[int64]bool{}, changed: make(chan struct{})}
}

// wake signals a change of the team's states; t.mu is held.
func (t *team) wake() {
	close(t.changed)
	t.changed = make(chan struct{})
}

// changes returns a channel closed at the next change of state.
func (t *team) changes() <-chan struct{} {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.changed
}

// teamName is the team's name; t.mu is held.
func (t *team) teamName() string {
	if t.name == "" {
		id := t.rt.session
		if len(id) > 8 {
			id = id[:8]
		}
		t.name = "session-" + id
	}
	return t.name
}

// roster lists the live teammates' names, sorted; t.mu is held.
func (t *team) roster() []string {
	names := make([]string, 0, len(t.members))
	for n := range t.members {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// busy reports whether a teammate works or has mail waiting.
func (t *team) busy() bool {
	if t == nil {
		return false
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.members {
		if t.busyMember(m) {
			return true
		}
	}
	return false
}

// busyMember reports whether m works or has mail; t.mu is held.
func (t *team) busyMember(m *member) bool {
	if m.ended || m.a == nil {
		return false
	}
	// One asked to shut down is about to end: the lead waits for that.
	return m.state == teammateWorking || m.claiming || m.shutdownID != "" || m.stopping || (m.a.inbox != nil && m.a.inbox.pending())
}

// resting counts the teammates that are idle with nothing to read: live
// tasks that wait for nothing but a message.
func (t *team) resting() int {
	if t == nil {
		return 0
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	n := 0
	for _, m := range t.members {
		if m.a != nil && !m.ended && !t.busyMember(m) {
			n++
		}
	}
	return n
}

// leadWakes reports whether what waits in the lead's mailbox is worth a
// turn now: anything but idle notices, or idle notices once no teammate
// is busy (then they are taken together).
func (b *background) leadWakes() bool {
	if !b.main.pending() {
		return false
	}
	t := b.team
	if !t.busy() {
		return true
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range b.mailboxes().Queued(task.Main) {
		if !t.idleSeqs[m.Seq] {
			return true
		}
	}
	return false
}

// teamSpawn starts a teammate for an Agent call with a name (see the
// comment at the top).
func (a *agent) teamSpawn(ctx context.Context, call tool.Call, in agentInput) (tool.Output, error) {
	rt := a.run.rt
	t := rt.bg.team
	if !rt.cfg.Teams {
		field := "name"
		switch {
		case in.Name != "":
		case in.TeamName != "":
			field = "team_name"
		default:
			field = "mode"
		}
		return errorOutput(prompts.TeamNotOn(field)), nil
	}
	name := strings.TrimSpace(in.Name)
	switch {
	case a.member != nil:
		return errorOutput(prompts.TeammateRefused("a teammate cannot start teammates; ask the team lead (SendMessage to team-lead).")), nil
	case a.id != "":
		return errorOutput(prompts.TeammateRefused("only the team lead (the main agent) starts teammates.")), nil
	case name == "":
		return errorOutput(prompts.TeammateRefused("team_name and mode need a name: the teammate's.")), nil
	case !task.ValidName(name):
		return errorOutput(prompts.TeammateBadName(name)), nil
	case in.Mode != "" && in.Mode != "plan" && in.Mode != "default":
		return errorOutput(prompts.TeammateRefused(fmt.Sprintf("mode %q is not plan or default.", in.Mode))), nil
	}
	t.mu.Lock()
	teamName := t.teamName()
	if in.TeamName != "" && in.TeamName != teamName {
		t.mu.Unlock()
		return errorOutput(prompts.TeammateRefused(fmt.Sprintf("there is no team %q; this session's team is %s.", in.TeamName, teamName))), nil
	}
	if _, taken := t.members[name]; taken {
		roster := t.roster()
		t.mu.Unlock()
		return errorOutput(prompts.TeammateNameTaken(name, roster)), nil
	}
	m := &member{name: name, team: teamName, desc: in.Description, prompt: in.Prompt, plan: in.Mode == "plan", state: teammateWorking, stop: make(chan struct{})}
	t.members[name] = m // reserved while it starts
	t.mu.Unlock()
	drop := func() {
		t.mu.Lock()
		if t.members[name] == m {
			delete(t.members, name)
			t.wake()
		}
		t.mu.Unlock()
	}
	// A teammate is never a fork: it has its own context.
	in.SubagentType = cmp.Or(strings.TrimSpace(in.SubagentType), defaultAgentType)
	child, _, ref, err := a.build(ctx, call, in)
	if err != nil || ref != nil {
		drop()
		if err != nil {
			return tool.Output{}, err
		}
		if ref.reason != "" {
			a.run.count(func(s *run.SubagentStats) { s.Refused[ref.reason]++ })
		}
		return errorOutput(ref.msg), nil
	}
	t.mu.Lock()
	m.a = child
	t.mu.Unlock()
	child.member = m
	child.system += prompts.TeammateSystem(name, teamName, m.plan)
	child.pool = tool.NewPool(append(child.pool.Tools(), teamSendTool())...)
	_, out, err := a.admit(ctx, call.Turn, child, in, true) // background: nothing to wait on
	if err != nil || out.IsError {
		drop()
		return out, err
	}
	a.run.count(func(s *run.SubagentStats) { s.Teammates++ })
	t.mu.Lock()
	t.saveRoster() // teamresume.go
	t.mu.Unlock()
	return tool.Output{Text: prompts.TeammateSpawned(child.id, name, child.typ, child.modelID, teamName, m.plan)}, nil
}

// teammate is a teammate agent's side of its team: its idle wait, its
// read-only gate while its plan waits, and leaving the team.
type teammate struct{ a *agent }

func teammateOf(a *agent) teammate { return teammate{a} }

// idle is the teammate's loop.Config.Idle: the lead is told, the gate
// slot given back, and it waits for mail; false ends it (shutdown
// approved, or stopped).
func (tm teammate) idle(ctx context.Context, last llm.Message) ([]llm.Block, bool) {
	a := tm.a
	b := a.run.rt.bg
	t, m := b.team, a.member
	t.mu.Lock()
	stopping := m.stopping
	t.mu.Unlock()
	if stopping {
		return nil, false
	}
	if blocks, ok := tm.idleHook(ctx); ok { // teamtasks.go: TeammateIdle
		return blocks, true
	}
	tasks := teamTasks{b}
	if !a.inbox.pending() {
		// A task to claim first: then it never was idle.
		if blocks, ok := tasks.claim(ctx, m.name); ok {
			return blocks, true
		}
	}
	if !a.inbox.pending() && tm.noteIdle(ctx, last.Text()) {
		_ = feedOf(a).sendProgress(ctx)
	}
	return tm.wait(ctx)
}

// wait is the teammate at rest: its gate slot given back, it waits for
// mail or a task to claim and returns what starts its next turn; false
// ends it (shutdown approved, or stopped).
func (tm teammate) wait(ctx context.Context) ([]llm.Block, bool) {
	a := tm.a
	b := a.run.rt.bg
	t, m := b.team, a.member
	tasks := teamTasks{b}
	a.ticket.Suspend()
	defer func() { _ = a.ticket.Resume(ctx) }()
	for {
		ch, tch := a.inbox.changed(), tasks.changed()
		t.mu.Lock()
		stopping := m.stopping
		if !stopping && a.inbox.pending() {
			// Working before the mail leaves the mailbox: never seen as
			// resting with mail in hand.
			moved := m.state != teammateWorking
			if moved {
				m.state = teammateWorking
				t.saveRoster() // teamresume.go
				t.wake()
			}
			t.mu.Unlock()
			if blocks := a.inbox.Take(); len(blocks) > 0 {
				if moved {
					_ = feedOf(a).sendProgress(ctx) // its state, for the UI and stream-json
				}
				return blocks, true
			}
			continue
		}
		moved := !stopping && m.state == teammateWorking
		if moved {
			m.state = teammateIdle
			if m.planID != "" {
				m.state = teammateAwaiting
			}
			t.saveRoster() // teamresume.go
			t.wake()
		}
		t.mu.Unlock()
		if stopping {
			return nil, false
		}
		if moved {
			_ = feedOf(a).sendProgress(ctx)
		}
		// The lowest pending, unowned, unblocked task (teamtasks.go),
		// claimed while it counts as busy.
		t.mu.Lock()
		m.claiming = true
		t.mu.Unlock()
		blocks, claimed := tasks.claim(ctx, m.name)
		if claimed {
			tm.working(ctx)
		}
		t.mu.Lock()
		m.claiming = false
		t.wake()
		t.mu.Unlock()
		if claimed {
			return blocks, true
		}
		select {
		case <-ch:
		case <-tch:
		case <-m.stop:
		case <-ctx.Done():
			return nil, false
		}
	}
}

// noteIdle moves the teammate to idle and tells the lead: one notice per
// idle, replacing one of its own the lead has not read yet. The state
// (in the roster too) and the notice change together, so the teammate is
// never seen resting before the lead can hear it. It reports whether the
// state changed.
func (tm teammate) noteIdle(ctx context.Context, summary string) bool {
	a := tm.a
	b := a.run.rt.bg
	t, m := b.team, a.member
	if r := []rune(strings.TrimSpace(summary)); len(r) > 200 {
		summary = string(r[:200]) + "…"
	}
	t.mu.Lock()
	prev := m.idleSeq
	t.mu.Unlock()
	if prev != 0 {
		_, _ = b.mailboxes().Withdraw(task.Main, func(msg task.Message) bool { return msg.Seq == prev }, "replaced by a later idle notice")
	}
	body := prompts.TeamProtocol("idle_notification", "from", m.name, "idleReason", "available", "summary", strings.TrimSpace(summary))
	text := prompts.TeammateMessage(m.name, "", body)
	// The turn it rests after is in its transcript before the roster
	// says idle: a rejoining teammate is not made to run it again.
	if err := transcriptWritten(a); err != nil {
		b.recordFailed("transcripts", err)
	}
	moved, posted := tm.postIdle(text)
	if posted { // teammsg.go
		teamMail{b}.announce(ctx, a, run.TeamMessage{From: m.name, To: prompts.TeamLead, FromAgentID: a.id, Type: "idle_notification", Text: body})
	}
	return moved
}

// postIdle posts the idle notice text to the lead and moves the teammate
// to idle; it reports whether the state changed and whether the notice
// was posted.
func (tm teammate) postIdle(text string) (moved, posted bool) {
	a := tm.a
	b := a.run.rt.bg
	t, m := b.team, a.member
	// The notice is marked before it can wake the lead.
	t.mu.Lock()
	defer t.mu.Unlock()
	moved = m.state == teammateWorking
	if moved {
		m.state = teammateIdle
		if m.planID != "" {
			m.state = teammateAwaiting
		}
		t.saveRoster() // teamresume.go
		t.wake()
	}
	out, err := b.main.post(inboxItem{text: text, from: m.name})
	if err != nil {
		b.recordFailed("mailbox journal", err)
		return moved, false
	}
	m.idleSeq = out.Seq
	t.idleSeqs[out.Seq] = true
	return moved, true
}

// left removes the teammate from the team when its loop has returned:
// its name is free again, a pending shutdown timer is stopped.
func (tm teammate) left() {
	a := tm.a
	t, m := a.run.rt.bg.team, a.member
	// Its open tasks go back to pending and unowned, the lead told
	// (teamtasks.go); before it leaves, so it is still busy meanwhile.
	teamTasks{a.run.rt.bg}.release(a)
	t.mu.Lock()
	defer t.mu.Unlock()
	m.ended = true
	if m.timer != nil {
		m.timer.Stop()
	}
	if t.members[m.name] == m {
		delete(t.members, m.name)
		t.saveRoster() // teamresume.go
	}
	t.wake()
}

// working moves the teammate back to working and streams its state.
func (tm teammate) working(ctx context.Context) {
	a := tm.a
	t, m := a.run.rt.bg.team, a.member
	t.mu.Lock()
	moved := m.state != teammateWorking
	if moved {
		m.state = teammateWorking
		t.saveRoster()
		t.wake()
	}
	t.mu.Unlock()
	if moved {
		_ = feedOf(a).sendProgress(ctx)
	}
}

// size counts the live teammates.
func (t *team) size() int {
	t.mu.Lock()
	defer t.mu.Unlock()
	return len(t.members)
}

// planGate is a plan-mode teammate's authorizer: read-only (its
// read-only checker) until the lead approves its plan.
type planGate struct {
	m        *member
	t        *team
	ro, full permission.Authorizer
}

// Authorize implements permission.Authorizer.
func (g planGate) Authorize(ctx context.Context, req permission.Request) (permission.Outcome, error) {
	g.t.mu.Lock()
	plan := g.m.plan
	g.t.mu.Unlock()
	if plan {
		return g.ro.Authorize(ctx, req)
	}
	return g.full.Authorize(ctx, req)
}

// authorizer wraps a plan-mode teammate's authorizer in its plan gate.
func (tm teammate) authorizer(full permission.Authorizer) (permission.Authorizer, error) {
	a := tm.a
	t, m := a.run.rt.bg.team, a.member
	t.mu.Lock()
	plan := m.plan
	t.mu.Unlock()
	if full == nil {
		return full, nil
	}
	if !plan {
		return tm.withMode(full), nil // teamplanmode.go
	}
	was := a.perms.ReadOnly
	a.perms.ReadOnly = true
	ro, err := setupOf(a).authorizer(false)
	a.perms.ReadOnly = was
	if err != nil {
		return nil, err
	}
	// The full checker's closures (private hosts, hidden paths) stay the
	// agent's: built last.
	full, err = setupOf(a).authorizer(false)
	if err != nil {
		return nil, err
	}
	return planGate{m: m, t: t, ro: ro, full: tm.withMode(full)}, nil
}

// teamSendTool is SendMessage with teams on.
func teamSendTool() tool.Tool {
	return tasktools.TeamSendMessage(func(_ context.Context, env *tool.Env) tasktools.TeamCaller {
		a := agentFrom(env)
		if a == nil {
			return nil
		}
		return taskCaller{a, env.Call.ID}
	})
}

// teamLeadTools are SendMessage (teams), TeamCreate and TeamDelete.
func teamLeadTools() []tool.Tool {
	caller := func(_ context.Context, env *tool.Env) tasktools.TeamCaller {
		a := agentFrom(env)
		if a == nil {
			return nil
		}
		return taskCaller{a, env.Call.ID}
	}
	return append([]tool.Tool{tasktools.TeamSendMessage(caller)}, tasktools.TeamLeadTools(caller)...)
}

// TeamSend implements tasktools.TeamCaller.
func (c taskCaller) TeamSend(ctx context.Context, m tasktools.TeamMessage) (tool.Output, error) {
	return teamMail{c.a.run.rt.bg}.send(ctx, c.a, c.callID, m)
}

// TeamCreate implements tasktools.TeamCaller.
func (c taskCaller) TeamCreate(_ context.Context, name, description string) (tool.Output, error) {
	t := c.a.run.rt.bg.team
	if c.a.id != "" {
		return errorOutput(prompts.TeamSendRefused("only the team lead (the main agent) creates the team.")), nil
	}
	if !task.ValidName(name) {
		return errorOutput(prompts.TeamSendRefused(fmt.Sprintf("%q is not a valid team name (1 to 64 letters, digits, _ or -).", name))), nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.explicit && t.name != name {
		return errorOutput(prompts.TeamSendRefused(fmt.Sprintf("this session already has team %s; delete it first (TeamDelete).", t.name))), nil
	}
	if len(t.members) > 0 && t.teamName() != name {
		return errorOutput(prompts.TeamSendRefused(fmt.Sprintf("team %s already has teammates (%s); a session has one team.", t.teamName(), strings.Join(t.roster(), ", ")))), nil
	}
	t.name, t.description, t.explicit = name, description, true
	return tool.Output{Text: prompts.TeamCreated(name, description)}, nil
}

// TeamDelete implements tasktools.TeamCaller.
func (c taskCaller) TeamDelete(context.Context) (tool.Output, error) {
	t := c.a.run.rt.bg.team
	if c.a.id != "" {
		return errorOutput(prompts.TeamSendRefused("only the team lead (the main agent) deletes the team.")), nil
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.members) > 0 {
		return errorOutput(prompts.TeamSendRefused(fmt.Sprintf("team %s still has teammates (%s); send each a shutdown_request first.", t.teamName(), strings.Join(t.roster(), ", ")))), nil
	}
	name := t.teamName()
	t.name, t.description, t.explicit = "", "", false
	return tool.Output{Text: prompts.TeamDeleted(name)}, nil
}

// info is the teammate's place in its team for task events; nil for an
// agent that is no teammate.
func (tm teammate) info() *run.TeammateInfo {
	a := tm.a
	if a == nil || a.member == nil {
		return nil
	}
	t, m := a.run.rt.bg.team, a.member
	t.mu.Lock()
	defer t.mu.Unlock()
	return &run.TeammateInfo{Name: m.name, Team: m.team, State: string(m.shown()), PlanModeRequired: m.plan}
}

// keep is what of the team survives a compaction of the agent (Keep.Extra,
// issue 27): for a teammate its team, role, current task and the mail
// waiting for it; for the lead its team's roster and states.
func (tm teammate) keep() []string {
	a := tm.a
	b := a.run.rt.bg
	t := b.team
	if a.id == "" {
		t.mu.Lock()
		defer t.mu.Unlock()
		if len(t.members) == 0 {
			return nil
		}
		var roster []string
		for _, n := range t.roster() {
			m := t.members[n]
			roster = append(roster, fmt.Sprintf("%s (%s)", n, m.shown()))
		}
		return []string{prompts.TeamKeepLead(t.teamName(), roster)}
	}
	m := a.member
	if m == nil {
		return nil
	}
	var task string
	if h := b.handle(a.id); h != nil {
		task = h.in.Prompt
	}
	var mail []string
	for _, msg := range b.mailboxes().Queued(a.id) {
		mail = append(mail, cmp.Or(msg.From, "?")+": "+cmp.Or(msg.Summary, "(no summary)"))
	}
	t.mu.Lock()
	plan := m.plan
	t.mu.Unlock()
	return []string{prompts.TeamKeepMember(m.name, m.team, task, plan, mail)}
}
