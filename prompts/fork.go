package prompts

import (
	_ "embed"
	"fmt"
	"strings"
)

//go:embed fork.md
var forkRules string

// ForkTag is the element that wraps the fork rules in a fork's first
// message. A conversation holding it in a user text block is a fork's, so
// its Agent tool refuses (S-6.3) even after the conversation is restored
// from a transcript.
const ForkTag = "fork-rules"

// ForkRules is the text block every fork of one parent turn gets first in
// its directive message: the same bytes for every sibling, so it closes
// the prefix they share in the prompt cache (S-6.2).
func ForkRules() string {
	return "<" + ForkTag + ">\n" + strings.TrimSpace(forkRules) + "\n</" + ForkTag + ">"
}

// IsForkRules reports whether text is (or starts with) the fork rules
// block.
func IsForkRules(text string) bool { return strings.HasPrefix(text, "<"+ForkTag+">") }

// ForkPlaceholder is the tool result every tool use of the parent's last
// message gets in a fork's request — the fork's own call and its siblings'
// alike, so every sibling's bytes stay identical up to its directive.
const ForkPlaceholder = "Forked: a copy of this agent is carrying out this call's directive and will report back."

// ForkDirective is the last block of a fork's first message: which of the
// parent's calls is the fork's own, then the directive (the call's
// prompt).
func ForkDirective(toolUseID, directive string) string {
	return fmt.Sprintf("Your directive, from Agent call %s:\n\n%s", toolUseID, strings.TrimSpace(directive))
}

// ForkNested answers an Agent call made by a fork (S-6.3).
func ForkNested() string {
	return "A fork cannot start sub-agents or forks of its own. Do not retry; do the work yourself with your tools and report once when done."
}

// ForkUnavailable answers an Agent call that asks for the fork path where
// it is enabled but unavailable; reason says why.
func ForkUnavailable(reason, defaultType string) string {
	return fmt.Sprintf("The fork path is unavailable: %s. Do not retry it; name an agent type, or omit subagent_type to start a %s agent.", reason, defaultType)
}

// ForkUserAgentReason: forking is off because a definition named fork
// exists (at path), and the name means that agent.
func ForkUserAgentReason(path string) string {
	return fmt.Sprintf("an agent definition named fork exists (%s), so subagent_type \"fork\" starts that agent", path)
}

// ForkDeniedReason: forking is off because rule (from source) denies
// Agent(fork).
func ForkDeniedReason(rule, source string) string {
	if source == "" {
		source = "an unnamed source"
	}
	return fmt.Sprintf("rule %s from %s denies it", rule, source)
}

// ForkIgnoredArgument is the receipt warning for an argument of the Agent
// call that a fork does not take (model, effort): it keeps its parent's.
func ForkIgnoredArgument(field, value, kept string) string {
	return fmt.Sprintf("%s %q was ignored: a fork keeps its parent's %s (%s)", field, value, field, kept)
}

// AgentToolFork is the Agent tool's description when an Agent call without
// subagent_type forks the calling agent. It is the usual description
// with the fork path as the default and a section on when and how to fork.
func AgentToolFork(listing string) string {
	def := " Without it, you fork: see below."
	return strings.NewReplacer("{{LISTING}}", strings.TrimRight(listing, "\n"), "{{DEFAULT_TYPE}}", def).Replace(strings.TrimSpace(agentTool)) +
		"\n\n" + strings.TrimSpace(forkTool)
}

// ForkListingLine is the agent listing's line about the fork path when it
// is enabled but unavailable to this agent (reason says why).
func ForkListingLine(reason string) string {
	return "- fork: unavailable (" + reason + ")"
}

//go:embed forktool.md
var forkTool string

// ForkNotAllowedReason: the calling agent's definition limits the types it
// may start (`Agent(a, b)`), and fork is not one of them.
func ForkNotAllowedReason() string {
	return "this agent's definition limits the agent types it may start, and fork is not one of them"
}
