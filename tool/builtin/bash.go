package builtin

import (
	"context"
	_ "embed"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/cadre-dev/cadre/tool"
)

//go:embed bash.md
var bashDescription string

type bashInput struct {
	Command         string `json:"command" jsonschema_description:"The command."`
	Timeout         *int64 `json:"timeout,omitempty" jsonschema_description:"Milliseconds (default 120000, max 600000); then it is killed."`
	Description     string `json:"description,omitempty" jsonschema_description:"What it does, in 5-10 words."`
	RunInBackground bool   `json:"run_in_background,omitempty" jsonschema_description:"Return at once with a shell id."`
}

// NewBash returns the Bash tool: run a command with bash, in the agent's
// working directory, with a timeout, or in the background.
func NewBash(cfg Config) tool.Tool {
	cfg = cfg.withDefaults()
	return tool.Func(tool.FuncConfig{Name: NameBash, Subject: tool.BuiltinSubject(NameBash), Description: bashDescription},
		func(ctx context.Context, env *tool.Env, in bashInput) (tool.Output, error) {
			return runBash(ctx, cfg, env, in), nil
		})
}

func runBash(ctx context.Context, cfg Config, env *tool.Env, in bashInput) tool.Output {
	if strings.TrimSpace(in.Command) == "" {
		return tool.Errorf("command is required")
	}
	if strings.ContainsRune(in.Command, 0) {
		return tool.Errorf("command contains a NUL byte")
	}
	timeout := cfg.BashDefaultTimeout
	if in.Timeout != nil {
		ms := *in.Timeout
		if ms <= 0 || ms > cfg.BashMaxTimeout.Milliseconds() {
			return tool.Errorf("timeout must be between 1 and %d milliseconds, got %d", cfg.BashMaxTimeout.Milliseconds(), ms)
		}
		timeout = time.Duration(ms) * time.Millisecond
	}
	dir := ""
	if env != nil {
		dir = env.Cwd
	}
	if dir != "" {
		if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
			return tool.Errorf("the working directory %s does not exist or is not a directory", dir)
		}
	}
	var dirs []string
	var sb Sandbox
	if env != nil {
		dirs, sb = env.Dirs, env.Sandbox
	}
	if in.RunInBackground {
		shells := shellsOf(env)
		if shells == nil {
			return tool.Errorf("background shells are not available here")
		}
		cmd, _, err := shellCommand(cfg, sb, dir, dirs, in.Command)
		if err != nil {
			return tool.Errorf("cannot start background shell: %v", err)
		}
		id, err := shells.start(cmd, in.Command, in.Description, cfg)
		if err != nil {
			return tool.Errorf("cannot start background shell: %v", err)
		}
		return tool.Output{Text: fmt.Sprintf("Started background shell %s. Read its output with BashOutput (bash_id %q); stop it with KillShell (shell_id %q).", id, id, id)}
	}

	if err := ctx.Err(); err != nil {
		return tool.Errorf("command not run: %v", err)
	}
	cmd, explain, err := shellCommand(cfg, sb, dir, dirs, in.Command)
	if err != nil {
		return tool.Errorf("cannot run command: %v", err)
	}
	out := newHeadTail(cfg.BashOutputLimit)
	p, err := startProc(cmd, out)
	if err != nil {
		return tool.Errorf("cannot run command: %v", err)
	}
	timer := time.NewTimer(timeout)
	defer timer.Stop()
	timedOut, cancelled := false, false
	select {
	case <-p.waitDone:
	case <-timer.C:
		timedOut = true
		p.kill(cfg.KillGrace)
	case <-ctx.Done():
		cancelled = true
		p.kill(cfg.KillGrace)
	}
	leftovers := p.drain(cfg.KillGrace)
	code, sig := p.exitStatus()
	return bashResult(env, out.String(), bashEnd{timeout: timeout, timedOut: timedOut, cancelled: cancelled, signal: sig, code: code, leftovers: leftovers}, explain)
}

// bashEnd is how a foreground command ended.
type bashEnd struct {
	timeout             time.Duration
	timedOut, cancelled bool
	signal              string
	code                int
	leftovers           bool
}

// bashResult is the model's view of a finished command: its output, then
// notes on how it ended and on what the sandbox refused (explain, when
// set).
func bashResult(env *tool.Env, output string, end bashEnd, explain func(string) string) tool.Output {
	text := strings.TrimRight(strings.ToValidUTF8(output, "\uFFFD"), "\n")
	var notes []string
	isErr := false
	switch {
	case end.timedOut:
		isErr = true
		notes = append(notes, fmt.Sprintf("Command timed out after %s; it and every process it started were killed.", end.timeout))
	case end.cancelled:
		isErr = true
		notes = append(notes, "Command was interrupted; it and every process it started were killed.")
	case end.signal != "":
		isErr = true
		notes = append(notes, fmt.Sprintf("Command was killed by signal: %s.", end.signal))
	case end.code != 0:
		isErr = true
		notes = append(notes, fmt.Sprintf("Exit code: %d", end.code))
	}
	if explain != nil {
		if n := explain(text); n != "" {
			notes = append(notes, n)
		}
	}
	if end.leftovers && !end.timedOut && !end.cancelled {
		notes = append(notes, "Processes the command left running in the background kept its output open and were killed; use run_in_background for long-running processes.")
	}
	structured := bashResultJSON{Stdout: text, Interrupted: end.cancelled, NoOutputExpected: false}
	if text == "" && len(notes) == 0 {
		text = "(no output)"
	}
	if len(notes) > 0 {
		if text != "" {
			text += "\n\n"
		}
		text += strings.Join(notes, "\n")
	}
	return withResult(env, tool.Output{Text: text, IsError: isErr}, structured)
}

// shellsOf returns the agent's background-shell host, or nil.
func shellsOf(env *tool.Env) *Shells {
	if env == nil {
		return nil
	}
	s, _ := env.Shells.(*Shells)
	return s
}
