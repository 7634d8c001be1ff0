package prompts

import (
	"fmt"
	"strings"
)

// The messages below are what the model reads when an Agent call cannot
// start a sub-agent. Each says what went wrong and what to do instead;
// those about limits say which limit and not to retry (S-5.7).

// AgentOutsideSession: the Agent tool was run outside a cadre session.
func AgentOutsideSession() string { return "The Agent tool can only run inside a cadre session." }

// AgentInputInvalid: the call's input does not fit the schema.
//
// optional are the optional fields this Agent tool offers (its schema's);
// nil lists every optional field the Agent tool can have.
func AgentInputInvalid(err error, optional []string) string {
	if optional == nil {
		optional = []string{"subagent_type", "model", "effort", "cwd", "isolation", "run_in_background"}
	}
	return fmt.Sprintf("Invalid input for Agent: %v. Required: description and prompt; optional: %s.", err, strings.Join(optional, ", "))
}

// AgentNeedsPrompt: the call's prompt is empty.
func AgentNeedsPrompt() string { return "Agent needs a prompt: the complete task for the sub-agent." }

// AgentCwdNotAbsolute: the call's cwd is a relative path.
func AgentCwdNotAbsolute(cwd string) string {
	return fmt.Sprintf("Agent cwd must be an absolute path; got %q.", cwd)
}

// AgentCwdNotDir: the call's cwd is not a directory.
func AgentCwdNotDir(cwd string) string { return fmt.Sprintf("Agent cwd %s is not a directory.", cwd) }

// ForkDisabled: the call asked for the fork path, which is off.
func ForkDisabled(defaultType string, types []string) string {
	return fmt.Sprintf("Forking is not enabled in this session. Omit subagent_type to start a %s agent, or name one of: %s.", defaultType, typeList(types))
}

// UnknownAgentType: no definition has that name.
func UnknownAgentType(typ string, types []string) string {
	return fmt.Sprintf("Unknown agent type %q. Available agent types: %s.", typ, typeList(types))
}

// AgentTypeDenied: a deny rule (rule, from source) forbids starting typ
// (S-3.4).
func AgentTypeDenied(typ, rule, source string) string {
	if source == "" {
		source = "an unnamed source"
	}
	return fmt.Sprintf("Agent type %q is denied by rule %s from %s. Do not retry; pick another agent type or do the work yourself.", typ, rule, source)
}

// AgentTypeNotAllowed: the calling agent's definition limits the types it
// may start (`Agent(a, b)`), and typ is not one of them.
func AgentTypeNotAllowed(typ string, allowed []string) string {
	return fmt.Sprintf("This agent may start only these agent types: %s (its definition's Agent(...) entry). Do not retry with %q.", typeList(allowed), typ)
}

// NoTools: the agent would start with no tools; reasons say why each tool
// was dropped.
func NoTools(agentType string, reasons []string) string {
	if len(reasons) == 0 {
		reasons = []string{"its definition lists no tools"}
	}
	return fmt.Sprintf("Cannot start %s: it would have no tools (%s). Do not retry; use another agent type.", agentType, strings.Join(reasons, "; "))
}

// BadDefinition: the definition at path cannot be applied.
func BadDefinition(agentType string, problem error, path string) string {
	return fmt.Sprintf("Cannot start %s: %v. Fix the definition (%s).", agentType, problem, path)
}

// DepthLimit: the calling agent is at the nesting limit. It is also the
// answer to an Agent call from an agent that was not given the tool for
// that reason.
func DepthLimit(depth, maxDepth int) string {
	return fmt.Sprintf("Cannot start a sub-agent: nesting limit reached (depth %d of %d). Do not retry; do the work yourself with your own tools.", depth, maxDepth)
}

// TotalLimit: the session has started as many sub-agents as it may.
func TotalLimit(maxTotal int) string {
	return fmt.Sprintf("Cannot start a sub-agent: this session has already started the limit of %d sub-agents. Do not retry; finish the work with your own tools.", maxTotal)
}

// SubagentNotStarted: the runtime could not set the agent up.
func SubagentNotStarted(err error) string {
	return fmt.Sprintf("Cannot start the sub-agent: %v", err)
}

// SubagentFailed: the agent started and failed.
func SubagentFailed(agentID, agentType string, err error) string {
	return fmt.Sprintf("The sub-agent %s (%s) failed: %v", agentID, agentType, err)
}

// NarrowedToolRefused: an agent granted a tool only through entries with
// rule content (`tools: Bash(git diff:*)`) called it outside them.
func NarrowedToolRefused(tool string, entries []string) string {
	return fmt.Sprintf("This agent may use %s only as its definition allows: %s. This call is outside that; do not retry it, and report what you could not do.",
		tool, strings.Join(entries, ", "))
}

func typeList(types []string) string {
	if len(types) == 0 {
		return "(none)"
	}
	return strings.Join(types, ", ")
}

// ToolInputTooLarge is the result of a tool call whose streamed input
// passed the limit: the input was dropped as it arrived, and the call did
// not run.
func ToolInputTooLarge(tool string, got, limit int64) string {
	return fmt.Sprintf("The input for %s was too large (%d bytes or more; the limit is %d bytes) and was dropped; the call did not run. "+
		"Call the tool again with a smaller input: split the content over several calls, or write it to a file with smaller edits.",
		tool, got, limit)
}

// SubagentCrashed is the error of a sub-agent whose run panicked: the
// child fails and its parent goes on.
func SubagentCrashed(panicked any) string { return fmt.Sprintf("the sub-agent crashed: %v", panicked) }

// Why a tool was left out of a sub-agent's grant: the receipt's dropped
// tools, and the reasons NoTools gives when none is left.
const (
	DroppedInteractiveOnly = "interactive-only tools are not given to sub-agents"
	DroppedTaskTools       = "the task tools are the main agent's"
	DroppedInBackground    = "not available to agents running in the background"
	DroppedNotInTools      = "not in the definition's tools"
	// DroppedNoMCPServer: the definition names MCP tools and no connected
	// server offers them.
	DroppedNoMCPServer = "its MCP tools: no connected server offers them"
)

// DroppedDisallowed: the definition's disallowedTools entry covers the tool.
func DroppedDisallowed(entry string) string {
	return "in the definition's disallowedTools (" + entry + ")"
}

// DroppedByRule: a permission rule denies the whole tool.
func DroppedByRule(rule string) string { return "denied by rule " + rule }

// DroppedNestingLimit: the Agent tool of a child at the nesting limit.
func DroppedNestingLimit(depth, maxDepth int) string {
	return fmt.Sprintf("nesting limit: depth %d of %d", depth, maxDepth)
}

// BudgetRefused is the Agent tool's result when the calling agent's
// budget has nothing left to reserve for a child (S-15.2).
func BudgetRefused(dimension string) string {
	return fmt.Sprintf("Spawn refused (reason: budget): your budget has no %s left to reserve for a sub-agent. Do not retry this call or spawn other agents; finish the task with what you have and report.", dimension)
}

// BudgetWrapUp tells an agent it has used most of its budget (once, at
// 85 %).
func BudgetWrapUp(used string) string {
	return fmt.Sprintf("<system-reminder>You have used (or reserved for your sub-agents) %s of your budget. Wrap up now: stop starting new work, and give your final answer or report with what you have in the next turn or two.</system-reminder>", used)
}

// BudgetToolSkipped answers a tool call that was not made because the
// agent's budget ran out with the answer that asked for it.
const BudgetToolSkipped = "Not run: the agent's budget is spent."

// BudgetExhausted is the partial report of an agent stopped at its
// budget: its last text and what it was doing.
func BudgetExhausted(what, lastText, doing string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Stopped (status: budget_exhausted): the agent spent its %s budget before finishing. This is a partial report.", what)
	if doing != "" {
		fmt.Fprintf(&b, "\nIt was doing: %s", doing)
	}
	if lastText != "" {
		fmt.Fprintf(&b, "\nIts last text:\n%s", lastText)
	}
	return b.String()
}

// BudgetLine is an agent's spend against its reservation, for reports
// and notifications: "spent usd 0.0123 of 0.05, 3 of 10 turns; returned
// to the parent usd 0.0377, 7 turns". Dimensions not reserved are left
// out of "of"; returned is left out when nothing went back.
func BudgetLine(spentUSD float64, spentTokens int64, spentTurns int, usd float64, tokens int64, turns int, backUSD float64, backTokens int64, backTurns int) string {
	var parts []string
	add := func(spent, limit string, limited bool) {
		if limited {
			parts = append(parts, spent+" of "+limit)
		} else {
			parts = append(parts, spent)
		}
	}
	add(fmt.Sprintf("usd %.4f", spentUSD), fmt.Sprintf("%.4f", usd), usd > 0)
	add(fmt.Sprintf("%d tokens", spentTokens), fmt.Sprint(tokens), tokens > 0)
	add(fmt.Sprintf("%d turns", spentTurns), fmt.Sprint(turns), turns > 0)
	out := "spent " + strings.Join(parts, ", ")
	var back []string
	if backUSD > 0 {
		back = append(back, fmt.Sprintf("usd %.4f", backUSD))
	}
	if backTokens > 0 {
		back = append(back, fmt.Sprintf("%d tokens", backTokens))
	}
	if backTurns > 0 {
		back = append(back, fmt.Sprintf("%d turns", backTurns))
	}
	if len(back) > 0 {
		out += "; returned to the parent " + strings.Join(back, ", ")
	}
	return out
}
