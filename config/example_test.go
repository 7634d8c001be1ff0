package config_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/llm/llmtest"
	"github.com/cadre-dev/cadre/run"
)

// A Go program configures itself the way `cadre -p` does: the project's
// settings files, the provider from the environment it passes, then runs.
func ExampleLoad() {
	srv := llmtest.NewServer()
	defer srv.Close()
	srv.Script("", llmtest.Text("The settings say haiku."))

	dir, _ := os.MkdirTemp("", "cadre-example")
	defer os.RemoveAll(dir)
	_ = os.MkdirAll(filepath.Join(dir, ".cadre"), 0o755)
	_ = os.WriteFile(filepath.Join(dir, ".cadre", "settings.json"), []byte(`{"model": "haiku", "maxConcurrentAgents": 4}`), 0o644)

	// In a real program: Getenv: os.Getenv.
	env := map[string]string{"ANTHROPIC_API_KEY": "test", "ANTHROPIC_BASE_URL": srv.URL(), "XDG_STATE_HOME": filepath.Join(dir, "state")}
	cfg, diags, err := config.Load(context.Background(), dir, config.Options{Getenv: func(k string) string { return env[k] }})
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, d := range diags {
		fmt.Println(d)
	}
	fmt.Println(cfg.ModelID, cfg.Limits.MaxRunning)

	rt, err := cadre.New(cfg)
	if err != nil {
		fmt.Println(err)
		return
	}
	for ev, err := range rt.Run(context.Background(), "which model?") {
		if err != nil {
			fmt.Println(err)
			return
		}
		if ev.Type == run.EventResult {
			fmt.Println(ev.Result.Text)
		}
	}
	// Output:
	// claude-haiku-4-5 4
	// The settings say haiku.
}
