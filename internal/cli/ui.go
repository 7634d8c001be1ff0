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
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/tui"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/transcript"
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
	if o.permissionPromptTool != "" {
		return &exitError{ExitUsage, errors.New("--permission-prompt-tool is for headless runs (-p): in the terminal UI you answer the prompts")}
	}
	cfg, err := configure(ctx, p, o)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	// What the print path checks and applies too: a new --session-id,
	// --fallback-model, thinking, and --resume/--continue, which load the
	// saved conversation into cfg.
	if err := checkNewSession(o.sessionID, cfg); err != nil {
		return &exitError{ExitUsage, err}
	}
	if err := applyFlags(p, o, &cfg); err != nil {
		return &exitError{ExitUsage, err}
	}
	// Where the runtime writes transcripts is where /resume looks; none
	// are listed when they are off.
	stateDir := cfg.StateDir
	if cfg.NoTranscript {
		stateDir = ""
	}
	resumeID := ""
	if o.continueLast || o.resume != "" {
		resumeID = cfg.SessionID
	}
	// The first runtime takes --session-id (or the resumed session, its
	// conversation loaded); /clear starts new sessions.
	var first sync.Once
	withPrompter := func(c cadre.Config, pr permission.Prompter) cadre.Config {
		perms := *cfg.Permissions
		perms.Prompter = pr
		c.Permissions = &perms
		return c
	}
	newRuntime := func(pr permission.Prompter) (tui.Runtime, error) {
		c := withPrompter(cfg, pr)
		c.SessionID, c.History = "", nil
		first.Do(func() { c.SessionID, c.History = cfg.SessionID, cfg.History })
		return cadre.New(c)
	}
	// /resume continues a saved session of the project the way
	// --resume does: its conversation is the new runtime's History.
	resume := func(id string, pr permission.Prompter) (tui.Runtime, error) {
		c := withPrompter(cfg, pr)
		if err := loadSession(&c, transcript.SessionPath(cfg.StateDir, cfg.Cwd, id), nil); err != nil {
			return nil, err
		}
		return cadre.New(c)
	}
	opts := tui.Options{
		New: newRuntime, ResumeID: resumeID, Cwd: cfg.Cwd, Model: cfg.ModelID, Mode: cfg.Permissions.Mode, Rules: cfg.Permissions.Rules,
		StateDir: stateDir,
		Agents: func(ctx context.Context) (*agentdef.Set, error) {
			plugins, _ := config.SessionPluginAgents(cfg.Cwd, p.getenv("HOME"), o.sdk.plugins(), p.getenv) // reported at start
			return agentdef.Load(ctx, agentdef.LoadOptions{Cwd: cfg.Cwd, Home: p.getenv("HOME"), FlagAgents: o.agents, Plugins: plugins})
		},
		AltScreen: !o.ui.noAltScreen, Mouse: o.ui.mouse,
		Input: p.stdin, Output: p.stdout,
	}
	if stateDir != "" {
		opts.Resume = resume
	}
	err = tui.Run(ctx, opts)
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
