package config

import (
	"fmt"
	"strconv"
)

// coordinatorMode decides whether coordinator mode is on (S-11.2):
// CADRE_COORDINATOR_MODE when set (1/true/0/false, as strconv.ParseBool
// reads it; Claude Code's is CLAUDE_CODE_COORDINATOR_MODE), else the
// settings' coordinatorMode. A value that is not a boolean is an error
// naming the variable.
func coordinatorMode(getenv func(string) string, s *Settings) (bool, error) {
	if v := getenv("CADRE_COORDINATOR_MODE"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("CADRE_COORDINATOR_MODE=%q: want 1 or 0 (true or false)", v)
		}
		return on, nil
	}
	return s.CoordinatorMode.Value, nil
}
