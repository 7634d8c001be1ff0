package config

import (
	"errors"
	"fmt"

	"github.com/cadre-dev/cadre/permission"
)

// ErrBypassDisabled is returned by ResolveMode when bypass is asked for but
// managed settings disable it.
var ErrBypassDisabled = errors.New("--dangerously-skip-permissions and bypassPermissions are disabled by managed settings (permissions.disableBypassPermissionsMode)")

// ResolveMode picks the run's permission mode from --permission-mode,
// --dangerously-skip-permissions (= bypassPermissions) and the settings'
// defaultMode, refusing bypass when settings disable it and a mode that
// contradicts --dangerously-skip-permissions. s may be nil.
func ResolveMode(flagMode string, skipPermissions bool, s *Settings) (permission.Mode, error) {
	var mode permission.Mode
	if flagMode != "" {
		m, err := permission.ParseMode(flagMode)
		if err != nil {
			return "", fmt.Errorf("--permission-mode: %w", err)
		}
		if m == permission.ModeBubble {
			return "", fmt.Errorf("--permission-mode: bubble is internal to sub-agents")
		}
		mode = m
	}
	if skipPermissions {
		if mode != "" && mode != permission.ModeBypassPermissions {
			return "", fmt.Errorf("--dangerously-skip-permissions conflicts with --permission-mode %s", mode)
		}
		mode = permission.ModeBypassPermissions
	}
	if mode == "" && s != nil && s.Permissions.DefaultMode.Value != "" {
		mode = permission.Mode(s.Permissions.DefaultMode.Value)
	}
	if mode == "" {
		mode = permission.ModeDefault
	}
	if mode == permission.ModeBypassPermissions && s != nil && s.Permissions.DisableBypass {
		return "", fmt.Errorf("%w (set in %s)", ErrBypassDisabled, s.Permissions.DisableBypassSource)
	}
	if mode == permission.ModeAuto {
		return "", permission.ErrModeUnsupported
	}
	return mode, nil
}
