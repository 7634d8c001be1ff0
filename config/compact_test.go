package config

import (
	"strings"
	"testing"

	"github.com/cadre-dev/cadre"
	"github.com/google/go-cmp/cmp"
)

func TestCompactionFromSettingsAndEnv(t *testing.T) {
	tests := []struct {
		name  string
		files map[string]string
		env   map[string]string
		want  cadre.Compaction
		err   string
	}{
		{name: "defaults", want: cadre.Compaction{}},
		{name: "settings window", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": 50000}`}, want: cadre.Compaction{Window: 50000}},
		{name: "Claude Code's variable over the setting", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": 50000}`},
			env: map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "9000"}, want: cadre.Compaction{Window: 9000}},
		{name: "cadre's variable over Claude Code's", env: map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "9000", "CADRE_AUTO_COMPACT_WINDOW": "8000"},
			want: cadre.Compaction{Window: 8000}},
		{name: "percent", env: map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "50"}, want: cadre.Compaction{Percent: 50}},
		{name: "disable auto", env: map[string]string{"DISABLE_AUTO_COMPACT": "1"}, want: cadre.Compaction{DisableAuto: true}},
		{name: "env turns auto back on over the setting", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactEnabled": false}`},
			env: map[string]string{"DISABLE_AUTO_COMPACT": "0"}, want: cadre.Compaction{}},
		{name: "disable all", env: map[string]string{"DISABLE_COMPACT": "true"}, want: cadre.Compaction{Disable: true}},
		{name: "bad window", env: map[string]string{"CADRE_AUTO_COMPACT_WINDOW": "lots"}, err: `CADRE_AUTO_COMPACT_WINDOW="lots"`},
		{name: "tiny window", env: map[string]string{"CLAUDE_CODE_AUTO_COMPACT_WINDOW": "10"}, err: "1000 or more"},
		{name: "bad percent", env: map[string]string{"CLAUDE_AUTOCOMPACT_PCT_OVERRIDE": "150"}, err: "CLAUDE_AUTOCOMPACT_PCT_OVERRIDE"},
		{name: "bad switch", env: map[string]string{"DISABLE_COMPACT": "maybe"}, err: "DISABLE_COMPACT"},
		{name: "per-model windows", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": {"claude-haiku": 60000, "claude-sonnet-4-5": 90000, "default": 150000}}`},
			want: cadre.Compaction{Window: 150000, Windows: map[string]int64{"claude-haiku": 60000, "claude-sonnet-4-5": 90000}}},
		{name: "per-model windows merge across files", files: map[string]string{"HOME/.config/cadre/settings.json": `{"autoCompactWindow": {"claude-haiku": 60000, "gpt-5": 300000}}`,
			"CWD/.cadre/settings.json": `{"autoCompactWindow": {"claude-haiku": 50000}}`},
			want: cadre.Compaction{Windows: map[string]int64{"claude-haiku": 50000, "gpt-5": 300000}}},
		{name: "the variable is one window for every model", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": {"claude-haiku": 60000}}`},
			env: map[string]string{"CADRE_AUTO_COMPACT_WINDOW": "8000"}, want: cadre.Compaction{Window: 8000}},
		{name: "tiny per-model setting", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": {"claude-haiku": 10}}`}, err: `autoCompactWindow["claude-haiku"] must be 1000 tokens or more`},
		{name: "per-model setting not a number", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": {"claude-haiku": "big"}}`}, err: "autoCompactWindow"},
		{name: "clear tool results", env: map[string]string{"CADRE_CLEAR_TOOL_RESULTS": "1"}, want: cadre.Compaction{ClearToolResults: true}},
		{name: "bad clear switch", env: map[string]string{"CADRE_CLEAR_TOOL_RESULTS": "often"}, err: "CADRE_CLEAR_TOOL_RESULTS"},
		{name: "tiny setting", files: map[string]string{"CWD/.cadre/settings.json": `{"autoCompactWindow": 5}`}, err: "autoCompactWindow must be 1000 tokens or more"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			env := map[string]string{"ANTHROPIC_API_KEY": "k"}
			for k, v := range tt.env {
				env[k] = v
			}
			cfg, _, err, _ := loadIn(t, tt.files, env, Options{})
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, cfg.Compaction); diff != "" {
				t.Fatalf("(-want +got)\n%s", diff)
			}
		})
	}
}
