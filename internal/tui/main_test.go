package tui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/goleak"

	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/permission"
)

// The test binary doubles as a UI that crashes: with
// CADRE_TUI_PANIC_HELPER=1 it opens the UI whose /agents action panics,
// so an end-to-end test can check the terminal is restored after a panic.
func TestMain(m *testing.M) {
	if os.Getenv("CADRE_TUI_PANIC_HELPER") == "1" {
		err := Run(context.Background(), Options{
			New:    func(permission.Prompter) (Runtime, error) { return &fakeRuntime{}, nil },
			Agents: func(context.Context) (*agentdef.Set, error) { panic("the agent listing exploded") },
			Cwd:    "/", Model: "test-model", AltScreen: true,
		})
		fmt.Printf("ui ended: %v\n", err)
		os.Exit(3)
	}
	// The binary the end-to-end tests built (e2e_test.go, in the external
	// test package, names its directory after this process) goes with the run.
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		dirs, _ := filepath.Glob(filepath.Join(os.TempDir(), fmt.Sprintf("cadre-e2e-%d-*", os.Getpid())))
		for _, d := range dirs {
			os.RemoveAll(d)
		}
		os.Exit(code)
	}))
}
