package engine

import (
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/permission"
)

// SetPermissionMode changes the main agent's permission mode for the runs
// that start after it (a terminal UI's Shift+Tab); a run in progress keeps
// the mode it started with, and its sub-agents are ratcheted from that. The
// mode must be one a session may use: not the internal bubble mode, not
// auto (unsupported), not bypassPermissions when the session's limits
// disable it.
func (r *Runtime) SetPermissionMode(mode permission.Mode) error {
	m, err := permission.ParseMode(string(mode))
	if err != nil {
		return fmt.Errorf("cadre: %w", err)
	}
	switch {
	case m == permission.ModeBubble:
		return errors.New("cadre: bubble is a sub-agent mode; the main agent cannot use it")
	case m == permission.ModeAuto:
		return fmt.Errorf("cadre: %w", permission.ErrModeUnsupported)
	case m == permission.ModeBypassPermissions && r.cfg.Permissions.Limits.DisableBypass:
		return fmt.Errorf("cadre: %w", permission.ErrBypassDisabled)
	}
	r.modeMu.Lock()
	r.mode = m
	r.modeMu.Unlock()
	return nil
}

// PermissionMode is the mode the main agent's next run starts in.
func (r *Runtime) PermissionMode() permission.Mode {
	r.modeMu.Lock()
	defer r.modeMu.Unlock()
	if r.mode != "" {
		return r.mode
	}
	m, _ := permission.ParseMode(string(r.cfg.Permissions.Mode))
	return m
}
