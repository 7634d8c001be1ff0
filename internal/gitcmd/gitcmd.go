// Package gitcmd starts cadre's own git processes so that the repository
// they run in cannot make them run code (issue 23, S-10.4).
//
// A repository's configuration can name programs git runs on its own:
// core.fsmonitor on every status, filter drivers on every checkout and
// status, hooks on commits, merges and checkouts, core.sshCommand and
// credential helpers on fetches, merge and diff drivers, GPG programs, and
// so on. cadre runs git in repositories it does not trust (the git
// snapshot is taken before any trust decision), and inside the sandbox a
// command may be able to write a repository's files, so every git process
// cadre starts goes through Command:
//
//   - hooks, fsmonitor, pager, editor, signing, automatic gc and submodule
//     recursion are switched off with -c overrides for every invocation;
//   - every key of the repository's own configuration (local and worktree
//     scopes, includes too) that names a program — filter, diff and merge
//     drivers, ssh command, askpass, credential helpers, upload-pack and
//     receive-pack of remotes, proxies, GPG programs, alternate refs — is
//     overridden with a value that runs nothing. The user's own (global
//     and system) settings are kept: they are not the repository's;
//   - the ext:: transport is refused, and the git:// one too when the
//     repository names a proxy command;
//   - the environment loses the variables that would point git at another
//     repository, and gets no pager, no editor and no terminal prompt.
package gitcmd

import (
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// fixed are the overrides every invocation gets: they switch off what runs
// code whatever scope set it, and lose nothing cadre's own git needs.
var fixed = []Override{
	{"core.fsmonitor", "false"},
	{"core.hooksPath", "/dev/null"},
	{"core.pager", "cat"},
	{"core.editor", ":"},
	{"sequence.editor", ":"},
	{"protocol.ext.allow", "never"},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"log.showSignature", "false"},
	{"merge.verifySignatures", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
	{"submodule.recurse", "false"},
	{"fetch.recurseSubmodules", "false"},
}

// Override is one configuration setting given to git on top of the files
// ones.
type Override struct{ Key, Value string }

// program is one kind of configuration key that names a program, and the
// value that makes git run nothing (or the plain default) instead.
type program struct {
	key     *regexp.Regexp // the lower-cased key
	neutral string
}

// programs are git's configuration keys (git 2.39, git-config(1)) whose
// value is a command git runs, other than the ones in fixed. Keys are
// matched lower-cased except for the subsection (driver and remote names
// keep their case, so the override repeats the key as git printed it).
// The table is compiled on first use, not at package init, so that a
// cadre start that runs no git pays nothing for it.
var programs = sync.OnceValue(func() []program {
	return []program{
		{regexp.MustCompile(`^core\.sshcommand$`), "ssh"},
		{regexp.MustCompile(`^core\.askpass$`), ""},
		{regexp.MustCompile(`^core\.alternaterefscommand$`), ""},
		{regexp.MustCompile(`^core\.gitproxy$`), "none"},
		{regexp.MustCompile(`^credential\.(.+\.)?helper$`), ""},
		{regexp.MustCompile(`^diff\.external$`), ""},
		{regexp.MustCompile(`^diff\..+\.(command|textconv)$`), ""},
		{regexp.MustCompile(`^filter\..+\.(clean|smudge|process)$`), ""},
		{regexp.MustCompile(`^filter\..+\.required$`), "false"},
		// git's own three-way text merge, which is what a file without a
		// merge driver gets.
		{regexp.MustCompile(`^merge\..+\.driver$`), "git merge-file --marker-size=%L %A %O %B"},
		{regexp.MustCompile(`^gpg\.(.+\.)?program$`), ""},
		{regexp.MustCompile(`^gpg\.ssh\.defaultkeycommand$`), ""},
		{regexp.MustCompile(`^pager\..+$`), "cat"},
		{regexp.MustCompile(`^(difftool|mergetool|browser|man)\..+\.(cmd|path)$`), ""},
		{regexp.MustCompile(`^web\.browser$`), ""},
		{regexp.MustCompile(`^submodule\..+\.update$`), "none"},
		{regexp.MustCompile(`^uploadpack\.packobjectshook$`), ""},
		{regexp.MustCompile(`^sendemail\.(.+\.)?(tocmd|cccmd|sendmailcmd)$`), ""},
	}
})

// packs are the keys naming the program a fetch or push runs on the
// other side (for local and ssh remotes); see pinPacks.
var packs = sync.OnceValue(func() *regexp.Regexp {
	return regexp.MustCompile(`^remote\..+\.(uploadpack|receivepack)$`)
})

// repoEnv are the variables that would point git at another repository
// than the directory it runs in (set when cadre itself runs from a git
// hook, for example), or run a program of their own choosing on a diff;
// they are removed from git's environment.
var repoEnv = []string{
	"GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
	"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
	"GIT_PREFIX", "GIT_NAMESPACE", "GIT_CEILING_DIRECTORIES",
	"GIT_EXTERNAL_DIFF", "GIT_PAGER", "PAGER", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR",
	"GIT_TERMINAL_PROMPT",
}

// Environ returns environ without the variables that select another
// repository or run a pager, editor or external diff, plus the ones that
// keep git from prompting or paging, plus extra (which may set anything,
// LC_ALL for example).
func Environ(environ []string, extra ...string) []string {
	env := make([]string, 0, len(environ)+len(extra)+4)
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if slices.Contains(repoEnv, name) {
			continue
		}
		env = append(env, kv)
	}
	env = append(env, "GIT_TERMINAL_PROMPT=0", "GIT_PAGER=cat", "GIT_EDITOR=:", "GIT_SEQUENCE_EDITOR=:")
	return append(env, extra...)
}

// Runner starts git processes. The zero value runs "git" from PATH with
// no environment; build Env with Environ.
type Runner struct {
	// Bin is the git binary; "" is "git" from PATH.
	Bin string
	// Env is git's whole environment (see Environ).
	Env []string
}

func (r Runner) bin() string {
	if r.Bin == "" {
		return "git"
	}
	return r.Bin
}

// Command returns git with args, to run in dir, with the repository's
// program-running settings overridden (see the package comment). It runs
// git once first to read the configuration in force in dir; an error
// doing so is returned (the command would fail the same way).
func (r Runner) Command(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	over, err := r.overrides(ctx, dir)
	if err != nil {
		return nil, err
	}
	args, err = pinPacks(over, args)
	if err != nil {
		return nil, fmt.Errorf("in %s: %w", dir, err)
	}
	return r.command(ctx, dir, over, args), nil
}

// Commands is Command for several invocations in one directory: the
// configuration in force there is read once for all of them (one git
// process less per extra command; the git snapshot of a session start
// runs status and log).
func (r Runner) Commands(ctx context.Context, dir string, args ...[]string) ([]*exec.Cmd, error) {
	over, err := r.overrides(ctx, dir)
	if err != nil {
		return nil, err
	}
	cmds := make([]*exec.Cmd, len(args))
	for i, a := range args {
		a, err := pinPacks(over, a)
		if err != nil {
			return nil, fmt.Errorf("in %s: %w", dir, err)
		}
		cmds[i] = r.command(ctx, dir, over, a)
	}
	return cmds, nil
}

// pinPacks handles remote.<name>.uploadpack and receivepack, which an
// override cannot undo (git keeps the first value it reads): when the
// repository sets one, fetch, ls-remote and pull get --upload-pack and
// push --receive-pack, which take precedence; other commands that would
// contact a remote are refused.
func pinPacks(over []Override, args []string) ([]string, error) {
	var set string
	for _, o := range over {
		if o.Key == packsKey {
			set = o.Value
		}
	}
	if set == "" || len(args) == 0 {
		return args, nil
	}
	var flag string
	switch args[0] {
	case "fetch", "ls-remote", "pull":
		flag = "--upload-pack=git-upload-pack"
	case "push":
		flag = "--receive-pack=git-receive-pack"
	case "remote", "clone", "submodule", "archive":
		if len(args) > 1 || args[0] != "remote" {
			return nil, fmt.Errorf("git %s: refused, the repository sets %s (a program git would run)", args[0], set)
		}
		return args, nil
	default:
		return args, nil
	}
	return append([]string{args[0], flag}, args[1:]...), nil
}

// packsKey is the pseudo-override that records (in its value) a
// repository's remote.<name>.uploadpack or receivepack; it is not given
// to git.
const packsKey = "\x00packs"

// CommandRunningHooks is Command for the one invocation that is meant to
// run a repository hook (`git hook run`): it keeps the repository's
// core.hooksPath. Use it only in a workspace the user trusts.
func (r Runner) CommandRunningHooks(ctx context.Context, dir string, args ...string) (*exec.Cmd, error) {
	over, err := r.overrides(ctx, dir)
	if err != nil {
		return nil, err
	}
	over = slices.DeleteFunc(over, func(o Override) bool { return o.Key == "core.hooksPath" })
	return r.command(ctx, dir, over, args), nil
}

func (r Runner) command(ctx context.Context, dir string, over []Override, args []string) *exec.Cmd {
	sub := slices.IndexFunc(args, func(a string) bool { return !strings.HasPrefix(a, "-") })
	if sub >= 0 && args[sub] == "status" && !slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, "--ignore-submodules") }) {
		// Looking into a submodule's files runs git there, with the
		// submodule's own configuration (.git/modules/<name>/config),
		// which the overrides computed here do not cover: status reports
		// a submodule's commit, not its files.
		args = slices.Insert(slices.Clone(args), sub+1, "--ignore-submodules=dirty")
	}
	if sub >= 0 && (args[sub] == "diff" || args[sub] == "log" || args[sub] == "show") {
		// No external diff program and no textconv filter, whatever the
		// environment or the attributes name.
		// (Given twice, the flags mean the same.)
		args = slices.Insert(slices.Clone(args), sub+1, "--no-ext-diff", "--no-textconv")
	}
	cmd := exec.CommandContext(ctx, r.bin(), append([]string{"--no-pager"}, args...)...)
	cmd.Dir = dir
	cmd.Env = WithOverrides(r.Env, over)
	return cmd
}

// WithOverrides returns env with the configuration overrides over added
// through GIT_CONFIG_COUNT, GIT_CONFIG_KEY_<n> and GIT_CONFIG_VALUE_<n>
// after any env already has. Unlike `-c key=value`, these cannot be
// misread when a driver or remote name holds a '='.
func WithOverrides(env []string, over []Override) []string {
	n := 0
	out := make([]string, 0, len(env)+2*len(over)+1)
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "GIT_CONFIG_COUNT="); ok {
			if c, err := strconv.Atoi(v); err == nil && c > 0 {
				n = c
			}
			continue
		}
		out = append(out, kv)
	}
	for _, o := range over {
		if o.Key == packsKey {
			continue
		}
		out = append(out, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", n, o.Key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", n, o.Value))
		n++
	}
	return append(out, "GIT_CONFIG_COUNT="+strconv.Itoa(n))
}

// overrides returns the `-c` values (without the -c) that neutralise the
// configuration in force in dir: the fixed ones, then one per key of the
// repository's own scopes that names a program.
func (r Runner) overrides(ctx context.Context, dir string) ([]Override, error) {
	cmd := exec.CommandContext(ctx, r.bin(), "--no-pager", "config", "--list", "--show-scope", "-z")
	cmd.Dir = dir
	cmd.Env = r.Env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return nil, fmt.Errorf("read the git configuration in %s: %w: %s", dir, err, strings.TrimSpace(stderr.String()))
	}
	return neutralise(stdout.String()), nil
}

// neutralise turns the output of `git config --list --show-scope -z` into
// the overrides for it: the fixed ones, then each program-naming key set
// in the local or worktree scope (once) with its neutral value.
func neutralise(list string) []Override {
	over := slices.Clone(fixed)
	seen := map[string]bool{}
	gitProxy := false
	fields := strings.Split(list, "\x00")
	for i := 0; i+1 < len(fields); i += 2 {
		scope, entry := fields[i], fields[i+1]
		if scope != "local" && scope != "worktree" {
			continue
		}
		key, _, _ := strings.Cut(entry, "\n")
		if key == "" || seen[key] {
			continue
		}
		lower := strings.ToLower(key)
		if packs().MatchString(lower) {
			seen[key] = true
			over = append(over, Override{packsKey, key})
			continue
		}
		for _, p := range programs() {
			if p.key.MatchString(lower) {
				seen[key] = true
				over = append(over, Override{key, p.neutral})
				if lower == "core.gitproxy" {
					gitProxy = true
				}
				break
			}
		}
	}
	if gitProxy {
		// core.gitProxy is first-match-wins: an override cannot undo the
		// repository's, so the git:// transport is refused instead.
		over = append(over, Override{"protocol.git.allow", "never"})
	}
	return over
}
