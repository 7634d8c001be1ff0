package prompts

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// The permission system's texts (issue 9): the tool result of a call it
// did not run, and the reasons of its decisions, which that result (and a
// person's prompt) quotes. The finer reasons Bash analysis gives ("`x`
// reads files below the working directory…") are filled into
// PermNeedsApproval.

// PermissionDenial is the tool result of a call the permission system did
// not run.
type PermissionDenial struct {
	// Tool is the tool called.
	Tool string
	// Rule and Source name the deny rule that forbids the call; Rule is
	// "" when no deny rule decided.
	Rule, Source string
	// Reason is the decision's reason; Why, when set, follows it (who
	// could not answer, what the user said).
	Reason, Why string
	// Suggest is an allow rule that would let the call run ("" for none).
	Suggest string
	// Untrusted says the workspace is not trusted, so its settings files
	// are ignored: the suggestion names the user's settings file instead.
	Untrusted bool
	// Times counts the denials of this same request so far.
	Times int
}

// Render returns the text the model reads.
func (d PermissionDenial) Render() string {
	var b strings.Builder
	fmt.Fprintf(&b, "Permission denied: the %s call was not run. ", d.Tool)
	if d.Rule != "" {
		src := d.Source
		if src == "" {
			src = "an unnamed source"
		}
		fmt.Fprintf(&b, "Rule %s from %s forbids it; no allow rule can override a deny rule.", d.Rule, src)
	} else {
		b.WriteString(Sentence(d.Reason))
		if d.Why != "" {
			b.WriteString(" " + d.Why)
		}
		switch {
		case d.Suggest != "" && d.Untrusted:
			fmt.Fprintf(&b, " To allow calls like this, the user can add %q to permissions.allow in their user settings (~/.config/cadre/settings.json) or pass --allowedTools %q (this workspace is not trusted, so its own settings files are ignored).", d.Suggest, d.Suggest)
		case d.Suggest != "":
			fmt.Fprintf(&b, " To allow calls like this, the user can add %q to permissions.allow in .cadre/settings.json or pass --allowedTools %q.", d.Suggest, d.Suggest)
		}
	}
	if d.Times >= 2 {
		fmt.Fprintf(&b, " This same request has now been denied %d times: do not retry it. Stop and report to your caller that you need this permission.", d.Times)
	}
	return b.String()
}

// Sentence capitalises s and ends it with a full stop ("" stays "").
func Sentence(s string) string {
	if s == "" {
		return ""
	}
	r, n := utf8.DecodeRuneInString(s)
	s = string(unicode.ToUpper(r)) + s[n:]
	if !strings.HasSuffix(s, ".") {
		s += "."
	}
	return s
}

// Why a call was denied without a person's answer, and what a person
// said.
const (
	PermDeniedInBackground = "This agent runs in the background, where no one can answer a permission prompt, so the call was denied automatically."
	PermUserDenied         = "The user denied this call."
)

// PermPromptFailed: the prompt could not be shown or answered.
func PermPromptFailed(err error) string {
	return fmt.Sprintf("The permission prompt failed (%v), so the call was denied.", err)
}

// Reasons of decisions (permission.Decision.Reason).
const (
	PermApprovedOnce    = "approved once by the user"
	PermApprovedSession = "approved for this session by the user"
	PermPlanReadOnly    = "plan mode is read-only: no file writes and no Bash commands that are not read-only"
	PermAgentReadOnly   = "this agent is read-only: it may not write files or run Bash commands that are not read-only, whatever the permission mode"
	PermBypassAllows    = "bypassPermissions mode allows every call no deny rule forbids"
	PermAcceptEdits     = "acceptEdits mode runs file edits inside the working directories"
	PermNoRule          = "no rule allows this call"
	// The endings an ask that no one can answer gets.
	PermDontAskDenies = " (dontAsk mode denies what would need approval)"
	PermNoPrompts     = " (no prompts are possible here, so it is denied)"
	// PreToolUse hooks without a reason of their own.
	PermHookDenied  = "denied by a PreToolUse hook"
	PermHookAllowed = "allowed by a PreToolUse hook"
	PermHookAsks    = "a PreToolUse hook asks for confirmation"
)

// PermCaseVariant: a tool name that differs from a tool's only in case.
func PermCaseVariant(name, tool string) string {
	return fmt.Sprintf("tool names are case-sensitive: %q is not the %s tool", name, tool)
}

// PermDeniedByRule: a deny rule decided; note says why it covers the
// call when that is not plain ("" for none).
func PermDeniedByRule(rule, note string) string {
	if note != "" {
		return "denied by rule " + rule + ": " + note
	}
	return "denied by rule " + rule
}

// PermNeedsApproval: the call needs a person's approval, because why.
func PermNeedsApproval(why string) string { return "needs approval: " + why }

// PermAskRule: an ask rule decided.
func PermAskRule(rule string) string { return "rule " + rule + " requires approval" }

// PermAllowedByRule: allow rules decided.
func PermAllowedByRule(rules string) string { return "allowed by rule " + rules }

// PermModeReadOnly: the mode runs read-only calls inside the working
// directories.
func PermModeReadOnly(mode string) string {
	return mode + " mode runs read-only calls inside the working directories"
}

// The details of why a call needs approval (filled into
// PermNeedsApproval) or how a deny rule covers it (PermDeniedByRule).
const (
	PermInputNotObject   = "the tool input is not a JSON object"
	PermGlobClimbs       = "the glob pattern climbs out of its directory with `..` after a wildcard"
	PermNoFilePath       = "the call names no file path"
	PermNoCommand        = "the call has no command"
	PermReadsOutside     = "the command reads a file outside the working directories"
	PermChangesFiles     = "the command changes files"
	PermWritesFiles      = "the command writes files"
	PermNotReadOnly      = "the command is not read-only"
	PermUnknownDirectory = "the command changes to a directory not known in advance, so cadre cannot tell which files it reads or writes"
)

// PermNoRuleFor: no rule allows the tool.
func PermNoRuleFor(tool string) string { return "no rule allows " + tool }

// PermProtectedPath: writes to configuration and git internals.
func PermProtectedPath(path string) string {
	return path + " is protected: changes to .git, .cadre, .claude, .mcp.json, CLAUDE.md, AGENTS.md and settings files always need approval"
}

// PermEditsNeedApproval: the mode does not run file edits.
func PermEditsNeedApproval(mode string) string {
	return "file edits need approval in " + mode + " mode"
}

// PermOutsideDirs: a path outside the working directories.
func PermOutsideDirs(path string) string { return path + " is outside the working directories" }

// PermUncertain: parts of the command only the shell can know.
func PermUncertain(what []string) string {
	return "the command cannot be fully analysed: " + strings.Join(what, "; ")
}

// PermUnparsable: the command could not be split.
func PermUnparsable(err error) string {
	return "the command could not be analysed (" + err.Error() + ")"
}

// PermWritesOutside: a redirection outside the working directories.
func PermWritesOutside(target string) string {
	return fmt.Sprintf("the command writes to %s, outside the working directories", target)
}

// PermCommandLeaves: a simple command that is not allowed; cmd is its
// text.
func PermCommandLeaves(cmd string) string {
	return fmt.Sprintf("`%s` changes to a directory outside the working directories or not known in advance", cmd)
}

// PermCommandReadsOutside: a read-only command reading outside.
func PermCommandReadsOutside(cmd string) string {
	return fmt.Sprintf("`%s` reads outside the working directories", cmd)
}

// PermNoRuleForCommand: no rule allows the command.
func PermNoRuleForCommand(cmd string) string { return fmt.Sprintf("no rule allows `%s`", cmd) }

// PermDynamicWords: a command with words only the shell knows, which a
// deny rule's pattern could match.
func PermDynamicWords(cmd string) string {
	return fmt.Sprintf("`%s` has words only known when the shell runs, and it could be what the rule forbids", cmd)
}

// PermExposure says why a Bash command may get around a deny rule (what
// it may do, the rule at stake, and the ways to run it); opaque adds that
// a Bash rule naming the program allows it.
func PermExposure(what, rule string, opaque bool) string {
	var b strings.Builder
	b.WriteString(what)
	fmt.Fprintf(&b, ", and deny rule %s protects paths it could reach; a command that may get around a deny rule is never run unconfined without approval", rule)
	b.WriteString(" (with the sandbox on — --sandbox, or sandbox.enabled in settings — it would run with the denied paths masked")
	if opaque {
		b.WriteString("; or allow this command with a Bash rule that names it")
	}
	b.WriteString(")")
	return b.String()
}

// What a command may do that gets around a deny rule (PermExposure's
// what); quoted is the command in backticks.
func PermGitUnknownRepo(cmd string) string {
	return fmt.Sprintf("`%s` prints file contents from a repository cadre cannot tell in advance (the command changes directory)", cmd)
}

// PermReadsUnresolved: an input redirection from a file only the shell
// resolves.
func PermReadsUnresolved(file string) string {
	return fmt.Sprintf("the command reads from `%s`, a file cadre cannot resolve before the shell runs", file)
}

// PermWritesUnresolved: an output only the shell resolves.
func PermWritesUnresolved(path string) string {
	return fmt.Sprintf("the command writes to `%s`, a path only known when the shell runs", path)
}

// PermDynamicWord: an argument only the shell knows.
func PermDynamicWord(quoted, word string) string {
	return fmt.Sprintf("%s has `%s`, a word only known when the shell runs, which could name any file", quoted, word)
}

// PermInlineCode: an interpreter given code inline.
func PermInlineCode(quoted, code string) string {
	return fmt.Sprintf("%s runs %s, which can read any file", quoted, code)
}

// PermOpaqueProgram: a program cadre cannot see into; what is "read" or
// "write".
func PermOpaqueProgram(quoted, what string) string {
	return fmt.Sprintf("%s is a program cadre cannot see into: it may %s any file", quoted, what)
}

// PermIndirectPath: a path through /proc or /dev/fd.
func PermIndirectPath(quoted, path string) string {
	return fmt.Sprintf("%s names %s, a path through /proc or /dev/fd that can lead anywhere", quoted, path)
}

// PermNamesPath: the command names a protected path.
func PermNamesPath(quoted, path string) string { return fmt.Sprintf("%s names %s", quoted, path) }

// PermReadsTree: a recursive reader over a tree holding a protected path.
func PermReadsTree(quoted, dir string) string {
	return fmt.Sprintf("%s reads every file under %s", quoted, dir)
}

// PermGitHistory: git printing content from history the sandbox cannot
// mask.
func PermGitHistory(quoted, root, rule string) string {
	return fmt.Sprintf("%s prints file contents from the repository at %s, whose history may hold files deny rule %s protects; the sandbox masks files, not their copies in git history, so this needs approval in every mode", quoted, root, rule)
}

// PermRunsHidden: a Bash command may run a command a deny or ask rule
// names where the rule cannot see it (a shell's input, a wrapper, inline
// code).
func PermRunsHidden(what, rule string) string {
	return fmt.Sprintf("%s: it may run a command that rule %s is about, where cadre cannot check it", what, rule)
}
