// Package cli is cadre's command line. cmd/cadre only calls Main.
package cli

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"iter"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/cadre-dev/cadre"
	"github.com/cadre-dev/cadre/agentdef"
	"github.com/cadre-dev/cadre/config"
	"github.com/cadre-dev/cadre/internal/cli/agentscmd"
	"github.com/cadre-dev/cadre/internal/proclife"
	"github.com/cadre-dev/cadre/internal/telemetry"
	"github.com/cadre-dev/cadre/llm"
	"github.com/cadre-dev/cadre/llm/openai"
	"github.com/cadre-dev/cadre/permission"
	"github.com/cadre-dev/cadre/run"
	"github.com/cadre-dev/cadre/tool"
	"github.com/cadre-dev/cadre/transcript"
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
	// ExitInterrupted: SIGINT or SIGHUP ended the run (SIGTERM exits 143).
	ExitInterrupted = 130
	// ExitTerminated: SIGTERM ended the run.
	ExitTerminated = 143
)

// endGrace is how long processes left running get between SIGTERM and
// SIGKILL when cadre exits.
const endGrace = time.Second

// exitError carries an exit code out of a cobra command.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

// options are the root command's flags.
type options struct {
	// telemetry is what the OTEL_* variables switched on (telemetry.go).
	telemetry              telemetry.Settings
	print                  bool
	outputFormat           string
	inputFormat            string
	model                  string
	fallbackModel          string
	maxTurns               int
	maxBudgetUSD           float64
	maxThinkingTokens      int64
	systemPrompt           string
	systemPromptFile       string
	appendSystemPrompt     string
	appendSystemPromptFile string
	addDirs                []string
	settingsFile           string
	settingsJSON           string
	verbose                bool
	debug                  string
	permissionMode         string
	permissionPromptTool   string
	allowedTools           []string
	allowedToolsDashed     []string
	disallowedTools        []string
	disallowedToolsDashed  []string
	skipPermissions        bool
	agents                 string
	mcp                    mcpFlags // --mcp-config, --strict-mcp-config (mcp.go)
	sessionID              string
	continueLast           bool
	resume                 string
	noTranscript           bool
	includePartial         bool
	replayUserMessages     bool
	includeHookEvents      bool
	trustProject           bool
	sandbox                bool // --sandbox (issue 9, sandbox.go)
	remote                 bool // --remote (issue 26)
	ui                     uiOptions
	// sdk are the Claude Agent SDK's flags cadre's own do not cover
	// (issue 29, sdkflags.go).
	sdk sdkFlags
	// debugOut is where the --debug lines go (stderr, or --debug-file's
	// file); nil means stderr.
	debugOut io.Writer
}

// procIO bundles the process's streams and environment.
type procIO struct {
	stdin          io.Reader
	stdout, stderr io.Writer
	getenv         func(string) string
}

// Main runs the command line and returns the process exit code. It owns
// the process: orphans of the commands it runs are re-parented to it, and
// every process it started, daemonised ones included, is ended before it
// returns — or, after kill -9, by its reaper process (internal/proclife).
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, getenv func(string) string) int {
	if printVersionOnly(args, stdout) { // startfast.go: no command tree for the version
		return ExitOK
	}
	_ = proclife.Adopt() // best effort: without it orphans go to init
	// The reaper ends what cadre started even after kill -9 (issue 23);
	// best effort like Adopt: without it, only an orderly exit ends them.
	// It starts once a command is about to run, before that command can
	// start anything: --version and --help start no process and pay for
	// no reaper.
	var reaper *proclife.Reaper
	ran := false
	defer func() {
		if ran {
			proclife.EndDescendants(endGrace, reaper.Pid())
			_ = reaper.Close()
		}
	}()
	ctx, sigs := withSignals(context.Background())
	defer sigs.stop()
	p := procIO{stdin: stdin, stdout: stdout, stderr: stderr, getenv: getenv}
	cmd := newRootOnlyCmd(ctx, p, sigs)
	if needsSubcommands(args) { // startfast.go: a headless run builds none
		addSubcommands(cmd)
	}
	// No subcommand sets its own persistent pre-run, so this one runs
	// before every command's RunE (TestReaperStartsBeforeEveryCommand).
	cmd.PersistentPreRun = func(*cobra.Command, []string) {
		if !ran {
			ran = true
			reaper, _ = proclife.StartReaper()
		}
	}
	cmd.SetArgs(joinDebugFilter(args)) // --debug's optional value (debug.go)
	cmd.SetIn(stdin)
	cmd.SetOut(stdout)
	cmd.SetErr(stderr)
	failed, err := cmd.ExecuteC()
	if err == nil {
		return ExitOK
	}
	var ee *exitError
	if errors.As(err, &ee) {
		if ee.err != nil && ee.err.Error() != "" {
			fmt.Fprintln(stderr, "cadre: "+trimPrefix(ee.err.Error()))
		}
		return ee.code
	}
	var ae *agentscmd.ExitError
	if errors.As(err, &ae) {
		if ae.Err != nil {
			fmt.Fprintln(stderr, "cadre: "+trimPrefix(ae.Err.Error()))
		}
		return ae.Code
	}
	// Anything else cobra returns is a usage problem (unknown flag, bad
	// value, wrong number of arguments) of the command that failed.
	fmt.Fprintln(stderr, "cadre: "+trimPrefix(err.Error()))
	fmt.Fprintf(stderr, "Run '%s --help' for usage.\n", failed.CommandPath())
	return ExitUsage
}

// trimPrefix drops the "cadre: " that library errors start with, so the
// message is not prefixed twice.
func trimPrefix(msg string) string {
	for strings.HasPrefix(msg, "cadre: ") {
		msg = strings.TrimPrefix(msg, "cadre: ")
	}
	return msg
}

// newRootCmd is the whole command tree: the root command and its
// subcommands.
func newRootCmd(ctx context.Context, p procIO, sigs *signals) *cobra.Command {
	cmd := newRootOnlyCmd(ctx, p, sigs)
	addSubcommands(cmd)
	return cmd
}

// newRootOnlyCmd is the root command with its flags and no subcommands.
func newRootOnlyCmd(ctx context.Context, p procIO, sigs *signals) *cobra.Command {
	var o options
	cmd := &cobra.Command{
		Use:   "cadre [flags] [prompt]",
		Short: "Run LLM agents that delegate work to sub-agents",
		Long: `cadre runs an LLM agent in the current directory with tools to read, search
and change files and run commands, and lets it hand work to sub-agents.

Interactive use: cadre (in a terminal, with no prompt) opens the terminal UI.

Headless use: cadre -p "fix the failing test" (or pipe the prompt on stdin;
with both, the prompt comes first and stdin follows it).

Driven by a program: --input-format stream-json --output-format stream-json
speaks the protocol of the Claude Agent SDKs on stdin and stdout.

Exit codes: 0 success, 1 the run ended in error, 2 usage or configuration
error (including a missing API key), 130 interrupted (SIGINT), 143
terminated (SIGTERM).`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          cobra.MaximumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.sdk.noEffect(p.stderr)                 // one line per SDK flag cadre does not act on (sdkflags.go)
			ctx, flush := startTelemetry(ctx, p, &o) // telemetry.go: OTEL_* variables, TRACEPARENT
			defer flush()
			if wantsUI(p, &o, args) {
				return runUI(ctx, p, &o)
			}
			return runRoot(ctx, p, sigs, &o, args)
		},
	}
	cmd.SetVersionTemplate("cadre {{.Version}}\n")
	f := cmd.Flags()
	// Without -p and a prompt, a terminal opens the UI; anything else
	// runs headless, so -p is optional for scripts.
	f.BoolVarP(&o.print, "print", "p", false, "print the answer and exit (headless mode; the prompt is the argument and/or stdin)")
	f.StringVar(&o.outputFormat, "output-format", "text", "output format with --print: text, json or stream-json")
	f.StringVar(&o.inputFormat, "input-format", "text", "input format: text, or stream-json (user messages and control requests on stdin, one JSON per line; needs --output-format stream-json)")
	f.StringVar(&o.model, "model", "", "model alias (sonnet, opus, haiku) or provider model id")
	f.StringVar(&o.fallbackModel, "fallback-model", "", "model to use when the main model is overloaded (alias or id)")
	f.IntVar(&o.maxTurns, "max-turns", 0, "stop after this many model turns (0: no limit)")
	f.Float64Var(&o.maxBudgetUSD, "max-budget-usd", 0, "stop the run once its cost reaches this many US dollars (list prices; models without a known price count as free; 0: no limit)")
	f.Int64Var(&o.maxThinkingTokens, "max-thinking-tokens", 0, "turn on extended thinking with this token budget per answer")
	f.StringVar(&o.systemPrompt, "system-prompt", "", "replace the default system prompt")
	f.StringVar(&o.systemPromptFile, "system-prompt-file", "", "replace the default system prompt with this file's content")
	f.StringVar(&o.appendSystemPrompt, "append-system-prompt", "", "text added to the end of the system prompt")
	f.StringVar(&o.appendSystemPromptFile, "append-system-prompt-file", "", "a file whose content is added to the end of the system prompt")
	f.StringArrayVar(&o.addDirs, "add-dir", nil, "further working directory the agent may use (repeatable)")
	f.StringVar(&o.settingsFile, "settings", "", "settings to load on top of the user and project settings: a JSON file, or inline JSON")
	f.BoolVar(&o.verbose, "verbose", false, "show tool calls and sub-agents on stderr (text output)")
	f.StringVarP(&o.debug, "debug", "d", "", "write a line per event to stderr (optional filter: api, tools, tasks, hooks)")
	f.Lookup("debug").NoOptDefVal = "all"
	f.StringVar(&o.permissionMode, "permission-mode", "", "permission mode: default, acceptEdits, plan, dontAsk, bypassPermissions")
	f.StringVar(&o.permissionPromptTool, "permission-prompt-tool", "", `who answers permission prompts: "stdio" (the program driving --input-format stream-json) or an MCP tool, mcp__<server>__<tool>, of a configured server`)
	f.StringArrayVar(&o.allowedTools, "allowedTools", nil, `rules that allow tools without asking, comma- or space-separated, e.g. "Bash(git diff:*) Read"`)
	f.StringArrayVar(&o.allowedToolsDashed, "allowed-tools", nil, "same as --allowedTools")
	f.StringArrayVar(&o.disallowedTools, "disallowedTools", nil, `rules that deny tools, comma- or space-separated, e.g. "Bash(rm:*) Write"`)
	f.StringArrayVar(&o.disallowedToolsDashed, "disallowed-tools", nil, "same as --disallowedTools")
	f.BoolVar(&o.skipPermissions, "dangerously-skip-permissions", false, "run every tool call without asking (bypassPermissions); deny rules still hold")
	f.StringVar(&o.agents, "agents", "", "agent definitions as a JSON object, or a path to a JSON file")
	o.mcp.register(f)
	f.StringVar(&o.sessionID, "session-id", "", "use this session id instead of a new one")
	f.BoolVarP(&o.continueLast, "continue", "c", false, "continue the most recent session of this directory")
	f.StringVarP(&o.resume, "resume", "r", "", "resume the session with this id")
	f.BoolVar(&o.noTranscript, "no-transcript", false, "do not write a transcript")
	f.BoolVar(&o.noTranscript, "no-session-persistence", false, "same as --no-transcript")
	f.BoolVar(&o.includePartial, "include-partial-messages", false, "with stream-json output, also write the answer as it streams (stream_event lines)")
	f.BoolVar(&o.includeHookEvents, "include-hook-events", false, "with stream-json output, also write every hook run (hook_started and hook_response lines; SessionStart's are always written)")
	f.BoolVar(&o.replayUserMessages, "replay-user-messages", false, "with stream-json input and output, echo each user message back")
	f.BoolVar(&o.ui.noAltScreen, "no-alt-screen", false, "terminal UI: draw below the prompt and keep the conversation in the terminal's scrollback")
	f.BoolVar(&o.ui.mouse, "mouse", false, "terminal UI: scroll with the wheel and click agents in the tree")
	f.BoolVar(&o.trustProject, "trust-project", false, "trust this workspace for this run: its settings may widen what cadre does (see cadre trust)")
	f.BoolVar(&o.remote, "remote", false, "run every sub-agent on a remote worker, in the background (settings: remote.temporal; see docs/remote.md)")
	f.BoolVar(&o.sandbox, "sandbox", false, "run every agent's Bash commands in the bubblewrap sandbox: writes only in the working directories, denied paths masked (settings: sandbox.*)")
	// The Agent SDK passes --await-initialize when its initialize request
	// carries settings the session needs (its in-process MCP servers):
	// cadre always builds an SDK session from the initialize request that
	// comes first, so the flag asks for what is done anyway.
	var awaitInit bool
	f.BoolVar(&awaitInit, "await-initialize", false, "with stream-json input, build the session from the program's initialize request (always done)")
	_ = f.MarkHidden("await-initialize")
	o.sdk.register(f)
	f.SetInterspersed(true)
	return cmd
}

// maxPromptBytes caps a prompt read from stdin; a larger one is an error,
// never cut short.
const maxPromptBytes = 16 << 20

// stdinWait is how long a prompt argument waits for piped input to start,
// so a stdin that is open but never written (a CI step, a parent process
// holding the pipe) does not hang the run.
const stdinWait = 3 * time.Second

// readPrompt returns the prompt: the argument, stdin, or both (the
// argument, a newline, then stdin), as Claude Code combines them.
func readPrompt(p procIO, args []string) (string, error) {
	arg := ""
	if len(args) == 1 {
		arg = args[0]
	}
	if isCharDevice(p.stdin) || p.stdin == nil {
		if strings.TrimSpace(arg) == "" {
			return "", &exitError{ExitUsage, errors.New("no prompt: pass one as an argument or on stdin (the terminal UI needs a terminal on stdout too)")}
		}
		return arg, nil
	}
	in, err := readStdin(p.stdin, strings.TrimSpace(arg) != "")
	if err != nil {
		return "", err
	}
	switch {
	case strings.TrimSpace(arg) != "" && strings.TrimSpace(in) != "":
		return arg + "\n" + in, nil
	case strings.TrimSpace(arg) != "":
		return arg, nil
	case strings.TrimSpace(in) != "":
		return in, nil
	}
	return "", &exitError{ExitUsage, errors.New("no prompt: the argument and stdin are empty")}
}

// isCharDevice reports whether r is a terminal or another character
// device such as /dev/null, which holds no prompt.
func isCharDevice(r io.Reader) bool {
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// readStdin reads the piped prompt, up to the cap. With a prompt argument
// it waits at most stdinWait for the first byte.
func readStdin(r io.Reader, haveArg bool) (string, error) {
	first := make(chan error, 1) // the first byte's arrival, or why none comes
	br := bufio.NewReaderSize(r, 64<<10)
	go func() {
		_, err := br.Peek(1)
		first <- err
	}()
	if haveArg {
		select {
		case err := <-first:
			if err != nil {
				return "", nil
			}
		case <-time.After(stdinWait):
			// Nothing is coming; the peeking goroutine ends with the
			// process (stdin is never read again).
			return "", nil
		}
	} else if err := <-first; err != nil {
		return "", nil
	}
	b, err := io.ReadAll(io.LimitReader(br, maxPromptBytes+1))
	if err != nil {
		return "", &exitError{ExitUsage, fmt.Errorf("read prompt from stdin: %w", err)}
	}
	if len(b) > maxPromptBytes {
		return "", &exitError{ExitUsage, fmt.Errorf("the prompt on stdin is larger than %d MiB; cadre does not cut it short: pass a smaller prompt, or put the text in a file and ask the agent to read it", maxPromptBytes>>20)}
	}
	return string(b), nil
}

// prepare checks and completes the flags before anything runs.
func prepare(o *options) error {
	if err := checkFormat(o.outputFormat); err != nil {
		return err
	}
	if o.maxTurns < 0 {
		return fmt.Errorf("invalid --max-turns %d: must be 0 (no limit) or more", o.maxTurns)
	}
	if o.maxBudgetUSD < 0 {
		return fmt.Errorf("invalid --max-budget-usd %v: must be 0 (no limit) or more", o.maxBudgetUSD)
	}
	if o.maxThinkingTokens < 0 {
		return fmt.Errorf("invalid --max-thinking-tokens %d", o.maxThinkingTokens)
	}
	switch o.inputFormat {
	case "text", "":
	case "stream-json":
		if o.outputFormat != "stream-json" {
			return errors.New("--input-format stream-json needs --output-format stream-json")
		}
	default:
		return fmt.Errorf("invalid --input-format %q: valid values are text, stream-json", o.inputFormat)
	}
	switch o.permissionPromptTool {
	case "":
	case "stdio":
		if o.inputFormat != "stream-json" {
			return errors.New("--permission-prompt-tool stdio needs --input-format stream-json (the program on stdin answers the prompts)")
		}
	default:
		if !tool.IsMCP(o.permissionPromptTool) {
			return fmt.Errorf("invalid --permission-prompt-tool %q: want stdio (with --input-format stream-json) or an MCP tool, mcp__<server>__<tool>", o.permissionPromptTool)
		}
	}
	if o.continueLast && o.resume != "" {
		return errors.New("--continue and --resume cannot be used together")
	}
	if (o.continueLast || o.resume != "") && o.sessionID != "" && !o.sdk.forkSession {
		return errors.New("--session-id cannot be used with --continue or --resume (except with --fork-session)")
	}
	if err := o.sdk.check(); err != nil {
		return err
	}
	o.allowedTools = append(o.allowedTools, o.allowedToolsDashed...)
	o.disallowedTools = append(o.disallowedTools, o.disallowedToolsDashed...)
	var err error
	if o.systemPrompt, err = promptFlag("--system-prompt", o.systemPrompt, o.systemPromptFile); err != nil {
		return err
	}
	if o.appendSystemPrompt, err = promptFlag("--append-system-prompt", o.appendSystemPrompt, o.appendSystemPromptFile); err != nil {
		return err
	}
	if v := strings.TrimSpace(o.settingsFile); strings.HasPrefix(v, "{") {
		o.settingsJSON, o.settingsFile = v, ""
	}
	return nil
}

// promptFlag returns the text of a prompt flag given inline or as a file.
func promptFlag(name, inline, file string) (string, error) {
	if file == "" {
		return inline, nil
	}
	if inline != "" {
		return "", fmt.Errorf("%s and %s-file cannot be used together", name, name)
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return "", fmt.Errorf("%s-file: %w", name, err)
	}
	return string(b), nil
}

func runRoot(ctx context.Context, p procIO, sigs *signals, o *options, args []string) error {
	if err := prepare(o); err != nil {
		return &exitError{ExitUsage, err}
	}
	out, closeDebug, err := o.sdk.debugOutput(o, p.stderr)
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	defer closeDebug()
	o.debugOut = out
	if o.inputFormat == "stream-json" {
		if len(args) > 0 {
			return &exitError{ExitUsage, errors.New("--input-format stream-json takes the prompts on stdin, not as an argument")}
		}
		return runSDK(ctx, p, sigs, o)
	}
	prompt, err := readPrompt(p, args)
	if err != nil {
		return err
	}
	return runPrint(ctx, p, sigs, o, prompt)
}

// build configures a Runtime from the flags, settings and environment.
func build(ctx context.Context, p procIO, o *options) (*cadre.Runtime, cadre.Config, error) {
	cfg, err := configure(ctx, p, o)
	if err != nil {
		return nil, cfg, &exitError{ExitUsage, err}
	}
	if err := checkNewSession(o.sessionID, cfg); err != nil {
		return nil, cfg, &exitError{ExitUsage, err}
	}
	if err := applyFlags(p, o, &cfg); err != nil {
		return nil, cfg, &exitError{ExitUsage, err}
	}
	rt, err := cadre.New(cfg)
	if err != nil {
		return nil, cfg, &exitError{ExitUsage, err}
	}
	warnSandbox(p.stderr, rt) // sandbox.go (issue 9)
	return rt, cfg, nil
}

// applyFlags applies the flags configure does not know of.
func applyFlags(p procIO, o *options, cfg *cadre.Config) error {
	// --agent first (sdkflags.go): it may set the model the fallback is
	// checked against.
	if err := o.sdk.applyAgent(p.stderr, o, cfg); err != nil {
		return err
	}
	if o.maxThinkingTokens > 0 {
		cfg.Thinking = &llm.Thinking{BudgetTokens: o.maxThinkingTokens}
	}
	if o.fallbackModel != "" {
		id := o.fallbackModel
		if cfg.ResolveModel != nil {
			if r, ok := cfg.ResolveModel(id); ok {
				id = r
			}
		}
		if id == cfg.ModelID {
			return fmt.Errorf("--fallback-model %s is the main model", o.fallbackModel)
		}
		cfg.Model = llm.WithFallback(cfg.Model, cfg.ModelID, id)
	}
	if tool.IsMCP(o.permissionPromptTool) && cfg.Permissions != nil {
		// An MCP tool answers the prompts (cadre.Permissions.PromptTool).
		perms := *cfg.Permissions
		perms.PromptTool = o.permissionPromptTool
		cfg.Permissions = &perms
	}
	if err := o.sdk.apply(p, cfg); err != nil { // sdkflags.go
		return err
	}
	if err := resumeSession(p, o, cfg); err != nil {
		return err
	}
	return o.sdk.fork(o, cfg)
}

// debugWriter is where the --debug lines go.
func (o *options) debugWriter(p procIO) io.Writer {
	if o.debugOut != nil {
		return o.debugOut
	}
	return p.stderr
}

// runInfoOf is what init reports beyond the runtime's Init.
func runInfoOf(p procIO, cfg cadre.Config) runInfo {
	info := runInfo{AddDirs: cfg.AddDirs, PermissionMode: permission.ModeDefault, APIKeySource: "none"} // nil Permissions: default mode (issue 9)
	if cfg.Permissions != nil {
		info.PermissionMode = cfg.Permissions.Mode
		if info.PermissionMode == "" {
			info.PermissionMode = permission.ModeDefault
		}
	}
	switch cfg.Model.(type) {
	case *openai.Model:
		info.Provider = string(config.OpenAI)
		if p.getenv("OPENAI_API_KEY") != "" {
			info.APIKeySource = "OPENAI_API_KEY"
		}
	default:
		info.Provider = string(config.Anthropic)
		if p.getenv("ANTHROPIC_API_KEY") != "" {
			info.APIKeySource = "ANTHROPIC_API_KEY"
		}
	}
	for _, d := range cfg.Agents {
		info.Agents = append(info.Agents, d.Name)
	}
	if cfg.Skills != nil {
		for _, sk := range cfg.Skills.All() {
			info.Skills = append(info.Skills, sk.Name)
		}
	}
	if cfg.Agents == nil {
		for _, d := range agentdef.Builtins() {
			info.Agents = append(info.Agents, d.Name)
		}
	}
	return info
}

func runPrint(ctx context.Context, p procIO, sigs *signals, o *options, prompt string) error {
	rt, cfg, err := build(ctx, p, o)
	if err != nil {
		return err
	}
	defer closeRuntime(p, rt)
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	tl := newTally(nil, cfg.Prices)
	tl.taskList = rt.Tasks
	pr, err := newPrinter(o.outputFormat, printerConfig{out: writerLines{p.stdout}, errOut: p.stderr, verbose: o.verbose,
		partial: o.includePartial, info: runInfoOf(p, cfg), tally: tl, hookEvents: o.includeHookEvents})
	if err != nil {
		return &exitError{ExitUsage, err}
	}
	if o.debug != "" {
		pr = &debugPrinter{next: pr, out: o.debugWriter(p), filter: o.debug}
	}
	pr = &warningPrinter{next: pr, out: p.stderr}
	code, err := drive(ctx, cancel, sigs, rt, prompt, pr, tl, o.maxBudgetUSD)
	if code == ExitOK && err == nil {
		return nil
	}
	return &exitError{code, err}
}

// closeRuntime ends rt's session; a failure to stop what it started is
// reported on stderr and does not change how the run ended.
func closeRuntime(p procIO, rt *cadre.Runtime) {
	if err := rt.Close(); err != nil {
		fmt.Fprintf(p.stderr, "cadre: close the session: %s\n", trimPrefix(err.Error()))
	}
}

// errBudget ends a run whose cost reached --max-budget-usd.
var errBudget = errors.New("the run reached its --max-budget-usd")

// drive runs one prompt through rt and writes it with pr, and then what
// background tasks report until none runs. It returns the exit code, and
// an error only when the output could not be written.
func drive(ctx context.Context, cancel context.CancelCauseFunc, sigs *signals, rt *cadre.Runtime, prompt string, pr printer, tl *tally, budget float64) (int, error) {
	return driveStream(ctx, cancel, sigs, rt, rt.Run(ctx, prompt), true, pr, tl, budget)
}

// driveStream writes one turn's stream with pr; with waitTasks it goes on
// with the main agent's turns on its background tasks' notifications
// until none runs (a print run), without it the turn's result is written
// when the turn ends (an SDK session runs the notifications later).
func driveStream(ctx context.Context, cancel context.CancelCauseFunc, sigs *signals, rt *cadre.Runtime, stream iter.Seq2[run.Event, error],
	waitTasks bool, pr printer, tl *tally, budget float64) (int, error) {
	var last *run.Result
	// The result is held back until the stream ends: a failed run yields
	// its result (with every number counted) and then its error, and the
	// result line says why it failed.
	var held *run.Event
	// A headless run does not end while background tasks run: after the
	// turn, the main agent runs again on each batch of notifications
	// (S-7.3), and the last turn's result is the run's.
	// Each turn's result lists the calls denied while it ran (a
	// background agent's among them); the run's result lists them all.
	var denials []permission.Denial
	// written is the result already written: stream-json writes each
	// turn's result when the turn ends and more turns follow; text and
	// json write the run's last only.
	var written *run.Result
	every := writesEveryResult(pr)
	for round := 0; ; round++ {
		prev := last
		var live *cadre.Runtime // a print run reports the tasks a failure leaves live (endtasks.go)
		if waitTasks {
			live = rt
		}
		if round > 0 {
			tl.notificationTurn()
		}
		answered, failed, code, err := driveTurn(ctx, sigs, stream, pr, tl, budget, cancel, &last, &held, live)
		if last != nil && last != prev {
			denials = append(denials, last.PermissionDenials...)
		}
		if failed {
			return code, err
		}
		if !waitTasks || !answered || last == nil || last.IsError || (rt.RunningTasks() == 0 && !rt.PendingNotifications()) {
			break
		}
		// More turns follow: this turn's result is written now (each
		// result lists the run's denials so far).
		if every {
			if err := pr.event(withDenials(*held, denials)); err != nil {
				return ExitFailed, fmt.Errorf("write output: %w", err)
			}
		} else {
			tl.skipResult()
		}
		written, held = last, nil
		stream = rt.RunNotifications(ctx)
	}
	if last == nil {
		return ExitFailed, errors.New("the run ended without a result")
	}
	if last == written {
		// The last turn's result is out; the wait after it ran no turn.
		return ExitOK, nil
	}
	if waitTasks && last.IsError && rt.RunningTasks() > 0 {
		// The run failed with tasks live: each is stopped and reported
		// before the result (endtasks.go).
		res, err := endTasks(ctx, rt, pr, *last)
		if err != nil {
			return ExitFailed, err
		}
		last = &res
		final := *held
		final.Result = last
		held = &final
	}
	final := withDenials(*held, denials)
	held = &final
	if err := pr.event(*held); err != nil {
		return ExitFailed, fmt.Errorf("write output: %w", err)
	}
	if last.IsError {
		return ExitFailed, nil
	}
	return ExitOK, nil
}

// driveTurn writes one turn's stream (the first, or one run for
// notifications) and holds its result back; it reports whether the turn
// yielded a result, and whether it failed (then the run ends with code
// and err). Each turn starts with its init, as Claude Code's do.
func driveTurn(ctx context.Context, sigs *signals, stream iter.Seq2[run.Event, error], pr printer, tl *tally, budget float64,
	cancel context.CancelCauseFunc, last **run.Result, held **run.Event, live *cadre.Runtime) (answered, failed bool, code int, err error) {
	for ev, err := range stream {
		if err != nil {
			f := failure{msg: trimPrefix(err.Error()), subtype: run.ErrorDuringExecution}
			if *held != nil {
				f.result = (*held).Result
			}
			code := ExitFailed
			switch {
			case errors.Is(context.Cause(ctx), errBudget):
				f = failure{msg: fmt.Sprintf("Stopped: the run cost $%.4f, reaching --max-budget-usd $%g.", tl.cost(), budget), subtype: run.ErrorMaxBudget}
			case errors.Is(context.Cause(ctx), errInterrupted):
				// The program interrupted the turn; the session goes on.
				f.msg = "interrupted"
				if n, ok := basePrinter(pr).(interruptNoter); ok {
					if err := n.interrupted(); err != nil {
						return answered, true, ExitFailed, err
					}
				}
			case ctx.Err() != nil:
				code, f.msg = sigs.exitCode()
			default:
				var apiErr *llm.APIError
				if errors.As(err, &apiErr) {
					f.apiStatus = apiErr.Status
				}
			}
			if live != nil && ctx.Err() == nil && f.result != nil && live.RunningTasks() > 0 {
				// The run ends here: its live tasks are stopped and
				// reported before its result (endtasks.go).
				res, err := endTasks(ctx, live, pr, *f.result)
				if err != nil {
					return answered, true, ExitFailed, err
				}
				f.result = &res
			}
			if perr := pr.fail(f); perr != nil && code == ExitFailed {
				return answered, true, code, perr
			}
			return answered, true, code, nil
		}
		if ev.Type == run.EventResult {
			*last, *held, answered = ev.Result, &ev, true
			continue
		}
		if err := pr.event(ev); err != nil {
			return answered, true, ExitFailed, fmt.Errorf("write output: %w", err)
		}
		if budget > 0 && ev.Type == run.EventAssistant && tl.cost() >= budget {
			cancel(errBudget)
		}
	}
	return answered, false, ExitOK, nil
}

// withDenials is a result event whose result lists denials, the run's
// so far, when they are more than its turn's.
func withDenials(ev run.Event, denials []permission.Denial) run.Event {
	if ev.Result == nil || len(denials) <= len(ev.Result.PermissionDenials) {
		return ev
	}
	res := *ev.Result
	res.PermissionDenials = denials
	ev.Result = &res
	return ev
}

// everyResulter is a printer that writes the result of every turn of a
// headless run (stream-json), not only the last.
type everyResulter interface {
	everyResult()
}

// writesEveryResult reports whether pr writes every turn's result.
func writesEveryResult(pr printer) bool {
	_, ok := basePrinter(pr).(everyResulter)
	return ok
}

// checkNewSession refuses a --session-id that is not a UUID (it names
// files) or that already has a transcript here: --session-id starts a
// session, and appending a second run to the first's would mix them.
func checkNewSession(id string, cfg cadre.Config) error {
	if id == "" {
		return nil
	}
	if err := transcript.ValidateSessionID(id); err != nil {
		return fmt.Errorf("--session-id: %w", err)
	}
	if cfg.NoTranscript {
		return nil
	}
	if path, exists, err := transcript.SessionExists(cfg.StateDir, cfg.Cwd, id); err != nil {
		return err
	} else if exists {
		return fmt.Errorf("--session-id: session %s already exists (%s); --session-id starts a new session, so pass an id not used before", id, path)
	}
	return nil
}
