package config

import (
	"context"
	"testing"
)

// TestTaskListIDFromEnv: CADRE_TASK_LIST_ID, else Claude Code's
// CLAUDE_CODE_TASK_LIST_ID, names the team's task list; neither leaves
// it to the team.
func TestTaskListIDFromEnv(t *testing.T) {
	for _, tc := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{}, ""},
		{map[string]string{"CLAUDE_CODE_TASK_LIST_ID": "shared"}, "shared"},
		{map[string]string{"CLAUDE_CODE_TASK_LIST_ID": "shared", "CADRE_TASK_LIST_ID": "mine"}, "mine"},
	} {
		dir := t.TempDir()
		env := map[string]string{"HOME": t.TempDir(), "ANTHROPIC_API_KEY": "test", "XDG_STATE_HOME": t.TempDir()}
		for k, v := range tc.env {
			env[k] = v
		}
		cfg, _, err := Load(context.Background(), dir, Options{Getenv: func(k string) string { return env[k] }})
		if err != nil {
			t.Fatal(err)
		}
		if cfg.TaskListID != tc.want {
			t.Errorf("env %v: TaskListID %q, want %q", tc.env, cfg.TaskListID, tc.want)
		}
	}
}
