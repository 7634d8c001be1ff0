// Package cli is cadre's command line. cmd/cadre only calls Main.
package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
)

// Version is cadre's version, printed by --version.
const Version = "0.1.0"

// Exit codes of the cadre command.
const (
	// ExitOK: the run finished and its result is not an error.
	ExitOK = 0
	// ExitFailed: the run ended in error (model API error, turn limit hit,
	// a tool failing the run) or a subcommand found errors.
	ExitFailed = 1
	// ExitUsage: bad flags, bad configuration, or no API key.
	ExitUsage = 2
	// ExitInterrupted: SIGINT or SIGTERM ended the run.
	ExitInterrupted = 130
)

// exitError carries an exit code out of a cobra command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// options are the root command's flags.
type options struct {
	print              bool
	outputFormat       string
	model              string
	maxTurns           int
	systemPrompt       string
	appendSystemPrompt string
	addDirs            []string
	settingsFile       string
	verbose            bool
	permissionMode     string
	allowedTools       []string
	disallowedTools    []string
	skipPermissions    bool
	agents             string
	sessionID          string
	noTranscript       bool
	ui                 uiOptions
}

// procIO bundles the process's streams and environment.
type procIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// Main runs the command line and returns the process exit code.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	p := procIO{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	cmd := newRootCmd(ctx, p)
	cmd.SetArgs(args)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	err := cmd.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "cadre: "+ee.err.Error())
		}
		return ee.code
	}
	var ae *agentscmd.ExitError
	if errors.As(err, &ae) {
		if ae.Err != nil {
			fmt.Fprintln(stderr, "cadre: "+ae.Err.Error())
		}
		return ae.Code
	}
	// Anything else cobra returns is a usage problem (unknown flag, bad
	// value, wrong number of arguments).
	fmt.Fprintln(stderr, "cadre: "+err.Error())
	fmt.Fprintln(stderr, "Run 'cadre --help' for usage.")
	return ExitUsage
}

func newRootCmd(ctx context.Context, p procIO) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "cadre [flags] [prompt]",
		Short: "Run LLM agents that delegate work to sub-agents",
		Long: `cadre runs an LLM agent in the current directory with tools to read, search
and change files and run commands, and lets it hand work to sub-agents.

Interactive use: cadre (in a terminal) opens the terminal UI.
Headless use: cadre -p "fix the failing test" (or pipe the prompt on stdin).

Exit codes: 0 success, 1 the run ended in error, 2 usage or configuration
error (including a missing API key), 130 interrupted.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if wantsUI(p, &o, args) {
				return runUI(ctx, p, &o)
			}
			return runPrint(ctx, p, &o, args)
		},
	}
	cmd.SetVersionTemplate("cadre {{.Version}}\n")
	f := cmd.Flags()
	// Without -p and a prompt, a terminal opens the UI; anything else
	// runs headless, so -p is optional for scripts.
	f.BoolVarP(&o.print, "print", "p", false, "print the answer and exit (headless mode; the prompt is the argument or stdin)")
	f.StringVar(&o.outputFormat, "output-format", "text", "output format with --print: text, json or stream-json")
	f.StringVar(&o.model, "model", "", "model alias (sonnet, opus, haiku) or provider model id")
	f.IntVar(&o.maxTurns, "max-turns", 0, "stop after this many model turns (0: no limit)")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "replace the default system prompt")
	f.StringVar(&o.appendSystemPrompt, "append-system-prompt", "", "text added to the end of the system prompt")
	f.StringArrayVar(&o.addDirs, "add-dir", nil, "further working directory the agent may use (repeatable)")
	f.StringVar(&o.settingsFile, "settings", "", "a settings JSON file to load on top of the user and project settings")
	f.BoolVar(&o.verbose, "verbose", false, "show tool calls and retries on stderr (text output)")
	f.StringVar(&o.permissionMode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	f.StringArrayVar(&o.allowedTools, "allowedTools", nil, `rules that allow tools without asking, e.g. "Bash(git diff:*) Read"`)
	f.StringArrayVar(&o.disallowedTools, "disallowedTools", nil, `rules that deny tools, e.g. "Bash(rm:*) Write"`)
	f.BoolVar(&o.skipPermissions, "dangerously-skip-permissions", false, "run every tool call without asking (bypassPermissions); deny rules still hold")
	f.StringVar(&o.agents, "agents", "", "agent definitions as a JSON object, or a path to a JSON file")
	f.StringVar(&o.sessionID, "session-id", "", "use this session id instead of a new one")
	f.BoolVar(&o.noTranscript, "no-transcript", false, "do not write a transcript")
	f.BoolVar(&o.ui.noAltScreen, "no-alt-screen", false, "terminal UI: draw below the prompt and keep the conversation in the terminal's scrollback")
	f.BoolVar(&o.ui.mouse, "mouse", false, "terminal UI: scroll with the wheel and click agents in the tree")
	f.SetInterspersed(true)
	addSubcommands(cmd)
	return cmd
}

// readPrompt returns the prompt from the argument or, when none is given
// and stdin is not a terminal, from stdin.
func readPrompt(p procIO, args []string) (string, error) {
	if len(args) == 1 && strings.TrimSpace(args[0]) != "" {
		return args[0], nil
	}
	if f, ok := p.stdin.(*os.File); ok {
		st, err := f.Stat()
		if err == nil && st.Mode()&os.ModeCharDevice != 0 {
			return "", &exitError{ExitUsage, errors.New("no prompt: pass one as an argument or on stdin (the terminal UI needs a terminal on stdout too)")}
		}
	}
	if p.stdin == nil {
		return "", &exitError{ExitUsage, errors.New("no prompt given")}
	}
	b, err := io.ReadAll(io.LimitReader(p.stdin, 16<<20))
	if err != nil {
		return "", &exitError{ExitUsage, fmt.Errorf("read prompt from stdin: %w", err)}
	}
	if strings.TrimSpace(string(b)) == "" {
		return "", &exitError{ExitUsage, errors.New("no prompt: the argument and stdin are empty")}
	}
	return string(b), nil
}

func runPrint(ctx context.Context, p procIO, o *options, args []string) error {
	pr, err := newPrinter(o.outputFormat, p.stdout, p.stderr, o.verbose)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	if o.maxTurns < 0 {
		return &exitError{ExitUsage, fmt.Errorf("invalid --max-turns %d: must be 0 (no limit) or more", o.maxTurns)}
	}
	prompt, err := readPrompt(p, args)
	if err != nil {
		return err
	}
	cfg, err := configure(ctx, p, o)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	rt, err := cadre.New(cfg)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	var last *cadre.Result
	for ev, err := range rt.Run(ctx, prompt) {
		if err != nil {
			if ctx.Err() != nil {
				_ = pr.fail("interrupted", "error_during_execution")
				return &exitError{ExitInterrupted, nil}
			}
			if perr := pr.fail(err.Error(), "error_during_execution"); perr != nil {
				return &exitError{ExitFailed, perr}
			}
			return &exitError{ExitFailed, nil}
		}
		if ev.Type == cadre.EventResult {
			last = ev.Result
		}
		if err := pr.event(ev); err != nil {
			return &exitError{ExitFailed, fmt.Errorf("write output: %w", err)}
		}
	}
	if last == nil {
		return &exitError{ExitFailed, errors.New("the run ended without a result")}
	}
	if last.IsError {
		return &exitError{ExitFailed, nil}
	}
	return nil
}
