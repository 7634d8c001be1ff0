package config

import (
	"strings"
	"testing"
)

func TestForkSubagentPrecedence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		settings string
		env      string
		want     bool
		err      string
	}{
		{"off by default", `{}`, "", false, ""},
		{"setting", `{"forkSubagent": true}`, "", true, ""},
		{"environment turns it on", `{}`, "1", true, ""},
		{"environment over the setting", `{"forkSubagent": true}`, "0", false, ""},
		{"true spelled out", `{}`, "true", true, ""},
		{"not a boolean", `{}`, "yes please", false, `CADRE_FORK_SUBAGENT="yes please"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"ANTHROPIC_API_KEY": "k"}
			if c.env != "" {
				env["CADRE_FORK_SUBAGENT"] = c.env
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
			if cfg.ForkSubagent != c.want {
				t.Fatalf("ForkSubagent %v, want %v", cfg.ForkSubagent, c.want)
			}
		})
	}
}
