package config

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
)

// TestBooleanSwitchPrecedence: the environment variable of a boolean
// switch wins over its setting, both ways; unset, the setting decides;
// a value that is not a boolean is an error naming the variable.
func TestBooleanSwitchPrecedence(t *testing.T) {
	t.Parallel()
	switches := []struct {
		setting, env string
		get          func(cadre.Config) bool
	}{
		{"forkSubagent", "CADRE_FORK_SUBAGENT", func(c cadre.Config) bool { return c.ForkSubagent }},
		{"coordinatorMode", "CADRE_COORDINATOR_MODE", func(c cadre.Config) bool { return c.Coordinator }},
		{"teams", "CADRE_AGENT_TEAMS", func(c cadre.Config) bool { return c.Teams }},
		{"teams", "CLAUDE_CODE_EXPERIMENTAL_AGENT_TEAMS", func(c cadre.Config) bool { return c.Teams }},
	}
	for _, sw := range switches {
		cases := []struct {
			name     string
			settings string
			env      string
			want     bool
			err      string
		}{
			{"off by default", `{}`, "", false, ""},
			{"setting", `{"` + sw.setting + `": true}`, "", true, ""},
			{"environment turns it on", `{}`, "1", true, ""},
			{"environment over the setting", `{"` + sw.setting + `": true}`, "0", false, ""},
			{"true spelled out", `{}`, "true", true, ""},
			{"not a boolean", `{}`, "yes please", false, sw.env + `="yes please"`},
		}
		for _, c := range cases {
			t.Run(sw.env+"/"+c.name, func(t *testing.T) {
				t.Parallel()
				env := map[string]string{"ANTHROPIC_API_KEY": "k"}
				if c.env != "" {
					env[sw.env] = c.env
				}
				cfg, _, err, _ := loadIn(t, map[string]string{"CWD/.cadre/settings.json": c.settings}, env, Options{})
				if c.err != "" {
					if err == nil || !strings.Contains(err.Error(), c.err) {
						t.Fatalf("error %v, want one naming %s", err, c.err)
					}
					return
				}
				if err != nil {
					t.Fatal(err)
				}
				if got := sw.get(cfg); got != c.want {
					t.Fatalf("%s %v, want %v", sw.setting, got, c.want)
				}
			})
		}
	}
}
