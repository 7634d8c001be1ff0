package config

import (
	"fmt"
	"strconv"

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
	if v := getenv("CADRE_DISABLE_BACKGROUND_TASKS"); v != "" {
		off, err := strconv.ParseBool(v)
		if err != nil {
			return "", fmt.Errorf("CADRE_DISABLE_BACKGROUND_TASKS=%q: want true or false", v)
		}
		if off {
			return cadre.BackgroundOff, nil
		}
	}
	return backgroundMode(s.Background.Value)
}
