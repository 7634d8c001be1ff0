package config

import (
	"strings"
	"testing"
)

func TestCoordinatorModePrecedence(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name     string
		settings string
		env      string
		want     bool
		err      string
	}{
		{"off by default", `{}`, "", false, ""},
		{"setting", `{"coordinatorMode": true}`, "", true, ""},
		{"environment turns it on", `{}`, "1", true, ""},
		{"environment over the setting", `{"coordinatorMode": true}`, "0", false, ""},
		{"not a boolean", `{}`, "sure", false, `CADRE_COORDINATOR_MODE="sure"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			env := map[string]string{"ANTHROPIC_API_KEY": "k"}
			if c.env != "" {
				env["CADRE_COORDINATOR_MODE"] = c.env
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
			if cfg.Coordinator != c.want {
				t.Fatalf("Coordinator %v, want %v", cfg.Coordinator, c.want)
			}
		})
	}
}
