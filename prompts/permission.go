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
		if d.Suggest != "" {
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
