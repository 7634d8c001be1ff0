package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"sync"

	"github.com/charmbracelet/x/term"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/internal/tui"
	"github.com/cadre-dev/cadre/permission"
)

// The UI changes the mode with Shift+Tab through this.
var _ tui.ModeSetter = (*cadre.Runtime)(nil)

// uiOptions are the flags of the interactive terminal UI.
type uiOptions struct {
	noAltScreen bool
	mouse       bool
}

// wantsUI reports whether this invocation opens the terminal UI: no -p,
// no prompt argument, and a terminal on stdin and stdout.
func wantsUI(p procIO, o *options, args []string) bool {
	return !o.print && len(args) == 0 && isTerminal(p.stdin) && isTerminal(p.stdout)
}

// isTerminal reports whether f is a terminal (not merely a character
// device such as /dev/null).
func isTerminal(f any) bool {
	file, ok := f.(*os.File)
	return ok && term.IsTerminal(file.Fd())
}

// runUI configures the session like a headless run and opens the
// terminal UI on it.
func runUI(ctx context.Context, p procIO, o *options) error {
	cfg, err := configure(ctx, p, o)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	// Where the runtime writes transcripts is where /resume looks.
	stateDir := cfg.StateDir
	// The first runtime takes --session-id; /clear starts new sessions.
	var first sync.Once
	newRuntime := func(pr permission.Prompter) (tui.Runtime, error) {
		c := cfg
		perms := *cfg.Permissions
		perms.Prompter = pr
		c.Permissions = &perms
		c.SessionID = ""
		first.Do(func() { c.SessionID = cfg.SessionID })
		return cadre.New(c)
	}
	home := p.getenv("HOME")
	err = tui.Run(ctx, tui.Options{
		New: newRuntime, Cwd: cfg.Cwd, Model: cfg.ModelID, Mode: cfg.Permissions.Mode, Rules: cfg.Permissions.Rules,
		StateDir: stateDir,
		Agents: func(ctx context.Context) (*agentdef.Set, error) {
			return agentdef.Load(ctx, agentdef.LoadOptions{Cwd: cfg.Cwd, Home: home, FlagAgents: o.agents})
		},
		AltScreen: !o.ui.noAltScreen, Mouse: o.ui.mouse,
		Input: p.stdin, Output: p.stdout,
	})
	switch {
	case ctx.Err() != nil:
		return &exitError{ExitInterrupted, nil}
	case errors.Is(err, context.Canceled):
		return nil
	case err != nil:
		return &exitError{ExitFailed, fmt.Errorf("terminal UI: %w", err)}
	}
	return nil
}
