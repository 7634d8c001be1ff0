package config

import (
	"fmt"

	"github.com/cadre-dev/cadre"
)

// backgroundMode maps the `background` setting onto the runtime's mode.
func backgroundMode(v string) (cadre.BackgroundMode, error) {
	switch v {
	case "on", "":
		return cadre.BackgroundOn, nil
	case "default":
		return cadre.BackgroundDefault, nil
	case "off":
		return cadre.BackgroundOff, nil
	}
	return "", fmt.Errorf(`want "on", "default" or "off", not %q`, v)
}

// backgroundSetting is the session's background mode:
// CADRE_DISABLE_BACKGROUND_TASKS (a true value turns background off, as
// Claude Code's CLAUDE_CODE_DISABLE_BACKGROUND_TASKS does) over the
// settings' `background`.
func backgroundSetting(getenv func(string) string, s *Settings) (cadre.BackgroundMode, error) {
	off, err := envBool(getenv, "CADRE_DISABLE_BACKGROUND_TASKS", false)
	if err != nil {
		return "", err
	}
	if off {
		return cadre.BackgroundOff, nil
	}
	return backgroundMode(s.Background.Value)
}
