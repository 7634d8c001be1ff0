package engine

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"

	"github.com/cadre-dev/cadre/internal/sandbox"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
)

// This file runs agents' Bash commands in the OS sandbox (issue 9,
// S-10.5): New opens it once per session (Config.Sandbox), and each
// agent's Bash runs in it with the agent's working directories writable
// and the paths its deny rules protect masked, while its permission
// checker decides commands as the masked ones they are.

// SandboxConfig turns on the OS sandbox for Bash (bubblewrap, Linux): the
// file system is read-only except the agent's working directories (an
// isolated agent's worktree), a private /tmp and Writable; the paths Read
// deny rules protect are masked and those Edit deny rules protect are
// read-only; the network can be cut; and nothing a command starts
// outlives cadre, even after kill -9. package config builds it from the
// settings' sandbox object and --sandbox.
type SandboxConfig struct {
	// BackgroundOnly confines only the Bash commands of sub-agents that
	// start in the background; the main agent and foreground sub-agents
	// run theirs unconfined. A sub-agent moved to the background while
	// it runs keeps what it started with.
	BackgroundOnly bool
	// NoNetwork cuts the network: commands get a network namespace with
	// only loopback. The zero value leaves the network on.
	NoNetwork bool
	// Writable are paths besides the working directories commands may
	// write (config.Load puts the usual tool caches here: Go's, npm's,
	// pip's and cargo's). Paths that do not exist are skipped.
	Writable []string
	// FailIfUnavailable makes New fail when bubblewrap is missing or
	// cannot run here. Otherwise New succeeds, commands run unconfined,
	// and SandboxStatus (and the init event) carries the warning.
	FailIfUnavailable bool
	// BwrapPath is the bwrap binary; "" looks "bwrap" up on PATH.
	BwrapPath string
}

// openSandbox starts the sandbox Config.Sandbox asks for, once per
// session: bwrap is probed here, so a machine where it cannot run is told
// up front (an error with FailIfUnavailable, else a warning).
func (sg sessionGlue) openSandbox() error {
	r := sg.r
	sc := r.cfg.Sandbox
	if sc == nil {
		return nil
	}
	for _, w := range sc.Writable {
		if !filepath.IsAbs(w) {
			return fmt.Errorf("Config.Sandbox.Writable: %q is not an absolute path", w)
		}
	}
	sb, warning, err := sandbox.Open(context.Background(), sandbox.Config{
		BwrapPath: sc.BwrapPath, Writable: slices.Clone(sc.Writable), Network: !sc.NoNetwork}, sc.FailIfUnavailable)
	if err != nil {
		return err
	}
	r.sandbox = sb
	r.sandboxStatus = &run.SandboxStatus{Enabled: sb != nil, BackgroundOnly: sc.BackgroundOnly, Network: !sc.NoNetwork,
		Writable: slices.Clone(sc.Writable), Unavailable: warning}
	return nil
}

// SandboxStatus reports what the session's sandbox does; nil when
// Config.Sandbox asked for none.
func (r *Runtime) SandboxStatus() *run.SandboxStatus {
	if r.sandboxStatus == nil {
		return nil
	}
	s := *r.sandboxStatus
	s.Writable = slices.Clone(s.Writable)
	return &s
}

// sandboxFor returns the sandbox an agent's Bash runs in: nil when the
// session has none, or when only background sub-agents are confined and
// this agent is not one.
func (sg sessionGlue) sandboxFor(background bool) *sandbox.Sandbox {
	r := sg.r
	if r.sandbox == nil || (r.cfg.Sandbox.BackgroundOnly && !background) {
		return nil
	}
	return r.sandbox
}

// confine puts the agent's Bash in sb (nil: unconfined) and tells its
// checker so: cc gets the sandbox before the checker is built, and the
// agent's Env the sandbox whose masks the built checker computes.
func (su toolSetup) confine(sb *sandbox.Sandbox, cc *permission.Config) func(*permission.Checker) {
	a := su.a
	if sb == nil {
		a.env.Sandbox = nil
		return func(*permission.Checker) {}
	}
	cc.Sandbox = &permission.Sandbox{Writable: sb.Writable()}
	return func(checker *permission.Checker) {
		var s tool.Sandbox = &sandbox.Bash{Sandbox: sb, Masks: func(cwd string, dirs []string) ([]string, []string, error) {
			m, err := checker.SandboxMasks(cwd, dirs)
			return m.Hidden, m.ReadOnly, err
		}}
		a.env.Sandbox = s
	}
}
