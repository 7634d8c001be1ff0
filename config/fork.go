package config

import (
	"fmt"
	"strconv"
)

// forkSubagent decides whether the fork path is on (S-6.1):
// CADRE_FORK_SUBAGENT when set (1/true/0/false, as strconv.ParseBool
// reads it), else the settings' forkSubagent. A value that is not a
// boolean is an error naming the variable.
func forkSubagent(getenv func(string) string, s *Settings) (bool, error) {
	if v := getenv("CADRE_FORK_SUBAGENT"); v != "" {
		on, err := strconv.ParseBool(v)
		if err != nil {
			return false, fmt.Errorf("CADRE_FORK_SUBAGENT=%q: want 1 or 0 (true or false)", v)
		}
		return on, nil
	}
	return s.ForkSubagent.Value, nil
}
