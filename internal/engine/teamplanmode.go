package engine

import (
	"context"
	"fmt"
	"sync"

	"github.com/cadre-dev/cadre/permission"
)

// An approved plan's permission mode (issue 25, point 7). The lead's
// plan_approval_response may name the mode the teammate continues in
// (Claude Code's permissionMode: acceptEdits, say). It is bounded as a
// declared mode is (S-10.3, permission.Ratchet) with the lead as the
// parent: a lead in default lets acceptEdits apply and bypassPermissions
// only when the session allows bypass; a lead in acceptEdits, plan or
// bypassPermissions imposes its own; the session's limits cap it. The
// teammate keeps its rules (the lead's deny rules bind it), its
// directories and its read-only bit; only the mode changes. "" or
// default keeps the mode the teammate was started with.

// approvedMode bounds the mode an approval asks for by lead's ceiling; ""
// when the teammate keeps its own mode. An unknown mode is an error.
func approvedMode(lead *agent, asked string) (permission.Mode, error) {
	if asked == "" || asked == string(permission.ModeDefault) {
		return "", nil
	}
	m, err := permission.ParseMode(asked)
	if err != nil || m == permission.ModeBubble {
		return "", fmt.Errorf("permissionMode %q is not a mode a teammate can continue in (default, acceptEdits, bypassPermissions, dontAsk, plan)", asked)
	}
	var limits permission.SessionLimits
	if p := lead.run.rt.cfg.Permissions; p != nil {
		limits = p.Limits
	}
	return permission.Ratchet(lead.perms, m, limits).Mode, nil
}

// modeGate is a teammate's authorizer once its plan was approved with a
// mode of its own: full (the teammate's own session) until then, after
// it a session in that mode, built once when first needed.
type modeGate struct {
	m    *member
	t    *team
	su   toolSetup
	full *permission.Session

	mu    sync.Mutex
	mode  permission.Mode
	built *permission.Session
}

// Authorize implements permission.Authorizer.
func (g *modeGate) Authorize(ctx context.Context, req permission.Request) (permission.Outcome, error) {
	g.t.mu.Lock()
	mode := g.m.mode
	g.t.mu.Unlock()
	if mode == "" || mode == g.full.Checker().Mode() {
		return g.full.Authorize(ctx, req)
	}
	s, err := g.session(mode)
	if err != nil {
		return permission.Outcome{}, err
	}
	return s.Authorize(ctx, req)
}

// session is the teammate's session in mode, built from its own
// checker's configuration with only the mode changed.
func (g *modeGate) session(mode permission.Mode) (*permission.Session, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.built != nil && g.mode == mode {
		return g.built, nil
	}
	cc := g.full.Checker().Config()
	cc.Mode = mode
	checker, err := permission.NewChecker(cc)
	if err != nil {
		return nil, fmt.Errorf("permissions of teammate %s in mode %s: %w", g.m.name, mode, err)
	}
	s, err := g.su.session(checker, false)
	if err != nil {
		return nil, fmt.Errorf("permissions of teammate %s in mode %s: %w", g.m.name, mode, err)
	}
	g.built, g.mode = s, mode
	return s, nil
}

// withMode wraps a teammate's full session in its mode gate.
func (tm teammate) withMode(full permission.Authorizer) permission.Authorizer {
	s, ok := full.(*permission.Session)
	if !ok {
		return full
	}
	a := tm.a
	return &modeGate{m: a.member, t: a.run.rt.bg.team, su: setupOf(a), full: s}
}
